package table

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func ratio(v float64) *float64 { return &v }

// recordedTable is a small record: two rows of one dataset and one of
// another, five seeds each where given.
func recordedTable() *GraphTable {
	return &GraphTable{Datasets: []string{"MUTAG", "NCI1"}, Blocks: []string{BlockGraphCL}, Entries: []Entry{
		{Dataset: "MUTAG", Block: BlockGraphCL, Sampler: "uniform", Seeds: []uint64{0, 1, 2}, PerSeed: []float64{87.5, 86.25, 88.0}},
		{Dataset: "MUTAG", Block: BlockGraphCL, Sampler: "batchsampler", Seeds: []uint64{0, 1, 2}, PerSeed: []float64{87.0, 85.0, 89.125}, FinalFNRatio: ratio(0.25)},
		{Dataset: "NCI1", Block: BlockGraphCL, Sampler: "uniform", Seeds: []uint64{0, 1}, PerSeed: []float64{79.1, 78.9}},
	}}
}

func TestCompareGraphTables(t *testing.T) {
	cases := []struct {
		name           string
		change         func(g *GraphTable)
		runs, same     int
		diffs          []string // substrings, one per expected difference
		notCompared    []string
		extra          []string
		wantIdentical  bool
		reportContains string
	}{
		{name: "identical", change: func(*GraphTable) {}, runs: 8, same: 8, wantIdentical: true,
			reportContains: "8 runs in both tables, 8 with the record's accuracy to the last bit, and every final"},
		{name: "last bit of one seed", change: func(g *GraphTable) {
			g.Entries[0].PerSeed[1] = math.Nextafter(86.25, 100)
		}, runs: 8, same: 7, diffs: []string{"MUTAG graphcl uniform seed 1: accuracy 86.25000000000001, recorded 86.25"}},
		{name: "seeds in another order are matched by seed", change: func(g *GraphTable) {
			e := &g.Entries[1]
			e.Seeds = []uint64{2, 0, 1}
			e.PerSeed = []float64{89.125, 87.0, 85.0}
		}, runs: 8, same: 8, wantIdentical: true},
		{name: "final false-negative ratio", change: func(g *GraphTable) {
			g.Entries[1].FinalFNRatio = ratio(0.2500001)
		}, runs: 8, same: 8, diffs: []string{"MUTAG graphcl batchsampler: final false-negative ratio 0.2500001, recorded 0.25"}},
		{name: "final false-negative ratio missing", change: func(g *GraphTable) {
			g.Entries[1].FinalFNRatio = nil
		}, runs: 8, same: 8, diffs: []string{"final false-negative ratio none, recorded 0.25"}},
		{name: "fewer seeds: the row's ratio, a mean over them, is not compared", change: func(g *GraphTable) {
			e := &g.Entries[1]
			e.Seeds, e.PerSeed, e.FinalFNRatio = e.Seeds[:2], e.PerSeed[:2], ratio(0.3)
		}, runs: 7, same: 7, wantIdentical: true,
			notCompared: []string{"MUTAG graphcl batchsampler seeds 2", "MUTAG graphcl batchsampler final false-negative ratio (other seeds)"}},
		{name: "fewer datasets and seeds, one more row", change: func(g *GraphTable) {
			g.Entries = g.Entries[:2]
			g.Entries[0].Seeds, g.Entries[0].PerSeed = g.Entries[0].Seeds[:2], g.Entries[0].PerSeed[:2]
			g.Entries = append(g.Entries, Entry{Dataset: "PROTEINS", Block: BlockGraphCL, Sampler: "uniform", Seeds: []uint64{0}, PerSeed: []float64{74}},
				Entry{Dataset: "PROTEINS", Block: BlockGraphCL, Sampler: "knn", Seeds: []uint64{0}, PerSeed: []float64{73}})
		}, runs: 5, same: 5, wantIdentical: true,
			notCompared: []string{"MUTAG graphcl uniform seeds 2", "NCI1 graphcl (uniform)"}, extra: []string{"PROTEINS graphcl (uniform, knn)"},
			reportContains: "in the record, not in this table: MUTAG graphcl uniform seeds 2; NCI1 graphcl (uniform)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := recordedTable()
			tc.change(got)
			c := CompareGraphTables(recordedTable(), got)
			if c.Runs != tc.runs || c.Same != tc.same {
				t.Errorf("runs %d, same %d; want %d, %d", c.Runs, c.Same, tc.runs, tc.same)
			}
			if c.Identical() != tc.wantIdentical || len(c.Diffs) != len(tc.diffs) {
				t.Fatalf("identical %v with differences %q; want %v with %d", c.Identical(), c.Diffs, tc.wantIdentical, len(tc.diffs))
			}
			for i, d := range tc.diffs {
				if !strings.Contains(c.Diffs[i], d) {
					t.Errorf("difference %d: %q, want it to contain %q", i, c.Diffs[i], d)
				}
			}
			if strings.Join(c.NotCompared, "|") != strings.Join(tc.notCompared, "|") || strings.Join(c.Extra, "|") != strings.Join(tc.extra, "|") {
				t.Errorf("not compared %q, extra %q; want %q, %q", c.NotCompared, c.Extra, tc.notCompared, tc.extra)
			}
			if !strings.Contains(c.String(), tc.reportContains) {
				t.Errorf("report %q does not contain %q", c.String(), tc.reportContains)
			}
			for _, d := range c.Diffs {
				if !strings.Contains(c.String(), d) {
					t.Errorf("report %q does not list %q", c.String(), d)
				}
			}
		})
	}
}

// A table written by GraphTable.Write reads back with every bit of its
// results, so a table compared with its own file is identical.
func TestReadGraphTableRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rec := recordedTable()
	rec.Entries[0].PerSeed[0] = 0.1 + 0.2 // a value whose shortest decimal form is long
	if err := rec.Write(dir); err != nil {
		t.Fatal(err)
	}
	back, err := ReadGraphTable(filepath.Join(dir, "table.json"))
	if err != nil {
		t.Fatal(err)
	}
	if c := CompareGraphTables(rec, back); !c.Identical() || c.Runs != 8 || c.Same != 8 {
		t.Fatalf("round trip: %s", c)
	}
	for _, bad := range []struct{ name, body, want string }{
		{"truncated.json", `{"entries": [`, "truncated.json"},
		{"empty.json", `{"datasets": []}`, "no entries"},
	} {
		p := filepath.Join(dir, bad.name)
		if err := os.WriteFile(p, []byte(bad.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadGraphTable(p); err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "table.json that cmd/table writes") {
			t.Errorf("%s: %v", bad.name, err)
		}
	}
	if _, err := ReadGraphTable(filepath.Join(dir, "absent.json")); err == nil || !strings.Contains(err.Error(), "absent.json") {
		t.Errorf("absent file: %v", err)
	}
}
