package paper

// GraphSettings are one dataset's settings in the appendix's
// "Hyperparameter settings for graph-level representation learning":
// batch size B, epochs, the refresh interval t of the samplers' graphs,
// BatchSampler's M candidates and K neighbours.
type GraphSettings struct {
	BatchSize    int
	Epochs       int
	RefreshEvery int
	M, K         int
}

// GraphAppendix holds the appendix's settings of the seven datasets of the
// paper's graph table, by TU name.
var GraphAppendix = map[string]GraphSettings{
	"IMDB-BINARY":   {BatchSize: 256, Epochs: 100, RefreshEvery: 25, M: 500, K: 100},
	"IMDB-MULTI":    {BatchSize: 128, Epochs: 50, RefreshEvery: 25, M: 500, K: 100},
	"COLLAB":        {BatchSize: 128, Epochs: 20, RefreshEvery: 50, M: 1000, K: 100},
	"REDDIT-BINARY": {BatchSize: 128, Epochs: 50, RefreshEvery: 50, M: 500, K: 100},
	"PROTEINS":      {BatchSize: 128, Epochs: 20, RefreshEvery: 50, M: 500, K: 100},
	"MUTAG":         {BatchSize: 128, Epochs: 20, RefreshEvery: 50, M: 100, K: 50},
	"NCI1":          {BatchSize: 128, Epochs: 20, RefreshEvery: 50, M: 1000, K: 100},
}

// GraphDatasets is the column order of the paper's graph table.
var GraphDatasets = []string{"IMDB-BINARY", "IMDB-MULTI", "COLLAB", "REDDIT-BINARY", "PROTEINS", "MUTAG", "NCI1"}
