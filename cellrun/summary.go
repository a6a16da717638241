package cellrun

import (
	"fmt"
	"math"
	"time"

	"github.com/batchsampler-go/batchsampler/train"
)

// Summary is what every assembled grid (the graph and text tables, a
// sweep) records besides its cells; its fields are inlined in the JSON.
type Summary struct {
	// Failed lists the cells without results and why.
	Failed []string `json:"failed,omitempty"`
	// Skipped lists what the plan left out and why (datasets, tasks).
	Skipped []string `json:"skipped,omitempty"`
	// Sets are the overrides applied to every cell.
	Sets []string `json:"sets,omitempty"`
	// ComputeSeconds sums training and evaluation over every finished
	// run: the grid's cost on this machine, whichever processes ran it.
	ComputeSeconds float64 `json:"compute_seconds"`
	// WallSeconds is the time of the process that assembled the grid
	// (cells finished earlier cost it nothing).
	WallSeconds float64          `json:"wall_seconds"`
	Provenance  train.Provenance `json:"provenance"`
}

// NewSummary starts the Summary of a grid assembled by this process after
// wall, with the plan's skipped items and the overrides sets.
func NewSummary(skipped, sets []string, wall time.Duration) Summary {
	return Summary{Skipped: skipped, Sets: sets, WallSeconds: wall.Seconds(), Provenance: train.CurrentProvenance()}
}

// PText formats a p-value with two significant digits where it is small
// (0.31, 0.049, 0.0012, < 0.0001).
func PText(p float64) string {
	switch {
	case p < 1e-4:
		return "< 0.0001"
	case p < 0.05:
		return fmt.Sprintf("%.2g", p)
	}
	return fmt.Sprintf("%.2f", p)
}

// Minutes formats seconds as "12.3 min" (or "45 s" below a minute).
func Minutes(s float64) string {
	if s < 60 {
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%.1f min", s/60)
}

// PairedText formats a paired comparison as the grids print it beside a
// cell, after prefix: "+0.83, p 0.31", in bold ("**…**", prefix included)
// where p < 0.05, and the mean difference alone where p is NaN (fewer than
// two paired seeds).
func PairedText(prefix string, c *train.Paired) string {
	if math.IsNaN(c.P) {
		return fmt.Sprintf("%s%+.2f", prefix, c.MeanDiff)
	}
	s := fmt.Sprintf("%s%+.2f, p %s", prefix, c.MeanDiff, PText(c.P))
	if c.P < 0.05 {
		s = "**" + s + "**"
	}
	return s
}
