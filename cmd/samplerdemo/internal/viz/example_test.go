package viz_test

import (
	"fmt"
	"os"

	"github.com/batchsampler-go/batchsampler/cmd/samplerdemo/internal/viz"
)

// Run draws the teaching pictures of the default configuration (the same as
// configs/demo-sampler.yaml) into a directory.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "samplerdemo")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	res, err := viz.Run(viz.DefaultConfig(), dir)
	if err != nil {
		panic(err)
	}
	for _, f := range res.Files {
		fmt.Println(f)
	}
	// Output:
	// points.png
	// proximity_graph.png
	// proximity_graph_M.png
	// batch_uniform.png
	// batch_knn.png
	// batch_batchsampler.png
	// batches_alpha.png
	// summary.md
}
