//go:build amd64 && !purego

package eval

import (
	"reflect"
	"testing"
)

// TestSVMCrossValidateVectorMatchesScalar: the whole protocol with the
// vector kernels (SMO loops, gathers, exp, kernel rows) gives the result of
// the scalar code (math.Exp, plain loops) to the last bit, on data with
// far outliers so that some kernel arguments fall below −700 (math.Exp's
// special paths) and with both distance sources. The per-kernel tests
// compare each kernel on its own; this one would have caught the in-place
// exp that lost its special arguments.
func TestSVMCrossValidateVectorMatchesScalar(t *testing.T) {
	if !haveSMOKernels || !haveExpKernel {
		t.Skip("no vector kernels on this CPU")
	}
	// One row far from all the others: with gamma="scale", γ·d² between it
	// and the rest is about n (γ = 1/(d·Var), the variance dominated by
	// its one large entry), past 700 for n = 800.
	const n, d = 800, 8
	x, y := clusteredData(17, n, d, 3, 0.8)
	x[123*d+2] = 1e6
	for _, opt := range []SVMOptions{
		{Seed: 3, Workers: 2},
		{Seed: 3, Workers: 2, MaxPrecomputeBytes: 1}, // on-demand distances
	} {
		vec, err := SVMCrossValidate(x, n, d, y, opt)
		if err != nil {
			t.Fatal(err)
		}
		haveSMOKernels, haveExpKernel = false, false
		scalar, err := SVMCrossValidate(x, n, d, y, opt)
		haveSMOKernels, haveExpKernel = true, true
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(vec, scalar) {
			t.Errorf("options %+v: vector kernels\n %+v\nscalar code\n %+v", opt, vec, scalar)
		}
	}
}
