package table

import (
	"fmt"
	"slices"
	"strings"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// Rows beyond the paper's three: cmd/table's -samplers adds global batch
// samplers (sampler.GlobalKinds) to every cell, each refreshed as the
// cell's BatchSampler is, and the tables give each a row after the paper's.

// AddSamplers appends a sampler of each kind (one of sampler.GlobalKinds,
// with its defaults and the refresh_every of the cell's batchsampler, else
// knn, sampler) to every cell of the plan, and checks the configs.
func AddSamplers(p *Plan, kinds []string) error {
	for _, k := range kinds {
		if !slices.Contains(sampler.GlobalKinds, k) {
			return fmt.Errorf("-samplers: %q is not a global batch sampler; allowed: %s", k, strings.Join(sampler.GlobalKinds, ", "))
		}
	}
	for i := range p.Cells {
		c := &p.Cells[i].Config
		specs := c.SamplerList()
		t := 0
		for _, s := range specs {
			if s.Kind == sampler.KindBatchSampler || (s.Kind == sampler.KindKNN && t == 0) {
				t = s.RefreshEvery
			}
		}
		for _, k := range kinds {
			specs = append(specs, sampler.Spec{Kind: k, RefreshEvery: t})
		}
		c.Sampler, c.Samplers = nil, specs
		if err := c.Validate(); err != nil {
			return fmt.Errorf("%s/%s with -samplers: %w", p.Cells[i].Dataset, p.Cells[i].Block, err)
		}
	}
	return nil
}

// rowSamplers are a block's rows: Samplers, then every other sampler of
// names in order of first appearance.
func rowSamplers(names []string) []string {
	rows := slices.Clone(Samplers)
	for _, n := range names {
		if !slices.Contains(rows, n) {
			rows = append(rows, n)
		}
	}
	return rows
}

// rowTitle is a sampler row's name: the paper's, "w/ NAME" for the others
// ("" for Uniform: the block's own name).
func rowTitle(smp string) string {
	if t, ok := samplerTitle[smp]; ok {
		return t
	}
	return "w/ " + smp
}
