package optim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The state of every optimizer is encoded alike, little-endian:
//
//	magic "BSOPTIM\x01"
//	kind            uint8 length, bytes ("adam", "adamw", "sgd", "lars")
//	hyperparameters uint32 count, float64 each (learning rate first)
//	step count      int64
//	parameters      uint32 count, then for each: uint32 name length, name,
//	                uint32 size, uint8 buffer count, buffers of size float32
const stateMagic = "BSOPTIM\x01"

// state is a decoded optimizer state.
type state struct {
	kind   string
	hp     []float64
	t      int64
	params []paramState
}

type paramState struct {
	name string
	size int
	bufs [][]float32
}

func (s *state) marshal() []byte {
	n := len(stateMagic) + 1 + len(s.kind) + 4 + 8*len(s.hp) + 8 + 4
	for _, p := range s.params {
		n += 4 + len(p.name) + 4 + 1 + 4*p.size*len(p.bufs)
	}
	b := make([]byte, 0, n)
	b = append(b, stateMagic...)
	b = append(b, byte(len(s.kind)))
	b = append(b, s.kind...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.hp)))
	for _, h := range s.hp {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(h))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(s.t))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.params)))
	for _, p := range s.params {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p.name)))
		b = append(b, p.name...)
		b = binary.LittleEndian.AppendUint32(b, uint32(p.size))
		b = append(b, byte(len(p.bufs)))
		for _, buf := range p.bufs {
			for _, x := range buf {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
			}
		}
	}
	return b
}

// decoder reads a state, reporting a truncation with what was being read.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.err = fmt.Errorf("truncated: %d bytes left, %s needs %d", len(d.b), what, n)
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) u8(what string) int {
	if b := d.take(1, what); b != nil {
		return int(b[0])
	}
	return 0
}

func (d *decoder) u32(what string) int {
	if b := d.take(4, what); b != nil {
		return int(binary.LittleEndian.Uint32(b))
	}
	return 0
}

func (d *decoder) u64(what string) uint64 {
	if b := d.take(8, what); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// unmarshalState decodes b and checks it against the expected kind, number
// of hyperparameters and parameters (names and sizes) and the buffer counts
// that ok accepts. Errors are prefixed with "<kind> state: ".
func unmarshalState(b []byte, kind string, nhp int, params []Param, okBufs func(n int) bool) (*state, error) {
	s, err := decodeState(b, kind, nhp, params, okBufs)
	if err != nil {
		return nil, fmt.Errorf("%s state: %w", kind, err)
	}
	return s, nil
}

func decodeState(b []byte, kind string, nhp int, params []Param, okBufs func(n int) bool) (*state, error) {
	if len(b) < len(stateMagic) || string(b[:len(stateMagic)]) != stateMagic {
		return nil, errors.New("bad magic (not an optimizer state of this package, or another version)")
	}
	d := &decoder{b: b[len(stateMagic):]}
	s := &state{}
	s.kind = string(d.take(d.u8("kind length"), "kind"))
	if d.err != nil {
		return nil, d.err
	}
	if s.kind != kind {
		return nil, fmt.Errorf("the state is of a %q optimizer, not %q", s.kind, kind)
	}
	if n := d.u32("hyperparameter count"); d.err == nil && n != nhp {
		return nil, fmt.Errorf("%d hyperparameters, want %d", n, nhp)
	}
	s.hp = make([]float64, nhp)
	for i := range s.hp {
		s.hp[i] = math.Float64frombits(d.u64("hyperparameters"))
	}
	s.t = int64(d.u64("step count"))
	if d.err == nil && s.t < 0 {
		return nil, fmt.Errorf("negative step count %d", s.t)
	}
	if n := d.u32("parameter count"); d.err == nil && n != len(params) {
		return nil, fmt.Errorf("%d parameters, optimizer has %d", n, len(params))
	}
	if d.err != nil {
		return nil, d.err
	}
	s.params = make([]paramState, len(params))
	for i, p := range params {
		ps := &s.params[i]
		ps.name = string(d.take(d.u32(fmt.Sprintf("name length of parameter %d", i)), fmt.Sprintf("name of parameter %d", i)))
		if d.err != nil {
			return nil, d.err
		}
		if ps.name != p.Name {
			return nil, fmt.Errorf("parameter %d is %q, want %q", i, ps.name, p.Name)
		}
		ps.size = d.u32(p.Name + " size")
		if d.err == nil && ps.size != len(p.Value) {
			return nil, fmt.Errorf("%s has %d values, want %d", p.Name, ps.size, len(p.Value))
		}
		nb := d.u8(p.Name + " buffer count")
		if d.err == nil && !okBufs(nb) {
			return nil, fmt.Errorf("%s has %d buffers, not a valid count for %s", p.Name, nb, kind)
		}
		if d.err != nil {
			return nil, d.err
		}
		raw := d.take(4*ps.size*nb, p.Name+" buffers")
		if d.err != nil {
			return nil, d.err
		}
		ps.bufs = make([][]float32, nb)
		for j := range ps.bufs {
			buf := make([]float32, ps.size)
			for k := range buf {
				buf[k] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(j*ps.size+k):]))
			}
			ps.bufs[j] = buf
		}
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%d trailing bytes", len(d.b))
	}
	return s, nil
}

// paramStates returns the names and sizes of params with the given buffers.
func paramStates(params []Param, bufs func(i int) [][]float32) []paramState {
	out := make([]paramState, len(params))
	for i, p := range params {
		out[i] = paramState{name: p.Name, size: len(p.Value), bufs: bufs(i)}
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
