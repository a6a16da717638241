package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/npy"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// float16NpyBits is a float16 .npy file holding the given bits.
func float16NpyBits(n, d int, bits []uint16) []byte {
	b := npy.AppendHeader(nil, npy.Float16, []int{n, d})
	for _, h := range bits {
		b = append(b, byte(h), byte(h>>8))
	}
	return b
}

// TestGraphFloat16 checks graph on float16 embeddings: kept as float16
// (the default, -precision auto) it writes the same bytes as with the rows
// widened to float32 (-precision float32), which is BatchSampler's refresh
// on the widened rows, whole or as merged shards; and -precision float16
// on a float32 file builds the graph of the rounded rows (the file's graph
// once saved as float16), recorded in the sidecar.
func TestGraphFloat16(t *testing.T) {
	e := mixture(t, 500, 8, 0)
	dir := t.TempDir()
	f16, widened := float16Npy(e)
	emb16 := writeTemp(t, dir, "e16.npy", f16)
	emb32 := writeTemp(t, dir, "e32.npy", npyBytes(t, e))
	common := []string{"-m", "60", "-k", "6", "-seed", "9"}
	graph := func(name string, args ...string) (string, []byte, *graphMeta, string) {
		t.Helper()
		p := filepath.Join(dir, name)
		out := mustRun(t, append(append([]string{"graph", "-out", p}, common...), args...)...)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := readMeta(p)
		if err != nil {
			t.Fatal(err)
		}
		return p, b, m, out
	}

	_, half, mHalf, out := graph("half.npy", "-emb", emb16)
	if !strings.Contains(out, "<f2 held as float16") {
		t.Errorf("graph output %q does not say the rows were held as float16", out)
	}
	_, wide, mWide, out := graph("wide.npy", "-emb", emb16, "-precision", "float32")
	if !strings.Contains(out, "<f2 held as float32") {
		t.Errorf("graph output %q does not say the rows were held as float32", out)
	}
	if !bytes.Equal(half, wide) || mHalf.CRC32C != mWide.CRC32C || mHalf.Precision != "" || mWide.Precision != "" {
		t.Fatalf("float16-resident graph differs from the widened one (sidecars %+v, %+v)", mHalf, mWide)
	}
	bs, err := sampler.NewBatchSampler(sampler.Config{BatchSize: 16, M: 60, K: 6}, e.N, 9)
	if err != nil {
		t.Fatal(err)
	}
	if err := bs.Refresh(widened); err != nil {
		t.Fatal(err)
	}
	if g := readGraph(t, filepath.Join(dir, "half.npy")); !slices.Equal(g.Data, bs.Graph().Adj) {
		t.Fatal("float16-resident graph differs from the sampler's refresh on the widened rows")
	}
	var parts []string
	for i, r := range []string{"300:", ":120", "120:300"} {
		p, _, _, _ := graph(fmt.Sprintf("part%d.npy", i), "-emb", emb16, "-rows", r, "-workers", fmt.Sprint(1+i))
		parts = append(parts, p)
	}
	merged := filepath.Join(dir, "merged.npy")
	mustRun(t, append([]string{"merge", "-out", merged}, parts...)...)
	if b, _ := os.ReadFile(merged); !bytes.Equal(b, half) {
		t.Fatal("merged float16 shards differ from the whole graph")
	}

	// -precision float16: the graph of the rounded rows.
	_, rounded, mRounded, out := graph("rounded.npy", "-emb", emb32, "-precision", "float16")
	if !strings.Contains(out, "<f4 held as float16") || mRounded.Precision != "float16" {
		t.Fatalf("graph output %q, sidecar precision %q: want the rows held as float16, recorded", out, mRounded.Precision)
	}
	bits := make([]uint16, len(e.Data))
	for i, v := range e.Data {
		bits[i] = npy.Float64ToFloat16(float64(v))
	}
	embR := writeTemp(t, dir, "rounded16.npy", float16NpyBits(e.N, e.D, bits))
	_, want, _, _ := graph("want.npy", "-emb", embR)
	if !bytes.Equal(rounded, want) {
		t.Fatal("-precision float16 graph differs from the graph of the rows saved as float16")
	}
	_, full, _, _ := graph("full.npy", "-emb", emb32)
	g16, g32 := readGraph(t, filepath.Join(dir, "rounded.npy")), readGraph(t, filepath.Join(dir, "full.npy"))
	rows, entries := 0, 0
	for i := 0; i < e.N; i++ {
		a, b := slices.Clone(g16.Data[i*6:(i+1)*6]), slices.Clone(g32.Data[i*6:(i+1)*6])
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			rows++
		}
		for _, x := range a {
			if _, ok := slices.BinarySearch(b, x); !ok {
				entries++
			}
		}
	}
	t.Logf("-precision float16 against float32 (N = %d, d = %d, M = 60, K = 6): %d rows' neighbour sets differ, %d of %d entries", e.N, e.D, rows, entries, len(g32.Data))
	if bytes.Equal(full, rounded) && rows != 0 {
		t.Fatal("inconsistent comparison")
	}

	// Shards of different precisions are different graphs.
	a, _, _, _ := graph("pa.npy", "-emb", emb32, "-rows", ":250", "-precision", "float16")
	b, _, _, _ := graph("pb.npy", "-emb", emb32, "-rows", "250:")
	if _, err := runCmd(t, "merge", "-out", filepath.Join(dir, "mixed.npy"), a, b); err == nil || !strings.Contains(err.Error(), "embeddings precision") {
		t.Fatalf("merge of shards of different precisions: %v, want an error naming the precision", err)
	}
}

// TestGraphPrecisionErrors: a bad -precision value, and a float32 value
// beyond float16's range under -precision float16, are errors that say so.
func TestGraphPrecisionErrors(t *testing.T) {
	e := mixture(t, 100, 4, 0)
	dir := t.TempDir()
	emb := writeTemp(t, dir, "e.npy", npyBytes(t, e))
	big := sampler.Embeddings{N: e.N, D: e.D, Data: slices.Clone(e.Data)}
	big.Data[4*3+1] = 1e5
	embBig := writeTemp(t, dir, "big.npy", npyBytes(t, big))
	out := filepath.Join(dir, "g.npy")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"precision", []string{"-emb", emb, "-precision", "half"}, `-precision "half": want auto, float32 or float16`},
		{"overflow", []string{"-emb", embBig, "-precision", "float16"}, "row 3 column 1 is +Inf after rounding to float16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runCmd(t, append([]string{"graph", "-out", out, "-m", "20", "-k", "4"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Without rounding, 1e5 is an ordinary float32 value.
	mustRun(t, "graph", "-out", out, "-m", "20", "-k", "4", "-emb", embBig)
}
