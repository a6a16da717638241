package ops

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/batchsampler-go/batchsampler/internal/gop"
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
	gop.Base
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
	op, err := newBatchNormOp(x.Shape()[1], cfg, false)
	if err != nil {
		return nil, nil, err
	}
	y, err := applyOp(op, x, gamma, beta)
	if err != nil {
		return nil, nil, fmt.Errorf("ops: BatchNorm: %w", err)
	}
	return y, op, nil
}

// newBatchNormOp validates cfg for c channels and returns a new op with a
// unique id, for n×C matrices or, with rank4, for [N,C,H,W] tensors
// (BatchNorm2D, with the fused ReLU of cfg).
func newBatchNormOp(c int, cfg BNConfig, rank4 bool) (*BatchNormOp, error) {
	name := "BatchNorm"
	if rank4 {
		name = "BatchNorm2D"
	}
	if !(cfg.Eps > 0) {
		return nil, fmt.Errorf("ops: %s: Eps = %v, want > 0", name, cfg.Eps)
	}
	op := &BatchNormOp{id: bnCounter.Add(1), c: c, eps: cfg.Eps, training: cfg.Training, rank4: rank4, relu: rank4 && cfg.ReLU}
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
	if rank4 {
		op.gsdy, op.gsdyx = make([]float64, c), make([]float64, c)
	}
	op.Base = op.describe()
	return op, nil
}

