package yamlcfg

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// cfg mirrors the shapes of train.Config: nested structs, a pointer to a
// struct (sampler), a list of structs (samplers), a type decoding a number
// or a mapping itself (alpha), []float64, []uint64, []string, bool, an
// `,inline` struct and a map.
type cfg struct {
	Name             string         `yaml:"name"`
	Modality         string         `yaml:"modality"`
	Data             dataCfg        `yaml:"data"`
	Model            modelCfg       `yaml:"model"`
	Sampler          *samplerCfg    `yaml:"sampler,omitempty"`
	Samplers         []samplerCfg   `yaml:"samplers,omitempty"`
	Train            trainCfg       `yaml:"train"`
	Eval             evalCfg        `yaml:"eval"`
	Seeds            []uint64       `yaml:"seeds"`
	ExportEmbeddings bool           `yaml:"export_embeddings"`
	Tags             map[string]int `yaml:"tags"`
}

type dataCfg struct {
	Source    string       `yaml:"source"`
	Name      string       `yaml:"name"`
	Root      string       `yaml:"root"`
	Path      string       `yaml:"path"`
	Synthetic syntheticCfg `yaml:"synthetic"`
	Text      textCfg      `yaml:"text"`
}

type syntheticCfg struct {
	Graphs int     `yaml:"graphs"`
	Noise  float64 `yaml:"noise"`
	Seed   uint64  `yaml:"seed"`
}

type textCfg struct {
	Corpus       []string `yaml:"corpus"`
	MaxSentences int      `yaml:"max_sentences"`
}

type modelCfg struct {
	Kind   string `yaml:"kind"`
	Hidden int    `yaml:"hidden"`
	Widths []int  `yaml:"widths"`
}

type samplerCfg struct {
	Kind         string `yaml:"kind"`
	Label        string `yaml:"label"`
	M            int    `yaml:"m"`
	K            int    `yaml:"k"`
	Alpha        alpha  `yaml:"alpha"`
	RefreshEvery int    `yaml:"refresh_every"`
}

// alpha is train.AlphaSchedule: `alpha: 0.2` or `alpha: {start: 0.2, end: 0.05}`.
type alpha struct {
	Start    float64 `yaml:"start"`
	End      float64 `yaml:"end"`
	Constant bool    `yaml:"-"`
}

func (a *alpha) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var v float64
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: alpha must be a number or {start, end}", n.Line)
		}
		*a = alpha{Start: v, End: v, Constant: true}
		return nil
	}
	type plain alpha
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*a = alpha(p)
	return nil
}

func (a alpha) MarshalYAML() (any, error) {
	if a.Constant {
		return a.Start, nil
	}
	return map[string]float64{"start": a.Start, "end": a.End}, nil
}

type trainCfg struct {
	Epochs     int     `yaml:"epochs"`
	BatchSize  int     `yaml:"batch_size"`
	LR         float64 `yaml:"lr"`
	Checkpoint bool    `yaml:"checkpoint"`
	logging    `yaml:",inline"`
}

type logging struct {
	LogEvery  int `yaml:"log_every"`
	EvalEvery int `yaml:"eval_every"`
}

type evalCfg struct {
	Kind  string    `yaml:"kind"`
	Folds int       `yaml:"folds"`
	Cs    []float64 `yaml:"cs"`
}

func defaults() cfg {
	return cfg{
		Modality: "graph",
		Data:     dataCfg{Source: "tu"},
		Model:    modelCfg{Kind: "gin", Hidden: 32},
		Train:    trainCfg{Epochs: 20, BatchSize: 128, LR: 0.01, Checkpoint: true, logging: logging{LogEvery: 1}},
		Eval:     evalCfg{Kind: "svm", Folds: 10, Cs: []float64{1e-3, 1e-2, 1e-1, 1, 10, 100, 1000}},
		Seeds:    []uint64{0},
	}
}

// decode is what a caller does: Parse, then Decode over the defaults.
func decode(src, name string, sets ...string) (cfg, error) {
	c := defaults()
	d, err := Parse([]byte(src), name, sets)
	if err != nil {
		return c, err
	}
	return c, d.Decode(&c)
}

const trainKeys = "batch_size, checkpoint, epochs, eval_every, log_every, lr"
const topKeys = "data, eval, export_embeddings, modality, model, name, sampler, samplers, seeds, tags, train"

// minimal is train/config_test.go's minimalTU.
const minimal = `
name: t
data: {source: tu, name: MUTAG, path: tu/MUTAG}
`

