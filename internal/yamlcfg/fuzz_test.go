package yamlcfg

import (
	"strings"
	"testing"
)

// FuzzParse: no input and no override makes Parse, Value, Line, Locate or
// Decode panic. sets holds the overrides, one a line.
func FuzzParse(f *testing.F) {
	for _, s := range []struct{ src, sets string }{
		{"", ""},
		{minimal, "train.epochs=7\nseeds=[3,4,5]"},
		{"samplers: [{kind: uniform}, {kind: knn, m: 10}]\n", "samplers[1].m=500\nsamplers[1].alpha={start: 0.2, end: 0.1}"},
		{"sampler:\n  alpha: 0.2\n", "eval.cs[0]=10\neval.cs=[1]\neval.cs[0]=2"},
		{"samplers:\n- &s {kind: knn, m: 10}\n- {<<: *s, k: 8}\n- *s\n", "samplers[2].m=3"},
		{"a: &a [*a]\n", "a[0][0]=1"},
		{"train: {epochs: x}\n", "train.epochs="},
		{"tags: {a: 1}\n", "tags.b=2\nfoo\n=x\na..b=1\nx[9999999999999999999]=1"},
		{"- 1\n- 2\n", "a=1"},
		{"name: t\ndata: [unclosed\n", ""},
	} {
		f.Add(s.src, s.sets)
	}
	f.Fuzz(func(t *testing.T, src, sets string) {
		var ss []string
		if sets != "" {
			ss = strings.Split(sets, "\n")
		}
		d, err := Parse([]byte(src), "fuzz.yaml", ss)
		if err != nil {
			if err.Error() == "" {
				t.Error("empty error")
			}
			return
		}
		for _, k := range []string{"name", "train.epochs", "samplers[1].m", "seeds[0]", "a[0]"} {
			d.Value(k)
			d.Line(k)
			d.Locate(k)
		}
		c := defaults()
		_ = d.Decode(&c)
		var m map[string]any
		_ = d.Decode(&m)
		var a any
		_ = d.Decode(&a)
	})
}
