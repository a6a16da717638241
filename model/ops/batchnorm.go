package ops

import (
	"errors"
	"fmt"
	"hash"
	"math"
	"sync/atomic"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// bnCounter gives every BatchNormOp a unique id, part of its hash: two
// calls are never merged by common-subexpression elimination, so each call
// keeps its own batch statistics (as each forward call does in PyTorch).
var bnCounter atomic.Uint64

// BNConfig configures one batch-normalisation call.
type BNConfig struct {
	// Eps is added to the variance before the square root; it must be > 0
	// (PyTorch's default is 1e-5).
	Eps float64
	// Training selects batch statistics (true) or the running statistics
	// below (false).
	Training bool
	// RunningMean and RunningVar (length C) are used in evaluation mode and
	// ignored in training mode. They are copied when the op is built.
	RunningMean, RunningVar []float64
	// ReLU applies max(·, 0) to the normalised output, fused into the same
	// pass (forward and backward). Only BatchNorm2D supports it.
	ReLU bool
}

// BatchNormOp normalises every column of an n×C matrix x and applies the
// affine map y = γ·x̂ + β with vectors γ, β of length C. In training mode
// x̂ = (x − μ_B)/√(σ²_B + ε) with the batch mean μ_B and the biased batch
// variance σ²_B (PyTorch's training normalisation); in evaluation mode the
// running statistics given at construction replace them.
//
// The op is differentiable with respect to x, γ and β. After a forward run
// in training mode, [BatchNormOp.BatchStats] returns the statistics it used
// so that the caller can update running buffers.
//
// The same op type serves [BatchNorm2D] on [N,C,H,W] tensors (rank4), where
// the statistics run over N·H·W values per channel.
type BatchNormOp struct {
	id       uint64
	c        int
	eps      float64
	training bool
	rank4    bool // x is [N,C,H,W] (BatchNorm2D), not n×C
	relu     bool // fused ReLU (rank4 only)

	// Evaluation mode: fixed statistics.
	runMean, runInvStd []float64

	// Training mode: statistics of the last forward run.
	mean, variance, invStd []float64
	n                      int
	ran                    bool

	// rank4 backward: Σ dy and Σ dy·x̂ per channel of the last backward run
	// (dy masked by the fused ReLU), computed by the dx op and read by the
	// dγ and dβ ops, which take dx as input so that they run after it.
	gsdy, gsdyx []float64
	gran        bool

	out outBuf
}

// BatchNorm returns the node γ·x̂ + β and the op, whose BatchStats are
// available once a machine has run the node in training mode.
func BatchNorm(x, gamma, beta *gorgonia.Node, cfg BNConfig) (*gorgonia.Node, *BatchNormOp, error) {
	if x == nil || gamma == nil || beta == nil {
		return nil, nil, errors.New("ops: BatchNorm: nil input")
	}
	if x.Shape().Dims() != 2 {
		return nil, nil, fmt.Errorf("ops: BatchNorm: x must be a matrix, got shape %v", x.Shape())
	}
	if cfg.ReLU {
		return nil, nil, errors.New("ops: BatchNorm: BNConfig.ReLU is only supported by BatchNorm2D")
	}
	op, err := newBatchNormOp("BatchNorm", x.Shape()[1], cfg)
	if err != nil {
		return nil, nil, err
	}
	y, err := gorgonia.ApplyOp(op, x, gamma, beta)
	if err != nil {
		return nil, nil, fmt.Errorf("ops: BatchNorm: %w", err)
	}
	return y, op, nil
}

// newBatchNormOp validates cfg for c channels and returns a new op with a
// unique id.
func newBatchNormOp(name string, c int, cfg BNConfig) (*BatchNormOp, error) {
	if !(cfg.Eps > 0) {
		return nil, fmt.Errorf("ops: %s: Eps = %v, want > 0", name, cfg.Eps)
	}
	op := &BatchNormOp{id: bnCounter.Add(1), c: c, eps: cfg.Eps, training: cfg.Training}
	if !cfg.Training {
		if len(cfg.RunningMean) != c || len(cfg.RunningVar) != c {
			return nil, fmt.Errorf("ops: %s: evaluation mode needs running mean and variance of length %d, got %d and %d",
				name, c, len(cfg.RunningMean), len(cfg.RunningVar))
		}
		op.runMean = append([]float64(nil), cfg.RunningMean...)
		op.runInvStd = make([]float64, c)
		for j, v := range cfg.RunningVar {
			if !(v >= 0) {
				return nil, fmt.Errorf("ops: %s: running variance %d is %v, want >= 0", name, j, v)
			}
			op.runInvStd[j] = 1 / math.Sqrt(v+cfg.Eps)
		}
	} else {
		op.mean = make([]float64, c)
		op.variance = make([]float64, c)
		op.invStd = make([]float64, c)
	}
	return op, nil
}

// Training reports whether the op uses batch statistics.
func (op *BatchNormOp) Training() bool { return op.training }

// BatchStats returns copies of the batch mean and biased batch variance of
// the last forward run, and the number of values n per channel they were
// computed over (the rows of a matrix; N·H·W for BatchNorm2D).
// (PyTorch's running variance uses the unbiased variance σ²_B·n/(n−1).)
// It fails in evaluation mode and before the op has run.
func (op *BatchNormOp) BatchStats() (mean, variance []float64, n int, err error) {
	if !op.training {
		return nil, nil, 0, errors.New("ops: BatchNorm.BatchStats: the op is in evaluation mode")
	}
	if !op.ran {
		return nil, nil, 0, errors.New("ops: BatchNorm.BatchStats: the op has not run yet (run the machine first)")
	}
	return append([]float64(nil), op.mean...), append([]float64(nil), op.variance...), op.n, nil
}

// Arity is 3: x, γ, β.
func (op *BatchNormOp) Arity() int { return 3 }

// Type is Matrix a → Vector a → Vector a → Matrix a (4-D tensors for
// BatchNorm2D).
func (op *BatchNormOp) Type() hm.Type {
	if op.rank4 {
		return hm.NewFnType(tensor4Type, vecType, vecType, tensor4Type)
	}
	return hm.NewFnType(matType, vecType, vecType, matType)
}

// InferShape returns x's shape after checking γ and β.
func (op *BatchNormOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(ds) != 3 {
		return nil, fmt.Errorf("ops: BatchNorm: got %d inputs, want 3", len(ds))
	}
	s, err := shapeOf(op.opName(), ds[0], "x", op.dims())
	if err != nil {
		return nil, err
	}
	for i, name := range []string{"gamma", "beta"} {
		c, err := vecLen("BatchNorm", ds[i+1], name)
		if err != nil {
			return nil, err
		}
		if c != s[1] || c != op.c {
			return nil, fmt.Errorf("ops: BatchNorm: %s has length %d, x has %d columns, op built for %d", name, c, s[1], op.c)
		}
	}
	return s.Clone(), nil
}

// ReturnsPtr is false.
func (op *BatchNormOp) ReturnsPtr() bool { return false }

// CallsExtern is false.
func (op *BatchNormOp) CallsExtern() bool { return false }

// OverwritesInput is -1.
func (op *BatchNormOp) OverwritesInput() int { return -1 }

// WriteHash writes the unique id, the mode, ε, the channel count, the
// rank and the fused ReLU.
func (op *BatchNormOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "BatchNorm{id=%d,train=%t,eps=%g,c=%d,rank4=%t,relu=%t}", op.id, op.training, op.eps, op.c, op.rank4, op.relu)
}

