package eval

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// embedFixture is one of testdata/embed{2,3}.csv.
type embedFixture struct {
	x     []float32 // n × d
	n, d  int
	y     []int
	folds []int
}

func loadEmbed(t *testing.T, name string) embedFixture {
	t.Helper()
	path := filepath.Join("testdata", name+".csv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if len(rows) < 2 || len(rows[0]) < 3 {
		t.Fatalf("%s: %d rows, want a header and data with label, fold and features", path, len(rows))
	}
	fx := embedFixture{d: len(rows[0]) - 2}
	for i, r := range rows[1:] {
		if len(r) != fx.d+2 {
			t.Fatalf("%s line %d: %d fields, want %d", path, i+2, len(r), fx.d+2)
		}
		lab, err1 := strconv.Atoi(r[0])
		fold, err2 := strconv.Atoi(r[1])
		if err1 != nil || err2 != nil {
			t.Fatalf("%s line %d: label %q / fold %q not integers", path, i+2, r[0], r[1])
		}
		fx.y = append(fx.y, lab)
		fx.folds = append(fx.folds, fold)
		for j, s := range r[2:] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("%s line %d column x%d: %v", path, i+2, j, err)
			}
			if float64(float32(v)) != v {
				t.Fatalf("%s line %d column x%d: %v is not a float32 value", path, i+2, j, v)
			}
			fx.x = append(fx.x, float32(v))
		}
	}
	fx.n = len(fx.y)
	return fx
}

// rows64 returns rows [lo, hi) of fx as a float64 matrix.
func (fx embedFixture) rows64(lo, hi int) []float64 {
	out := make([]float64, 0, (hi-lo)*fx.d)
	for _, v := range fx.x[lo*fx.d : hi*fx.d] {
		out = append(out, float64(v))
	}
	return out
}

type plainRef struct {
	C          float64     `json:"C"`
	GammaParam float64     `json:"gamma_param"`
	Gamma      float64     `json:"gamma"`
	Decision   [][]float64 `json:"decision"`
	Predict    []int       `json:"predict"`
	DualCoef   [][]float64 `json:"dual_coef"`
	Intercept  []float64   `json:"intercept"`
	Support    []int       `json:"support"`
	NSupport   []int       `json:"n_support"`
}

type protocolRef struct {
	ChosenC   []float64   `json:"chosen_c"`
	FoldAcc   []float64   `json:"fold_acc"`
	InnerMean [][]float64 `json:"inner_mean"`
	Gamma     []float64   `json:"gamma"`
	Mean      float64     `json:"mean"`
	Std       float64     `json:"std"`
}

type statsRef struct {
	A     []float64 `json:"a"`
	B     []float64 `json:"b"`
	T     float64   `json:"t"`
	TP    float64   `json:"t_p"`
	W     float64   `json:"w"`
	WP    float64   `json:"w_p"`
	MeanA float64   `json:"mean_a"`
	StdA  float64   `json:"std_a"`
}

type sklearnRef struct {
	Versions map[string]string `json:"versions"`
	Cs       []float64         `json:"cs"`
	Datasets map[string]struct {
		Protocol protocolRef `json:"protocol"`
		Plain    []plainRef  `json:"plain"`
		SKF10    []int       `json:"skf10"`
	} `json:"datasets"`
	SKFUnbalanced struct {
		Y  []int `json:"y"`
		K3 []int `json:"k3"`
		K5 []int `json:"k5"`
		K6 []int `json:"k6"`
	} `json:"skf_unbalanced"`
	Stats map[string]statsRef `json:"stats"`
}

func loadRef(t *testing.T) sklearnRef {
	t.Helper()
	path := filepath.Join("testdata", "sklearn_reference.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var r sklearnRef
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	if r.Versions["sklearn"] == "" || len(r.Datasets) != 2 {
		t.Fatalf("%s: missing sklearn version or datasets", path)
	}
	return r
}

func strconvFormat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
