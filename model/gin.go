package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"
)

// Param is one named parameter or buffer of a model. Value is updated in
// place by [Adam.Step] (trainable parameters) or [Bound.CommitStats]
// (BatchNorm running statistics, which have Trainable = false).
type Param struct {
	Name      string
	Value     *tensor.Dense
	Trainable bool
}

// GINConfig sizes a GIN. Zero fields take their defaults.
type GINConfig struct {
	InDim   int // node feature dimension; required
	Hidden  int // width of every layer; default 32
	Layers  int // number of GIN layers; default 3
	ProjDim int // projection head output; default Layers×Hidden
	// BNEps and BNMomentum configure every BatchNorm (defaults 1e-5 and 0.1,
	// PyTorch's, used when the field is 0; momentum is the weight of the new
	// batch statistics, in (0, 1]).
	BNEps, BNMomentum float64
	// Float64 makes parameters and activations float64 (for gradient
	// checks). The default is float32; Embed, EmbedProjected and Adam need
	// float32.
	Float64 bool
}

// withDefaults returns c with defaults filled in, or an error.
func (c GINConfig) withDefaults() (GINConfig, error) {
	if c.Hidden == 0 {
		c.Hidden = 32
	}
	if c.Layers == 0 {
		c.Layers = 3
	}
	if c.ProjDim == 0 {
		c.ProjDim = c.Layers * c.Hidden
	}
	if c.BNEps == 0 {
		c.BNEps = 1e-5
	}
	if c.BNMomentum == 0 {
		c.BNMomentum = 0.1
	}
	switch {
	case c.InDim <= 0:
		return c, fmt.Errorf("gin config: InDim = %d, want > 0", c.InDim)
	case c.Hidden < 0 || c.Layers < 0 || c.ProjDim < 0:
		return c, fmt.Errorf("gin config: negative size (Hidden %d, Layers %d, ProjDim %d)", c.Hidden, c.Layers, c.ProjDim)
	case !(c.BNEps > 0) || math.IsInf(c.BNEps, 0):
		return c, fmt.Errorf("gin config: BNEps = %v, want a finite value > 0", c.BNEps)
	case !(c.BNMomentum > 0 && c.BNMomentum <= 1):
		return c, fmt.Errorf("gin config: BNMomentum = %v, want in (0, 1]", c.BNMomentum)
	}
	return c, nil
}

// layerIdx holds the indices in GIN.params of one layer's parameters.
type layerIdx struct {
	w1, b1, w2, b2 int
	bn             bnIdx
}

// GIN is GraphCL's GIN encoder with its projection head. Linear weights are
// stored in×out (the transpose of PyTorch's out×in), so that a layer is
// x·W + b.
type GIN struct {
	cfg    GINConfig
	params []*Param
	layers []layerIdx
	// head is Linear(EmbedDim, ProjDim) → ReLU → Linear(ProjDim, ProjDim).
	head headIdx
}

