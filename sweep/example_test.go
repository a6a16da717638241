package sweep_test

import (
	"fmt"

	"github.com/batchsampler-go/batchsampler/sweep"
)

// A grid of two axes, one of them shared with the baseline: the baseline
// runs once per batch size, each point is compared with the baseline at
// its own batch size.
func ExampleExpand() {
	src := []byte(`name: demo
modality: graph
data:
  source: synthetic
  synthetic: {graphs: 90, classes: 3, min_nodes: 8, max_nodes: 14, node_labels: 2, seed: 3}
loss: {kind: infonce, form: graphcl, temperature: 0.2}
samplers:
  - {kind: uniform}
  - {kind: batchsampler, m: 40, k: 10, alpha: {start: 0.2, end: 0.05}, refresh_every: 3}
train: {epochs: 3, batch_size: 32, lr: 0.01}
seeds: [0, 1, 2]
sweep:
  baseline: uniform
  axes:
    - {key: train.batch_size, name: B, values: [16, 32], shared: true}
    - key: samplers[1].alpha
      values: [0.1, {start: 0.2, end: 0.05}]
      labels: ["0.1", "0.2→0.05"]
`)
	p, err := sweep.Expand(src, "demo.yaml", []string{"seeds=[0,1]"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, b := range p.Baselines {
		fmt.Printf("%-28s %s\n", b.Dir, b.Sets)
	}
	for _, pt := range p.Points {
		fmt.Printf("%-28s %s, compared with %s\n", pt.Cell.Dir, pt.Cell.Sets, p.Baselines[pt.Baseline].Dir)
	}
	fmt.Println(p.Runs(), "runs")
	// Output:
	// baseline/B=16                [train.batch_size=16]
	// baseline/B=32                [train.batch_size=32]
	// points/B=16_alpha=0.1        [train.batch_size=16 samplers[1].alpha=0.1], compared with baseline/B=16
	// points/B=16_alpha=0.2-0.05   [train.batch_size=16 samplers[1].alpha={start: 0.2, end: 0.05}], compared with baseline/B=16
	// points/B=32_alpha=0.1        [train.batch_size=32 samplers[1].alpha=0.1], compared with baseline/B=32
	// points/B=32_alpha=0.2-0.05   [train.batch_size=32 samplers[1].alpha={start: 0.2, end: 0.05}], compared with baseline/B=32
	// 12 runs
}
