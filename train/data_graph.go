package train

import (
	"fmt"
	"path/filepath"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/loss"
)

func init() {
	RegisterData("graph", DataSpec{Validate: validateGraphData, Load: loadGraphs, Defaults: DefaultConfig,
		Keys: []string{"source", "name", "root", "path", "features", "max_degree", "synthetic"}}, "graphcl")
}

// graphDataset is a set of labelled graphs; its one split, "train", is
// what the sampler draws from and what the SVM protocol cross-validates.
// views caches what methods derive from the graphs once per dataset (the
// runs of an experiment share it): mvgrl's propagation matrices.
type graphDataset struct {
	set   *data.GraphSet
	views *viewCache
}

func (d graphDataset) Name() string      { return d.set.Name }
func (d graphDataset) NumInstances() int { return len(d.set.Graphs) }
func (d graphDataset) Labels() []int     { return d.set.Labels() }
func (d graphDataset) NumClasses() int   { return d.set.NumClasses }
func (d graphDataset) Splits() []string  { return []string{"train"} }

var _ GraphData = graphDataset{}

// GraphSet returns the training graphs (GraphData).
func (d graphDataset) GraphSet() *data.GraphSet { return d.set }

// DefaultConfig returns the defaults every graph config starts from (the
// GraphCL setting of the paper's appendix).
func DefaultConfig() Config {
	return Config{
		Modality: "graph",
		Data:     DataConfig{Source: "tu", Features: "auto"},
		Model:    ModelConfig{Kind: "gin", Hidden: 32, Layers: 3},
		Augment: AugmentConfig{Mode: "random_choice", List: []AugmentSpec{
			{Kind: "node_drop", Ratio: 0.1}, {Kind: "edge_remove", Ratio: 0.1},
			{Kind: "subgraph", Ratio: 0.2}, {Kind: "attr_mask", Ratio: 0.1},
		}},
		Loss:  loss.Default("graph"),
		Optim: defaultOptim(),
		Train: TrainConfig{Epochs: 20, BatchSize: 128, LR: 0.01, LogEvery: 1, Checkpoint: true},
		Eval:  EvalConfig{Kind: "svm", Folds: 10, InnerFolds: 5, Cs: []float64{1e-3, 1e-2, 1e-1, 1, 10, 100, 1000}},
		Seeds: []uint64{0},
	}
}

// validateGraphData checks the data keys the graph modality reads.
func validateGraphData(c *Config) []string {
	var errs problems
	add := errs.add
	add(oneOf("data.source", c.Data.Source, "tu", "gin", "synthetic"))
	if c.Data.Source != "synthetic" && c.Data.Path == "" {
		errs = append(errs, "data.path: required for source "+c.Data.Source+" (a directory for tu, a file for gin)")
	}
	if c.Data.Source == "tu" && c.Data.Name == "" {
		errs = append(errs, "data.name: required for source tu (the NAME of NAME_A.txt)")
	}
	add(oneOf("data.features", c.Data.Features, data.FeatureKinds...))
	if s := c.Data.Synthetic; c.Data.Source == "synthetic" {
		if s.Graphs < 1 {
			errs = append(errs, fmt.Sprintf("data.synthetic.graphs: must be at least 1, got %d", s.Graphs))
		}
		if s.Classes < 1 || s.Classes > data.NumSynthFamilies {
			errs = append(errs, fmt.Sprintf("data.synthetic.classes: must be in 1..%d (one graph family per class), got %d", data.NumSynthFamilies, s.Classes))
		}
		if s.MinNodes < data.MinSynthNodes {
			errs = append(errs, fmt.Sprintf("data.synthetic.min_nodes: must be at least %d, got %d", data.MinSynthNodes, s.MinNodes))
		}
		if s.MaxNodes < s.MinNodes || s.MaxNodes > data.MaxSynthNodes {
			errs = append(errs, fmt.Sprintf("data.synthetic.max_nodes: must be in min_nodes (%d)..%d, got %d", s.MinNodes, data.MaxSynthNodes, s.MaxNodes))
		}
		if s.NodeLabels < 0 {
			errs = append(errs, fmt.Sprintf("data.synthetic.node_labels: must be >= 0 (0: no node labels), got %d", s.NodeLabels))
		}
		if !(s.Noise >= 0 && s.Noise <= 1) {
			errs = append(errs, fmt.Sprintf("data.synthetic.noise: must be a fraction in [0, 1], got %v", s.Noise))
		}
	}
	if c.Data.MaxDegree < 0 {
		errs = append(errs, fmt.Sprintf("data.max_degree: must be >= 0, got %d", c.Data.MaxDegree))
	}
	return errs
}

// loadGraphs reads or generates the graphs of cfg.Data and sets their node
// features.
func loadGraphs(cfg *Config) (Dataset, error) {
	dc := cfg.Data
	var (
		set *data.GraphSet
		err error
	)
	switch dc.Source {
	case "tu":
		set, err = data.ReadTU(dc.ResolvedPath(), dc.Name)
	case "gin":
		set, err = data.ReadGIN(dc.ResolvedPath())
		if err == nil && dc.Name != "" {
			set.Name = dc.Name
		}
	case "synthetic":
		s := dc.Synthetic
		set, err = data.GenerateGraphs(data.SynthConfig{
			Graphs: s.Graphs, Classes: s.Classes, MinNodes: s.MinNodes, MaxNodes: s.MaxNodes,
			NodeLabels: s.NodeLabels, Noise: s.Noise,
		}, s.Seed)
		if err == nil && dc.Name != "" {
			set.Name = dc.Name
		}
	default:
		err = fmt.Errorf("data.source %q is not a graph source (tu, gin, synthetic)", dc.Source)
	}
	if err != nil {
		return nil, loadError(dc, err)
	}
	if err := set.SetFeatures(data.FeatureOptions{Kind: dc.Features, MaxDegree: dc.MaxDegree}); err != nil {
		return nil, fmt.Errorf("data.features: %w", err)
	}
	return graphDataset{set: set, views: new(viewCache)}, nil
}

// loadError wraps a dataset loading error, naming the data root when the
// path was relative to the default one.
func loadError(dc DataConfig, err error) error {
	if dc.Source != "synthetic" && !filepath.IsAbs(dc.Path) && dc.Root == "" {
		return fmt.Errorf("load dataset (data root %s; set data.root or $BATCHSAMPLER_DATA to change it): %w", dc.DataRoot(), err)
	}
	return fmt.Errorf("load dataset: %w", err)
}

// ExportTU writes the graph dataset of cfg, as a run of cfg would load it
// (data.source tu, gin or synthetic), in the TU Dortmund format to
// dir/NAME/ and returns that directory: a generated dataset can then be
// read by another framework (PyTorch Geometric's TUDataset, the PyTorch
// side of scripts/memory_vs_pytorch.py).
func ExportTU(cfg Config, dir string) (string, error) {
	if cfg.Modality != "graph" {
		return "", fmt.Errorf("export TU: modality %q: only a graph dataset can be written in the TU format", cfg.Modality)
	}
	ds, err := loadGraphs(&cfg)
	if err != nil {
		return "", err
	}
	set := ds.(graphDataset).set
	if set.Name == "" {
		set.Name = cfg.Name
	}
	out := filepath.Join(dir, set.Name)
	if err := data.WriteTU(out, set); err != nil {
		return "", err
	}
	return out, nil
}
