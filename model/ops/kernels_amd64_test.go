//go:build amd64 && !purego

package ops

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// setKernels turns the AVX-512 kernels on or off (tests and benchmarks
// compare both paths).
func setKernels(on bool) { haveKernels = on && cpu.X86.HasAVX512F }

// TestSplitKernelsMatchLoops: split32 and even32 give the strided copies of
// the Go loops for lengths around the 16-lane blocks and leave the values
// after the n-th output untouched.
func TestSplitKernelsMatchLoops(t *testing.T) {
	if !cpu.X86.HasAVX512F {
		t.Skip("no AVX-512")
	}
	for n := 1; n <= 70; n++ {
		row := make([]float32, 2*n)
		for i := range row {
			row[i] = float32(i) + 0.5
		}
		e, o := make([]float32, n+1), make([]float32, n+1)
		e[n], o[n] = -7, -7
		split32(&e[0], &o[0], &row[0], n)
		ev := make([]float32, n+1)
		ev[n] = -7
		even32(&ev[0], &row[0], n) // reads row[0:2n−1]
		for j := 0; j < n; j++ {
			if e[j] != row[2*j] || o[j] != row[2*j+1] || ev[j] != row[2*j] {
				t.Fatalf("n=%d: j=%d: split %v, %v and even %v, want %v, %v", n, j, e[j], o[j], ev[j], row[2*j], row[2*j+1])
			}
		}
		if e[n] != -7 || o[n] != -7 || ev[n] != -7 {
			t.Fatalf("n=%d: wrote past n", n)
		}
	}
}
