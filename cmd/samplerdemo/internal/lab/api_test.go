package lab

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/npy"
)

func call(t *testing.T, a *API, method string, arg any, out any) {
	t.Helper()
	b, err := json.Marshal(arg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Call(method, b)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAPIErrors: every bad call is an error that names the call and what
// was wrong.
func TestAPIErrors(t *testing.T) {
	a := &API{}
	for _, tc := range []struct {
		method, arg, want string
	}{
		{"nope", "{}", "unknown call"},
		{"batch", `{"settings":{"sampler":"uniform","b":8}}`, "no data yet"},
		{"data", `{"n":600,"clases":4}`, "unknown field"},
		{"data", `{"n":600,"classes":4,"sub":4,"dim":5,"spread":0.1}`, "data.dim = 5"},
		{"trainStep", `{"steps":1}`, "trainInit first"},
	} {
		_, err := a.Call(tc.method, []byte(tc.arg))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), tc.method) {
			t.Errorf("%s(%s): %v, want an error starting with the call and mentioning %q", tc.method, tc.arg, err, tc.want)
		}
	}
	var v DataView
	call(t, a, "data", DefaultData(), &v)
	// 16 sub-clusters on the circle: neighbouring centres 2π/16 apart.
	if want := math.Floor(100*math.Cos(2*math.Pi/16)) / 100; v.Threshold != want {
		t.Errorf("threshold %v, want cos(2π/16) rounded down = %v", v.Threshold, want)
	}
	for _, tc := range []struct {
		method, arg, want string
	}{
		{"batch", `{"settings":{"sampler":"batchsampler","b":32,"m":10,"k":31}}`, "sampler.m: must be >= sampler.k = 31, got 10"},
		{"measure", `{"settings":{"sampler":"uniform","b":32},"batches":0}`, "batches = 0"},
		{"trainInit", `{"settings":{"b":32},"train":{"hidden":0},"steps":10}`, "train.hidden"},
		{"trainInit", `{"settings":{"b":32},"train":{"hidden":8,"out":4,"tau":0.2,"lr":0.01,"probeEvery":5},"steps":0}`, "steps = 0"},
	} {
		if _, err := a.Call(tc.method, []byte(tc.arg)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s(%s): %v, want an error mentioning %q", tc.method, tc.arg, err, tc.want)
		}
	}
}

// npyFile returns a .npy file of float32 rows or int64 values.
func npyFile(t *testing.T, dt npy.DType, shape []int, vals []float64) []byte {
	b := npy.AppendHeader(nil, dt, shape)
	for _, v := range vals {
		switch dt {
		case npy.Float32:
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		case npy.Int64:
			b = binary.LittleEndian.AppendUint64(b, uint64(int64(v)))
		default:
			t.Fatalf("dtype %v", dt)
		}
	}
	return b
}

// TestLoadRun: a run's .npy files (N×D float32, N int64 labels) become the
// page's data, labels renumbered, drawn by their PCA; the samplers then
// work on the full dimension.
func TestLoadRun(t *testing.T) {
	const n, d = 40, 5
	vals := make([]float64, n*d)
	labs := make([]float64, n)
	for i := range n {
		labs[i] = float64(7 * (i % 3)) // labels 0, 7, 14
		for j := range d {
			vals[i*d+j] = math.Sin(float64(i*d+j)) + float64(i%3)
		}
	}
	a := &API{}
	out, err := a.LoadRun(npyFile(t, npy.Float32, []int{n, d}, vals), npyFile(t, npy.Int64, []int{n}, labs), "run.npy", "run_labels.npy")
	if err != nil {
		t.Fatal(err)
	}
	var v DataView
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	if v.N != n || v.D != d || v.Classes != 3 || v.View != 2 || len(v.XY) != 2*n || v.Source != "run" || len(v.Explained) != 2 {
		t.Fatalf("view %+v", v)
	}
	for i := range n {
		if v.Labels[i] != i%3 {
			t.Fatalf("label %d: %d, want %d", i, v.Labels[i], i%3)
		}
	}
	if !(v.Explained[0] >= v.Explained[1] && v.Explained[0]+v.Explained[1] <= 1+1e-12) {
		t.Errorf("explained %v", v.Explained)
	}
	var bv BatchView
	call(t, a, "batch", BatchRequest{Settings: Settings{Sampler: "knn", B: 8, Seed: 1, Threshold: 0.5}}, &bv)
	if len(bv.Batch) != 8 {
		t.Errorf("batch %v", bv.Batch)
	}
	if _, err := a.Call("trainInit", []byte(`{"settings":{"b":8},"train":{"hidden":8,"out":4,"tau":0.2,"lr":0.01,"probeEvery":5},"steps":5}`)); err == nil || !strings.Contains(err.Error(), "generated point set") {
		t.Errorf("train mode on a run: %v", err)
	}
	for _, tc := range []struct {
		emb, lab []byte
		want     string
	}{
		{[]byte("nope"), nil, "run.npy"},
		{npyFile(t, npy.Float32, []int{n, d}, vals), npyFile(t, npy.Int64, []int{n - 1}, labs[1:]), "39 labels, but run.npy has 40 rows"},
		{npyFile(t, npy.Float32, []int{n, d}, vals), npyFile(t, npy.Float32, []int{n}, labs), "int32 or int64"},
		{npyFile(t, npy.Float32, []int{n * d}, vals), npyFile(t, npy.Int64, []int{n}, labs), "2-D"},
	} {
		if _, err := a.LoadRun(tc.emb, tc.lab, "run.npy", "run_labels.npy"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadRun: %v, want an error mentioning %q", err, tc.want)
		}
	}
}

