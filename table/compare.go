package table

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
)

// ReadGraphTable reads a graph table's table.json (GraphTable.Write).
func ReadGraphTable(path string) (*GraphTable, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read graph table: %w", err)
	}
	var t GraphTable
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("read graph table %s: %w (expected the table.json that cmd/table writes)", path, err)
	}
	if len(t.Entries) == 0 {
		return nil, fmt.Errorf("read graph table %s: no entries (expected the table.json that cmd/table writes)", path)
	}
	return &t, nil
}

// Comparison is how a graph table's results compare with a recorded
// table's, run by run (CompareGraphTables).
type Comparison struct {
	// Runs counts the runs (a row's seed) found in both tables, Same those
	// whose accuracy is the record's to the last bit.
	Runs, Same int
	// Diffs has a line for every run whose accuracy differs and for every
	// row whose final false-negative ratio differs.
	Diffs []string
	// NotCompared lists what the record has and the table lacks (rows, as
	// "DATASET METHOD (samplers)", and seeds of a row); Extra the rows the
	// table has and the record lacks.
	NotCompared, Extra []string
}

// Identical reports whether every run found in both tables gave the same
// results, bit for bit.
func (c *Comparison) Identical() bool { return len(c.Diffs) == 0 }

// String is the comparison as a report: the counts, then every
// difference, then what was not compared.
func (c *Comparison) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d runs in both tables, %d with the record's accuracy to the last bit", c.Runs, c.Same)
	if c.Identical() {
		b.WriteString(", and every final false-negative ratio compared is the record's\n")
	} else {
		fmt.Fprintf(&b, "; %d differences:\n", len(c.Diffs))
		for _, d := range c.Diffs {
			fmt.Fprintf(&b, "  %s\n", d)
		}
	}
	for _, s := range [...]struct {
		title string
		items []string
	}{{"in the record, not in this table", c.NotCompared}, {"in this table, not in the record", c.Extra}} {
		if len(s.items) > 0 {
			fmt.Fprintf(&b, "%s: %s\n", s.title, strings.Join(s.items, "; "))
		}
	}
	return b.String()
}

// CompareGraphTables compares got with record run by run: a row is a
// dataset, method and sampler, a run one of its seeds. Accuracies and the
// rows' final false-negative ratios (of rows with the same seeds: the ratio
// is a mean over them) are compared bit for bit (JSON keeps a float64
// exactly). Rows or seeds that only one table has are listed, not
// counted as differences, so a table of fewer datasets or methods can be
// checked against the whole record.
func CompareGraphTables(record, got *GraphTable) *Comparison {
	c := &Comparison{}
	for i := range record.Entries {
		want := &record.Entries[i]
		row := want.Dataset + " " + want.Block + " " + want.Sampler
		have := got.entry(want.Block, want.Sampler, want.Dataset)
		if have == nil {
			c.NotCompared = addRow(c.NotCompared, want)
			continue
		}
		var missing []string
		for j, seed := range want.Seeds {
			k := slices.Index(have.Seeds, seed)
			if k < 0 || j >= len(want.PerSeed) || k >= len(have.PerSeed) {
				missing = append(missing, fmt.Sprint(seed))
				continue
			}
			c.Runs++
			if a, b := want.PerSeed[j], have.PerSeed[k]; math.Float64bits(a) == math.Float64bits(b) {
				c.Same++
			} else {
				c.Diffs = append(c.Diffs, fmt.Sprintf("%s seed %d: accuracy %v, recorded %v", row, seed, b, a))
			}
		}
		if len(missing) > 0 {
			c.NotCompared = append(c.NotCompared, row+" seeds "+strings.Join(missing, ","))
		}
		// The row's final false-negative ratio is a mean over its seeds:
		// comparable only over the same seeds.
		if len(missing) > 0 || len(have.Seeds) != len(want.Seeds) {
			if want.FinalFNRatio != nil || have.FinalFNRatio != nil {
				c.NotCompared = append(c.NotCompared, row+" final false-negative ratio (other seeds)")
			}
		} else if !sameRatio(want.FinalFNRatio, have.FinalFNRatio) {
			c.Diffs = append(c.Diffs, fmt.Sprintf("%s: final false-negative ratio %s, recorded %s", row, ratioText(have.FinalFNRatio), ratioText(want.FinalFNRatio)))
		}
	}
	for i := range got.Entries {
		e := &got.Entries[i]
		if record.entry(e.Block, e.Sampler, e.Dataset) == nil {
			c.Extra = addRow(c.Extra, e)
		}
	}
	return c
}

// addRow adds e's row to list, as "DATASET METHOD (sampler, ...)": the
// samplers of one cell on one item.
func addRow(list []string, e *Entry) []string {
	cell := e.Dataset + " " + e.Block + " ("
	if n := len(list); n > 0 && strings.HasPrefix(list[n-1], cell) {
		list[n-1] = strings.TrimSuffix(list[n-1], ")") + ", " + e.Sampler + ")"
		return list
	}
	return append(list, cell+e.Sampler+")")
}

func sameRatio(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return math.Float64bits(*a) == math.Float64bits(*b)
}

func ratioText(r *float64) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprint(*r)
}
