package table

import (
	"strings"

	"github.com/batchsampler-go/batchsampler/paper"
)

// paperGraphRows is the paper's graph table (Table "Accuracy on graph
// classification task under LIBSVM classifier") as printed, one row per
// block and sampler, columns in paper.GraphDatasets order; "-" is a cell the
// paper leaves empty.
var paperGraphRows = map[string]map[string]string{
	BlockGraphCL: {
		"uniform":      "70.90±0.53 48.48±0.38 70.62±0.23 90.54±0.25 74.39±0.45 86.80±1.34 77.87±0.41",
		"knn":          "70.72±0.35 47.97±0.97 70.59±0.14 90.21±0.74 74.17±0.41 86.46±0.82 77.27±0.37",
		"batchsampler": "71.90±0.46 48.93±0.28 71.48±0.28 90.88±0.16 75.04±0.67 87.78±0.93 78.93±0.38",
	},
	BlockDCL: {
		"uniform":      "71.07±0.36 48.93±0.32 71.06±0.51 90.66±0.29 74.64±0.48 88.09±0.93 78.49±0.48",
		"knn":          "70.94±0.19 48.47±0.35 70.49±0.37 90.26±1.03 74.28±0.17 87.13±1.40 78.13±0.52",
		"batchsampler": "71.32±0.17 48.96±0.25 70.44±0.35 90.73±0.34 75.02±0.61 89.47±1.43 79.03±0.32",
	},
	BlockHCL: {
		"uniform":      "71.24±0.36 48.54±0.51 71.03±0.45 90.40±0.42 74.69±0.42 87.79±1.10 78.83±0.67",
		"knn":          "71.14±0.44 48.36±0.93 70.86±0.74 90.64±0.51 74.06±0.44 87.53±1.37 78.66±0.48",
		"batchsampler": "71.20±0.38 48.76±0.39 71.70±0.35 91.25±0.25 75.11±0.63 88.31±1.29 79.17±0.27",
	},
	BlockMVGRL: {
		"uniform":      "74.20±0.70 51.20±0.50 - 84.50±0.60 - 89.70±1.10 -",
		"knn":          "73.30±0.34 50.70±0.36 - 82.70±0.67 - 85.08±0.66 -",
		"batchsampler": "76.70±0.35 52.40±0.39 - 87.47±0.79 - 91.13±0.81 -",
	},
}

// PaperGraph returns the paper's number for a block, sampler and dataset,
// and false where the paper reports none (MVGRL on COLLAB, PROTEINS and
// NCI1; any dataset outside its seven).
func PaperGraph(block, sampler, dataset string) (paper.Reported, bool) {
	row, ok := paperGraphRows[block][sampler]
	if !ok {
		return paper.Reported{}, false
	}
	cells := strings.Fields(row)
	for i, d := range paper.GraphDatasets {
		if d != dataset {
			continue
		}
		r, err := paper.ParseReported(cells[i])
		return r, err == nil
	}
	return paper.Reported{}, false
}
