package paper_test

import (
	"fmt"

	"github.com/batchsampler-go/batchsampler/paper"
)

// The paper's GraphCL + BatchSampler on IMDB-BINARY, read as printed, with
// the appendix's settings it was run with.
func ExampleParseReported() {
	r, err := paper.ParseReported("71.90±.46")
	if err != nil {
		fmt.Println(err)
		return
	}
	s := paper.GraphAppendix["IMDB-BINARY"]
	fmt.Printf("%v (mean %.2f, std %.2f) with B=%d, t=%d, M=%d, K=%d\n", r, r.Mean, r.Std, s.BatchSize, s.RefreshEvery, s.M, s.K)
	// Output:
	// 71.90±0.46 (mean 71.90, std 0.46) with B=256, t=25, M=500, K=100
}