func (op *BatchNormOp) opName() string {
	if op.rank4 {
		return "BatchNorm2D"
	}
	return "BatchNorm"
}

// dims is the rank of x: 2, or 4 for BatchNorm2D.
func (op *BatchNormOp) dims() int {
	if op.rank4 {
		return 4
	}
	return 2
}

// Hashcode returns the FNV-1a hash of WriteHash.
func (op *BatchNormOp) Hashcode() uint32 { return hashOf(op.WriteHash) }

// String describes the op.
func (op *BatchNormOp) String() string {
	return fmt.Sprintf("%s{id=%d,train=%t,eps=%g,relu=%t}", op.opName(), op.id, op.training, op.eps, op.relu)
}

func (op *BatchNormOp) inputs(vals []gorgonia.Value) (x, gamma, beta *tensor.Dense, err error) {
	if len(vals) != 3 {
		return nil, nil, nil, fmt.Errorf("ops: BatchNorm: got %d inputs, want 3", len(vals))
	}
	name := op.opName()
	if x, err = asDense(vals[0], op.dims(), name, "x"); err != nil {
		return nil, nil, nil, err
	}
	if gamma, err = asDense(vals[1], 1, name, "gamma"); err != nil {
		return nil, nil, nil, err
	}
	if beta, err = asDense(vals[2], 1, name, "beta"); err != nil {
		return nil, nil, nil, err
	}
	if err = sameDtype(name, x, gamma, beta); err != nil {
		return nil, nil, nil, err
	}
	if x.Shape()[1] != op.c || gamma.Shape()[0] != op.c || beta.Shape()[0] != op.c {
		return nil, nil, nil, fmt.Errorf("ops: %s: x %v, gamma %v, beta %v do not match %d channels",
			name, x.Shape(), gamma.Shape(), beta.Shape(), op.c)
	}
	if op.training && x.Shape().TotalSize()/op.c < 2 {
		if op.rank4 {
			return nil, nil, nil, fmt.Errorf("ops: BatchNorm2D: training mode needs at least 2 values per channel, x has shape %v", x.Shape())
		}
		return nil, nil, nil, fmt.Errorf("ops: BatchNorm: training mode needs at least 2 rows, got %d", x.Shape()[0])
	}
	return x, gamma, beta, nil
}

