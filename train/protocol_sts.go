package train

import (
	"cmp"
	"fmt"

	"github.com/batchsampler-go/batchsampler/eval"
)

func init() {
	RegisterProtocol("sts", ProtocolSpec{Modalities: []string{"text"}, EvalKeys: []string{"kind", "select_every"},
		New: func(*Config) Protocol { return stsProtocol{} }})
}

// stsProtocol is SentEval's STS protocol on STS Benchmark: Spearman × 100
// of the cosine similarities of the two sentences of every pair, embedded
// in evaluation mode with the text.eval_repr representation; the score is
// the test set's, and STS-B dev is the development set of model selection
// (eval.select_every, SimCSE's protocol).
type stsProtocol struct{}

// stsSplits are the two sides of each STS set.
var stsSplits = map[string][2]string{"dev": {"sts-dev.1", "sts-dev.2"}, "test": {"sts-test.1", "sts-test.2"}}

// score embeds both sides of set ("dev" or "test") with representation
// repr and returns Spearman × 100.
func (stsProtocol) score(env EvalEnv, set, repr string) (float64, error) {
	td, ok := env.Data.(*textDataset)
	if !ok {
		return 0, fmt.Errorf("sts needs a text dataset, got %T", env.Data)
	}
	gold := td.dev.gold
	if set == "test" {
		gold = td.test.gold
	}
	if env.Ctx != nil && env.Ctx.Err() != nil {
		return 0, env.Ctx.Err()
	}
	repr = cmp.Or(repr, "encoder")
	sides := stsSplits[set]
	e1, err := env.Embed(sides[0], repr)
	if err != nil {
		return 0, err
	}
	e2, err := env.Embed(sides[1], repr)
	if err != nil {
		return 0, err
	}
	return eval.STSScore(e1.Data, e2.Data, len(gold), e1.D, gold)
}

// DevScore is STS-B dev with text.eval_repr.
func (p stsProtocol) DevScore(env EvalEnv) (float64, error) {
	return p.score(env, "dev", env.Cfg.Text.EvalRepr)
}

// byRepr scores dev and test with every representation of the method:
// {"encoder": {"dev": …, "test": …}, …}.
func (p stsProtocol) byRepr(env EvalEnv) (map[string]any, error) {
	reprs := []string{"encoder", "projection"}
	if r, ok := env.Method.(Representer); ok {
		reprs = r.Representations()
	}
	out := map[string]any{}
	for _, r := range reprs {
		dev, err := p.score(env, "dev", r)
		if err != nil {
			return nil, fmt.Errorf("sts dev (%s): %w", r, err)
		}
		test, err := p.score(env, "test", r)
		if err != nil {
			return nil, fmt.Errorf("sts test (%s): %w", r, err)
		}
		out[r] = map[string]float64{"dev": dev, "test": test}
	}
	return out, nil
}

// Evaluate returns the STS-B test Spearman × 100 of text.eval_repr; Detail
// holds eval_repr, dev and test, and by_repr (every representation's dev
// and test). With model selection the runner adds the final parameters'
// values as dev_final, test_final and by_repr_final.
func (p stsProtocol) Evaluate(env EvalEnv) (Score, error) {
	dev, err := p.score(env, "dev", env.Cfg.Text.EvalRepr)
	if err != nil {
		return Score{}, fmt.Errorf("sts dev: %w", err)
	}
	test, err := p.score(env, "test", env.Cfg.Text.EvalRepr)
	if err != nil {
		return Score{}, fmt.Errorf("sts test: %w", err)
	}
	by, err := p.byRepr(env)
	if err != nil {
		return Score{}, err
	}
	return Score{Metric: "sts_test_spearman", Value: test, Detail: map[string]any{
		"eval_repr": cmp.Or(env.Cfg.Text.EvalRepr, "encoder"), "dev": dev, "test": test, "by_repr": by,
	}}, nil
}

// Untrained scores the initial encoder (dev_untrained, test_untrained,
// untrained_by_repr) and reports the dataset's untrained baselines:
// baseline_avg_wordvec_{dev,test} (mean of the initial word vectors),
// baseline_tfidf_{dev,test} (TF-IDF cosine, IDF from the training corpus),
// baseline_tfidf_vocab_{dev,test} (the same on in-vocabulary words only)
// and, with a weighting or removed directions, baseline_bag_{dev,test} (the
// weighted bag of the initial vectors).
func (p stsProtocol) Untrained(env EvalEnv) (map[string]any, error) {
	by, err := p.byRepr(env)
	if err != nil {
		return nil, err
	}
	u, _ := by[cmp.Or(env.Cfg.Text.EvalRepr, "encoder")].(map[string]float64)
	out := map[string]any{"dev_untrained": u["dev"], "test_untrained": u["test"], "untrained_by_repr": by}
	if td, ok := env.Data.(*textDataset); ok {
		for k, v := range td.baselines {
			out["baseline_"+k] = v
		}
	}
	return out, nil
}
