package cellrun

import (
	"math"
	"testing"

	"github.com/batchsampler-go/batchsampler/train"
)

func TestPText(t *testing.T) {
	for _, tt := range []struct {
		p    float64
		want string
	}{{0.631, "0.63"}, {0.049, "0.049"}, {0.0012, "0.0012"}, {0.00001, "< 0.0001"}, {0, "< 0.0001"}, {1, "1.00"}} {
		if got := PText(tt.p); got != tt.want {
			t.Errorf("PText(%v) = %q, want %q", tt.p, got, tt.want)
		}
	}
}

func TestPairedText(t *testing.T) {
	for _, tt := range []struct {
		prefix string
		c      train.Paired
		want   string
	}{
		{"", train.Paired{MeanDiff: 0.834, P: 0.31}, "+0.83, p 0.31"},
		{"", train.Paired{MeanDiff: -1.5, P: 0.0012}, "**-1.50, p 0.0012**"},
		{"STS-B ", train.Paired{MeanDiff: 0.28, P: 0.049}, "**STS-B +0.28, p 0.049**"},
		{"Avg. ", train.Paired{MeanDiff: 0.1, P: math.NaN()}, "Avg. +0.10"},
	} {
		if got := PairedText(tt.prefix, &tt.c); got != tt.want {
			t.Errorf("PairedText(%q, %+v) = %q, want %q", tt.prefix, tt.c, got, tt.want)
		}
	}
}
