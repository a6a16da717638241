package paper

import (
	"slices"
	"testing"
)

func TestParseReported(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Reported
		text string // String(); "" = an error
	}{
		{"70.90±0.53", Reported{70.90, 0.53}, "70.90±0.53"},
		{"71.90±.46", Reported{71.90, 0.46}, "71.90±0.46"},
		{"85.08", Reported{85.08, -1}, "85.08"},
		{"-", Reported{}, ""},
		{"", Reported{}, ""},
		{"70.9±x", Reported{}, ""},
	} {
		got, err := ParseReported(tc.in)
		if tc.text == "" {
			if err == nil {
				t.Errorf("ParseReported(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want || got.String() != tc.text {
			t.Errorf("ParseReported(%q) = %v (%q), %v; want %v (%q)", tc.in, got, got.String(), err, tc.want, tc.text)
		}
	}
}

// TestGraphAppendix: the seven columns have their settings, and no other
// dataset does.
func TestGraphAppendix(t *testing.T) {
	if len(GraphAppendix) != len(GraphDatasets) {
		t.Errorf("%d settings for %d columns", len(GraphAppendix), len(GraphDatasets))
	}
	for _, d := range GraphDatasets {
		s, ok := GraphAppendix[d]
		if !ok || s.BatchSize <= 0 || s.Epochs <= 0 || s.RefreshEvery <= 0 || s.K <= 0 || s.M < s.K {
			t.Errorf("%s: %+v, %v", d, s, ok)
		}
	}
	if !slices.Contains(GraphDatasets, "MUTAG") || GraphAppendix["MUTAG"].M != 100 {
		t.Errorf("MUTAG: %+v", GraphAppendix["MUTAG"])
	}
}
