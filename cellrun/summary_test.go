package cellrun

import "testing"

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
