package train

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// vsTorchPython is the interpreter of scripts/bench_vs_pytorch.py (Debian's,
// with numpy and torch).
const vsTorchPython = "/usr/bin/python3"

// vsTorchMoCoCheck runs the script's own checks of the MoCo v3 workload
// (compare_params and moco_hparam_problems) on each Go side of cases
// against the PyTorch MoCoV3 that torch_moco builds from MOCO, and returns
// each case's problems. It is what the script checks after a round, without
// running a step.
const vsTorchMoCoCheck = `
import json, sys
sys.path.insert(0, "scripts")
import bench_vs_pytorch as b
c = b.MOCO
pt = b.torch_params(b.MoCoV3(c["proj_hidden"], c["proj_dim"], c["pred_hidden"], c["temperature"]), b.MoCoV3.go_name)
out = []
for go in json.load(sys.stdin):
    cmp_ = b.compare_params(go["params"], pt)
    out.append({"problems": cmp_["problems"] + b.moco_hparam_problems(go["hparams"], b.moco_total(go["n"])),
                "go": cmp_["go"], "torch": cmp_["torch"]})
print(json.dumps(out))
`

// TestVsTorchMoCoMatchesScript checks that the PyTorch MoCo v3 of
// scripts/bench_vs_pytorch.py (its MoCoV3 and MOCO) and the Go model and
// config BenchmarkVsTorchMoCoV3 runs agree, as the script checks after a
// round of make bench-vs-pytorch: every parameter's name, shape and
// trainability (the momentum copies not trainable on both sides), the
// value counts, and the hyperparameters. Two altered Go sides (a momentum
// copy marked trainable, another learning rate) must be reported.
func TestVsTorchMoCoMatchesScript(t *testing.T) {
	if _, err := os.Stat(vsTorchPython); err != nil {
		t.Skipf("%s not found: this test needs it with numpy and torch (apt-get install python3-numpy python3-torch)", vsTorchPython)
	}
	if out, err := exec.Command(vsTorchPython, "-c", "import numpy, torch").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import numpy and torch (apt-get install python3-numpy python3-torch): %v\n%s", vsTorchPython, err, out)
	}
	mod, cfg, n := vsTorchMoCoModality(t, "direct")
	m := mod.(*mocoV3)
	type side struct {
		Params  []vsTorchParam `json:"params"`
		HParams map[string]any `json:"hparams"`
		N       int            `json:"n"`
	}
	good := side{vsTorchParams(m.Params()), vsTorchMoCoHParams(m, vsTorchTotal(cfg, n)), n}
	momTrainable := side{vsTorchParams(m.Params()), good.HParams, n}
	found := false
	for i, p := range momTrainable.Params {
		if p.Name == "momentum.conv1.weight" {
			momTrainable.Params[i].Trainable, found = true, true
		}
	}
	if !found {
		t.Fatalf("no parameter momentum.conv1.weight among the Go model's %d", len(good.Params))
	}
	otherLR := side{good.Params, vsTorchMoCoHParams(m, vsTorchTotal(cfg, n)), n}
	otherLR.HParams["lr"] = 0.5
	in, err := json.Marshal([]side{good, momTrainable, otherLR})
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(vsTorchPython, "-c", vsTorchMoCoCheck)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the script's MoCo v3 check: %v\n%s", err, stderr.String())
	}
	var res []struct {
		Problems []string `json:"problems"`
		Go       [2]int   `json:"go"`
		Torch    [2]int   `json:"torch"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res) != 3 {
		t.Fatalf("the script's MoCo v3 check printed %q (%v), want 3 results", out, err)
	}
	if len(res[0].Problems) > 0 || res[0].Go != res[0].Torch {
		t.Errorf("Go and PyTorch MoCo v3 differ: %q; values (trainable, not) Go %v, PyTorch %v", res[0].Problems, res[0].Go, res[0].Torch)
	}
	if res[0].Go[0] == 0 || res[0].Go[1] == 0 {
		t.Errorf("Go MoCo v3 values (trainable, not) %v: want both (the not trainable: momentum copies and running statistics)", res[0].Go)
	}
	t.Logf("values (trainable, not trainable): Go %v, PyTorch %v, %d tensors", res[0].Go, res[0].Torch, len(good.Params))
	for i, what := range []string{"a momentum copy marked trainable", "lr 0.5"} {
		if len(res[i+1].Problems) == 0 {
			t.Errorf("Go side with %s: the script's check found no difference", what)
		} else {
			t.Logf("with %s: %q", what, res[i+1].Problems)
		}
	}
}
