package cellrun_test

import (
	"fmt"

	"github.com/batchsampler-go/batchsampler/cellrun"
)

// The cells of a grid dealt to task 1 of 3 of an array job, as
// -shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT gives it.
func ExampleShard_Select() {
	var cells []cellrun.Cell
	for _, d := range []string{"MUTAG", "PROTEINS", "IMDB-BINARY", "IMDB-MULTI", "NCI1", "COLLAB", "REDDIT-BINARY"} {
		cells = append(cells, cellrun.Cell{Dataset: d, Block: "graphcl", Dir: d + "/graphcl"})
	}
	shard, err := cellrun.ParseShard("1/3")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range shard.Select(cells) {
		fmt.Println(shard, c.Dir)
	}
	// Output:
	// 1/3 PROTEINS/graphcl
	// 1/3 NCI1/graphcl
}
