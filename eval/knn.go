package eval

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/batchsampler-go/batchsampler/internal/gemm"
)

// Defaults of KNNOptions, those of the weighted kNN monitor of InstDis and
// the SimCLR repositories.
const (
	DefaultKNNK           = 200
	DefaultKNNTemperature = 0.1
)

// Block sizes of the kNN similarity computation: knnTestBlock test rows
// against knnTrainTile training rows per GEMM (a 256×2048 float32 block of
// similarities, 2 MiB, per worker). Every test block streams the whole
// training set, so larger test blocks mean fewer passes over it.
const (
	knnTestBlock = 256
	knnTrainTile = 2048
)

// KNNOptions configures KNNPredict and KNNAccuracy. The zero value means
// k = 200, temperature 0.1 and all cores.
type KNNOptions struct {
	// K is the number of neighbours (default DefaultKNNK); a K at least the
	// number of training rows uses them all.
	K int
	// Temperature T of the vote weights exp(sim/T) (default
	// DefaultKNNTemperature).
	Temperature float64
	// Workers is the number of goroutines, each taking blocks of test rows
	// (default GOMAXPROCS). Results do not depend on it.
	Workers int
	// Context, when not nil, stops the search when it is cancelled: it is
	// checked before every block of 256 test rows, and KNNPredict then
	// returns an error wrapping Context.Err(). A context that is not
	// cancelled changes no result.
	Context context.Context
	// Progress, when not nil, is called after every block of 256 test rows
	// with the number of blocks done and their total. Calls come from the
	// worker goroutines one at a time, with done increasing by one. It
	// changes no result.
	Progress func(done, total int)
}

// KNNPredict is the weighted kNN classifier of InstDis (Wu et al. 2018) used
// as the training monitor of SimCLR implementations. Train and test rows (d
// features each; len(yTrain) and nTest rows) are L2-normalised, and every
// test row gets the cosine similarities s to all training rows. Its K
// nearest training rows each vote for their class with weight exp(s/T), and
// the class with the largest total is predicted.
//
// Ties are broken deterministically: neighbours are ranked by similarity,
// descending, then by training index, ascending (of equally similar rows the
// earlier ones are taken); the votes are summed in float64 in that rank
// order; of classes with equal totals the lowest is predicted. (The weights
// are computed as exp((s − s₁)/T), s₁ the row's top similarity: the same
// up to a factor common to the row, and safe from overflow for small T.)
// A zero row has similarity 0 to every row. Similarities are computed in float32 with
// gemm.Sgemm, on blocks of test rows against tiles of training rows, and
// the top K of each test row are kept in a heap as the tiles stream by;
// memory beyond the normalised copy of train is O(nTest·K).
func KNNPredict(train []float32, yTrain []int, test []float32, nTest, d, classes int, opt KNNOptions) ([]int, error) {
	nb, err := knnNeighbours(train, yTrain, test, nTest, d, classes, opt)
	if err != nil {
		return nil, err
	}
	temp := opt.Temperature
	if temp == 0 {
		temp = DefaultKNNTemperature
	}
	pred := make([]int, nTest)
	score := make([]float64, classes)
	for i := range pred {
		clear(score)
		row := nb.row(i)
		top := float64(row[0].sim)
		for _, e := range row {
			// exp((s − s₁)/T) is exp(s/T) times a factor common to the row,
			// which leaves the argmax alone and cannot overflow.
			score[yTrain[e.idx]] += math.Exp((float64(e.sim) - top) / temp)
		}
		pred[i] = argmax(score)
	}
	return pred, nil
}

// KNNAccuracy returns the top-1 accuracy in [0, 1] of KNNPredict on the test
// rows (len(yTest) of them) with labels yTest.
func KNNAccuracy(train []float32, yTrain []int, test []float32, yTest []int, d, classes int, opt KNNOptions) (float64, error) {
	if err := checkLabels("eval: kNN: test set", yTest, classes); err != nil {
		return math.NaN(), err
	}
	pred, err := KNNPredict(train, yTrain, test, len(yTest), d, classes, opt)
	if err != nil {
		return math.NaN(), err
	}
	return accuracyOf(pred, yTest), nil
}