// Do allocates the output and normalises x.
func (op *BatchNormOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	x, gamma, beta, err := op.inputs(vals)
	if err != nil {
		return nil, err
	}
	return op.compute(op.out.get(x.Dtype(), x.Shape()...), x, gamma, beta), nil
}

// UsePreallocDo normalises x into prealloc.
func (op *BatchNormOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	x, gamma, beta, err := op.inputs(vals)
	if err != nil {
		return nil, err
	}
	out, err := checkOut(op.opName(), prealloc, x.Dtype(), x.Shape(), x, gamma, beta)
	if err != nil {
		return nil, err
	}
	return op.compute(out, x, gamma, beta), nil
}

func (op *BatchNormOp) compute(out, x, gamma, beta *tensor.Dense) *tensor.Dense {
	if op.rank4 {
		s := x.Shape()
		switch x.Dtype() {
		case tensor.Float32:
			bn4Forward(op, out.Float32s(), x.Float32s(), gamma.Float32s(), beta.Float32s(), s[0], s[2]*s[3])
		case tensor.Float64:
			bn4Forward(op, out.Float64s(), x.Float64s(), gamma.Float64s(), beta.Float64s(), s[0], s[2]*s[3])
		}
		return out
	}
	switch x.Dtype() {
	case tensor.Float32:
		bnForward(op, out.Float32s(), x.Float32s(), gamma.Float32s(), beta.Float32s())
	case tensor.Float64:
		bnForward(op, out.Float64s(), x.Float64s(), gamma.Float64s(), beta.Float64s())
	}
	return out
}

// stats returns the mean and 1/√(σ²+ε) in force for the current mode.
func (op *BatchNormOp) stats() (mean, invStd []float64) {
	if op.training {
		return op.mean, op.invStd
	}
	return op.runMean, op.runInvStd
}