// TestTrainDeterministicAndLearning: two trainers from the same seed give
// the same points; the losses fall; kNN Sampler batches hold more false
// negatives than Uniform's; the probe beats the raw input's.
func TestTrainDeterministicAndLearning(t *testing.T) {
	req := TrainRequest{Settings: Settings{B: 32, M: 100, K: 31, Alpha: 0.2, Seed: 1, Threshold: 0.9}, Train: DefaultTrain(), Steps: 60}
	var ups [2][]TrainUpdate
	var start TrainStart
	for i := range 2 {
		a := &API{}
		call(t, a, "data", DefaultData(), nil)
		call(t, a, "trainInit", req, &start)
		var u1, u2 []TrainUpdate
		call(t, a, "trainStep", StepRequest{Steps: 20}, &u1)
		call(t, a, "trainStep", StepRequest{Steps: 40}, &u2)
		for k := range u1 {
			u1[k].Points = append(u1[k].Points, u2[k].Points...)
			u1[k].Snapshots = append(u1[k].Snapshots, u2[k].Snapshots...)
		}
		ups[i] = u1
		if _, err := a.Call("trainStep", []byte(`{"steps":1}`)); err == nil {
			t.Error("a step past the planned 60 accepted")
		}
	}
	a, b := ups[0], ups[1]
	if len(a) != 3 || a[0].Name != "uniform" || a[1].Name != "knn" || a[2].Name != "batchsampler" {
		t.Fatalf("runs %v", a)
	}
	for k := range a {
		if len(a[k].Points) != 60 || len(a[k].Snapshots) != 7 {
			t.Fatalf("%s: %d points, %d snapshots; want 60 and 7 (every 10 steps and the end)", a[k].Name, len(a[k].Points), len(a[k].Snapshots))
		}
		for i := range a[k].Points {
			if a[k].Points[i] != b[k].Points[i] {
				t.Fatalf("%s step %d: %+v then %+v", a[k].Name, i, a[k].Points[i], b[k].Points[i])
			}
		}
		if !slices.Equal(a[k].Snapshots[6].XY, b[k].Snapshots[6].XY) {
			t.Fatalf("%s: the last snapshots differ", a[k].Name)
		}
		mean := func(p []TrainPoint) (l, fn float64) {
			for _, x := range p {
				l += x.Loss / float64(len(p))
				fn += x.FN / float64(len(p))
			}
			return
		}
		l0, _ := mean(a[k].Points[:10])
		l1, _ := mean(a[k].Points[50:])
		t.Logf("%s: loss %.3f → %.3f, probe %.3f → %.3f (raw input %.3f)", a[k].Name, l0, l1, a[k].Snapshots[0].Probe, a[k].Snapshots[6].Probe, start.RawProbe)
		if a[k].Name != "knn" && !(l1 < l0) {
			t.Errorf("%s: the loss did not fall: %.3f → %.3f", a[k].Name, l0, l1)
		}
		if a[k].Name == "uniform" && !(a[k].Snapshots[6].Probe > start.RawProbe) {
			t.Errorf("uniform: probe %.3f after 60 steps, raw input %.3f", a[k].Snapshots[6].Probe, start.RawProbe)
		}
	}
	_, fnU := func() (float64, float64) {
		var fn float64
		for _, p := range a[0].Points {
			fn += p.FN / 60
		}
		return 0, fn
	}()
	var fnK float64
	for _, p := range a[1].Points {
		fnK += p.FN / 60
	}
	if !(fnK > fnU) {
		t.Errorf("false-negative ratio: kNN %.3f, Uniform %.3f", fnK, fnU)
	}
}
