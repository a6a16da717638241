package table

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/paper"
	"github.com/batchsampler-go/batchsampler/train"
)

// GraphSettings are one dataset's settings in the graph table: those of
// the paper's appendix (paper.GraphSettings: B, epochs, t, M and K) and two
// caps of MVGRL's cost.
type GraphSettings struct {
	paper.GraphSettings
	// DiffusionTopK caps the entries per row of MVGRL's diffusion view
	// (model.diffusion.top_k; 0: no cap). Not in the paper: a cost bound
	// for datasets of large or dense graphs (see MVGRLConfig).
	DiffusionTopK int
	// MVGRLMaxDegree caps MVGRL's one-hot degree features on a dataset
	// without node labels (data.max_degree: degrees above it share the last
	// column; 0: one column per degree up to the largest). Not in the paper:
	// a memory bound, as the features are dense (N nodes × columns float32).
	MVGRLMaxDegree int
}

// DefaultMVGRLMaxDegree caps MVGRL's one-hot degrees where a dataset's
// largest degree would make its dense features too large to hold:
// REDDIT-BINARY (859k nodes, degrees up to 3,062) would need 10.5 GB for
// them uncapped, 0.22 GB capped (65 columns).
const DefaultMVGRLMaxDegree = 64

// PaperGraphSettings holds the settings of the seven datasets of the
// paper's graph table, by TU name: the appendix's (paper.GraphAppendix),
// with the caps of MVGRL's cost on those of large or dense graphs.
var PaperGraphSettings = withCaps(paper.GraphAppendix, map[string]GraphSettings{
	"COLLAB":        {DiffusionTopK: DefaultDiffusionTopK},
	"REDDIT-BINARY": {DiffusionTopK: DefaultDiffusionTopK, MVGRLMaxDegree: DefaultMVGRLMaxDegree},
	"PROTEINS":      {DiffusionTopK: DefaultDiffusionTopK},
})

// withCaps is the appendix's settings with the caps of caps by dataset.
func withCaps(appendix map[string]paper.GraphSettings, caps map[string]GraphSettings) map[string]GraphSettings {
	out := make(map[string]GraphSettings, len(appendix))
	for name, s := range appendix {
		c := caps[name]
		c.GraphSettings = s
		out[name] = c
	}
	return out
}

// DefaultDiffusionTopK is the cap on the entries per row of MVGRL's
// diffusion view for datasets with graphs of more than a few hundred nodes
// (and for datasets the paper does not name, whose graphs are unknown).
const DefaultDiffusionTopK = 64

// DefaultGraphSettings are the settings of a TU dataset the paper does not
// name: the appendix's most common column (B = 128, 20 epochs, t = 50,
// M = 500, K = 100), the capped diffusion and capped degree features.
var DefaultGraphSettings = GraphSettings{GraphSettings: paper.GraphSettings{BatchSize: 128, Epochs: 20, RefreshEvery: 50, M: 500, K: 100},
	DiffusionTopK: DefaultDiffusionTopK, MVGRLMaxDegree: DefaultMVGRLMaxDegree}

// SettingsFor returns the settings of the named dataset and whether they
// are the paper's (false: DefaultGraphSettings).
func SettingsFor(name string) (GraphSettings, bool) {
	s, ok := PaperGraphSettings[name]
	if !ok {
		return DefaultGraphSettings, false
	}
	return s, true
}

// The blocks of the paper's graph table: a method (and loss), each with the
// Uniform, kNN and BatchSampler rows.
const (
	BlockGraphCL = "graphcl"
	BlockDCL     = "dcl"
	BlockHCL     = "hcl"
	BlockMVGRL   = "mvgrl"
)

// GraphBlocks lists the blocks in the paper's row order.
var GraphBlocks = []string{BlockGraphCL, BlockDCL, BlockHCL, BlockMVGRL}