// describe returns the op's Base: Matrix a → Vector a → Vector a → Matrix a
// (4-D tensors for BatchNorm2D), hashed with the unique id, the mode, ε,
// the channel count, the rank and the fused ReLU.
func (op *BatchNormOp) describe() gop.Base {
	key := fmt.Sprintf("BatchNorm{id=%d,train=%t,eps=%g,c=%d,rank4=%t,relu=%t}", op.id, op.training, op.eps, op.c, op.rank4, op.relu)
	desc := fmt.Sprintf("%s{id=%d,train=%t,eps=%g,relu=%t}", op.opName(), op.id, op.training, op.eps, op.relu)
	return gop.New(key, desc, op.dims(), 1, 1, op.dims())
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

// InferShape returns x's shape after checking γ and β.
func (op *BatchNormOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	sh, err := inputShapes(op.opName(), ds, op.args()...)
	if err != nil {
		return nil, err
	}
	s := sh[0]
	for i, name := range []string{"gamma", "beta"} {
		if c := sh[i+1][0]; c != s[1] || c != op.c {
			return nil, fmt.Errorf("ops: %s: %s has length %d, x has %d columns, op built for %d", op.opName(), name, c, s[1], op.c)
		}
	}
	return s.Clone(), nil
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

// args are the inputs x, γ and β.
func (op *BatchNormOp) args() []arg {
	if op.rank4 {
		return bn4Args
	}
	return bnArgs
}

var (
	bnArgs  = []arg{{"x", 2}, {"gamma", 1}, {"beta", 1}}
	bn4Args = []arg{{"x", 4}, {"gamma", 1}, {"beta", 1}}
)

// Do normalises x into a new tensor (or the one the op keeps, see
// SetOutputReuse).
func (op *BatchNormOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

// UsePreallocDo normalises x into prealloc (nil: as Do).
func (op *BatchNormOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	name := op.opName()
	in, err := denseInputs(name, vals, op.args()...)
	if err != nil {
		return nil, err
	}
	x, gamma, beta := in[0], in[1], in[2]
	if x.Shape()[1] != op.c || gamma.Shape()[0] != op.c || beta.Shape()[0] != op.c {
		return nil, fmt.Errorf("ops: %s: x %v, gamma %v, beta %v do not match %d channels",
			name, x.Shape(), gamma.Shape(), beta.Shape(), op.c)
	}
	if op.training && x.Shape().TotalSize()/op.c < 2 {
		if op.rank4 {
			return nil, fmt.Errorf("ops: BatchNorm2D: training mode needs at least 2 values per channel, x has shape %v", x.Shape())
		}
		return nil, fmt.Errorf("ops: BatchNorm: training mode needs at least 2 rows, got %d", x.Shape()[0])
	}
	out, err := outputTensor(&op.out, name, prealloc, x.Dtype(), x.Shape(), x, gamma, beta)
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
		x32, vec := any(x).([]float32)
		vec = vec && haveKernels && n > 0 && c > 0 && len(x) >= n*c && len(mean) >= c && len(v) >= c
		if vec {
			bnColSums32(&mean[0], &x32[0], n, c)
		}
		for i := 0; i < n && !vec; i++ {
			row := x[i*c : i*c+c]
			for j, xv := range row {
				mean[j] += float64(xv)
			}
		}
		for j := range mean {
			mean[j] /= float64(n)
		}
		if vec {
			bnColSqDev32(&v[0], &mean[0], &x32[0], n, c)
		}
		for i := 0; i < n && !vec; i++ {
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
	if o, ok := any(out).([]float32); ok && haveKernels && n > 0 && c > 0 && len(x) >= n*c && len(o) >= n*c {
		x32, sc, sh := any(x).([]float32), any(scale).([]float32), any(shift).([]float32)
		parallelFor(n, n*c, func(lo, hi int) {
			bnAffine32(&o[lo*c], &x32[lo*c], &sc[0], &sh[0], hi-lo, c)
		})
		return
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
	dx, err := applyOp(newBNGradOp(op, true), inputs[0], inputs[1], grad)
	if err != nil {
		return nil, fmt.Errorf("ops: BatchNorm.SymDiff dx: %w", err)
	}
	dg, err := applyOp(newBNGradOp(op, false), inputs[0], inputs[1], grad)
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
	gop.Base
	fwd  *BatchNormOp
	wrtX bool
	out  outBuf
}

// newBNGradOp returns the gradient op of fwd with respect to x (wrtX:
// Matrix a → Vector a → Matrix a → Matrix a) or γ (… → Vector a), hashed
// with fwd's id.
func newBNGradOp(fwd *BatchNormOp, wrtX bool) *bnGradOp {
	name, out := "BatchNormGradGamma", 1
	if wrtX {
		name, out = "BatchNormGradX", 2
	}
	return &bnGradOp{Base: gop.New(fmt.Sprintf("%s{id=%d}", name, fwd.id), "", 2, 1, 2, out), fwd: fwd, wrtX: wrtX}
}

var bnGradArgs = []arg{{"x", 2}, {"gamma", 1}, {"dy", 2}}

func (op *bnGradOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes(op.String(), ds, bnGradArgs...)
	if err != nil {
		return nil, err
	}
	if op.wrtX {
		return s[0].Clone(), nil
	}
	return tensor.Shape{s[0][1]}, nil
}

func (op *bnGradOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *bnGradOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs(op.String(), vals, bnGradArgs...)
	if err != nil {
		return nil, err
	}
	x, gamma, dy := in[0], in[1], in[2]
	if !x.Shape().Eq(dy.Shape()) || x.Shape()[1] != op.fwd.c || gamma.Shape()[0] != op.fwd.c {
		return nil, fmt.Errorf("ops: %s: x %v, gamma %v, dy %v do not match %d channels", op, x.Shape(), gamma.Shape(), dy.Shape(), op.fwd.c)
	}
	if op.fwd.training && (!op.fwd.ran || op.fwd.n != x.Shape()[0]) {
		return nil, fmt.Errorf("ops: %s: the forward op has not run on this input", op)
	}
	shape := tensor.Shape{x.Shape()[1]}
	if op.wrtX {
		shape = x.Shape().Clone()
	}
	out, err := outputTensor(&op.out, op.String(), prealloc, x.Dtype(), shape, x, gamma, dy)
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
	x32, vec := any(x).([]float32)
	dy32, _ := any(dy).([]float32)
	vec = vec && haveKernels && n > 0 && c > 0 && len(x) >= n*c && len(dy) >= n*c && len(mean) >= c && len(invStd) >= c
	if vec {
		bnBwdSums32(&sdy[0], &sdyx[0], &mean[0], &invStd[0], &x32[0], &dy32[0], n, c)
	}
	for i := 0; i < n && !vec; i++ {
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
	if o, ok := any(out).([]float32); ok && vec && len(o) >= n*c {
		parallelFor(n, n*c, func(lo, hi int) {
			bnBwdDx32(&o[lo*c], &x32[lo*c], &dy32[lo*c], &mean[0], &invStd[0], &k[0], &sdy[0], &sdyx[0], hi-lo, c)
		})
		return
	}
	for i := 0; i < n; i++ {
		xr, gr, dst := x[i*c:i*c+c], dy[i*c:i*c+c], out[i*c:i*c+c]
		for j, xv := range xr {
			xh := (float64(xv) - mean[j]) * invStd[j]
			dst[j] = T(k[j] * (float64(gr[j]) - sdy[j] - xh*sdyx[j]))
		}
	}
}
