package train

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/batchsampler-go/batchsampler/eval"
)

func init() {
	RegisterProtocol("sts", ProtocolSpec{Modalities: []string{"text"}, EvalKeys: []string{"kind", "select_every"}, DevSet: true,
		New: func(*Config) Protocol { return stsProtocol{} }})
}

// stsProtocol is SentEval's STS protocol as SimCSE evaluates it: Spearman
// × 100 of the cosine similarities of the two sentences of every pair,
// embedded in evaluation mode with the text.eval_repr representation. The
// run's score is STS Benchmark's test set, and STS-B dev is the
// development set of model selection (eval.select_every). Besides, every
// SentEval task under data.text.senteval_dir is scored (see SentEvalScores).
type stsProtocol struct{}

// SentEvalScores is the sts protocol's report of SimCSE's seven STS tasks
// (evaluation.py --task_set sts --mode test), in a run's detail under
// "senteval" (and "senteval_final", "senteval_untrained"): STS12 … STS16
// in SimCSE's "all" setting (the scored pairs of a year's subsets
// concatenated, one Spearman correlation over all of them), STS-B and
// SICK-R on their test sets, and their average.
type SentEvalScores struct {
	// Tasks are the seven task names in SimCSE's order.
	Tasks []string `json:"tasks"`
	// Spearman is Spearman × 100 of every task present; STS-B's equals the
	// run's score of the same parameters.
	Spearman map[string]float64 `json:"spearman"`
	// Pairs is the number of scored pairs of every task present.
	Pairs map[string]int `json:"pairs"`
	// Absent names the tasks whose data is not under data.text.senteval_dir
	// (neither scored nor in the average).
	Absent []string `json:"absent"`
	// Avg is the mean of Spearman over the AvgTasks tasks present (SimCSE's
	// "Avg." averages the seven values rounded to two decimals; this one
	// averages them unrounded). AvgPartial is true when a task is absent,
	// so that Avg is not comparable with a seven-task average.
	Avg        float64 `json:"avg"`
	AvgPartial bool    `json:"avg_partial"`
	AvgTasks   int     `json:"avg_tasks"`
}

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

// scoreTasks scores the seven STS tasks with representation repr; stsB is
// STS-B test's score of the same representation, computed by the caller.
func (stsProtocol) scoreTasks(env EvalEnv, repr string, stsB float64) (SentEvalScores, error) {
	td, ok := env.Data.(*textDataset)
	if !ok {
		return SentEvalScores{}, fmt.Errorf("sts needs a text dataset, got %T", env.Data)
	}
	repr = cmp.Or(repr, "encoder")
	r := SentEvalScores{Tasks: slices.Clone(stsTaskNames), Spearman: map[string]float64{}, Pairs: map[string]int{}, Absent: []string{}}
	var sum float64
	for _, name := range stsTaskNames {
		var rho float64
		switch t := td.task(name); {
		case name == stsBName:
			rho = stsB
			r.Pairs[name] = len(td.test.gold)
		case t == nil:
			r.Absent = append(r.Absent, name)
			continue
		default:
			if env.Ctx != nil && env.Ctx.Err() != nil {
				return SentEvalScores{}, env.Ctx.Err()
			}
			e1, err := env.Embed(t.split+".1", repr)
			if err != nil {
				return SentEvalScores{}, fmt.Errorf("%s: %w", name, err)
			}
			e2, err := env.Embed(t.split+".2", repr)
			if err != nil {
				return SentEvalScores{}, fmt.Errorf("%s: %w", name, err)
			}
			if rho, err = eval.STSScore(e1.Data, e2.Data, len(t.set.gold), e1.D, t.set.gold); err != nil {
				return SentEvalScores{}, fmt.Errorf("%s (%s): %w", name, t.path, err)
			}
			r.Pairs[name] = len(t.set.gold)
		}
		r.Spearman[name] = rho
		sum += rho
		r.AvgTasks++
	}
	r.Avg = sum / float64(r.AvgTasks)
	r.AvgPartial = len(r.Absent) > 0
	return r, nil
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
// holds eval_repr, dev and test, by_repr (every representation's dev and
// test) and senteval (the seven STS tasks of text.eval_repr, a
// SentEvalScores). With model selection the runner adds the final
// parameters' values as dev_final, test_final, by_repr_final and
// senteval_final.
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
	tasks, err := p.scoreTasks(env, env.Cfg.Text.EvalRepr, test)
	if err != nil {
		return Score{}, fmt.Errorf("sts tasks: %w", err)
	}
	return Score{Metric: "sts_test_spearman", Value: test, Detail: map[string]any{
		"eval_repr": cmp.Or(env.Cfg.Text.EvalRepr, "encoder"), "dev": dev, "test": test, "by_repr": by, "senteval": tasks,
	}}, nil
}

// Untrained scores the initial encoder (dev_untrained, test_untrained,
// untrained_by_repr, senteval_untrained) and reports the dataset's untrained baselines:
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
	tasks, err := p.scoreTasks(env, env.Cfg.Text.EvalRepr, u["test"])
	if err != nil {
		return nil, fmt.Errorf("sts tasks: %w", err)
	}
	out := map[string]any{"dev_untrained": u["dev"], "test_untrained": u["test"], "untrained_by_repr": by, "senteval_untrained": tasks}
	if td, ok := env.Data.(*textDataset); ok {
		for k, v := range td.baselines {
			out["baseline_"+k] = v
		}
	}
	return out, nil
}
