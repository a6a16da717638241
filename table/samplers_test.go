package table

import (
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// AddSamplers appends the global samplers with the cell's refresh interval
// and refuses a kind that is not one; the graph table then has a row for
// each after the paper's three.
func TestAddSamplersRows(t *testing.T) {
	cfg, err := GraphConfig(BlockGraphCL, GraphData{Name: "NCI1", Source: "tu", Path: "tu/NCI1"}, 4110, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &Plan{Cells: []cellrun.Cell{{Dataset: "NCI1", Block: BlockGraphCL, Config: cfg}}}
	if err := AddSamplers(p, []string{"gcbs", "osgd"}); err != nil {
		t.Fatal(err)
	}
	specs := p.Cells[0].Config.SamplerList()
	if len(specs) != 5 || specs[3].Kind != sampler.KindGCBS || specs[4].Kind != sampler.KindOSGD {
		t.Fatalf("samplers after AddSamplers: %+v", specs)
	}
	for _, s := range specs[3:] {
		if s.RefreshEvery != 50 {
			t.Errorf("%s refresh_every %d, want NCI1's t = 50", s.Kind, s.RefreshEvery)
		}
	}
	if err := AddSamplers(p, []string{"knn"}); err == nil || !strings.Contains(err.Error(), "gcbs, spectral, osgd, kmeans, antikmeans") {
		t.Errorf("knn as a global sampler: %v", err)
	}
	tab := &GraphTable{Datasets: []string{"NCI1"}, Blocks: []string{BlockGraphCL}, Entries: []Entry{
		{Dataset: "NCI1", Block: BlockGraphCL, Sampler: "uniform", Mean: 70, PerSeed: []float64{70}},
		{Dataset: "NCI1", Block: BlockGraphCL, Sampler: "gcbs", Mean: 71, PerSeed: []float64{71}},
	}}
	md := tab.Markdown()
	if !strings.Contains(md, "| w/ gcbs | 71.00±0.00") {
		t.Errorf("no gcbs row in\n%s", md)
	}
	if strings.Contains(md, "| w/ osgd |") {
		t.Error("a row for a sampler without results")
	}
}
