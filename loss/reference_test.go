package loss

import (
	"math"
	"math/rand/v2"
)

// This file holds an independent float64 reference written with plain
// loops, following the published PyTorch code literally (unscaled
// exponentials, no log-sum-exp shifts; only log1p where a loss can be
// near zero). It shares no code with the op.

// refCos is torch's CosineSimilarity with per-norm ε = 1e-8.
func refCos(x, y []float64) float64 {
	var dot, nx, ny float64
	for k := range x {
		dot += x[k] * y[k]
		nx += x[k] * x[k]
		ny += y[k] * y[k]
	}
	return dot / (math.Max(math.Sqrt(nx), 1e-8) * math.Max(math.Sqrt(ny), 1e-8))
}

// refResult is the reference loss and how many anchors had the DCL/HCL
// clamp N·e^{−1/τ} active.
type refResult struct {
	loss    float64
	clamped int
	anchors int
}

// refLoss evaluates the objective of c on two B×d views.
func refLoss(c Config, z1, z2 []float64, b, d int) refResult {
	row := func(z []float64, i int) []float64 { return z[i*d : (i+1)*d] }
	tau := c.Temperature
	// Each anchor: its positive similarity and the similarities of the
	// candidates that enter its denominator (InfoNCE) or its negatives.
	type anchor struct {
		pos   float64
		denom []float64 // InfoNCE: all terms of the denominator
		negs  []float64 // DCL/HCL: the negatives
	}
	var anchors []anchor
	if c.Form == "simclr" {
		out := make([][]float64, 2*b)
		for i := 0; i < b; i++ {
			out[i] = row(z1, i)
			out[b+i] = row(z2, i)
		}
		for a := 0; a < 2*b; a++ {
			p := a + b
			if a >= b {
				p = a - b
			}
			an := anchor{pos: refCos(out[a], out[p])}
			for k := 0; k < 2*b; k++ {
				if k == a {
					continue
				}
				s := refCos(out[a], out[k])
				an.denom = append(an.denom, s)
				if k != p {
					an.negs = append(an.negs, s)
				}
			}
			anchors = append(anchors, an)
		}
	} else {
		for i := 0; i < b; i++ {
			an := anchor{pos: refCos(row(z1, i), row(z2, i))}
			for j := 0; j < b; j++ {
				s := refCos(row(z1, i), row(z2, j))
				if j != i {
					an.negs = append(an.negs, s)
				}
				if j != i || c.Form == "simcse" {
					an.denom = append(an.denom, s)
				}
			}
			anchors = append(anchors, an)
		}
	}
	res := refResult{anchors: len(anchors)}
	total := 0.0
	for _, an := range anchors {
		pos := math.Exp(an.pos / tau)
		switch c.Kind {
		case "infonce":
			den := 0.0
			for _, s := range an.denom {
				den += math.Exp(s / tau)
			}
			if c.Form == "graphcl" {
				total += -math.Log(pos / den)
			} else {
				// −log(pos/den) = log1p((den−pos)/pos); den−pos is the sum
				// over the negatives, summed directly to keep the relative
				// precision of losses near zero.
				rest := 0.0
				for _, s := range an.negs {
					rest += math.Exp(s / tau)
				}
				total += math.Log1p(rest / pos)
			}
		case "dcl", "hcl":
			n := float64(len(an.negs))
			var neg []float64
			for _, s := range an.negs {
				neg = append(neg, math.Exp(s/tau))
			}
			var reweight float64
			if c.Kind == "dcl" {
				for _, v := range neg {
					reweight += v
				}
			} else {
				var sumImpNeg, sumImp float64
				for _, v := range neg {
					imp := math.Exp(c.Beta * math.Log(v))
					sumImpNeg += imp * v
					sumImp += imp
				}
				reweight = sumImpNeg / (sumImp / n)
			}
			ng := (-c.TauPlus*n*pos + reweight) / (1 - c.TauPlus)
			if floor := n * math.Exp(-1/tau); ng < floor {
				ng = floor
				res.clamped++
			}
			total += math.Log1p(ng / pos) // = −log(pos/(pos+Ng))
		default:
			panic("refLoss: unknown kind " + c.Kind)
		}
	}
	res.loss = total / float64(len(anchors))
	return res
}