// checkLabels checks that every label lies in [0, classes).
func checkLabels(what string, y []int, classes int) error {
	if classes < 1 {
		return fmt.Errorf("%s: %d classes, want at least 1", what, classes)
	}
	for i, c := range y {
		if c < 0 || c >= classes {
			return fmt.Errorf("%s: label %d of row %d is outside [0, %d)", what, c, i, classes)
		}
	}
	return nil
}

// knnEntry is one neighbour: a training index and its cosine similarity.
type knnEntry struct {
	sim float32
	idx int32
}

// worse reports whether a ranks after b: lower similarity, or equal
// similarity and a larger index.
func (a knnEntry) worse(b knnEntry) bool {
	return a.sim < b.sim || (a.sim == b.sim && a.idx > b.idx)
}

// knnResult holds the k neighbours of every test row, each row's list in
// rank order (best first).
type knnResult struct {
	k  int
	nb []knnEntry
}

func (r *knnResult) row(i int) []knnEntry { return r.nb[i*r.k : (i+1)*r.k] }

// normalizeRows writes the L2-normalised rows of the n×d matrix x into dst
// (a zero row stays zero), computing each norm and quotient in float64, and
// checks that every value is finite.
func normalizeRows(what string, dst, x []float32, n, d int) error {
	for i := 0; i < n; i++ {
		r := x[i*d : (i+1)*d]
		s := 0.0
		for j, v := range r {
			f := float64(v)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("%s: feature %d of row %d is %v, want a finite value", what, j, i, v)
			}
			s += f * f
		}
		o := dst[i*d : (i+1)*d]
		if s == 0 {
			clear(o)
			continue
		}
		inv := 1 / math.Sqrt(s)
		for j, v := range r {
			o[j] = float32(float64(v) * inv)
		}
	}
	return nil
}

