package train

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batchsampler-go/batchsampler/model"
)

// TestStepAcrossMatchesOneGraph: GraphCL's step with the two views on two
// graphs run at once (stepAcross) gives the runs of the step on one graph
// bit for bit (losses, false-negative ratios, refreshes, results), with
// each loss of the GIN table and float32 and float64 projections alike.
func TestStepAcrossMatchesOneGraph(t *testing.T) {
	bs := `samplers=[{kind: uniform}, {kind: batchsampler, m: 30, k: 5, alpha: 0.3, refresh_every: 2}]`
	for _, lc := range []string{
		"loss={kind: infonce, form: graphcl, temperature: 0.2}",
		"loss={kind: dcl, form: graphcl, temperature: 0.5}",
		"loss={kind: hcl, form: graphcl, temperature: 0.5, beta: 1, tau_plus: 0.1}",
	} {
		t.Run(lc, func(t *testing.T) {
			cfg := mustParse(t, tinySynthetic, bs, lc, "seeds=[0]")
			across, one := t.TempDir(), t.TempDir()
			r1, err := Run(context.Background(), cfg, Options{OutDir: across})
			if err != nil {
				t.Fatal(err)
			}
			viewsAtOnce = false
			defer func() { viewsAtOnce = true }()
			r2, err := Run(context.Background(), cfg, Options{OutDir: one})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(resultsOf(t, r1), resultsOf(t, r2)) {
				t.Errorf("results: views at once %v, on one graph %v", resultsOf(t, r1), resultsOf(t, r2))
			}
			a, b := runFiles(t, across), runFiles(t, one)
			for k, v := range b {
				if a[k] != v {
					t.Errorf("%s differs:\n%s\n%s", k, firstDiff(a[k], v), firstDiff(v, a[k]))
				}
			}
		})
	}
}

// TestStepAcrossViewFails: when one view's graph cannot be built, the
// other view (waiting at the loss) is released and the step returns the
// failing view's error, whichever view it is.
func TestStepAcrossViewFails(t *testing.T) {
	cfg := mustParse(t, tinySynthetic)
	ds, err := loadGraphs(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := newGraphCL(&cfg, ds, 1)
	if err != nil {
		t.Fatal(err)
	}
	g := m.(*graphCL)
	good, err := model.PackGraphs(g.set.Graphs[:8])
	if err != nil {
		t.Fatal(err)
	}
	bad := *good
	bad.FeatDim++ // the encoder refuses it
	for v := range 2 {
		views := [2]*model.GraphBatch{good, good}
		views[v] = &bad
		done := make(chan error, 1)
		go func() { _, err := g.stepAcross(views); done <- err }()
		select {
		case err := <-done:
			if want := fmt.Sprintf("encode view %d", v+1); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("view %d bad: %v, want an error saying %q", v+1, err, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("view %d bad: the step hangs", v+1)
		}
	}
	// And the next step runs.
	if _, err := g.stepAcross([2]*model.GraphBatch{good, good}); err != nil {
		t.Errorf("a step after the failures: %v", err)
	}
}