// NewGIN builds a GIN initialised as PyTorch does: every Linear weight and
// bias drawn from U(−1/√fan_in, 1/√fan_in), BatchNorm γ = 1, β = 0,
// running mean 0 and running variance 1. The draws come from a PCG source
// seeded with seed, in the order of Params.
func NewGIN(cfg GINConfig, seed uint64) (*GIN, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &GIN{cfg: cfg}
	p := &paramBuilder{dt: m.dtype(), rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	in := cfg.InDim
	for l := 0; l < cfg.Layers; l++ {
		pre := fmt.Sprintf("gin.%d.", l)
		var li layerIdx
		li.w1 = p.add(pre+"mlp.0.weight", true, in, cfg.Hidden)
		li.b1 = p.add(pre+"mlp.0.bias", true, cfg.Hidden)
		li.w2 = p.add(pre+"mlp.2.weight", true, cfg.Hidden, cfg.Hidden)
		li.b2 = p.add(pre+"mlp.2.bias", true, cfg.Hidden)
		li.bn = p.batchNorm(pre+"bn.", cfg.Hidden)
		p.uniform(li.w1, in)
		p.uniform(li.b1, in)
		p.uniform(li.w2, cfg.Hidden)
		p.uniform(li.b2, cfg.Hidden)
		m.layers = append(m.layers, li)
		in = cfg.Hidden
	}
	m.head = p.head(m.EmbedDim(), cfg.ProjDim, cfg.ProjDim)
	m.params = p.params
	return m, nil
}

func (m *GIN) dtype() tensor.Dtype {
	if m.cfg.Float64 {
		return tensor.Float64
	}
	return tensor.Float32
}

// Config returns the configuration with defaults filled in.
func (m *GIN) Config() GINConfig { return m.cfg }

// Params returns the parameters and buffers in a stable order with unique
// names: per layer ℓ, gin.ℓ.mlp.0.{weight,bias}, gin.ℓ.mlp.2.{weight,bias},
// gin.ℓ.bn.{weight,bias,running_mean,running_var}; then proj.0.{weight,bias},
// proj.2.{weight,bias}. The slice is shared with the model.
func (m *GIN) Params() []*Param { return m.params }

// EmbedDim returns the size of a graph embedding, Layers×Hidden.
func (m *GIN) EmbedDim() int { return m.cfg.Layers * m.cfg.Hidden }

// ProjDim returns the size of the projection head's output.
func (m *GIN) ProjDim() int { return m.cfg.ProjDim }

// NumTrainable returns the number of trainable parameters (tensors).
func (m *GIN) NumTrainable() int {
	n := 0
	for _, p := range m.params {
		if p.Trainable {
			n++
		}
	}
	return n
}

const ginMagic = "BSGIN\x00\x01\x00"

// MarshalBinary encodes every parameter and buffer (names, shapes, values)
// for checkpoints.
func (m *GIN) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(ginMagic)
	w := func(v any) { _ = binary.Write(&buf, binary.LittleEndian, v) }
	w(uint32(len(m.params)))
	for _, p := range m.params {
		w(uint32(len(p.Name)))
		buf.WriteString(p.Name)
		w(uint8(p.Value.Dtype().Size()))
		s := p.Value.Shape()
		w(uint32(len(s)))
		for _, d := range s {
			w(uint32(d))
		}
		w(p.Value.Data())
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary restores the values written by MarshalBinary into m,
// which must have the same parameter names, shapes and dtype.
func (m *GIN) UnmarshalBinary(b []byte) error {
	if len(b) < len(ginMagic) || string(b[:len(ginMagic)]) != ginMagic {
		return errors.New("gin checkpoint: bad magic (not a GIN parameter file, or another version)")
	}
	r := bytes.NewReader(b[len(ginMagic):])
	rd := func(v any, what string) error {
		if err := binary.Read(r, binary.LittleEndian, v); err != nil {
			return fmt.Errorf("gin checkpoint: reading %s: %w", what, err)
		}
		return nil
	}
	var n uint32
	if err := rd(&n, "parameter count"); err != nil {
		return err
	}
	if int(n) != len(m.params) {
		return fmt.Errorf("gin checkpoint: %d parameters, model has %d", n, len(m.params))
	}
	vals := make([]any, len(m.params))
	for i, p := range m.params {
		var ln uint32
		if err := rd(&ln, fmt.Sprintf("name length of parameter %d", i)); err != nil {
			return err
		}
		if int(ln) != len(p.Name) {
			return fmt.Errorf("gin checkpoint: parameter %d has a name of %d bytes, want %q", i, ln, p.Name)
		}
		name := make([]byte, ln)
		if _, err := r.Read(name); err != nil || string(name) != p.Name {
			return fmt.Errorf("gin checkpoint: parameter %d is %q, want %q", i, name, p.Name)
		}
		var size uint8
		if err := rd(&size, p.Name+" dtype"); err != nil {
			return err
		}
		if uintptr(size) != p.Value.Dtype().Size() {
			return fmt.Errorf("gin checkpoint: %s has %d-byte elements, model has %d", p.Name, size, p.Value.Dtype().Size())
		}
		var dims uint32
		if err := rd(&dims, p.Name+" rank"); err != nil {
			return err
		}
		s := p.Value.Shape()
		if int(dims) != len(s) {
			return fmt.Errorf("gin checkpoint: %s has rank %d, model has shape %v", p.Name, dims, s)
		}
		for k := range s {
			var d uint32
			if err := rd(&d, p.Name+" shape"); err != nil {
				return err
			}
			if int(d) != s[k] {
				return fmt.Errorf("gin checkpoint: %s dimension %d is %d, model has shape %v", p.Name, k, d, s)
			}
		}
		switch p.Value.Dtype() {
		case tensor.Float32:
			v := make([]float32, p.Value.DataSize())
			if err := rd(v, p.Name+" values"); err != nil {
				return err
			}
			vals[i] = v
		default:
			v := make([]float64, p.Value.DataSize())
			if err := rd(v, p.Name+" values"); err != nil {
				return err
			}
			vals[i] = v
		}
	}
	if r.Len() != 0 {
		return fmt.Errorf("gin checkpoint: %d trailing bytes", r.Len())
	}
	for i, p := range m.params {
		switch v := vals[i].(type) {
		case []float32:
			copy(p.Value.Float32s(), v)
		case []float64:
			copy(p.Value.Float64s(), v)
		}
	}
	return nil
}
