package eval

import (
	"os"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/npy"
)

// readEmbeddings reads an N×d float32 .npy written by `train -embed` and
// the labels beside it (FILE_labels.npy).
func readEmbeddings(tb testing.TB, path string) (x []float32, n, d int, y []int) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	m, err := npy.ReadFloat32Matrix(f, 1<<30)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	lp := strings.TrimSuffix(path, ".npy") + "_labels.npy"
	g, err := os.Open(lp)
	if err != nil {
		tb.Fatal(err)
	}
	defer g.Close()
	h, err := npy.ReadHeader(g)
	if err != nil {
		tb.Fatalf("%s: %v", lp, err)
	}
	lab := make([]int32, h.Elements())
	if err := npy.ReadInt32s(g, h, lab); err != nil {
		tb.Fatalf("%s: %v", lp, err)
	}
	if len(lab) != m.Rows {
		tb.Fatalf("%s: %d labels for %d rows of %s", lp, len(lab), m.Rows, path)
	}
	y = make([]int, len(lab))
	for i, v := range lab {
		y[i] = int(v)
	}
	return m.Data, m.Rows, m.Cols, y
}

// BenchmarkSVMProtocolEmbeddings runs the GraphCL SVM protocol on real
// embeddings: BATCHSAMPLER_SVM_NPY names an N×d float32 .npy written by
// `go run ./cmd/train -embed RUN -o FILE.npy` (FILE_labels.npy beside it).
// The SMO iterations of trained GIN embeddings differ much from the
// clustered data of BenchmarkSVMProtocolNCI1Size.
func BenchmarkSVMProtocolEmbeddings(b *testing.B) {
	path := os.Getenv("BATCHSAMPLER_SVM_NPY")
	if path == "" {
		b.Skip("set BATCHSAMPLER_SVM_NPY to an embeddings .npy written by train -embed")
	}
	x, n, d, y := readEmbeddings(b, path)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := SVMCrossValidate(x, n, d, y, SVMOptions{Seed: 0})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.Mean, "acc")
		if i == 0 {
			b.Logf("%d × %d: accuracy %.6f ± %.6f, chosen C %v, not converged %d", n, d, res.Mean, res.Std, res.ChosenC, res.NotConverged)
		}
	}
}
