package eval

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refKNN is a brute-force float64 reference of KNNPredict: it normalises
// every row in float64, computes all similarities and sorts the training
// indices of every test row by (similarity descending, index ascending).
type refKNN struct {
	sims [][]float64 // similarity of every training row, per test row
	all  [][]int     // every training index in rank order, per test row
}

// refVotes is the reference's outcome for one k and temperature.
type refVotes struct {
	nb    [][]int     // the first k of the ranking, per test row
	score [][]float64 // class totals, votes summed in rank order
	pred  []int       // argmax of score, lowest class on ties
}

func unit64(x []float32, n, d int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		r := make([]float64, d)
		s := 0.0
		for j := range r {
			r[j] = float64(x[i*d+j])
			s += r[j] * r[j]
		}
		if s > 0 {
			for j := range r {
				r[j] /= math.Sqrt(s)
			}
		}
		out[i] = r
	}
	return out
}

func newRefKNN(train []float32, nTrain int, test []float32, nTest, d int) *refKNN {
	a, b := unit64(test, nTest, d), unit64(train, nTrain, d)
	r := &refKNN{}
	for i := 0; i < nTest; i++ {
		sims := make([]float64, nTrain)
		for j := range sims {
			for l := 0; l < d; l++ {
				sims[j] += a[i][l] * b[j][l]
			}
		}
		order := make([]int, nTrain)
		for j := range order {
			order[j] = j
		}
		slices.SortFunc(order, func(p, q int) int {
			switch {
			case sims[p] > sims[q]:
				return -1
			case sims[p] < sims[q]:
				return 1
			}
			return p - q
		})
		r.all = append(r.all, order)
		r.sims = append(r.sims, sims)
	}
	return r
}

func (r *refKNN) votes(yTrain []int, classes, k int, temp float64) *refVotes {
	v := &refVotes{}
	for i, order := range r.all {
		nb := order[:min(k, len(order))]
		score := make([]float64, classes)
		for _, j := range nb {
			score[yTrain[j]] += math.Exp(r.sims[i][j] / temp)
		}
		v.nb = append(v.nb, nb)
		v.score = append(v.score, score)
		v.pred = append(v.pred, argmax(score))
	}
	return v
}

func TestKNNMatchesReference(t *testing.T) {
	// 2 training tiles (the second partial), 3 test blocks (the last partial).
	const nTrain, nTest, d, classes = knnTrainTile + 952, 2*knnTestBlock + 44, 24, 7
	x, y := clusteredData(21, nTrain+nTest, d, classes, 0.6)
	train, yTrain := x[:nTrain*d], y[:nTrain]
	test, yTest := x[nTrain*d:], y[nTrain:]
	// Tolerance on a similarity: float32 GEMM of unit vectors of length 24.
	const simTol = 5e-6
	base := newRefKNN(train, nTrain, test, nTest, d)
	for _, tc := range []struct {
		k    int
		temp float64
	}{{1, 0.1}, {10, 0.1}, {200, 0.1}, {200, 0.5}, {2000, 0.07}} {
		opt := KNNOptions{K: tc.k, Temperature: tc.temp}
		nb, err := knnNeighbours(train, yTrain, test, nTest, d, classes, opt)
		if err != nil {
			t.Fatal(err)
		}
		pred, err := KNNPredict(train, yTrain, test, nTest, d, classes, opt)
		if err != nil {
			t.Fatal(err)
		}
		ref := base.votes(yTrain, classes, tc.k, tc.temp)
		swaps, fragile := 0, 0
		for i := 0; i < nTest; i++ {
			got := nb.row(i)
			for r, e := range got {
				w := ref.nb[i][r]
				s := base.sims[i][e.idx]
				if math.Abs(float64(e.sim)-s) > simTol {
					t.Fatalf("k=%d test %d rank %d: similarity %v of train row %d, reference %v", tc.k, i, r, e.sim, e.idx, s)
				}
				if int(e.idx) != w {
					// Only a near-tie may reorder neighbours.
					swaps++
					if math.Abs(base.sims[i][w]-s) > 2*simTol {
						t.Errorf("k=%d test %d rank %d: train row %d (sim %.8f), reference row %d (sim %.8f)", tc.k, i, r, e.idx, s, w, base.sims[i][w])
					}
				}
			}
			// Predictions must agree unless the reference's top two class
			// totals are within what such near-ties can move.
			sc := slices.Clone(ref.score[i])
			slices.Sort(sc)
			if n := len(sc); sc[n-1]-sc[n-2] <= 1e-4*sc[n-1] {
				fragile++
				continue
			}
			if pred[i] != ref.pred[i] {
				t.Errorf("k=%d T=%v test %d: predicted %d, reference %d (scores %v)", tc.k, tc.temp, i, pred[i], ref.pred[i], ref.score[i])
			}
		}
		if fragile > nTest/20 {
			t.Errorf("k=%d: %d of %d reference predictions are near-ties: the comparison is too weak", tc.k, fragile, nTest)
		}
		acc, err := KNNAccuracy(train, yTrain, test, yTest, d, classes, opt)
		if err != nil || acc != accuracyOf(pred, yTest) {
			t.Errorf("k=%d: KNNAccuracy = %v, %v; want %v", tc.k, acc, err, accuracyOf(pred, yTest))
		}
		t.Logf("k=%d T=%v: accuracy %.4f, %d near-tie swaps in neighbour lists, %d near-tie predictions skipped", tc.k, tc.temp, acc, swaps, fragile)
	}
}

