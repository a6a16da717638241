package paper

import (
	"fmt"
	"strconv"
	"strings"
)

// Reported is a number of the paper: mean ± std over its 5 seeds (Std < 0
// when the paper gives no std).
type Reported struct {
	Mean, Std float64
}

// String formats r as the paper prints it, with two decimals.
func (r Reported) String() string {
	if r.Std < 0 {
		return fmt.Sprintf("%.2f", r.Mean)
	}
	return fmt.Sprintf("%.2f±%.2f", r.Mean, r.Std)
}

// ParseReported parses a number as the paper prints it: "70.90±0.53",
// "71.90±.46" or "85.08" (no std); "-" is an error.
func ParseReported(s string) (Reported, error) {
	m, sd, hasStd := strings.Cut(s, "±")
	mean, err := strconv.ParseFloat(m, 64)
	if err != nil {
		return Reported{}, err
	}
	r := Reported{Mean: mean, Std: -1}
	if hasStd {
		if r.Std, err = strconv.ParseFloat(sd, 64); err != nil {
			return Reported{}, err
		}
	}
	return r, nil
}