func bnForward[T float32 | float64](op *BatchNormOp, out, x, gamma, beta []T) {
	c := op.c
	n := len(x) / max(c, 1)
	if op.training {
		// Two passes in float64: mean, then the biased variance.
		mean, v := op.mean, op.variance
		clear(mean)
		clear(v)
		for i := 0; i < n; i++ {
			row := x[i*c : i*c+c]
			for j, xv := range row {
				mean[j] += float64(xv)
			}
		}
		for j := range mean {
			mean[j] /= float64(n)
		}
		for i := 0; i < n; i++ {
			row := x[i*c : i*c+c]
			for j, xv := range row {
				d := float64(xv) - mean[j]
				v[j] += d * d
			}
		}
		for j := range v {
			v[j] /= float64(n)
			op.invStd[j] = 1 / math.Sqrt(v[j]+op.eps)
		}
		op.n = n
		op.ran = true
	}
	mean, invStd := op.stats()
	scale := make([]T, c)
	shift := make([]T, c)
	for j := 0; j < c; j++ {
		s := float64(gamma[j]) * invStd[j]
		scale[j] = T(s)
		shift[j] = T(float64(beta[j]) - mean[j]*s)
	}
	for i := 0; i < n; i++ {
		src, dst := x[i*c:i*c+c], out[i*c:i*c+c]
		for j, xv := range src {
			dst[j] = xv*scale[j] + shift[j]
		}
	}
}

// DiffWRT reports that the op is differentiable with respect to x, γ, β.
func (op *BatchNormOp) DiffWRT(inputs int) []bool { return []bool{true, true, true} }

// SymDiff returns dx (from x, γ and the upstream gradient and the saved
// statistics), dγ = Σ_rows dy⊙x̂ and dβ = Σ_rows dy.
func (op *BatchNormOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 3 {
		return nil, fmt.Errorf("ops: BatchNorm.SymDiff: got %d inputs, want 3", len(inputs))
	}
	if op.rank4 {
		return op.symDiff4(inputs, output, grad)
	}
	dx, err := gorgonia.ApplyOp(&bnGradOp{fwd: op, wrtX: true}, inputs[0], inputs[1], grad)
	if err != nil {
		return nil, fmt.Errorf("ops: BatchNorm.SymDiff dx: %w", err)
	}
	dg, err := gorgonia.ApplyOp(&bnGradOp{fwd: op, wrtX: false}, inputs[0], inputs[1], grad)
	if err != nil {
		return nil, fmt.Errorf("ops: BatchNorm.SymDiff dgamma: %w", err)
	}
	db, err := ColSum(grad)
	if err != nil {
		return nil, fmt.Errorf("ops: BatchNorm.SymDiff dbeta: %w", err)
	}
	return gorgonia.Nodes{dx, dg, db}, nil
}

// bnGradOp computes the gradient of a BatchNormOp with respect to x
// (wrtX, an n×C matrix) or γ (a length-C vector), from x, γ and dy, using
// the statistics saved by the forward op (which runs earlier on the tape).
type bnGradOp struct {
	fwd  *BatchNormOp
	wrtX bool
	out  outBuf
}

func (op *bnGradOp) name() string {
	if op.wrtX {
		return "BatchNormGradX"
	}
	return "BatchNormGradGamma"
}

func (op *bnGradOp) Arity() int { return 3 }
func (op *bnGradOp) Type() hm.Type {
	if op.wrtX {
		return hm.NewFnType(matType, vecType, matType, matType)
	}
	return hm.NewFnType(matType, vecType, matType, vecType)
}
func (op *bnGradOp) ReturnsPtr() bool     { return false }
func (op *bnGradOp) CallsExtern() bool    { return false }
func (op *bnGradOp) OverwritesInput() int { return -1 }
func (op *bnGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "%s{id=%d}", op.name(), op.fwd.id)
}
func (op *bnGradOp) Hashcode() uint32 { return hashOf(op.WriteHash) }
func (op *bnGradOp) String() string   { return fmt.Sprintf("%s{id=%d}", op.name(), op.fwd.id) }

func (op *bnGradOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(ds) != 3 {
		return nil, fmt.Errorf("ops: %s: got %d inputs, want 3", op.name(), len(ds))
	}
	s, err := matShape(op.name(), ds[0], "x")
	if err != nil {
		return nil, err
	}
	if op.wrtX {
		return s.Clone(), nil
	}
	return tensor.Shape{s[1]}, nil
}

