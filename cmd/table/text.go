package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/table"
)

// textHelp says what the text table is and what it costs (measured per run
// in results/simcse-stsb: Uniform 0.5 min, kNN 1.3 min, BatchSampler 0.6
// min, training and evaluation, on the shared 2 cores).
const textHelp = "SimCSE, DCL, HCL × Uniform, kNN Sampler, BatchSampler × 3 seeds on the STS tasks: 27 runs, " +
	"about 25 minutes on 2 idle cores, up to an hour when other jobs share them"

// defaultOut is each table's directory under runs/.
var defaultOut = map[string]string{"graph": "table-graphs", "text": "table-text", "image": "table-vision"}

// planFor lays out the cells of the table of a modality.
func planFor(modality string, opt table.PlanOptions) (*table.Plan, error) {
	switch modality {
	case "graph":
		return table.PlanGraphs(opt, data.DefaultRoot())
	case "text":
		return table.PlanText(opt, data.DefaultRoot())
	case "image":
		return table.PlanImages(opt, data.DefaultRoot())
	}
	return nil, fmt.Errorf("-modality %q: expected graph, text or image", modality)
}

// assembled is a table ready to be written.
type assembled interface {
	Markdown() string
	Write(dir string) error
}

// assembleTable builds the table of a modality from its cells' statuses
// (dir is the table's directory, where the image table reads its cells'
// accuracy curves).
func assembleTable(modality, dir string, sts []cellrun.Status, plan *table.Plan, sets []string, wall time.Duration) assembled {
	switch modality {
	case "text":
		return table.AssembleText(sts, plan, sets, wall)
	case "image":
		t := table.AssembleImages(sts, plan, sets, wall)
		t.ReadCurves(dir, sts)
		return t
	}
	return table.AssembleGraphs(sts, plan, sets, wall)
}

// printTextPlan lists the text table's cells with their settings, and the
// STS tasks found under the data root.
func printTextPlan(p *table.Plan) {
	fmt.Printf("data root: %s\n", p.Root)
	fmt.Println("| Method | config | loss | B | epochs | samplers | seeds |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, c := range p.Cells {
		var smp []string
		for _, s := range c.Config.SamplerList() {
			d := s.DisplayName()
			if s.Kind == "batchsampler" {
				alpha := fmt.Sprintf("%g→%g", s.Alpha.Start, s.Alpha.End)
				if s.Alpha.Constant {
					alpha = fmt.Sprintf("%g", s.Alpha.Start)
				}
				d += fmt.Sprintf(" (M %d, K %d, α %s)", s.M, s.K, alpha)
			}
			if s.Kind != "uniform" {
				if s.RefreshEvery == 0 {
					d += " built once before training"
				} else {
					d += fmt.Sprintf(" rebuilt every %d steps", s.RefreshEvery)
				}
			}
			smp = append(smp, d)
		}
		fmt.Printf("| %s | configs/%s | %s | %d | %d | %s | %d |\n", c.Block, table.TextConfigFiles[c.Block], c.Config.Loss,
			c.Config.Train.BatchSize, c.Config.Train.Epochs, strings.Join(smp, "; "), len(c.Config.Seeds))
	}
	var present, absent []string
	for _, t := range table.TextTasks {
		missing := false
		for _, s := range p.Skipped {
			missing = missing || strings.HasPrefix(s, t+":")
		}
		if missing {
			absent = append(absent, t)
		} else {
			present = append(present, t)
		}
	}
	fmt.Printf("STS tasks under the data root: %s", strings.Join(present, ", "))
	if len(absent) > 0 {
		fmt.Printf("; absent: %s (their columns read \"absent\" and Avg. is partial, %d/%d)", strings.Join(absent, ", "), len(present), len(table.TextTasks))
	}
	fmt.Printf("\n%d cells, %s.\n", len(p.Cells), textHelp)
}
