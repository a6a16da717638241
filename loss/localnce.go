package loss

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
)

// The InfoNCE form of the local–global objective (kind "nce_local_global"),
// an alternative to the JSD estimator of jsd.go with the same positives and
// negatives: for node v with graph g(v) among the batch's B graphs,
//
//	c_vj   = L_v·G_j / (max(‖L_v‖,ε)·max(‖G_j‖,ε))       (cosine, ε = 1e-8)
//	loss_v = −log( exp(c_{v,g(v)}/τ) / Σ_j exp(c_vj/τ) )   (j over all B graphs)
//	loss   = (1/N) Σ_v loss_v
//
// The node's own graph is in the denominator (a B-way classification of
// the node's graph). The scores are cosine similarities, not the JSD
// form's raw dot products: L and G are L2-normalised as GraphCL's InfoNCE
// normalises its projections. Raw dot products of MVGRL's heads (hundreds
// of dimensions, unbounded PReLU outputs) divided by τ are logits of any
// size: the log-sum-exp below would not overflow, but the softmax would
// saturate (one-hot rows, vanishing gradients) and the loss scale would
// depend on the representations' norms. Cosines bound every logit to
// [−1/τ, 1/τ], and τ (loss.temperature, 0.2 for graph configs) sets the
// sharpness as it does for the GraphCL rows.
//
// It shares LocalGlobal's checks, op and cache (jsdOp with tau > 0); the
// cache holds ∂loss/∂C, and the backward pass normalises the inputs again.

// LocalGlobalNCE adds the InfoNCE local–global objective above, with
// temperature tau > 0, for the node representations local (N×d) and the
// graph representations global (B×d) to their graph; graphPtr, dtypes and
// B >= 2 as for LocalGlobal. MVGRL's loss with loss.kind nce_local_global
// is LocalGlobalNCE(local view 1, global view 2) + LocalGlobalNCE(local
// view 2, global view 1). The cosines are one GEMM in the inputs'
// precision (of rows normalised in float64); everything else is float64.
func LocalGlobalNCE(local, global *G.Node, graphPtr []int32, tau float64) (*G.Node, error) {
	if err := checkTau(tau); err != nil {
		return nil, err
	}
	return localGlobal(local, global, graphPtr, tau)
}

// LocalGlobalNCEValue computes LocalGlobalNCE's loss on row-major float32
// node representations (N×d) and graph representations (B×d), with its
// gradients (float32): the kernel the op runs.
func LocalGlobalNCEValue(local, global []float32, graphPtr []int32, d int, tau float64) (loss float64, gLocal, gGlobal []float32, err error) {
	if err := checkTau(tau); err != nil {
		return 0, nil, nil, err
	}
	return localGlobalValue(local, global, graphPtr, d, tau)
}

func checkTau(tau float64) error {
	if !(tau > 0) || math.IsInf(tau, 0) {
		return fmt.Errorf("loss: InfoNCE local–global objective: temperature %v; expected a finite number > 0", tau)
	}
	return nil
}

// lgName names the op of the objective of tau (suffix "Grad" for its
// gradient op), for op hashes.
func lgName(tau float64, suffix string) string {
	if tau == 0 {
		return "LocalGlobalJSD" + suffix
	}
	return fmt.Sprintf("LocalGlobalNCE%s{τ=%g}", suffix, tau)
}

// lgForward returns the loss of the objective of tau and writes its
// derivative with respect to the score matrix into ds (n×b).
func lgForward[T float32 | float64](tau float64, l, g []T, n, b, d int, graphPtr []int32, ds []float64) float64 {
	if tau == 0 {
		return jsdForward(l, g, n, b, d, graphPtr, ds)
	}
	return nceForward(tau, l, g, n, b, d, graphPtr, ds)
}

// lgBackward writes scale·∂loss/∂L into gl and scale·∂loss/∂G into gg
// from lgForward's ds.
func lgBackward[T float32 | float64](tau float64, l, g []T, n, b, d int, ds []float64, scale float64, gl, gg []T) {
	if tau == 0 {
		jsdBackward(l, g, n, b, d, ds, scale, gl, gg)
		return
	}
	nceBackward(l, g, n, b, d, ds, scale, gl, gg)
}

// unitRows returns the rows of z (rows×d) divided by max(‖row‖, ε), in
// float64 and in T, and the raw row norms.
func unitRows[T float32 | float64](z []T, rows, d int) (u []float64, ut []T, norm []float64) {
	u, norm = make([]float64, rows*d), make([]float64, rows)
	normalise(z, rows, d, u, norm)
	if v, ok := any(u).([]T); ok {
		return u, v, norm
	}
	ut = make([]T, len(u))
	for i, x := range u {
		ut[i] = T(x)
	}
	return u, ut, norm
}

// nceForward returns the loss above and writes ∂loss/∂C into ds (n×b).
func nceForward[T float32 | float64](tau float64, l, g []T, n, b, d int, graphPtr []int32, ds []float64) float64 {
	_, ul, _ := unitRows(l, n, d)
	_, ug, _ := unitRows(g, b, d)
	c := make([]T, n*b)
	gemmT(false, true, n, b, d, ul, d, ug, d, c, b) // C = L̂·Ĝᵀ
	owner := owners(graphPtr, n)
	invT, invN := 1/tau, 1/float64(n)
	chunks := (n + jsdRowChunk - 1) / jsdRowChunk
	sums := make([]float64, chunks)
	forChunks(chunks, n*b, func(ch int) {
		var sum float64
		for v := ch * jsdRowChunk; v < min((ch+1)*jsdRowChunk, n); v++ {
			row, drow := c[v*b:(v+1)*b], ds[v*b:(v+1)*b]
			m := math.Inf(-1)
			for _, x := range row {
				m = max(m, float64(x)*invT)
			}
			var z float64
			for j, x := range row {
				e := math.Exp(float64(x)*invT - m)
				drow[j] = e
				z += e
			}
			pos := owner[v]
			sum += m + math.Log(z) - float64(row[pos])*invT
			// ∂loss/∂c_vj = (softmax_j − [j = g(v)]) / (τN).
			for j := range drow {
				drow[j] *= invT * invN / z
			}
			drow[pos] -= invT * invN
		}
		sums[ch] = sum
	})
	var sum float64
	for _, s := range sums {
		sum += s
	}
	return sum * invN
}

// nceBackward writes scale·∂loss/∂L into gl (n×d) and scale·∂loss/∂G into
// gg (b×d): ∂loss/∂L̂ = dC·Ĝ and ∂loss/∂Ĝ = dCᵀ·L̂ (GEMMs in T), then back
// through the normalisation in float64.
func nceBackward[T float32 | float64](l, g []T, n, b, d int, ds []float64, scale float64, gl, gg []T) {
	ul, ult, nl := unitRows(l, n, d)
	ug, ugt, ng := unitRows(g, b, d)
	dst := make([]T, len(ds))
	for i, v := range ds {
		dst[i] = T(scale * v)
	}
	dul, dug := make([]T, n*d), make([]T, b*d)
	gemmT(false, false, n, d, b, dst, b, ugt, d, dul, d)
	gemmT(true, false, b, d, n, dst, b, ult, d, dug, d)
	denormalise(toFloat64(dul), ul, nl, d, gl)
	denormalise(toFloat64(dug), ug, ng, d, gg)
}

// toFloat64 returns x as float64 values (x itself when it is []float64).
func toFloat64[T float32 | float64](x []T) []float64 {
	if v, ok := any(x).([]float64); ok {
		return v
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}