// knnNeighbours validates the inputs and returns the top-k neighbours of
// every test row.
func knnNeighbours(train []float32, yTrain []int, test []float32, nTest, d, classes int, opt KNNOptions) (*knnResult, error) {
	nTrain := len(yTrain)
	switch {
	case d < 1:
		return nil, fmt.Errorf("eval: kNN: d = %d, want >= 1", d)
	case nTrain < 1:
		return nil, fmt.Errorf("eval: kNN: no training rows (len(yTrain) = 0)")
	case nTrain > math.MaxInt32:
		return nil, fmt.Errorf("eval: kNN: %d training rows, want at most %d", nTrain, math.MaxInt32)
	case len(train) != nTrain*d:
		return nil, fmt.Errorf("eval: kNN: training set: %d values for %d labels × %d features, want %d", len(train), nTrain, d, nTrain*d)
	case nTest < 1:
		return nil, fmt.Errorf("eval: kNN: %d test rows, want at least 1", nTest)
	case len(test) != nTest*d:
		return nil, fmt.Errorf("eval: kNN: test set: %d values for %d rows × %d features, want %d", len(test), nTest, d, nTest*d)
	case opt.K < 0:
		return nil, fmt.Errorf("eval: kNN: KNNOptions.K = %d, want >= 0 (0 means %d)", opt.K, DefaultKNNK)
	case !(opt.Temperature >= 0) || math.IsInf(opt.Temperature, 0):
		return nil, fmt.Errorf("eval: kNN: KNNOptions.Temperature = %v, want a finite value > 0 (0 means %v)", opt.Temperature, DefaultKNNTemperature)
	}
	if err := checkLabels("eval: kNN: training set", yTrain, classes); err != nil {
		return nil, err
	}
	unitTrain := make([]float32, len(train))
	if err := normalizeRows("eval: kNN: training set", unitTrain, train, nTrain, d); err != nil {
		return nil, err
	}
	// Test rows are normalised block by block by the workers; check them
	// first so that no error can arise inside a worker.
	for k, v := range test {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("eval: kNN: test set: feature %d of row %d is %v, want a finite value", k%d, k/d, v)
		}
	}
	k := opt.K
	if k == 0 {
		k = DefaultKNNK
	}
	k = min(k, nTrain)
	res := &knnResult{k: k, nb: make([]knnEntry, nTest*k)}
	blocks := (nTest + knnTestBlock - 1) / knnTestBlock
	workers := min(defaultWorkers(opt.Workers), blocks)
	var next atomic.Int64
	var wg sync.WaitGroup
	var (
		finished atomic.Int64 // blocks done
		progMu   sync.Mutex
		done     int
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newKNNWorker(d, k)
			for {
				if opt.Context != nil && opt.Context.Err() != nil {
					return
				}
				b := int(next.Add(1)) - 1
				if b >= blocks {
					return
				}
				lo, hi := b*knnTestBlock, min((b+1)*knnTestBlock, nTest)
				w.block(unitTrain, nTrain, test[lo*d:hi*d], hi-lo, res.nb[lo*k:hi*k])
				finished.Add(1)
				if opt.Progress != nil {
					progMu.Lock()
					done++
					opt.Progress(done, blocks)
					progMu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if finished.Load() < int64(blocks) { // the workers stopped on cancellation
		return nil, fmt.Errorf("eval: kNN: %w", opt.Context.Err())
	}
	return res, nil
}

// knnWorker holds the buffers of one goroutine.
type knnWorker struct {
	d, k  int
	q     []float32  // normalised test rows of the block
	sims  []float32  // knnTestBlock × knnTrainTile dot products
	heaps []knnEntry // knnTestBlock heaps of capacity k
	size  []int      // current size of each heap
}

func newKNNWorker(d, k int) *knnWorker {
	return &knnWorker{
		d: d, k: k,
		q:     make([]float32, knnTestBlock*d),
		sims:  make([]float32, knnTestBlock*knnTrainTile),
		heaps: make([]knnEntry, knnTestBlock*k),
		size:  make([]int, knnTestBlock),
	}
}

// block finds the neighbours of m test rows among the nTrain normalised
// training rows and writes them to out, k per row in rank order.
func (w *knnWorker) block(train []float32, nTrain int, test []float32, m int, out []knnEntry) {
	d, k := w.d, w.k
	_ = normalizeRows("", w.q, test, m, d) // values checked by the caller
	clear(w.size[:m])
	// Tiles are visited in increasing training index, so a candidate whose
	// similarity merely equals the worst kept one ranks after it (larger
	// index) and is skipped by the strict comparison below.
	for t0 := 0; t0 < nTrain; t0 += knnTrainTile {
		tn := min(knnTrainTile, nTrain-t0)
		gemm.Sgemm(false, true, m, tn, d, 1, w.q, d, train[t0*d:(t0+tn)*d], d, 0, w.sims, tn)
		for i := 0; i < m; i++ {
			h := w.heaps[i*k : (i+1)*k]
			size := w.size[i]
			row := w.sims[i*tn : (i+1)*tn]
			j := 0
			// Fill the heap.
			for ; j < tn && size < k; j++ {
				h[size] = knnEntry{sim: row[j], idx: int32(t0 + j)}
				siftUp(h, size)
				size++
			}
			thr := h[0].sim
			for ; j < tn; j++ {
				s := row[j]
				if s > thr {
					h[0] = knnEntry{sim: s, idx: int32(t0 + j)}
					siftDown(h, 0)
					thr = h[0].sim
				}
			}
			w.size[i] = size
		}
	}
	// Pop the heaps into rank order (the worst first, written from the end).
	for i := 0; i < m; i++ {
		h := w.heaps[i*k : (i+1)*k]
		o := out[i*k : (i+1)*k]
		for size := k; size > 0; size-- {
			o[size-1] = h[0]
			h[0] = h[size-1]
			siftDown(h[:size-1], 0)
		}
	}
}

// siftUp and siftDown maintain a heap whose root is the worst entry.
func siftUp(h []knnEntry, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].worse(h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func siftDown(h []knnEntry, i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && h[r].worse(h[l]) {
			c = r
		}
		if !h[c].worse(h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
