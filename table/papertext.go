package table

import (
	"slices"
	"strings"

	"github.com/batchsampler-go/batchsampler/paper"
)

// TextTasks are the columns of the paper's text table before its "Avg.":
// SimCSE's seven STS tasks, in its order (the names train's sts protocol
// reports in SentEvalScores.Tasks).
var TextTasks = []string{"STS12", "STS13", "STS14", "STS15", "STS16", "STS-B", "SICK-R"}

// TextAvg is the name of the paper's last column, the average of the seven
// tasks.
const TextAvg = "Avg."

// The backbones of the paper's two text tables.
const (
	// BackboneBERT is the table of the paper's body (Table "Overall
	// performance comparison with the BERT backbone on STS tasks",
	// \label{tab:text}): the numbers the text table prints in brackets.
	BackboneBERT = "bert-base"
	// BackboneRoBERTa is the appendix's table (Table "Performance
	// comparison for sentence embedding learning based on RoBERTa",
	// \label{tab:text_roberta}), kept in table.json beside the other.
	BackboneRoBERTa = "roberta-base"
)

// paperTextRows are the paper's two text tables
// (/work/shared/paper/batchsampler-kdd23.tex, tab:text for BERT-base and
// tab:text_roberta for RoBERTa-base) as printed, one row per block and
// sampler, columns TextTasks then TextAvg; Spearman × 100, one number per
// cell (the paper gives no std for them). The paper's rows are
// "SimCSE-BERT_base", "DCL-BERT_base" and "HCL-BERT_base", each with "w/
// kNN Sampler" and "w/ BatchSampler". One printed average is not the mean
// of its row: HCL-RoBERTa's 75.49 (the seven values average 75.48; see
// TestPaperTextParses).
var paperTextRows = map[string]map[string]map[string]string{
	BackboneBERT: {
		BlockSimCSE: {
			"uniform":      "68.62 80.89 73.74 80.88 77.66 77.79 69.64 75.60",
			"knn":          "63.62 74.86 69.79 79.17 76.24 74.73 67.74 72.31",
			"batchsampler": "72.37 82.08 75.24 83.10 78.43 77.54 68.05 76.69",
		},
		BlockDCL: {
			"uniform":      "65.22 77.89 68.94 79.88 76.72 73.89 69.54 73.15",
			"knn":          "66.34 76.66 72.60 78.30 74.86 73.65 67.92 72.90",
			"batchsampler": "69.55 82.66 73.37 80.40 75.37 75.43 66.76 74.79",
		},
		BlockHCL: {
			"uniform":      "62.57 79.12 69.70 78.00 75.11 73.38 69.74 72.52",
			"knn":          "61.12 75.73 68.43 76.64 74.78 71.22 68.04 70.85",
			"batchsampler": "66.87 81.38 72.96 80.11 77.99 75.95 70.89 75.16",
		},
	},
	BackboneRoBERTa: {
		BlockSimCSE: {
			"uniform":      "67.90 80.91 73.14 80.58 80.74 80.26 69.87 76.20",
			"knn":          "68.78 79.49 73.34 81.05 80.15 77.09 67.18 75.30",
			"batchsampler": "68.29 81.96 73.86 82.16 80.94 80.77 69.30 76.75",
		},
		BlockDCL: {
			"uniform":      "66.60 79.16 71.05 80.40 77.76 77.94 67.57 74.35",
			"knn":          "65.39 79.04 69.71 78.37 75.98 74.72 64.39 72.51",
			"batchsampler": "65.53 80.09 71.00 80.64 78.35 77.75 67.52 74.41",
		},
		BlockHCL: {
			"uniform":      "67.20 80.47 72.44 80.88 80.57 78.79 67.98 75.49",
			"knn":          "65.99 77.32 73.71 80.59 79.78 77.70 65.40 74.36",
			"batchsampler": "66.01 80.79 73.58 81.25 80.66 79.22 68.52 75.72",
		},
	},
}

// PaperText returns the paper's number for a backbone (BackboneBERT or
// BackboneRoBERTa), block (TextBlocks), sampler and column (one of
// TextTasks or TextAvg), and false where it reports none.
func PaperText(backbone, block, sampler, column string) (paper.Reported, bool) {
	row, ok := paperTextRows[backbone][block][sampler]
	if !ok {
		return paper.Reported{}, false
	}
	cells := strings.Fields(row)
	i := len(TextTasks) // TextAvg
	if column != TextAvg {
		if i = slices.Index(TextTasks, column); i < 0 {
			return paper.Reported{}, false
		}
	}
	if i >= len(cells) {
		return paper.Reported{}, false
	}
	r, err := paper.ParseReported(cells[i])
	return r, err == nil
}
