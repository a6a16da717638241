package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/batchsampler-go/batchsampler/table"
)

// imageHelp says what the image table is and what it costs.
const imageHelp = "SimCLR, DCL, HCL, MoCo v3 × Uniform, kNN Sampler, BatchSampler × 3 seeds and the untrained encoder, " +
	"on every image dataset found: hours per dataset on 2 cores (-plan lists the cells and their settings)"

// printImagePlan lists the image table's datasets with their settings and
// what they scale down from, then its cells.
func printImagePlan(w io.Writer, p *table.Plan) {
	fmt.Fprintf(w, "data root: %s\n", p.Root)
	fmt.Fprintln(w, "| Dataset | kind | path | N (pre-training) | N/B | paper's column | network | image | epochs | B | t | M | K | α | the paper's setting (appendix) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	var names []string
	for _, c := range p.Cells {
		if len(names) == 0 || names[len(names)-1] != c.Dataset {
			names = append(names, c.Dataset)
		}
	}
	for _, n := range names {
		d := p.Images[n]
		s := table.ImageSettingsFor(d)
		size := "native"
		if s.Size > 0 {
			size = fmt.Sprintf("%d×%d", s.Size, s.Size)
		}
		alpha := fmt.Sprintf("%g→%g", s.AlphaStart, s.Alpha)
		if s.AlphaStart == s.Alpha {
			alpha = fmt.Sprint(s.Alpha)
		}
		col := d.Paper
		if col == "" {
			col = "–"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %.0f | %s | %s | %s | %d | %d | %d | %d | %d | %s | %s |\n", n, d.Kind, d.Path, d.Train,
			float64(d.Train)/float64(s.BatchSize), col, s.Arch, size, s.Epochs, s.BatchSize, s.RefreshEvery, s.M, s.K, alpha, s.Paper)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| Cell | method | loss | samplers | epochs | seeds |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, c := range p.Cells {
		var smp []string
		for _, s := range c.Config.SamplerList() {
			smp = append(smp, s.DisplayName())
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %d |\n", c.Dir, c.Config.Method, c.Config.Loss, strings.Join(smp, ", "), c.Config.Train.Epochs, len(c.Config.Seeds))
	}
	fmt.Fprintf(w, "%d cells.\n", len(p.Cells))
}