func TestDecodeErrors(t *testing.T) {
	const x = "configs/x.yaml: "
	for _, tc := range []struct {
		name, yaml string
		sets       []string
		want       string
	}{
		// unknown keys, everywhere
		{"unknown top key", minimal + "epochz: 3\n", nil,
			x + "epochz (line 4): unknown key; allowed keys at the top level: " + topKeys},
		{"unknown nested key", "name: t\ntrain:\n  bach_size: 3\n", nil,
			x + "train.bach_size (line 3): unknown key; allowed keys under train: " + trainKeys},
		{"unknown key in flow mapping", "data: {source: tu, name: MUTAG, path: x, nmae: 1}\n", nil,
			x + "data.nmae (line 1): unknown key; allowed keys under data: name, path, root, source, synthetic, text"},
		{"unknown key in list item", minimal + "samplers:\n  - {kind: uniform, mm: 3}\n", nil,
			x + "samplers[0].mm (line 5): unknown key; allowed keys under samplers[0]: alpha, k, kind, label, m, refresh_every"},
		{"unknown key under pointer", "sampler:\n  kind: knn\n  kk: 3\n", nil,
			x + "sampler.kk (line 3): unknown key; allowed keys under sampler: alpha, k, kind, label, m, refresh_every"},
		{"unknown key in custom type's mapping", "samplers:\n- kind: batchsampler\n  alpha: {start: 0.2, ned: 0.1}\n", nil,
			x + "samplers[0].alpha.ned (line 3): unknown key; allowed keys under samplers[0].alpha: end, start"},
		{"unknown key two levels down", "data:\n  synthetic:\n    graphs: 10\n    nodes: 3\n", nil,
			x + "data.synthetic.nodes (line 4): unknown key; allowed keys under data.synthetic: graphs, noise, seed"},
		{"colon without a space", minimal + "samplers:\n  - {kind:uniform}\n", nil,
			x + "samplers[0].kind:uniform (line 5): unknown key (YAML reads \"kind:uniform\" as one key: put a space after the colon, kind: uniform); allowed keys under samplers[0]: alpha, k, kind, label, m, refresh_every"},
		{"colon without a space, block style", "train:\n  epochs:3\n", nil,
			x + "train (line 1): expected a mapping of keys " + trainKeys + ", got \"epochs:3\" (YAML reads \"epochs:3\" as one value: put a space after the colon, epochs: 3)"},
		{"colon without a space, by -set", "", []string{"samplers=[{kind:uniform}]"},
			"-set samplers=[{kind:uniform}]: unknown key samplers[0].kind:uniform (YAML reads \"kind:uniform\" as one key: put a space after the colon, kind: uniform); allowed keys under samplers[0]: alpha, k, kind, label, m, refresh_every"},
		{"key given twice", "train:\n  epochs: 3\n  epochs: 4\n", nil,
			x + "train.epochs (line 3): key given twice (first on line 2)"},

		// wrong types
		{"int", "name: t\ntrain:\n  epochs: 3\n  batch_size: abc\n", nil,
			x + `train.batch_size (line 4): expected an integer, got "abc"`},
		{"int, not a float", "train: {epochs: 1.5}\n", nil,
			x + `train.epochs (line 1): expected an integer, got "1.5"`},
		{"int from a list", "train: {epochs: [1]}\n", nil,
			x + `train.epochs (line 1): expected an integer, got a list`},
		{"int in an inline struct", "train: {log_every: often}\n", nil,
			x + `train.log_every (line 1): expected an integer, got "often"`},
		{"uint", minimal + "seeds: [1, -2]\n", nil,
			x + `seeds[1] (line 4): expected a non-negative integer, got "-2"`},
		{"uint in a block list", "seeds:\n  - 1\n  - x\n", nil,
			x + `seeds[1] (line 3): expected a non-negative integer, got "x"`},
		{"float", minimal + "train: {lr: fast}\n", nil,
			x + `train.lr (line 4): expected a number, got "fast"`},
		{"float in a list", "eval: {cs: [1, x]}\n", nil,
			x + `eval.cs[1] (line 1): expected a number, got "x"`},
		{"bool", minimal + "export_embeddings: maybe\n", nil,
			x + `export_embeddings (line 4): expected true or false, got "maybe"`},
		{"bool, not YAML 1.1's yes", "train: {checkpoint: yes}\n", nil,
			x + `train.checkpoint (line 1): expected true or false, got "yes"`},
		{"string", "name: [a, b]\n", nil,
			x + `name (line 1): expected a string, got a list`},
		{"list", minimal + "seeds: 3\n", nil,
			x + `seeds (line 4): expected a list, got "3"`},
		{"list of strings", "data: {text: {corpus: a.txt}}\n", nil,
			x + `data.text.corpus (line 1): expected a list, got "a.txt"`},
		{"mapping", "train: 5\n", nil,
			x + `train (line 1): expected a mapping of keys ` + trainKeys + `, got "5"`},
		{"mapping under pointer", "sampler: [uniform]\n", nil,
			x + `sampler (line 1): expected a mapping of keys alpha, k, kind, label, m, refresh_every, got a list`},
		{"list of mappings", "samplers: [uniform]\n", nil,
			x + `samplers[0] (line 1): expected a mapping of keys alpha, k, kind, label, m, refresh_every, got "uniform"`},
		{"map value", "tags: {a: 1, b: x}\n", nil,
			x + `tags.b (line 1): expected an integer, got "x"`},
		{"map", "tags: [a]\n", nil,
			x + `tags (line 1): expected a mapping, got a list`},
		{"custom type refuses a scalar", "sampler:\n  alpha: high\n", nil,
			x + `sampler.alpha (line 2): "high" is not accepted: alpha must be a number or {start, end}`},
		{"custom type's field", "sampler:\n  alpha: {start: x}\n", nil,
			x + `sampler.alpha.start (line 2): expected a number, got "x"`},
		{"top level", "- a\n- b\n", nil,
			x + `the top level (line 1): expected a mapping of keys ` + topKeys + `, got a list`},
		{"through an alias", "base: &b {epochs: x}\n", nil,
			x + "base (line 1): unknown key; allowed keys at the top level: " + topKeys},
		{"alias value", "model: {kind: &k [gin]}\n", nil,
			x + `model.kind (line 1): expected a string, got a list`},
		{"merged keys", "samplers:\n- &s {kind: knn, m: 10}\n- {<<: *s, k: x}\n", nil,
			x + `samplers[1].k (line 3): expected an integer, got "x"`},
		{"unknown merged key", "samplers:\n- &s {kind: knn, mm: 10}\n", nil,
			x + "samplers[0].mm (line 2): unknown key; allowed keys under samplers[0]: alpha, k, kind, label, m, refresh_every"},

		// not YAML
		{"not yaml", "name: t\ndata: [unclosed\n", nil, x + "not valid YAML: line 2: did not find expected ',' or ']'"},
		{"tab", "train:\n\tepochs: 3\n", nil, x + "not valid YAML: line 2: found character that cannot start any token"},
		{"unclosed flow mapping", "train: {epochs: 1\n", nil, x + "not valid YAML: line 1: did not find expected ',' or '}'"},
		{"bad indentation", "train:\n  epochs: 1\n lr: 2\n", nil, x + "not valid YAML: line 3: did not find expected key"},
		{"mapping in a scalar", "name: a: b\n", nil, x + "not valid YAML: line 1: mapping values are not allowed in this context"},
		{"unknown anchor", "name: *a\n", nil, x + "not valid YAML: unknown anchor 'a' referenced"},
		{"two documents", "name: a\n---\nname: b\n", nil, x + "more than one YAML document (the second starts on line 2); give one"},

		// overrides: blamed on the override, not a line
		{"set wrong type", minimal, []string{"train.batch_size=abc"},
			`-set train.batch_size=abc: expected an integer, got "abc"`},
		{"set wrong type over the document's", "train:\n  batch_size: 64\n", []string{"train.batch_size=abc"},
			`-set train.batch_size=abc: expected an integer, got "abc"`},
		{"set unknown key", minimal, []string{"train.bach_size=5"},
			`-set train.bach_size=5: unknown key train.bach_size; allowed keys under train: ` + trainKeys},
		{"set unknown top key", minimal, []string{"trian.batch_size=5"},
			`-set trian.batch_size=5: unknown key trian; allowed keys at the top level: ` + topKeys},
		{"set empty value", minimal, []string{"train.batch_size="},
			`-set train.batch_size=: empty value; give an integer (e.g. train.batch_size=128)`},
		{"set empty list value", minimal, []string{"seeds= "},
			`-set seeds= : empty value; give a list (e.g. seeds=[0])`},
		{"set empty, unknown key first", minimal, []string{"train.bach_size="},
			`-set train.bach_size=: unknown key train.bach_size; allowed keys under train: ` + trainKeys},
		{"set without =", minimal, []string{"foo"}, `-set "foo": want key.path=value`},
		{"set without key", minimal, []string{"=3"}, `-set "=3": want key.path=value`},
		{"set bad path", minimal, []string{"train..epochs=3"},
			`-set train..epochs=3: bad key path "train..epochs": a key name is empty; want names separated by dots, list entries by index (samplers[1].m)`},
		{"set bad index", minimal, []string{"samplers[x].m=3"},
			`-set samplers[x].m=3: bad key path "samplers[x].m": index "x" is not a number ≥ 0; want names separated by dots, list entries by index (samplers[1].m)`},
		{"set bad value", minimal, []string{"seeds=[1, 2"},
			`-set seeds=[1, 2: the value is not valid YAML: did not find expected ',' or ']' (quote it: seeds='...')`},
		{"set error deep in its value", minimal, []string{"samplers=[{kind: uniform}, {kind: knn, mm: 3}]"},
			`-set samplers=[{kind: uniform}, {kind: knn, mm: 3}]: unknown key samplers[1].mm; allowed keys under samplers[1]: alpha, k, kind, label, m, refresh_every`},
		{"set wrong type deep in its value", minimal, []string{"seeds=[0, x]"},
			`-set seeds=[0, x]: seeds[1]: expected a non-negative integer, got "x"`},
		{"set list index past the end", minimal + "samplers: [{kind: uniform}, {kind: knn}]\n", []string{"samplers[2].m=500"},
			`-set samplers[2].m=500: samplers has 2 entries; the index must be below 2 (to add entries, give the whole list: samplers=[...])`},
		{"set default list index past the end", minimal, []string{"eval.cs[7]=1"},
			`-set eval.cs[7]=1: eval.cs has 7 entries; the index must be below 7 (to add entries, give the whole list: eval.cs=[...])`},
		{"set index into a missing list", minimal, []string{"samplers[0].m=5"},
			`-set samplers[0].m=5: samplers has 0 entries; the index must be below 0 (to add entries, give the whole list: samplers=[...])`},
		{"set wrong type in a default list", minimal, []string{"eval.cs[1]=abc"},
			`-set eval.cs[1]=abc: expected a number, got "abc"`},
		{"set index into an unknown key", minimal, []string{"eval.cz[0]=1"},
			`-set eval.cz[0]=1: unknown key eval.cz; allowed keys under eval: cs, folds, kind`},
		{"set through a scalar", "train: {epochs: 3}\n", []string{"train.epochs.x=1"},
			`-set train.epochs.x=1: train.epochs is not a mapping (it is "3" on line 1)`},
		{"set index into a mapping", minimal, []string{"data[0]=1"},
			`-set data[0]=1: data is not a list (it is a mapping on line 3)`},
		{"set creates a wrong shape", minimal, []string{"seeds.x=1"},
			`-set seeds.x=1: seeds: expected a list, got a mapping`},
		{"set on a mapping given as a scalar", minimal, []string{"train=5"},
			`-set train=5: expected a mapping of keys ` + trainKeys + `, got "5"`},
		{"set blamed, not the earlier set", minimal, []string{"train.epochs=3", "train.epochs=x"},
			`-set train.epochs=x: expected an integer, got "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decode(tc.yaml, "configs/x.yaml", tc.sets...)
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("error\n  %s\nwant\n  %s", err, tc.want)
			}
		})
	}
}

// TestTrainConfigCases are train/config_test.go's decoding cases (its
// validation cases are Validate's, not this package's), as the substrings
// it asks for.
func TestTrainConfigCases(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		sets       []string
		want       []string
	}{
		{"unknown top key", minimal + "epochz: 3\n", nil, []string{"epochz", "unknown key", "allowed keys", "train"}},
		{"unknown nested key", "data: {source: tu, name: MUTAG, path: x, nmae: 1}\n", nil, []string{"data.nmae", "line 1", "allowed keys under data", "name"}},
		{"unknown key in list item", minimal + "samplers:\n  - {kind: uniform, mm: 3}\n", nil, []string{"samplers[0].mm", "allowed keys"}},
		{"wrong type int", minimal + "train: {epochs: many}\n", nil, []string{"train.epochs", "expected an integer", "many"}},
		{"wrong type float", minimal + "train: {lr: fast}\n", nil, []string{"train.lr", "expected a number"}},
		{"wrong type bool", minimal + "export_embeddings: maybe\n", nil, []string{"export_embeddings", "true or false"}},
		{"wrong type list", minimal + "seeds: 3\n", nil, []string{"seeds", "expected a list"}},
		{"bad set syntax", minimal, []string{"train.epochs"}, []string{"key.path=value"}},
		{"set unknown key", minimal, []string{"train.epoch=3"}, []string{"train.epoch", "unknown key"}},
		{"set wrong type", minimal, []string{"train.epochs=abc"}, []string{"train.epochs", "expected an integer"}},
		{"not yaml", "data: [unclosed\n", nil, []string{"not valid YAML"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decode(tc.yaml, "", tc.sets...)
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

func TestDecodeDefaultsAndSets(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		sets       []string
		edit       func(*cfg)
	}{
		{"empty document", "", nil, func(*cfg) {}},
		{"comment only", "# nothing\n", nil, func(*cfg) {}},
		{"null document", "~\n", nil, func(*cfg) {}},
		{"empty mapping", "{}\n", nil, func(*cfg) {}},
		{"one nested key", "train: {epochs: 3}\n", nil, func(c *cfg) { c.Train.Epochs = 3 }},
		{"null keeps the default", "train:\n  epochs:\n", nil, func(*cfg) {}},
		{"list replaced, not merged", "eval: {cs: [0.5]}\n", nil, func(c *cfg) { c.Eval.Cs = []float64{0.5} }},
		{"inline struct", "train: {log_every: 10}\n", nil, func(c *cfg) { c.Train.LogEvery = 10 }},
		{"map", "tags: {a: 1}\n", nil, func(c *cfg) { c.Tags = map[string]int{"a": 1} }},
		{"special floats", "data: {synthetic: {noise: .inf}}\n", nil, func(c *cfg) { c.Data.Synthetic.Noise = inf() }},
		{"hex integer", "train: {epochs: 0x10}\n", nil, func(c *cfg) { c.Train.Epochs = 16 }},
		{"an integer is a number", "train: {lr: 1}\n", nil, func(c *cfg) { c.Train.LR = 1 }},
		{"a number is a string", "name: 3\n", nil, func(c *cfg) { c.Name = "3" }},
		{"an empty -set value is the empty string", "name: x\n", []string{"name="}, func(c *cfg) { c.Name = "" }},
		{"constant alpha", "sampler: {kind: batchsampler, alpha: 0.3}\n", nil, func(c *cfg) {
			c.Sampler = &samplerCfg{Kind: "batchsampler", Alpha: alpha{0.3, 0.3, true}}
		}},
		{"alpha schedule", "samplers: [{kind: batchsampler, alpha: {start: 0.2, end: 0.05}}]\n", nil, func(c *cfg) {
			c.Samplers = []samplerCfg{{Kind: "batchsampler", Alpha: alpha{Start: 0.2, End: 0.05}}}
		}},
		{"anchors and merge keys", "samplers:\n- &s {kind: knn, m: 10, k: 5}\n- {<<: *s, k: 8}\n- *s\n", nil, func(c *cfg) {
			s := samplerCfg{Kind: "knn", M: 10, K: 5}
			c.Samplers = []samplerCfg{s, s, s}
			c.Samplers[1].K = 8
		}},

		// train/config_test.go's TestParseConfigDefaultsAndSets
		{"train's sets", minimal, []string{"train.epochs=7", "seeds=[3,4,5]", "train.lr=0.5",
			"samplers=[{kind: uniform}, {kind: batchsampler, m: 100, k: 10, alpha: {start: 0.2, end: 0.05}, refresh_every: 5}]"}, func(c *cfg) {
			c.Name, c.Data = "t", dataCfg{Source: "tu", Name: "MUTAG", Path: "tu/MUTAG"}
			c.Train.Epochs, c.Seeds, c.Train.LR = 7, []uint64{3, 4, 5}, 0.5
			c.Samplers = []samplerCfg{{Kind: "uniform"}, {Kind: "batchsampler", M: 100, K: 10, Alpha: alpha{Start: 0.2, End: 0.05}, RefreshEvery: 5}}
		}},
		{"set a list entry's key", "samplers: [{kind: uniform}, {kind: knn, m: 10}]\n", []string{"samplers[1].m=500"}, func(c *cfg) {
			c.Samplers = []samplerCfg{{Kind: "uniform"}, {Kind: "knn", M: 500}}
		}},
		{"set a list entry", "seeds: [1, 2]\n", []string{"seeds[1]=7"}, func(c *cfg) { c.Seeds = []uint64{1, 7} }},
		{"set an entry of a default list", "", []string{"eval.cs[0]=10"}, func(c *cfg) { c.Eval.Cs[0] = 10 }},
		{"set a default list's entry, then the list", "", []string{"eval.cs[0]=10", "eval.cs=[1, 2]", "eval.cs[1]=3"}, func(c *cfg) { c.Eval.Cs = []float64{1, 3} }},
		{"set the list, then an entry", "", []string{"eval.cs=[1, 2]", "eval.cs[1]=3"}, func(c *cfg) { c.Eval.Cs = []float64{1, 3} }},
		{"set through missing mappings", "", []string{"data.synthetic.graphs=5"}, func(c *cfg) { c.Data.Synthetic.Graphs = 5 }},
		{"set through a null mapping", "sampler:\n", []string{"sampler.kind=knn"}, func(c *cfg) { c.Sampler = &samplerCfg{Kind: "knn"} }},
		{"set a key of a custom type", "sampler: {alpha: {start: 0.5, end: 0.1}}\n", []string{"sampler.alpha.end=0.2"}, func(c *cfg) {
			c.Sampler = &samplerCfg{Alpha: alpha{Start: 0.5, End: 0.2}}
		}},
		{"set a custom type to a scalar", "sampler: {alpha: {start: 0.5, end: 0.1}}\n", []string{"sampler.alpha=0.3"}, func(c *cfg) {
			c.Sampler = &samplerCfg{Alpha: alpha{0.3, 0.3, true}}
		}},
		{"set an empty string", "", []string{`data.source=""`}, func(c *cfg) { c.Data.Source = "" }},
		{"set null clears a list", "", []string{`seeds=~`}, func(c *cfg) { c.Seeds = nil }},
		{"set a map entry", "tags: {a: 1}\n", []string{"tags.b=2"}, func(c *cfg) { c.Tags = map[string]int{"a": 1, "b": 2} }},
		{"set under an alias changes that alias only", "samplers:\n- &s {kind: knn, m: 10}\n- *s\n- *s\n", []string{"samplers[1].m=20"}, func(c *cfg) {
			c.Samplers = []samplerCfg{{Kind: "knn", M: 10}, {Kind: "knn", M: 20}, {Kind: "knn", M: 10}}
		}},
		{"set a merged key", "samplers:\n- &s {kind: knn, m: 10}\n- {<<: *s}\n", []string{"samplers[1].m=20"}, func(c *cfg) {
			c.Samplers = []samplerCfg{{Kind: "knn", M: 10}, {Kind: "knn", M: 20}}
		}},
		{"set the last wins", "", []string{"train.epochs=3", "train.epochs=4"}, func(c *cfg) { c.Train.Epochs = 4 }},
		{"set a value with = in it", "", []string{"name=a=b"}, func(c *cfg) { c.Name = "a=b" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decode(tc.yaml, "x.yaml", tc.sets...)
			if err != nil {
				t.Fatal(err)
			}
			want := defaults()
			tc.edit(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func inf() float64 { var z float64; return 1 / z }

// A configuration written out decodes to itself (train's TestConfigRoundTrip).
func TestRoundTrip(t *testing.T) {
	c, err := decode(minimal+"samplers: [{kind: batchsampler, m: 10, k: 5, alpha: 0.3}, {kind: uniform, alpha: {start: 0.2, end: 0.1}}]\ntags: {a: 1}\n", "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := decode(string(out), "written")
	if err != nil {
		t.Fatalf("written config does not decode: %v\n%s", err, out)
	}
	out2, err := yaml.Marshal(&c2)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(out2) {
		t.Errorf("round trip changed the config:\n%s\nvs\n%s", out, out2)
	}
}

func TestValue(t *testing.T) {
	d, err := Parse([]byte("modality: text\nsamplers: [{kind: uniform}, {kind: knn}]\nseeds: [1]\nbase: &b graph\nalias: *b\nnothing:\n"), "x",
		[]string{"data.source=corpus", "train.epochs="})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key, want string
		ok        bool
	}{
		{"modality", "text", true},
		{"data.source", "corpus", true},
		{"samplers[1].kind", "knn", true},
		{"alias", "graph", true},
		{"samplers", "", false},
		{"samplers[2].kind", "", false},
		{"seeds", "", false},
		{"nothing", "", false},
		{"missing", "", false},
		{"train.epochs", "", false},
		{"bad..path", "", false},
	} {
		if v, ok := d.Value(tc.key); v != tc.want || ok != tc.ok {
			t.Errorf("Value(%q) = %q, %v; want %q, %v", tc.key, v, ok, tc.want, tc.ok)
		}
	}
	// Value chooses the defaults before Decode decodes over them.
	d, err = Parse([]byte("train: {epochs: 2}\n"), "x", []string{"modality=text"})
	if err != nil {
		t.Fatal(err)
	}
	c := defaults()
	if m, _ := d.Value("modality"); m == "text" {
		c.Train.BatchSize = 64
	}
	if err := d.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Modality != "text" || c.Train.BatchSize != 64 || c.Train.Epochs != 2 {
		t.Errorf("decoded %+v", c)
	}
}

// Validation errors, computed from Go values after decoding, name the line
// of their key (or the override that set it).
func TestLineAndLocate(t *testing.T) {
	src := "name: t\n# the settings\ntrain:\n  epochs: 3\n  batch_size: -5\nsamplers:\n  - kind: uniform\n  - kind: fancy\n"
	d, err := Parse([]byte(src), "configs/x.yaml", []string{"train.lr=-1", "eval.cs[1]=-2"})
	if err != nil {
		t.Fatal(err)
	}
	c := defaults()
	if err := d.Decode(&c); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key   string
		line  int
		where string
	}{
		{"train.batch_size", 5, "train.batch_size (line 5)"},
		{"train", 3, "train (line 3)"},
		{"samplers[1]", 8, "samplers[1] (line 8)"},
		{"samplers[1].kind", 8, "samplers[1].kind (line 8)"},
		{"train.lr", 0, "train.lr (-set train.lr=-1)"},
		{"eval.cs[1]", 0, "eval.cs[1] (-set eval.cs[1]=-2)"},
		{"eval.cs[2]", 0, "eval.cs[2]"}, // a default
		{"eval.folds", 0, "eval.folds"},
		{"model.kind", 0, "model.kind"},
	} {
		if l := d.Line(tc.key); l != tc.line {
			t.Errorf("Line(%q) = %d, want %d", tc.key, l, tc.line)
		}
		if w := d.Locate(tc.key); w != tc.where {
			t.Errorf("Locate(%q) = %q, want %q", tc.key, w, tc.where)
		}
	}
	var errs []error
	errs = append(errs, Positive(d.Locate("train.epochs"), c.Train.Epochs))
	errs = append(errs, Positive(d.Locate("train.batch_size"), c.Train.BatchSize))
	for i, s := range c.Samplers {
		key := fmt.Sprintf("samplers[%d].kind", i)
		errs = append(errs, OneOf(d.Locate(key), s.Kind, "uniform", "knn", "batchsampler"))
	}
	if !(c.Train.LR > 0) {
		errs = append(errs, fmt.Errorf("%s: must be a positive number, got %v", d.Locate("train.lr"), c.Train.LR))
	}
	want := `invalid config:
  train.batch_size (line 5): must be a positive integer, got -5
  samplers[1].kind (line 8): "fancy" is not allowed; allowed values: uniform, knn, batchsampler
  train.lr (-set train.lr=-1): must be a positive number, got -1`
	if err := Errors(errs); err == nil || err.Error() != want {
		t.Errorf("Errors =\n%v\nwant\n%s", err, want)
	}
}

func TestNilDoc(t *testing.T) {
	var d *Doc
	if v, ok := d.Value("a"); ok || v != "" || d.Line("a") != 0 || d.Locate("a.b") != "a.b" {
		t.Error("a nil *Doc gives keys")
	}
}

func TestOneOfPositiveErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{OneOf("sampler.walk", "rwr", "", "rwr", "bfs"), ""},
		{OneOf("sampler.walk", "", "", "rwr", "bfs"), ""},
		{OneOf("sampler.walk", "jump", "", "rwr", "bfs"), `sampler.walk: "jump" is not allowed; allowed values: rwr, bfs`},
		{OneOf("modality", "", "graph", "text"), `modality: "" is not allowed; allowed values: graph, text`},
		{Positive("train.batch_size", 1), ""},
		{Positive("train.batch_size", -5), "train.batch_size: must be a positive integer, got -5"},
		{Positive("train.epochs", 0), "train.epochs: must be a positive integer, got 0"},
		{Errors(nil), ""},
		{Errors([]error{nil, nil}), ""},
		{Errors([]error{errors.New("a: bad"), nil, errors.New("b: worse\nsee here")}), "invalid config:\n  a: bad\n  b: worse\n    see here"},
	} {
		got := ""
		if tc.err != nil {
			got = tc.err.Error()
		}
		if got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	sentinel := errors.New("s")
	if err := Errors([]error{fmt.Errorf("x: %w", sentinel)}); !errors.Is(err, sentinel) {
		t.Errorf("Errors does not unwrap: %v", err)
	}
}

func TestErrorFields(t *testing.T) {
	_, err := decode("train:\n  bach_size: 3\n", "x.yaml")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%v is not an *Error", err)
	}
	if e.Doc != "x.yaml" || e.Key != "train.bach_size" || e.Line != 2 || e.Set != "" || e.Msg != "unknown key" ||
		strings.Join(e.Allowed(), ", ") != trainKeys {
		t.Errorf("%+v", *e)
	}
	_, err = decode("", "x.yaml", "seeds=[0, x]")
	if !errors.As(err, &e) {
		t.Fatalf("%v is not an *Error", err)
	}
	if e.Doc != "" || e.Key != "seeds[1]" || e.Line != 0 || e.Set != "seeds=[0, x]" || e.Allowed() != nil {
		t.Errorf("%+v", *e)
	}
}

func TestDecodeNeedsAPointer(t *testing.T) {
	d, err := Parse(nil, "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Decode(defaults()); err == nil {
		t.Error("Decode of a non-pointer succeeded")
	}
	var p *cfg
	if err := d.Decode(p); err == nil {
		t.Error("Decode of a nil pointer succeeded")
	}
}

// Aliases are checked once per anchor: a "billion laughs" document is
// refused (by yaml.v3) quickly, not walked a billion times.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	var m map[string]any
	d, err := Parse([]byte(b.String()), "bomb", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Decode(&m); err == nil {
		t.Error("the bomb decoded")
	}
	var c cfg
	if err := d.Decode(&c); err == nil || !strings.Contains(err.Error(), "a0 (line 1): unknown key") {
		t.Errorf("got %v", err)
	}
	// An anchor that contains itself.
	d, err = Parse([]byte("seeds: &s [1, *s]\n"), "self", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Decode(&c); err == nil {
		t.Error("a list containing itself decoded")
	}
}

// A yaml.Node field takes any value (scalar, list or mapping) as it is
// written, with -set overrides applied; the keys around it stay strict.
func TestNodeFieldsTakeAnyValue(t *testing.T) {
	type axis struct {
		Key    string               `yaml:"key"`
		Values []yaml.Node          `yaml:"values"`
		Set    map[string]yaml.Node `yaml:"set"`
	}
	type doc struct {
		Axes []axis `yaml:"axes"`
	}
	src := "axes:\n  - key: a.b\n    values: [1, {schedule: linear, start: 0.2}, [x, y], \"500\"]\n    set:\n      samplers[1].m: 3\n"
	d, err := Parse([]byte(src), "x.yaml", []string{"axes[0].values[0]=abc"})
	if err != nil {
		t.Fatal(err)
	}
	var v doc
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	vals := v.Axes[0].Values
	if len(vals) != 4 || vals[0].Value != "abc" || vals[1].Kind != yaml.MappingNode || vals[2].Kind != yaml.SequenceNode || vals[3].Value != "500" || vals[3].ShortTag() != "!!str" {
		t.Errorf("values decoded as %+v", vals)
	}
	if n := v.Axes[0].Set["samplers[1].m"]; n.Value != "3" {
		t.Errorf("set: %+v", v.Axes[0].Set)
	}
	d, err = Parse([]byte("axes:\n  - {key: a.b, valuez: [1]}\n"), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Decode(&v); err == nil || !strings.Contains(err.Error(), "axes[0].valuez (line 2): unknown key") {
		t.Errorf("unknown key beside the nodes: %v", err)
	}
}

// SetString gives an override that Parse reads back to the same value.
func TestSetString(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"500", "samplers[1].m=500"},
		{"\"500\"", `samplers[1].m="500"`},
		{"{schedule: linear, start: 0.2, end: 0.05}", "samplers[1].m={schedule: linear, start: 0.2, end: 0.05}"},
		{"start: 0.2\nend: 0.05\n", "samplers[1].m={start: 0.2, end: 0.05}"},
		{"[1, 2]", "samplers[1].m=[1, 2]"},
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(tt.src), &n); err != nil {
			t.Fatal(err)
		}
		got, err := SetString("samplers[1].m", &n)
		if err != nil || got != tt.want {
			t.Errorf("SetString(%q) = %q, %v; want %q", tt.src, got, err, tt.want)
		}
		if _, err := parseOverride(got); err != nil {
			t.Errorf("%q does not parse back: %v", got, err)
		}
	}
	if _, err := SetString("a", nil); err == nil {
		t.Error("SetString of no value succeeded")
	}
}