func (op *bnGradOp) inputs(vals []gorgonia.Value) (x, gamma, dy *tensor.Dense, err error) {
	if len(vals) != 3 {
		return nil, nil, nil, fmt.Errorf("ops: %s: got %d inputs, want 3", op.name(), len(vals))
	}
	if x, err = asDense(vals[0], 2, op.name(), "x"); err != nil {
		return nil, nil, nil, err
	}
	if gamma, err = asDense(vals[1], 1, op.name(), "gamma"); err != nil {
		return nil, nil, nil, err
	}
	if dy, err = asDense(vals[2], 2, op.name(), "dy"); err != nil {
		return nil, nil, nil, err
	}
	if err = sameDtype(op.name(), x, gamma, dy); err != nil {
		return nil, nil, nil, err
	}
	if !x.Shape().Eq(dy.Shape()) || x.Shape()[1] != op.fwd.c || gamma.Shape()[0] != op.fwd.c {
		return nil, nil, nil, fmt.Errorf("ops: %s: x %v, gamma %v, dy %v do not match %d channels", op.name(), x.Shape(), gamma.Shape(), dy.Shape(), op.fwd.c)
	}
	if op.fwd.training && (!op.fwd.ran || op.fwd.n != x.Shape()[0]) {
		return nil, nil, nil, fmt.Errorf("ops: %s: the forward op has not run on this input", op.name())
	}
	return x, gamma, dy, nil
}

func (op *bnGradOp) outShape(x *tensor.Dense) tensor.Shape {
	if op.wrtX {
		return x.Shape().Clone()
	}
	return tensor.Shape{x.Shape()[1]}
}

func (op *bnGradOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	x, gamma, dy, err := op.inputs(vals)
	if err != nil {
		return nil, err
	}
	return op.compute(op.out.get(x.Dtype(), op.outShape(x)...), x, gamma, dy), nil
}

func (op *bnGradOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	x, gamma, dy, err := op.inputs(vals)
	if err != nil {
		return nil, err
	}
	out, err := checkOut(op.name(), prealloc, x.Dtype(), op.outShape(x), x, gamma, dy)
	if err != nil {
		return nil, err
	}
	return op.compute(out, x, gamma, dy), nil
}

func (op *bnGradOp) compute(out, x, gamma, dy *tensor.Dense) *tensor.Dense {
	switch x.Dtype() {
	case tensor.Float32:
		bnBackward(op, out.Float32s(), x.Float32s(), gamma.Float32s(), dy.Float32s())
	case tensor.Float64:
		bnBackward(op, out.Float64s(), x.Float64s(), gamma.Float64s(), dy.Float64s())
	}
	return out
}

func bnBackward[T float32 | float64](op *bnGradOp, out, x, gamma, dy []T) {
	c := op.fwd.c
	n := len(x) / max(c, 1)
	mean, invStd := op.fwd.stats()
	// Σ dy and Σ dy·x̂ per column, in float64.
	sdy := make([]float64, c)
	sdyx := make([]float64, c)
	for i := 0; i < n; i++ {
		xr, gr := x[i*c:i*c+c], dy[i*c:i*c+c]
		for j, xv := range xr {
			g := float64(gr[j])
			sdy[j] += g
			sdyx[j] += g * (float64(xv) - mean[j]) * invStd[j]
		}
	}
	if !op.wrtX {
		for j := range out[:c] {
			out[j] = T(sdyx[j])
		}
		return
	}
	if !op.fwd.training {
		// Fixed statistics: dx = γ·istd·dy.
		for i := 0; i < n; i++ {
			gr, dst := dy[i*c:i*c+c], out[i*c:i*c+c]
			for j, g := range gr {
				dst[j] = T(float64(gamma[j]) * invStd[j] * float64(g))
			}
		}
		return
	}
	// dx = γ·istd·(dy − mean(dy) − x̂·mean(dy·x̂)).
	k := make([]float64, c)
	for j := range k {
		k[j] = float64(gamma[j]) * invStd[j]
		sdy[j] /= float64(n)
		sdyx[j] /= float64(n)
	}
	for i := 0; i < n; i++ {
		xr, gr, dst := x[i*c:i*c+c], dy[i*c:i*c+c], out[i*c:i*c+c]
		for j, xv := range xr {
			xh := (float64(xv) - mean[j]) * invStd[j]
			dst[j] = T(k[j] * (float64(gr[j]) - sdy[j] - xh*sdyx[j]))
		}
	}
}
