package loss

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	igemm "github.com/batchsampler-go/batchsampler/internal/gemm"
)

// cosEps is the lower bound on a row norm in the cosine similarity, as in
// torch.nn.CosineSimilarity: s_ij = z1_i·z2_j / (max(‖z1_i‖,ε)·max(‖z2_j‖,ε)).
const cosEps = 1e-8

// Value computes the loss of Build on two row-major B×d views given as flat
// float32 slices, together with its gradients with respect to z1 and z2
// (returned in float32; all arithmetic is float64). It is the same kernel
// the Gorgonia op runs, so other packages can use it as a reference.
func Value(c Config, z1, z2 []float32, b, d int) (loss float64, g1, g2 []float32, err error) {
	if err := c.validateContrastive(); err != nil {
		return 0, nil, nil, err
	}
	if err := checkDims(b, d, len(z1), len(z2)); err != nil {
		return 0, nil, nil, err
	}
	g1, g2 = make([]float32, b*d), make([]float32, b*d)
	loss = evaluate(c, z1, z2, b, d, true, 1, g1, g2)
	return loss, g1, g2, nil
}

// checkDims validates the batch geometry shared by Value and the op.
func checkDims(b, d, n1, n2 int) error {
	if b < 2 {
		return fmt.Errorf("loss: batch size B=%d; a contrastive loss needs B >= 2 (at least one negative per anchor)", b)
	}
	if d < 1 {
		return fmt.Errorf("loss: embedding dimension d=%d; expected d >= 1", d)
	}
	if n1 != b*d || n2 != b*d {
		return fmt.Errorf("loss: view lengths %d and %d; expected B·d = %d·%d = %d each", n1, n2, b, d, b*d)
	}
	return nil
}

// workspace holds the scratch buffers of one evaluation.
type workspace struct {
	u    []float64 // 2B×d: rows 0..B−1 are view 1, rows B..2B−1 view 2, L2-normalised
	norm []float64 // 2B raw row norms
	s    []float64 // similarity matrix (2B×2B for simclr, B×B otherwise), then dLoss/dS in place
	du   []float64 // 2B×d gradient with respect to u
	ut   []float64 // d×2B transpose of u
	st   []float64 // transpose of dLoss/dS (cross forms)
	row  []float64 // per-anchor loss
	imp  []float64 // per-anchor scratch of length ≤ 2B per worker (HCL weights)
}

var workspaces = sync.Pool{New: func() any { return new(workspace) }}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// geometry describes which similarity matrix a form uses.
type geometry struct {
	b       int
	stacked bool // simclr: S = U·Uᵀ over the 2B stacked views
	n       int  // side of S (2B or B); also the number of anchors
}

func geometryOf(form string, b int) geometry {
	if form == FormSimCLR {
		return geometry{b: b, stacked: true, n: 2 * b}
	}
	return geometry{b: b, n: b}
}

// partner is the column of the positive of anchor a.
func (g geometry) partner(a int) int {
	if g.stacked {
		return (a + g.b) % (2 * g.b)
	}
	return a
}

// evaluate computes the loss and, if grad, writes scale·∂L/∂z1 and
// scale·∂L/∂z2 into g1 and g2 (overwriting them). The configuration and the
// dimensions must already be valid.
func evaluate[T, O float32 | float64](c Config, z1, z2 []T, b, d int, grad bool, scale float64, g1, g2 []O) float64 {
	ws := workspaces.Get().(*workspace)
	defer workspaces.Put(ws)
	geo := geometryOf(c.Form, b)

	ws.u = grow(ws.u, 2*b*d)
	ws.norm = grow(ws.norm, 2*b)
	normalise(z1, b, d, ws.u[:b*d], ws.norm[:b])
	normalise(z2, b, d, ws.u[b*d:], ws.norm[b:])

	n := geo.n
	ws.s = grow(ws.s, n*n)
	// The float64 products are gonum's Syrk and Gemm to the last bit, in
	// AVX-512 registers (internal/gemm: DsyrkUpper, DgemmNT).
	if geo.stacked {
		// S = U·Uᵀ is symmetric: compute the upper triangle, mirror it.
		igemm.DsyrkUpper(n, d, 1, ws.u, d, 0, ws.s, n)
		symmetrise(ws.s, n, false)
	} else {
		igemm.DgemmNT(b, b, d, 1, ws.u[:b*d], d, ws.u[b*d:], d, 0, ws.s, n)
	}

	ws.row = grow(ws.row, n)
	workers := parallelism(n)
	ws.imp = grow(ws.imp, workers*n)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		scratch := ws.imp[w*n : (w+1)*n]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := lo; a < hi; a++ {
				ws.row[a] = rowLoss(c, geo, a, ws.s[a*n:(a+1)*n], grad, scratch)
			}
		}()
	}
	wg.Wait()
	total := 0.0
	for _, l := range ws.row {
		total += l
	}
	loss := total / float64(n)
	if !grad {
		return loss
	}

	// ws.s now holds ∂ℓ_a/∂S[a,·]; the loss is their mean, times the
	// upstream gradient.
	alpha := scale / float64(n)
	// The products below are written as A·Bᵀ with B stored transposed
	// (gonum's Gemm NoTrans×Trans, which DgemmNT reproduces).
	ws.du = grow(ws.du, 2*b*d)
	ws.ut = grow(ws.ut, 2*b*d)
	transpose(ws.ut, ws.u, 2*b, d) // d×2B: columns 0..B−1 are U1ᵀ, B..2B−1 U2ᵀ
	if geo.stacked {
		// dU = (dS + dSᵀ)·U, with the symmetric sum formed in place.
		symmetrise(ws.s, n, true)
		igemm.DgemmNT(n, d, n, alpha, ws.s, n, ws.ut, 2*b, 0, ws.du, d) // dS·U
	} else {
		ws.st = grow(ws.st, n*n)
		transpose(ws.st, ws.s, n, n)
		igemm.DgemmNT(n, d, n, alpha, ws.s, n, ws.ut[b:], 2*b, 0, ws.du[:b*d], d) // dS·U2
		igemm.DgemmNT(n, d, n, alpha, ws.st, n, ws.ut, 2*b, 0, ws.du[b*d:], d)    // dSᵀ·U1
	}
	denormalise(ws.du[:b*d], ws.u[:b*d], ws.norm[:b], d, g1)
	denormalise(ws.du[b*d:], ws.u[b*d:], ws.norm[b:], d, g2)
	return loss
}

