package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/npy"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// mixture returns n×d embeddings of a labelled Gaussian mixture; variant
// shifts them (a different "model" for a later refresh).
func mixture(t testing.TB, n, d int, variant uint64) sampler.Embeddings {
	t.Helper()
	e, _, err := sampler.GaussianMixture(sampler.MixtureConfig{N: n, C: 6, D: d, Between: 1, Within: 1.2}, 7+variant)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// npyBytes is e as a float32 .npy file.
func npyBytes(t testing.TB, e sampler.Embeddings) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := npy.WriteFloat32s(&b, []int{e.N, e.D}, e.Data); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rowsOf is rows [lo, hi) of e.
func rowsOf(e sampler.Embeddings, lo, hi int) sampler.Embeddings {
	return sampler.Embeddings{N: hi - lo, D: e.D, Data: e.Data[lo*e.D : hi*e.D]}
}

// toFloat16 rounds float32 bits to half precision (normal range only,
// round toward zero): enough for test data in [−8, 8].
func toFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	if exp <= 0 {
		return sign
	}
	return sign | uint16(exp)<<10 | uint16((b>>13)&0x3ff)
}

// float16Npy returns e as a float16 .npy file and the float32 values it
// holds.
func float16Npy(e sampler.Embeddings) ([]byte, sampler.Embeddings) {
	b := npy.AppendHeader(nil, npy.Float16, []int{e.N, e.D})
	out := sampler.Embeddings{N: e.N, D: e.D, Data: make([]float32, len(e.Data))}
	for i, v := range e.Data {
		h := toFloat16(v)
		b = append(b, byte(h), byte(h>>8))
		out.Data[i] = npy.Float16ToFloat32(h)
	}
	return b, out
}

func writeTemp(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// reference runs the Go Driver as a training loop does: a sampler from
// spec over n instances with batch size b and seed, T = total, refresh k
// (0-based) with embs[min(k, len−1)]; it returns the batches of steps
// [0, steps).
func reference(t testing.TB, spec sampler.Spec, n, b int, seed uint64, total int, embs []sampler.Embeddings, steps int) [][]int {
	t.Helper()
	smp, err := spec.New(n, b, seed)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	d, err := sampler.NewDriver(smp, sampler.DriverOptions{Embedding: spec.Embedding, Embed: func(string) (sampler.Embeddings, error) {
		e := embs[min(calls, len(embs)-1)]
		calls++
		return e, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]int
	for s := 0; s < steps; s++ {
		if _, err := d.BeforeStep(s, total); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.Next())
	}
	return out
}

// readBatches reads a batches .npy back into rows (−1 padding dropped).
func readBatches(t testing.TB, path string) [][]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := npy.ReadHeader(f)
	if err != nil {
		t.Fatal(err)
	}
	rows, cols, err := h.Matrix()
	if err != nil || h.DType != npy.Int64 {
		t.Fatalf("%s: %s %v: want an int64 matrix", path, h.DType, err)
	}
	raw := make([]byte, 8*rows*cols)
	if _, err := io.ReadFull(f, raw); err != nil {
		t.Fatal(err)
	}
	out := make([][]int, rows)
	for i := range out {
		for j := 0; j < cols; j++ {
			v := int64(0)
			for k := 7; k >= 0; k-- {
				v = v<<8 | int64(raw[8*(i*cols+j)+k])
			}
			if v >= 0 {
				out[i] = append(out[i], int(v))
			}
		}
	}
	return out
}

func equalBatches(a, b [][]int) bool {
	return slices.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
}

// runCmd runs the command line in-process.
func runCmd(t testing.TB, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return out.String() + errb.String(), err
	}
	return out.String() + errb.String(), err
}

func mustRun(t testing.TB, args ...string) string {
	t.Helper()
	out, err := runCmd(t, args...)
	if err != nil {
		t.Fatalf("batchsampler %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// buildBinary builds the command once per test process (or returns
// $BATCHSAMPLER_BIN).
func buildBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("BATCHSAMPLER_BIN"); p != "" {
		return p
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "batchsampler-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "batchsampler")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = errors.New(string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("go build: %v", binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