// blockTitle is a block's name in the table.
var blockTitle = map[string]string{BlockGraphCL: "GraphCL", BlockDCL: "DCL", BlockHCL: "HCL", BlockMVGRL: "MVGRL"}

// Samplers are the three rows of every block, in the paper's order; their
// labels are those train writes in results.json.
var Samplers = []string{"uniform", "knn", "batchsampler"}

// samplerTitle is a row's name in the table.
var samplerTitle = map[string]string{"uniform": "", "knn": "w/ kNN Sampler", "batchsampler": "w/ BatchSampler"}

// GraphData is where a TU dataset lives under the data root.
type GraphData struct {
	Name   string
	Source string // tu or gin (train's data.source)
	Path   string // relative to the data root, forward slashes
}

// LocateGraphs finds the TU dataset name under root: the TU layout
// tu/NAME/NAME_A.txt first, then the GIN text format
// tu_gin_format/NAME/NAME.txt or .txt.gz. The error says where it looked.
func LocateGraphs(root, name string) (GraphData, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return GraphData{}, fmt.Errorf("dataset %q: expected a TU dataset name", name)
	}
	tu := data.TUPath(name)
	if fileExists(filepath.Join(root, filepath.FromSlash(tu), name+"_A.txt")) {
		return GraphData{Name: name, Source: "tu", Path: tu}, nil
	}
	for _, ext := range []string{".txt.gz", ".txt"} {
		p := path.Join("tu_gin_format", name, name+ext)
		if fileExists(filepath.Join(root, filepath.FromSlash(p))) {
			return GraphData{Name: name, Source: "gin", Path: p}, nil
		}
	}
	return GraphData{}, fmt.Errorf("dataset %s: not under %s (expected %s/%s_A.txt or tu_gin_format/%s/%s.txt[.gz]; get it with go run ./cmd/download -dataset %s)",
		name, root, tu, name, name, name, name)
}

