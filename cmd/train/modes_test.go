package main

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// flagArgs returns the command line giving flag f of fs a valid value.
func flagArgs(fs *flag.FlagSet, f string) []string {
	if b, ok := fs.Lookup(f).Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return []string{"-" + f}
	}
	switch f {
	case "parallel":
		return []string{"-parallel", "2"}
	case "shard":
		return []string{"-shard", "0/2"}
	}
	return []string{"-" + f, "x"}
}

// TestModeFlagCombinations goes through every mode and every flag: the
// flags of the mode's table entry (and -cpuprofile, -memprofile) are
// accepted, every other is refused with a message naming the mode, the
// flag and where the flag goes (or, for two modes, that they do not go
// together). Checked before any work: nothing is read or run.
func TestModeFlagCombinations(t *testing.T) {
	fs := newFlagSet(&options{})
	var all []string
	fs.VisitAll(func(f *flag.Flag) { all = append(all, f.Name) })
	for _, f := range all {
		goes := slices.Contains(commonFlags, f) || modeOf(f) != nil
		for _, m := range modes {
			goes = goes || slices.Contains(m.flags, f)
		}
		if !goes {
			t.Errorf("-%s goes with no mode", f)
		}
	}
	for _, m := range modes {
		var sel []string
		if m.flag != "" {
			sel = []string{"-" + m.flag, "DIR"}
		}
		for _, f := range all {
			if f == m.flag || (m.flag == "" && modeOf(f) != nil) {
				continue // a mode flag alone selects its own mode
			}
			args := append(slices.Clone(sel), flagArgs(fs, f)...)
			o, err := parseFlags(args)
			if err != nil || o == nil {
				t.Fatalf("%q: %v", args, err)
			}
			got := selectMode(o.given)
			err = got.check(o.given)
			allowed := slices.Contains(m.flags, f) || slices.Contains(commonFlags, f)
			switch {
			case allowed && err != nil:
				t.Errorf("%q: refused: %v", args, err)
			case allowed:
				if got != selectMode(strings.Fields(m.flag)) {
					t.Errorf("%q: mode %s, want %s", args, got.name, m.name)
				}
			case err == nil:
				t.Errorf("%q: accepted, want -%s refused with %s", args, f, m.name)
			default:
				msg := err.Error()
				want := []string{m.name, "-" + f}
				if modeOf(f) != nil {
					want = append(want, "not both")
				} else {
					want = append(want, "-"+f+" goes with ")
				}
				for _, w := range want {
					if !strings.Contains(msg, w) {
						t.Errorf("%q: error %q does not mention %q", args, msg, w)
					}
				}
			}
		}
	}
}

// TestModeFlagMessages: the whole message of some refused command lines,
// through run, before any work.
func TestModeFlagMessages(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-split", "test"},
			"a training run (-config FILE or the embedded default) goes with -config, -set, -root, -out, -print-config, -parallel, -plan, -rerun, -assemble or -shard, not -split; -split goes with -embed"},
		{[]string{"-evaluate", "DIR", "-parallel", "2"},
			"-evaluate DIR goes with -set, -root or -out, not -parallel; -parallel goes with -resume or a training run"},
		{[]string{"-evaluate", "DIR", "-embed", "RUN"},
			"-evaluate DIR goes with -set, -root or -out, not -embed: they are two modes, give one or the other, not both"},
		{[]string{"-embed", "RUN", "-o", "x.npy", "-out", "DIR"},
			"-embed DIR/runs/<id> goes with -o, -split, -repr, -set or -root, not -out; -out goes with -evaluate or a training run"},
		{[]string{"-plots", "DIR", "-config", "x.yaml"},
			"-plots DIR goes with no other flag, not -config; -config goes with -export-tu or a training run"},
		{[]string{"-export-tu", "DIR", "-print-config"},
			"-export-tu DIR goes with -config, -set or -root, not -print-config; -print-config goes with -resume or a training run"},
		{[]string{"-resume", "DIR", "-set", "train.lr=1"},
			"-resume DIR (which takes the config saved in DIR) goes with -print-config, -parallel, -plan, -rerun, -assemble or -shard, not -set; -set goes with -evaluate, -embed, -export-tu or a training run"},
		{[]string{"-resume", "DIR", "-root", "data"},
			"-resume DIR (which takes the config saved in DIR) goes with -print-config, -parallel, -plan, -rerun, -assemble or -shard, not -root; -root goes with -evaluate, -embed, -export-tu or a training run"},
	} {
		err := run(tc.args)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\nerror %v\nwant  %s", tc.args, err, tc.want)
		}
	}
}

// TestPrintConfigOfASweepDirectory: -resume DIR -print-config on a sweep's
// directory prints its sweep.yaml and runs nothing (it ran the sweep).
func TestPrintConfigOfASweepDirectory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "sweep.yaml"), `name: tiny-sweep
modality: graph
data:
  source: synthetic
  synthetic: {graphs: 30, classes: 3, min_nodes: 8, max_nodes: 14, node_labels: 2, noise: 0.1, seed: 3}
model: {kind: gin, hidden: 8, layers: 2}
samplers:
  - {kind: uniform}
  - {kind: batchsampler, m: 10, k: 5, alpha: {start: 0.2, end: 0.05}, refresh_every: 3}
train: {epochs: 1, batch_size: 16, lr: 0.01}
eval: {kind: svm, folds: 3, inner_folds: 2, cs: [0.1, 10]}
seeds: [0]
sweep:
  baseline: uniform
  axes:
    - key: samplers[1].refresh_every
      name: t
      values: [2, 4]
`)
	outPath := filepath.Join(t.TempDir(), "out.yaml")
	f, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = f
	err = run([]string{"-resume", dir, "-print-config"})
	os.Stdout = old
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(outPath)
	if !strings.Contains(string(b), "name: tiny-sweep") || !strings.Contains(string(b), "refresh_every") {
		t.Errorf("printed config:\n%s", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("the sweep directory holds %d entries after -print-config, want only sweep.yaml", len(ents))
	}
}