// symmetrise makes the n×n row-major matrix a symmetric in place: with
// add, a ← a + aᵀ; otherwise the upper triangle is copied to the lower.
func symmetrise(a []float64, n int, add bool) {
	const blk = 32
	for i0 := 0; i0 < n; i0 += blk {
		for j0 := i0; j0 < n; j0 += blk {
			for i := i0; i < min(i0+blk, n); i++ {
				for j := max(j0, i); j < min(j0+blk, n); j++ {
					v := a[i*n+j]
					if add {
						v += a[j*n+i]
					}
					a[i*n+j], a[j*n+i] = v, v
				}
			}
		}
	}
}

// transpose writes the cols×rows transpose of the row-major rows×cols src.
func transpose(dst, src []float64, rows, cols int) {
	const blk = 32
	for r0 := 0; r0 < rows; r0 += blk {
		for c0 := 0; c0 < cols; c0 += blk {
			for r := r0; r < min(r0+blk, rows); r++ {
				for c := c0; c < min(c0+blk, cols); c++ {
					dst[c*rows+r] = src[r*cols+c]
				}
			}
		}
	}
}

// parallelism is the number of goroutines for n anchor rows.
func parallelism(n int) int {
	w := runtime.GOMAXPROCS(0)
	if m := n / 32; m < w {
		w = m
	}
	return max(w, 1)
}

// normalise writes u_i = z_i / max(‖z_i‖, ε) and the raw norms ‖z_i‖.
func normalise[T float32 | float64](z []T, b, d int, u, norm []float64) {
	for i := range b {
		zi := z[i*d : (i+1)*d]
		ss := 0.0
		for _, v := range zi {
			ss += float64(v) * float64(v)
		}
		nrm := math.Sqrt(ss)
		norm[i] = nrm
		inv := 1 / max(nrm, cosEps)
		ui := u[i*d : (i+1)*d]
		for k, v := range zi {
			ui[k] = float64(v) * inv
		}
	}
}

// denormalise back-propagates ∂L/∂u through u = z / max(‖z‖, ε):
// ∂L/∂z = (g − (g·u)u)/‖z‖ when ‖z‖ > ε, and g/ε otherwise.
func denormalise[O float32 | float64](du, u, norm []float64, d int, g []O) {
	for i, nrm := range norm {
		gi, ui, out := du[i*d:(i+1)*d], u[i*d:(i+1)*d], g[i*d:(i+1)*d]
		if nrm <= cosEps {
			for k, v := range gi {
				out[k] = O(v / cosEps)
			}
			continue
		}
		dot := 0.0
		for k, v := range gi {
			dot += v * ui[k]
		}
		for k, v := range gi {
			out[k] = O((v - dot*ui[k]) / nrm)
		}
	}
}

// rowLoss returns the loss ℓ_a of anchor a from its row of cosine
// similarities and, if grad, overwrites the row with ∂ℓ_a/∂S[a,·].
// scratch has at least len(row) elements.
func rowLoss(c Config, geo geometry, a int, row []float64, grad bool, scratch []float64) float64 {
	if c.Kind == KindInfoNCE {
		return infoNCERow(c, geo, a, row, grad)
	}
	return debiasedRow(c, geo, a, row, grad, scratch)
}

