package train

import (
	"reflect"
	"strings"
	"testing"
)

const minimalTU = `
name: t
data: {source: tu, name: MUTAG, path: tu/MUTAG}
`

func TestParseConfigErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		name, yaml string
		sets       []string
		want       []string // substrings the error must contain
	}{
		{"unknown top key", minimalTU + "epochz: 3\n", nil, []string{"epochz", "unknown key", "allowed keys", "train"}},
		{"unknown nested key", "data: {source: tu, name: MUTAG, path: x, nmae: 1}\n", nil, []string{"data.nmae", "line 1", "allowed keys under data", "name"}},
		{"unknown key in list item", minimalTU + "samplers:\n  - {kind: uniform, mm: 3}\n", nil, []string{"samplers[0].mm", "allowed keys"}},
		{"wrong type int", minimalTU + "train: {epochs: many}\n", nil, []string{"train.epochs", "expected an integer", "many"}},
		{"wrong type float", minimalTU + "train: {lr: fast}\n", nil, []string{"train.lr", "expected a number"}},
		{"wrong type bool", minimalTU + "export_embeddings: maybe\n", nil, []string{"export_embeddings", "true or false"}},
		{"wrong type list", minimalTU + "seeds: 3\n", nil, []string{"seeds", "expected a list"}},
		{"bad enum", minimalTU + "samplers: [{kind: fancy}]\n", nil, []string{"samplers[0].kind", "fancy", "uniform, knn, batchsampler"}},
		{"out of range", minimalTU + "train: {epochs: -1}\n", nil, []string{"train.epochs (line 4): must be >= 0 (0: evaluate the untrained encoder), got -1"}},
		{"out of range by -set", minimalTU, []string{"train.batch_size=-5"}, []string{"train.batch_size (-set train.batch_size=-5): must be a positive integer, got -5"}},
		{"k above m by -set", minimalTU + "samplers:\n  - {kind: uniform}\n  - kind: batchsampler\n    m: 100\n    k: 20\n", []string{"samplers[1].k=200"},
			[]string{"samplers[1].m (line 7): must be >= samplers[1].k (-set samplers[1].k=200) = 200, got 100"}},
		{"list entry out of range", minimalTU + "samplers:\n  - {kind: uniform}\n  - {kind: batchsampler, m: 3, k: 5}\n", nil, []string{"samplers[1].m (line 6): must be >= samplers[1].k = 5, got 3"}},
		{"alpha range", minimalTU + "samplers: [{kind: batchsampler, m: 10, k: 5, alpha: 1.5}]\n", nil, []string{"samplers[0].alpha.start", "[0, 1]"}},
		{"m below k", minimalTU + "samplers: [{kind: batchsampler, m: 3, k: 5, alpha: 0.1}]\n", nil, []string{"samplers[0].m", ">= samplers[0].k"}},
		{"loss temperature", minimalTU + "loss: {temperature: 0}\n", nil, []string{"temperature"}},
		{"missing path", "data: {source: tu, name: X}\n", nil, []string{"data.path", "required"}},
		{"duplicate seed", minimalTU + "seeds: [1, 1]\n", nil, []string{"seeds", "twice"}},
		{"both sampler forms", minimalTU + "sampler: {kind: uniform}\nsamplers: [{kind: uniform}]\n", nil, []string{"not both"}},
		{"bad set syntax", minimalTU, []string{"train.epochs"}, []string{"key.path=value"}},
		{"set unknown key", minimalTU, []string{"train.epoch=3"}, []string{"train.epoch", "unknown key"}},
		{"set wrong type", minimalTU, []string{"train.epochs=abc"}, []string{"train.epochs", "expected an integer"}},
		{"not yaml", "data: [unclosed\n", nil, []string{"not valid YAML"}},
		{"set list entry", minimalTU + "samplers: [{kind: uniform}]\n", []string{"samplers[3].m=5"}, []string{"samplers has 1 entry"}},
		{"key of another encoder", minimalTU + "model: {kind: gin, arch: resnet8}\n", nil, []string{"model.arch (line 4): not used by method graphcl", "kind, hidden, layers, proj_dim"}},
		{"key of another protocol", minimalTU + "eval: {knn_k: 5}\n", nil, []string{"eval.knn_k (line 4): not used by eval.kind svm"}},
		{"key of another data kind", "data: {source: tu, name: MUTAG, path: tu/MUTAG, image: {max_train: 5}}\n", nil, []string{"data.image (line 1): not used by graph data"}},
		{"method of another modality", minimalTU + "method: simclr\n", nil, []string{"method (line 4): simclr trains on image data, not on modality graph"}},
		{"unknown method", minimalTU + "method: byol\n", nil, []string{`method (line 4): "byol" is not allowed`, "graphcl"}},
		{"protocol of another modality", minimalTU + "eval: {kind: sts}\n", nil, []string{`eval.kind (line 4): "sts" is not allowed for modality graph; allowed values: svm`}},
		{"selection without a dev set", minimalTU + "eval: {select_every: 5}\n", nil, []string{"eval.select_every (line 4): eval.kind svm has no development set"}},
		{"synthetic graphs", "data: {source: synthetic, synthetic: {graphs: 10, classes: 2, min_nodes: 0, max_nodes: 9}}\n", nil, []string{"data.synthetic.min_nodes (line 1): must be at least"}},
		{"generated images", "modality: image\ndata: {image: {size: 4, noise: 2}}\n", nil, []string{"data.image.size", "8..1024", "data.image.noise"}},
		{"bad optimizer", minimalTU + "optim: {kind: adan}\n", nil, []string{`optim.kind (line 4): "adan" is not allowed`, "adam, adamw, sgd, lars"}},
		{"bad schedule", minimalTU + "optim: {schedule: {kind: step}}\n", nil, []string{"optim.schedule.kind"}},
		{"global sampler key on another kind", minimalTU + "samplers: [{kind: kmeans, draw: 3}]\n", nil, []string{"samplers[0].draw (line 4): only kinds spectral and osgd have this key, got kind kmeans"}},
		{"osgd keeps more than it draws", minimalTU + "samplers: [{kind: osgd, draw: 2, keep: 3}]\n", nil, []string{"samplers[0].keep (line 4): must be in [1, draw = 2] (q ≤ k), got 3"}},
		{"osgd without a temperature", minimalTU + "method: mvgrl\nmodel: {kind: gcn}\nloss: {kind: jsd, temperature: 0}\nsamplers: [{kind: osgd}]\n", nil, []string{"samplers[0].temperature", "loss.kind jsd has none"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.yaml), tc.sets)
			if err == nil {
				t.Fatal("expected an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestParseConfigDefaultsAndSets(t *testing.T) {
	c, err := ParseConfig([]byte(minimalTU), []string{"train.epochs=7", "seeds=[3,4,5]", "loss.temperature=0.5", "samplers=[{kind: uniform}, {kind: batchsampler, m: 100, k: 10, alpha: {start: 0.2, end: 0.05}, refresh_every: 5}]"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Train.Epochs != 7 || len(c.Seeds) != 3 || c.Seeds[2] != 5 || c.Loss.Temperature != 0.5 {
		t.Errorf("sets not applied: %+v", c)
	}
	if c.Train.BatchSize != 128 || c.Train.LR != 0.01 || c.Model.Hidden != 32 || c.Model.Layers != 3 || c.Eval.Folds != 10 {
		t.Errorf("defaults not kept: %+v", c)
	}
	s := c.SamplerList()
	if len(s) != 2 || s[1].Alpha.Start != 0.2 || s[1].Alpha.End != 0.05 || s[1].Alpha.Constant {
		t.Errorf("samplers: %+v", s)
	}
	c2, err := ParseConfig([]byte(minimalTU+"sampler: {kind: batchsampler, m: 10, k: 5, alpha: 0.3}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := c2.SamplerList()[0].Alpha; !a.Constant || a.Start != 0.3 || a.End != 0.3 {
		t.Errorf("constant alpha: %+v", a)
	}
}

func TestConfigRoundTrip(t *testing.T) {
	c, err := ParseConfig([]byte(minimalTU+"samplers: [{kind: batchsampler, m: 10, k: 5, alpha: 0.3}, {kind: uniform}]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteConfig(&b, &c); err != nil {
		t.Fatal(err)
	}
	c2, err := ParseConfig([]byte(b.String()), nil)
	if err != nil {
		t.Fatalf("written config does not parse: %v\n%s", err, b.String())
	}
	var b2 strings.Builder
	WriteConfig(&b2, &c2)
	if b.String() != b2.String() {
		t.Errorf("round trip changed the config:\n%s\nvs\n%s", b.String(), b2.String())
	}
}

// An empty config file (or one of comments only) is said to be empty, not
// blamed for the first key its defaults lack.
func TestEmptyConfigFile(t *testing.T) {
	for _, src := range []string{"", "\n", "# a comment\n# another\n", "---\n"} {
		_, err := ParseNamedConfig([]byte(src), "configs/empty.yaml", nil)
		if err == nil {
			t.Fatalf("%q accepted", src)
		}
		msg := err.Error()
		if !strings.Contains(msg, "configs/empty.yaml") || !strings.Contains(msg, "sets no key") || strings.Contains(msg, "data.path") {
			t.Errorf("%q: error %q, want one saying the file is empty", src, msg)
		}
	}
	// An empty file with overrides that make a valid config is a config.
	if _, err := ParseNamedConfig(nil, "e.yaml", []string{"data={source: synthetic, synthetic: {graphs: 90, classes: 3, min_nodes: 8, max_nodes: 14, node_labels: 2, noise: 0.1, seed: 3}}"}); err != nil {
		t.Errorf("empty file with -set overrides: %v", err)
	}
}

// TestValidateChangesNothing validates a config that names no method:
// the modality's default is checked, and the config is left as it was.
func TestValidateChangesNothing(t *testing.T) {
	for _, modality := range keys(dataSpecs) {
		if strings.HasPrefix(modality, "fake") {
			continue
		}
		c, want := DefaultConfigFor(modality), DefaultConfigFor(modality)
		c.Method, want.Method = "", ""
		// The defaults of a modality may lack its data (graph: data.path).
		if err := c.Validate(); err != nil && strings.Contains(err.Error(), "method") {
			t.Errorf("%s: the default method is refused: %v", modality, err)
		}
		if !reflect.DeepEqual(c, want) {
			t.Errorf("%s: Validate changed the config: %+v, was %+v", modality, c, want)
		}
	}
}

// TestProtocolDevSet checks ProtocolSpec.DevSet against the protocols New
// returns: DevSet exactly when the protocol is a DevScorer.
func TestProtocolDevSet(t *testing.T) {
	for _, name := range keys(protocolSpecs) {
		ps := protocolSpecs[name]
		if len(ps.Modalities) == 0 {
			continue
		}
		cfg := DefaultConfigFor(ps.Modalities[0])
		cfg.Eval.Kind = name
		if _, dev := ps.New(&cfg).(DevScorer); dev != ps.DevSet {
			t.Errorf("protocol %s: DevSet %v, but New's protocol is a DevScorer: %v", name, ps.DevSet, dev)
		}
	}
}