// refGrad is the fourth-order central finite-difference gradient of f at
// (z1, z2); the step of each coordinate is rel times the norm of its row
// (at least rel).
func refGrad(f func(z1, z2 []float64) float64, z1, z2 []float64, b, d int, rel float64) (g1, g2 []float64) {
	fd := func(z []float64, other func(zz []float64) float64) []float64 {
		g := make([]float64, len(z))
		for i := 0; i < b; i++ {
			nrm := 0.0
			for k := 0; k < d; k++ {
				nrm += z[i*d+k] * z[i*d+k]
			}
			h := rel * math.Max(1, math.Sqrt(nrm))
			for k := 0; k < d; k++ {
				idx := i*d + k
				orig := z[idx]
				at := func(dx float64) float64 {
					z[idx] = orig + dx
					return other(z)
				}
				g[idx] = (8*(at(h)-at(-h)) - (at(2*h) - at(-2*h))) / (12 * h)
				z[idx] = orig
			}
		}
		return g
	}
	g1 = fd(z1, func(zz []float64) float64 { return f(zz, z2) })
	g2 = fd(z2, func(zz []float64) float64 { return f(z1, zz) })
	return g1, g2
}

// scenario generates a pair of views.
type scenario struct {
	name string
	gen  func(r *rand.Rand, b, d int) (z1, z2 []float32)
}

// scenarios: ordinary Gaussian views; huge raw projections (norms ~1e3);
// views whose similarities all lie near ±1 (positives near +1, negatives
// near +1 or −1, norms spread from 1e-1 to 1e3).
var scenarios = []scenario{
	{"gaussian", func(r *rand.Rand, b, d int) ([]float32, []float32) {
		z1, z2 := make([]float32, b*d), make([]float32, b*d)
		for k := range z1 {
			z1[k] = float32(r.NormFloat64())
			z2[k] = z1[k] + float32(0.7*r.NormFloat64())
		}
		return z1, z2
	}},
	{"huge-norms", func(r *rand.Rand, b, d int) ([]float32, []float32) {
		z1, z2 := make([]float32, b*d), make([]float32, b*d)
		for k := range z1 {
			v := r.NormFloat64()
			z1[k] = float32(1e3 * v)
			z2[k] = float32(1e3 * (v + 0.3*r.NormFloat64()))
		}
		return z1, z2
	}},
	{"near-plus-minus-one", func(r *rand.Rand, b, d int) ([]float32, []float32) {
		dirs := make([][]float64, 3)
		for i := range dirs {
			dirs[i] = make([]float64, d)
			for k := range dirs[i] {
				dirs[i][k] = r.NormFloat64()
			}
		}
		z1, z2 := make([]float32, b*d), make([]float32, b*d)
		for i := 0; i < b; i++ {
			dir := dirs[r.IntN(len(dirs))]
			sign := 1.0
			if r.IntN(2) == 0 {
				sign = -1
			}
			s1 := math.Pow(10, -1+4*r.Float64())
			s2 := math.Pow(10, -1+4*r.Float64())
			for k := 0; k < d; k++ {
				v := sign * dir[k]
				z1[i*d+k] = float32(s1 * (v + 1e-3*r.NormFloat64()))
				z2[i*d+k] = float32(s2 * (v + 1e-3*r.NormFloat64()))
			}
		}
		return z1, z2
	}},
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// allConfigs lists every kind×form at temperature tau with τ⁺=0.1, β=1.
func allConfigs(tau float64) []Config {
	var cs []Config
	for _, kind := range []string{KindInfoNCE, KindDCL, KindHCL} {
		for _, form := range []string{FormSimCLR, FormGraphCL, FormSimCSE} {
			cs = append(cs, Config{Kind: kind, Form: form, Temperature: tau, TauPlus: 0.1, Beta: 1})
		}
	}
	return cs
}
