package cellrun

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/batchsampler-go/batchsampler/train"
)

// partialNote says how far an unfinished cell in dir has come: how many of
// its planned runs (samplers × seeds) have a result.json, and the values
// of those runs per sampler, in the order of the cell's samplers. It is
// empty when no run has finished. Damaged result files are counted as not
// finished (the cell rewrites them when it runs again).
func partialNote(cfg *train.Config, dir string) string {
	planned := len(cfg.SamplerList()) * len(cfg.Seeds)
	bySampler := map[string][]string{}
	done := 0
	metric := ""
	paths, _ := filepath.Glob(filepath.Join(dir, "runs", "*", "result.json"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var r train.RunResult
		if json.Unmarshal(b, &r) != nil || r.Metric == "" {
			continue
		}
		done++
		metric = r.Metric
		bySampler[r.Sampler] = append(bySampler[r.Sampler], fmt.Sprintf("%.2f (seed %d)", r.Value, r.Seed))
	}
	if done == 0 {
		return ""
	}
	var parts []string
	for _, s := range cfg.SamplerList() {
		if v := bySampler[s.DisplayName()]; len(v) > 0 {
			parts = append(parts, s.DisplayName()+" "+strings.Join(v, ", "))
		}
	}
	return fmt.Sprintf("%d of %d runs finished, %s: %s", done, planned, metric, strings.Join(parts, "; "))
}