// infoNCERow: ℓ_a = −l_p + log Σ_{k∈K} e^{l_k} with l = S[a,·]/τ, where K
// is every column but a (simclr), every column but the positive (graphcl),
// or every column (simcse). Computed with the row maximum m subtracted.
func infoNCERow(c Config, geo geometry, a int, row []float64, grad bool) float64 {
	invT := 1 / c.Temperature
	p := geo.partner(a)
	skip := -1 // the column outside K
	switch c.Form {
	case FormSimCLR:
		skip = a
	case FormGraphCL:
		skip = p
	}
	m := math.Inf(-1)
	for k, s := range row {
		if k != skip && s*invT > m {
			m = s * invT
		}
	}
	lp := row[p] * invT
	// Overwrite the row with e^{l_k − m} (0 outside K); rest sums them
	// without the positive.
	rest := 0.0
	for k, s := range row {
		if k == skip {
			row[k] = 0
			continue
		}
		e := math.Exp(s*invT - m)
		row[k] = e
		if k != p {
			rest += e
		}
	}
	var loss, z float64
	if skip == p { // graphcl: the positive is outside the denominator
		z = rest
		loss = m + math.Log(z) - lp
	} else {
		// ℓ = log((P + rest)/P), written so that a loss near zero keeps
		// its relative precision.
		P := row[p]
		z = P + rest
		loss = logRatio(P, rest, lp-m)
	}
	if !grad {
		return loss
	}
	scale := invT / z
	for k := range row {
		row[k] *= scale // softmax over K, times 1/τ
	}
	if skip == p {
		row[p] = -invT
	} else {
		row[p] = -rest * scale // (softmax_p − 1)/τ
	}
	return loss
}

// logRatio returns log((P+X)/P) for P, X ≥ 0 given logP = log P, accurate
// when X ≪ P (log1p) and when P underflows (log difference).
func logRatio(P, X, logP float64) float64 {
	if X <= P {
		return math.Log1p(X / P)
	}
	return math.Log(P+X) - logP
}

// debiasedRow is DCL/HCL as their authors implemented them, for anchor a
// with positive P = e^{l_p} and N negatives n_k = e^{l_k}:
//
//	R  = Σ_k n_k                             (DCL)
//	R  = N·Σ_k imp_k n_k / Σ_k imp_k, imp_k = n_k^β   (HCL, not detached)
//	Ng = max((−τ⁺·N·P + R)/(1−τ⁺), N·e^{−1/τ})
//	ℓ_a = −log(P/(P+Ng))
//
// All exponentials are scaled by e^{−m}, m the largest logit of the row (R
// is homogeneous of degree one, the HCL weights are scaled by their own
// maximum), so nothing overflows, and ℓ_a = log((P'+Ng')/P').
func debiasedRow(c Config, geo geometry, a int, row []float64, grad bool, imp []float64) float64 {
	invT := 1 / c.Temperature
	p := geo.partner(a)
	isNeg := func(k int) bool { return k != p && !(geo.stacked && k == a) }

	lp := row[p] * invT
	m, mNeg := lp, math.Inf(-1)
	for k, s := range row {
		if isNeg(k) && s*invT > mNeg {
			mNeg = s * invT
		}
	}
	m = max(m, mNeg)
	N := float64(geo.n - 1)
	if geo.stacked {
		N = float64(geo.n - 2)
	}
	P := math.Exp(lp - m)
	tp := c.TauPlus

	// Overwrite the row with n_k = e^{l_k − m} on negatives (0 elsewhere);
	// for HCL keep imp_k = e^{β(l_k − max_k l_k)} in imp.
	hcl := c.Kind == KindHCL
	beta := c.Beta
	var R, A, Bs float64
	for k, s := range row {
		if !isNeg(k) {
			row[k] = 0
			continue
		}
		x := s * invT
		nk := math.Exp(x - m)
		row[k] = nk
		if hcl {
			w := math.Exp(beta * (x - mNeg))
			imp[k] = w
			A += w
			Bs += w * nk
		} else {
			R += nk
		}
	}
	if hcl {
		R = N * Bs / A
	}
	U := (-tp*N*P + R) / (1 - tp)
	C := N * math.Exp(-invT-m)
	active := !(U < C)
	Ng := C
	if active {
		Ng = U
	}
	D := P + Ng
	loss := logRatio(P, Ng, lp-m)
	if !grad {
		return loss
	}

	// ∂ℓ/∂l_p = P(1 + ∂Ng/∂P)/D − 1 = (P·∂Ng/∂P − Ng)/D, without cancellation.
	dpos := -Ng / D
	if active {
		dpos = (-tp*N/(1-tp)*P - Ng) / D
	}
	coef := 0.0 // ∂ℓ/∂R
	if active {
		coef = 1 / ((1 - tp) * D)
	}
	for k, nk := range row {
		switch {
		case coef == 0 || !isNeg(k): // clamped, or not a negative
			row[k] = 0
		case hcl:
			row[k] = coef * N * imp[k] / A * ((beta+1)*nk - beta*Bs/A) * invT
		default:
			row[k] = coef * nk * invT // ∂R/∂l_k = n_k for DCL
		}
	}
	row[p] = dpos * invT
	return loss
}
