package train

import (
	"fmt"
	"math"
	"reflect"
)

// TextOptions are the text modality's options beyond the SimCSE setting
// (the `text:` section of a config). The zero value is the plain setting:
// the unweighted mean of the word vectors as the bag, hidden-layer dropout
// as the only difference between the two views, the embedding table stepped
// by the loop's dense Adam at train.lr, and STS scored once, on the final
// encoder output.
type TextOptions struct {
	// Weighting weighs the words of the embedding bag: "none" (default:
	// the mean), "sif" (a/(a+p(w)) with p(w) the word's corpus frequency,
	// Arora et al. 2017) or "idf" (smooth IDF with the corpus sentences as
	// documents).
	Weighting string `yaml:"weighting,omitempty"`
	// SIFA is SIF's a (0: wordvec.DefaultSIFA = 1e-3).
	SIFA float64 `yaml:"sif_a,omitempty"`
	// RemovePC projects this many common directions out of every bag: the
	// top singular vectors of the bags of all corpus sentences under the
	// initial word vectors (SIF's common-component removal; fixed during
	// training).
	RemovePC int `yaml:"remove_pc,omitempty"`
	// WordDropout drops each known word of a sentence with this
	// probability before bagging, independently in each view (SimCSE's
	// "word deletion" augmentation; a sentence keeps at least one word).
	WordDropout float64 `yaml:"word_dropout,omitempty"`
	// InputDropout is the dropout probability on the bag (the MLP's input),
	// one mask per view.
	InputDropout float64 `yaml:"input_dropout,omitempty"`
	// Residual makes the encoder bag + MLP(bag) with the MLP's last layer
	// initialised to zero, so that the untrained encoder is the bag
	// (model.TextConfig.Residual); needs model.hidden = data.text.dim.
	Residual bool `yaml:"residual,omitempty"`
	// TableOptimizer steps a trainable embedding table: "loop" (default:
	// with the other parameters, by the loop's dense Adam at train.lr),
	// "dense" (the modality's own Adam at table_lr) or "sparse" (lazy
	// sparse Adam at table_lr: only the rows of the batch's words are read
	// and updated; see model.RowAdam).
	TableOptimizer string `yaml:"table_optimizer,omitempty"`
	// TableLR is the table's learning rate with table_optimizer dense or
	// sparse (0: train.lr).
	TableLR float64 `yaml:"table_lr,omitempty"`
	// EvalRepr is the sentence representation scored on STS: "encoder"
	// (default: the MLP's output, SimCSE's unsupervised test-time choice),
	// "projection" (through the projection head, as in training) or "bag"
	// (the embedding bag, the MLP's input: the fine-tuned, weighted word
	// vectors).
	EvalRepr string `yaml:"eval_repr,omitempty"`
}

// validateTextOptions checks the `text:` section; a graph config must not
// have one.
func (c *Config) validateTextOptions() []string {
	o := c.Text
	if c.Modality != "text" {
		if !reflect.ValueOf(o).IsZero() {
			return []string{fmt.Sprintf("text: only for modality text, not %s", c.Modality)}
		}
		return nil
	}
	var errs problems
	add := errs.add
	prob := func(key string, p float64) {
		if !(p >= 0 && p < 1) {
			errs = append(errs, fmt.Sprintf("%s: must be in [0, 1), got %v", key, p))
		}
	}
	add(oneOf("text.weighting", o.Weighting, "", "none", "sif", "idf"))
	if o.SIFA < 0 || math.IsNaN(o.SIFA) || math.IsInf(o.SIFA, 0) || (o.SIFA != 0 && o.Weighting != "sif") {
		errs = append(errs, fmt.Sprintf("text.sif_a: must be a positive number with weighting sif (0: 1e-3), got %v with weighting %q", o.SIFA, o.Weighting))
	}
	if o.RemovePC < 0 || o.RemovePC > c.Data.Text.Dim {
		errs = append(errs, fmt.Sprintf("text.remove_pc: must be in [0, data.text.dim = %d], got %d", c.Data.Text.Dim, o.RemovePC))
	}
	prob("text.word_dropout", o.WordDropout)
	prob("text.input_dropout", o.InputDropout)
	if o.Residual && c.Model.Hidden != c.Data.Text.Dim {
		errs = append(errs, fmt.Sprintf("text.residual: needs model.hidden = data.text.dim, got %d and %d", c.Model.Hidden, c.Data.Text.Dim))
	}
	add(oneOf("text.table_optimizer", o.TableOptimizer, "", "loop", "dense", "sparse"))
	own := o.TableOptimizer == "dense" || o.TableOptimizer == "sparse"
	if own && !c.Model.TrainEmbeddings {
		errs = append(errs, fmt.Sprintf("text.table_optimizer: %s needs model.train_embeddings: true", o.TableOptimizer))
	}
	if o.TableLR < 0 || math.IsNaN(o.TableLR) || math.IsInf(o.TableLR, 0) || (o.TableLR != 0 && !own) {
		errs = append(errs, fmt.Sprintf("text.table_lr: must be a positive number with table_optimizer dense or sparse (0: train.lr), got %v with table_optimizer %q", o.TableLR, o.TableOptimizer))
	}
	add(oneOf("text.eval_repr", o.EvalRepr, "", "encoder", "projection", "bag"))
	return errs
}