// DiscoverGraphs lists the TU datasets under root (either layout of
// LocateGraphs; a dataset's directory may be a symbolic link): the paper's
// seven in its column order first, then the others by name.
func DiscoverGraphs(root string) []string {
	seen := map[string]bool{}
	for _, dir := range []string{"tu", "tu_gin_format"} {
		entries, _ := os.ReadDir(filepath.Join(root, dir))
		for _, e := range entries {
			// LocateGraphs stats the dataset's files, so a dataset
			// directory linked into the root counts as one in place.
			if _, err := LocateGraphs(root, e.Name()); err == nil {
				seen[e.Name()] = true
			}
		}
	}
	var out []string
	for _, n := range paper.GraphDatasets {
		if seen[n] {
			out = append(out, n)
			delete(seen, n)
		}
	}
	rest := make([]string, 0, len(seen))
	for n := range seen {
		rest = append(rest, n)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// samplersYAML is the three rows' samplers: Uniform, the kNN Sampler and
// BatchSampler (RWR on the proximity graph, α 0.2 → 0.05), both refreshed
// every t steps, with the dataset's M and K.
func samplersYAML(s GraphSettings) string {
	return fmt.Sprintf(`samplers:
  - {kind: uniform}
  - {kind: knn, refresh_every: %d}
  - {kind: batchsampler, m: %d, k: %d, walk: rwr, graph: proximity, alpha: {start: 0.2, end: 0.05}, refresh_every: %d}
`, s.RefreshEvery, s.M, s.K, s.RefreshEvery)
}

// MVGRLEpochs is MVGRL's number of epochs for a dataset of n graphs with
// batch size b: 20 (the reference's default), or 100 when an epoch has at
// most two batches (MUTAG), where 20 epochs leave the encoder where it
// started.
func MVGRLEpochs(n, b int) int {
	if (n+b-1)/b <= 2 {
		return 100
	}
	return 20
}

// GraphConfigYAML is the config of one block on one dataset with the
// paper's settings: GraphCL, DCL and HCL train the GIN of the appendix (3
// layers, hidden 32, Adam 0.01, temperature 0.2) with the dataset's B and
// epochs; MVGRL trains its two GCN encoders at CPU scale (4 layers, hidden
// 128, Adam 1e-3, B = 128, MVGRLEpochs, features auto-degree with the
// dataset's degree cap, diffusion α 0.2 with ε = 1e-4 and the dataset's
// top-k cap). n is the number of graphs
// (MVGRL's epochs depend on it). root is written as data.root unless empty.
// Every block has the three sampler rows and 5 seeds.
func GraphConfigYAML(block string, d GraphData, n int, root string) (string, error) {
	s, _ := SettingsFor(d.Name)
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s-%s\nmodality: graph\n", block, strings.ToLower(d.Name))
	rootKey := ""
	if root != "" {
		rootKey = fmt.Sprintf(", root: %q", root)
	}
	features := "auto"
	if block == BlockMVGRL {
		features = "auto-degree"
		if s.MVGRLMaxDegree > 0 {
			features += fmt.Sprintf(", max_degree: %d", s.MVGRLMaxDegree)
		}
	}
	dataLine := fmt.Sprintf("data: {source: %s, name: %s, path: %s, features: %s%s}\n", d.Source, d.Name, d.Path, features, rootKey)
	switch block {
	case BlockGraphCL, BlockDCL, BlockHCL:
		b.WriteString(dataLine)
		b.WriteString("model: {kind: gin, hidden: 32, layers: 3}\n")
		switch block {
		case BlockGraphCL:
			b.WriteString("loss: {kind: infonce, form: graphcl, temperature: 0.2}\n")
		case BlockDCL:
			b.WriteString("loss: {kind: dcl, form: graphcl, temperature: 0.2, tau_plus: 0.1}\n")
		case BlockHCL:
			b.WriteString("loss: {kind: hcl, form: graphcl, temperature: 0.2, tau_plus: 0.1, beta: 1.0}\n")
		}
		b.WriteString(samplersYAML(s))
		fmt.Fprintf(&b, "train: {epochs: %d, batch_size: %d, lr: 0.01}\n", s.Epochs, s.BatchSize)
	case BlockMVGRL:
		b.WriteString("method: mvgrl\n")
		b.WriteString(dataLine)
		topK := ""
		if s.DiffusionTopK > 0 {
			topK = fmt.Sprintf(", top_k: %d", s.DiffusionTopK)
		}
		fmt.Fprintf(&b, "model: {kind: gcn, hidden: 128, layers: 4, diffusion: {alpha: 0.2, eps: 1.0e-4%s}}\n", topK)
		b.WriteString("loss: {kind: jsd}\n")
		b.WriteString(samplersYAML(s))
		fmt.Fprintf(&b, "train: {epochs: %d, batch_size: 128, lr: 0.001}\n", MVGRLEpochs(n, 128))
	default:
		return "", fmt.Errorf("block %q: expected one of %s", block, strings.Join(GraphBlocks, ", "))
	}
	b.WriteString("eval: {kind: svm, folds: 10, inner_folds: 5}\nseeds: [0, 1, 2, 3, 4]\n")
	return b.String(), nil
}

// GraphConfig is GraphConfigYAML parsed by train.ParseConfig with the
// overrides sets (key.path=value, as cmd/train's -set).
func GraphConfig(block string, d GraphData, n int, root string, sets []string) (train.Config, error) {
	y, err := GraphConfigYAML(block, d, n, root)
	if err != nil {
		return train.Config{}, err
	}
	cfg, err := train.ParseConfig([]byte(y), sets)
	if err != nil {
		return train.Config{}, fmt.Errorf("%s on %s: %w", block, d.Name, err)
	}
	return cfg, nil
}

// checkBlocks validates a list of block names.
func checkBlocks(blocks []string) error {
	for _, b := range blocks {
		if !slices.Contains(GraphBlocks, b) {
			return fmt.Errorf("method %q: expected one of %s", b, strings.Join(GraphBlocks, ", "))
		}
	}
	return nil
}