// TestKNNNearestNeighbour checks k=1 against a plain argmax of the cosine.
func TestKNNNearestNeighbour(t *testing.T) {
	const nTrain, nTest, d, classes = 500, 150, 16, 5
	x, y := clusteredData(22, nTrain+nTest, d, classes, 1)
	train, yTrain, test := x[:nTrain*d], y[:nTrain], x[nTrain*d:]
	pred, err := KNNPredict(train, yTrain, test, nTest, d, classes, KNNOptions{K: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, b := unit64(test, nTest, d), unit64(train, nTrain, d)
	for i := 0; i < nTest; i++ {
		best, second := -1, -1
		bs, ss := math.Inf(-1), math.Inf(-1)
		for j := 0; j < nTrain; j++ {
			s := 0.0
			for l := range d {
				s += a[i][l] * b[j][l]
			}
			if s > bs {
				second, ss = best, bs
				best, bs = j, s
			} else if s > ss {
				second, ss = j, s
			}
		}
		if bs-ss < 1e-5 && yTrain[best] != yTrain[second] {
			continue // a near-tie that float32 rounding may flip
		}
		if pred[i] != yTrain[best] {
			t.Errorf("test %d: predicted %d, nearest neighbour %d has class %d", i, pred[i], best, yTrain[best])
		}
	}
}

// TestKNNExactTies uses one-hot rows, whose similarities (1, 0, −1) are
// exact in float32, so that ties must be broken exactly as documented.
func TestKNNExactTies(t *testing.T) {
	const d, classes = 5, 4
	rng := rand.New(rand.NewPCG(23, 1))
	oneHot := func(n int) []float32 {
		x := make([]float32, n*d)
		for i := 0; i < n; i++ {
			switch rng.IntN(8) {
			case 0: // zero row: similarity 0 to everything
			case 1: // negated basis vector
				x[i*d+rng.IntN(d)] = -2.5
			default:
				x[i*d+rng.IntN(d)] = float32(1 + rng.IntN(3))
			}
		}
		return x
	}
	const nTrain, nTest = 3000, 300
	train, test := oneHot(nTrain), oneHot(nTest)
	yTrain := make([]int, nTrain)
	for i := range yTrain {
		yTrain[i] = rng.IntN(classes)
	}
	base := newRefKNN(train, nTrain, test, nTest, d)
	for _, k := range []int{1, 7, 200, 1000, nTrain, 5 * nTrain} {
		opt := KNNOptions{K: k}
		nb, err := knnNeighbours(train, yTrain, test, nTest, d, classes, opt)
		if err != nil {
			t.Fatal(err)
		}
		pred, err := KNNPredict(train, yTrain, test, nTest, d, classes, opt)
		if err != nil {
			t.Fatal(err)
		}
		ref := base.votes(yTrain, classes, k, DefaultKNNTemperature)
		if nb.k != min(k, nTrain) {
			t.Errorf("k=%d: %d neighbours per row, want %d", k, nb.k, min(k, nTrain))
		}
		for i := 0; i < nTest; i++ {
			got := make([]int, nb.k)
			for r, e := range nb.row(i) {
				got[r] = int(e.idx)
			}
			if !slices.Equal(got, ref.nb[i]) {
				t.Fatalf("k=%d test %d: neighbours %v…, reference %v…", k, i, got[:min(8, len(got))], ref.nb[i][:min(8, len(got))])
			}
		}
		if !slices.Equal(pred, ref.pred) {
			t.Errorf("k=%d: predictions differ from the reference", k)
		}
	}
}

func TestKNNHandCases(t *testing.T) {
	e0, e1 := []float32{1, 0}, []float32{0, 1}
	cat := func(rows ...[]float32) []float32 { return slices.Concat(rows...) }
	for _, tc := range []struct {
		name    string
		train   []float32
		yTrain  []int
		test    []float32
		classes int
		opt     KNNOptions
		want    []int
	}{
		{"nearest neighbour", cat(e0, e1), []int{0, 1}, cat([]float32{3, 1}, []float32{1, 3}), 2, KNNOptions{K: 1}, []int{0, 1}},
		{"equal similarity: lower index first", cat(e1, e0, e0), []int{0, 2, 1}, e0, 3, KNNOptions{K: 1}, []int{2}},
		{"equal totals: lowest class", cat(e0, e0, e1), []int{2, 1, 0}, e0, 3, KNNOptions{K: 2}, []int{1}},
		// Two class-0 rows at similarity 0 (weight 1 each) against one
		// class-1 row at similarity 1: e¹⁰ wins at T=0.1, 2 > e^0.01 at T=100.
		{"weights at T=0.1", cat(e1, e1, e0), []int{0, 0, 1}, e0, 2, KNNOptions{K: 3}, []int{1}},
		{"weights at T=100", cat(e1, e1, e0), []int{0, 0, 1}, e0, 2, KNNOptions{K: 3, Temperature: 100}, []int{0}},
		{"scale-free", cat([]float32{1000, 0}, []float32{0, 0.001}), []int{0, 1}, []float32{0.002, 1e4}, 2, KNNOptions{K: 1}, []int{1}},
		{"zero test row", cat(e0, []float32{-1, 0}), []int{1, 0}, []float32{0, 0}, 2, KNNOptions{K: 2}, []int{0}},
		// exp(1/0.001) overflows; the shifted weights e⁰ against 2·e^(−1.25) do not.
		{"tiny temperature", cat(e0, []float32{1, 0.05}, []float32{1, 0.05}), []int{1, 0, 0}, e0, 2, KNNOptions{K: 3, Temperature: 1e-3}, []int{1}},
		{"k beyond n", cat(e0, e1, e1), []int{0, 1, 1}, e0, 2, KNNOptions{K: 50, Temperature: 1}, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := KNNPredict(tc.train, tc.yTrain, tc.test, len(tc.want), 2, tc.classes, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("predicted %v, want %v", got, tc.want)
			}
		})
	}
}

func TestKNNWorkersDeterministic(t *testing.T) {
	const nTrain, nTest, d, classes = 1500, 3*knnTestBlock + 5, 8, 3
	x, y := clusteredData(24, nTrain+nTest, d, classes, 0.5)
	train, yTrain, test := x[:nTrain*d], y[:nTrain], x[nTrain*d:]
	base, err := knnNeighbours(train, yTrain, test, nTest, d, classes, KNNOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{2, 3, 16} {
		nb, err := knnNeighbours(train, yTrain, test, nTest, d, classes, KNNOptions{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(nb.nb, base.nb) {
			t.Errorf("Workers=%d: neighbours differ from Workers=1", w)
		}
	}
}

func TestKNNBadInputs(t *testing.T) {
	train := []float32{1, 0, 0, 1, 1, 1}
	y := []int{0, 1, 1}
	test := []float32{1, 2}
	nan := slices.Clone(train)
	nan[3] = float32(math.NaN())
	for _, tc := range []struct {
		name    string
		train   []float32
		yTrain  []int
		test    []float32
		yTest   []int
		d       int
		classes int
		opt     KNNOptions
		want    string
	}{
		{"d", train, y, test, []int{0}, 0, 2, KNNOptions{}, "d = 0"},
		{"no training rows", nil, nil, test, []int{0}, 2, 2, KNNOptions{}, "no training rows"},
		{"train shape", train[:5], y, test, []int{0}, 2, 2, KNNOptions{}, "training set: 5 values for 3 labels × 2 features"},
		{"test shape", train, y, test[:1], []int{0}, 2, 2, KNNOptions{}, "test set: 1 values for 1 rows × 2 features"},
		{"no test rows", train, y, nil, nil, 2, 2, KNNOptions{}, "0 test rows"},
		{"train label", train, []int{0, 2, 1}, test, []int{0}, 2, 2, KNNOptions{}, "training set: label 2 of row 1 is outside [0, 2)"},
		{"test label", train, y, test, []int{-1}, 2, 2, KNNOptions{}, "test set: label -1 of row 0"},
		{"NaN train", nan, y, test, []int{0}, 2, 2, KNNOptions{}, "training set: feature 1 of row 1 is NaN"},
		{"Inf test", train, y, []float32{1, float32(math.Inf(-1))}, []int{0}, 2, 2, KNNOptions{}, "test set: feature 1 of row 0 is -Inf"},
		{"negative K", train, y, test, []int{0}, 2, 2, KNNOptions{K: -1}, "K = -1"},
		{"negative T", train, y, test, []int{0}, 2, 2, KNNOptions{Temperature: -0.1}, "Temperature = -0.1"},
		{"NaN T", train, y, test, []int{0}, 2, 2, KNNOptions{Temperature: math.NaN()}, "Temperature = NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := KNNAccuracy(tc.train, tc.yTrain, tc.test, tc.yTest, tc.d, tc.classes, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
