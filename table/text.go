package table

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/configs"
	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/train"
)

// BlockSimCSE is the text table's first block: SimCSE (dropout views,
// in-batch InfoNCE). Its other two blocks are BlockDCL and BlockHCL:
// SimCSE's views and in-batch negatives with the DCL or HCL loss, the
// paper's "DCL-BERT" and "HCL-BERT" rows.
const BlockSimCSE = "simcse"

// TextBlocks lists the text table's blocks in the paper's row order.
var TextBlocks = []string{BlockSimCSE, BlockDCL, BlockHCL}

// TextConfigFiles names each text block's shipped config (configs/, read
// from the embedded copy): the cell runs it exactly as shipped, with its
// three samplers (Uniform, the kNN Sampler and BatchSampler, both with the
// graph built once from the initial encoder before training: M = 1000, K =
// 500, α = 0.7) and its three seeds, so that its Uniform and BatchSampler
// rows are those of the recorded runs.
var TextConfigFiles = map[string]string{
	BlockSimCSE: "simcse-stsb.yaml",
	BlockDCL:    "simcse-stsb-dcl.yaml",
	BlockHCL:    "simcse-stsb-hcl.yaml",
}

// TextDataset is the Dataset of the text table's cells (their one
// "dataset": the shared corpora, scored on the STS tasks); a cell's
// directory is its block.
const TextDataset = "text"

// textBlockTitle is a text block's name in the table.
var textBlockTitle = map[string]string{BlockSimCSE: "SimCSE", BlockDCL: "SimCSE + DCL", BlockHCL: "SimCSE + HCL"}

// TextConfig is the shipped config of a text block (TextConfigFiles)
// with data.root set to root (unless empty) and the overrides sets
// (key.path=value, as cmd/train's -set) on top.
func TextConfig(block, root string, sets []string) (train.Config, error) {
	file, ok := TextConfigFiles[block]
	if !ok {
		return train.Config{}, fmt.Errorf("method %q: expected one of %s", block, strings.Join(TextBlocks, ", "))
	}
	y, err := configs.Read(file)
	if err != nil {
		return train.Config{}, err
	}
	var all []string
	if root != "" {
		all = append(all, fmt.Sprintf("data.root=%q", root))
	}
	cfg, err := train.ParseConfig(y, append(all, sets...))
	if err != nil {
		return train.Config{}, fmt.Errorf("%s (configs/%s): %w", block, file, err)
	}
	if cfg.Modality != "text" || cfg.Eval.Kind != "sts" {
		return train.Config{}, fmt.Errorf("%s (configs/%s): modality %q, eval.kind %q: expected text and sts", block, file, cfg.Modality, cfg.Eval.Kind)
	}
	return cfg, nil
}

// PlanText lays out the text table: one cell per block (opt.Blocks, empty:
// TextBlocks), each its shipped config with data.root = opt.Root (when
// set) and opt.Sets on top. The corpora and STS-B must be under the data
// root (opt.Root, else defaultRoot): their absence is an error naming the
// file and the key. The SentEval tasks that are not there are listed in
// the plan's Skipped, one line per task with the command that fetches it:
// their columns will read "absent" and the average is partial. opt.Datasets
// must be empty (the text table has one dataset).
func PlanText(opt PlanOptions, defaultRoot string) (*Plan, error) {
	if len(opt.Datasets) > 0 {
		return nil, fmt.Errorf("datasets %q: the text table has no datasets to choose (its corpora and STS tasks are those of configs/simcse-stsb.yaml under the data root)", opt.Datasets)
	}
	blocks := opt.Blocks
	if len(blocks) == 0 {
		blocks = TextBlocks
	}
	for _, b := range blocks {
		if !slices.Contains(TextBlocks, b) {
			return nil, fmt.Errorf("method %q: expected one of %s", b, strings.Join(TextBlocks, ", "))
		}
	}
	root := opt.Root
	if root == "" {
		root = defaultRoot
	}
	p := &Plan{Root: root}
	for i, b := range blocks {
		cfg, err := TextConfig(b, opt.Root, opt.Sets)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			if err := checkTextData(cfg, root); err != nil {
				return nil, err
			}
			p.Skipped = absentTextTasks(cfg, root)
		}
		p.Cells = append(p.Cells, cellrun.Cell{Dataset: TextDataset, Block: b, Config: cfg, Dir: b})
	}
	return p, nil
}

// textPath resolves a data.text path as train does: relative to the data
// root (the config's data.root, else root) unless absolute.
func textPath(cfg train.Config, root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if cfg.Data.Root != "" {
		root = cfg.Data.Root
	}
	return filepath.Join(root, p)
}

// checkTextData checks that the corpora and STS-B's dev and test files of
// cfg are under the data root.
func checkTextData(cfg train.Config, root string) error {
	var missing []string
	for i, f := range cfg.Data.Text.Corpus {
		if p := textPath(cfg, root, f); !fileExists(p) {
			missing = append(missing, fmt.Sprintf("%s (data.text.corpus[%d]): not found", p, i))
		}
	}
	for _, f := range []string{"sts-dev.csv", "sts-test.csv"} {
		if p := textPath(cfg, root, filepath.Join(cfg.Data.Text.STSDir, f)); !fileExists(p) {
			missing = append(missing, fmt.Sprintf("%s (data.text.sts_dir %q): not found; get STS-B with go run ./cmd/download -dataset sts -sha256 HEX|any", p, cfg.Data.Text.STSDir))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("text table: data root %s lacks what configs/simcse-stsb.yaml reads (choose the root with -root DIR or $BATCHSAMPLER_DATA):\n%s", root, strings.Join(missing, "\n"))
	}
	return nil
}

// absentTextTasks lists the SentEval tasks of cfg that are not under
// data.text.senteval_dir (as train's loader decides: a year's folder, SICK's
// test file), one line each with the command that fetches it.
func absentTextTasks(cfg train.Config, root string) []string {
	dir := cfg.Data.Text.SentEvalDir
	var out []string
	if dir == "" {
		for _, t := range TextTasks {
			if t != "STS-B" {
				out = append(out, fmt.Sprintf("%s: absent (data.text.senteval_dir is empty: STS-B alone is scored)", t))
			}
		}
		return out
	}
	dir = textPath(cfg, root, dir)
	there := func(p string) bool {
		_, err := os.Stat(p)
		return err == nil || !errors.Is(err, fs.ErrNotExist)
	}
	for _, y := range data.STSYears {
		if p := y.Path(dir); !there(p) {
			out = append(out, fmt.Sprintf("%s: absent (no %s; get it with go run ./cmd/download -dataset %s -sha256 HEX|any)", y.Name, p, strings.ToLower(y.Name)))
		}
	}
	if p := filepath.Join(dir, filepath.FromSlash(data.SICKTestPath)); !there(p) {
		out = append(out, fmt.Sprintf("SICK-R: absent (no %s; get it with go run ./cmd/download -dataset sick -sha256 HEX|any)", p))
	}
	return out
}
