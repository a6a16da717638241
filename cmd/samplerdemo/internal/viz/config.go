package viz

import (
	"fmt"
	"io"
	"math"
	"os"

	"github.com/batchsampler-go/batchsampler/internal/yamlcfg"
)

// Config is the demo's configuration (configs/demo-sampler.yaml). Symbols as
// in the BatchSampler paper: N points, batch size B, M candidates and K
// neighbours per node, restart probability α.
type Config struct {
	Points PointsConfig `yaml:"points"`
	// BatchSize is B, the number of instances per batch.
	BatchSize int           `yaml:"batch_size"`
	Sampler   SamplerConfig `yaml:"sampler"`
	// Batches is the number of batches per sampler averaged in summary.md.
	Batches int `yaml:"batches"`
	// Seed drives the samplers, the graphs and the traced walks (the point
	// set has its own seed, Points.Seed).
	Seed uint64 `yaml:"seed"`
	// Out is the output directory (the -out flag overrides it).
	Out string `yaml:"out"`
}

// PointsConfig describes the labelled point set of CirclePoints.
type PointsConfig struct {
	N       int `yaml:"n"`       // number of points
	Classes int `yaml:"classes"` // number of classes C
	// Spread is the standard deviation, in radians, of a point's angle
	// around its class's centre angle.
	Spread float64 `yaml:"spread"`
	// RadiusJitter r draws every radius uniformly from [1−r, 1+r]. It only
	// spreads the points out on the page: cosine similarity ignores it.
	RadiusJitter float64 `yaml:"radius_jitter"`
	Seed         uint64  `yaml:"seed"` // seed of the point set
}

// SamplerConfig is BatchSampler's setting in the demo.
type SamplerConfig struct {
	M     int     `yaml:"m"`     // candidates per node (Algorithm 2)
	K     int     `yaml:"k"`     // neighbours kept per node
	Alpha float64 `yaml:"alpha"` // restart probability α of the pictured batch
	// Alphas are the restart probabilities of batches_alpha.png (1 to 6
	// values), walked from the same start node.
	Alphas []float64 `yaml:"alphas"`
}

// DefaultConfig returns the configuration of configs/demo-sampler.yaml.
func DefaultConfig() Config {
	return Config{
		Points:    PointsConfig{N: 600, Classes: 6, Spread: 0.3, RadiusJitter: 0.1, Seed: 1},
		BatchSize: 48,
		Sampler:   SamplerConfig{M: 120, K: 47, Alpha: 0.2, Alphas: []float64{0.05, 0.2, 0.5, 1}},
		Batches:   200,
		Seed:      1,
		Out:       "runs/demo-sampler",
	}
}

// Limits of the configuration (beyond them the pictures stop being legible
// or the demo stops being quick).
const (
	maxPoints = 20000
	maxAlphas = 6
	maxBatch  = 100000
)

// LoadConfig reads a YAML configuration file; keys it does not set keep
// their DefaultConfig values. Errors name the file, the key and its line.
func LoadConfig(path string) (Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("viz: config: %w", err)
	}
	c, err := parseConfig(src, path)
	if err != nil {
		return Config{}, fmt.Errorf("viz: config %w", err)
	}
	return c, nil
}

// ParseConfig decodes a YAML configuration strictly (unknown keys and
// values of the wrong type are errors that name the key, its line and what
// is allowed there; see package yamlcfg), fills the keys it does not set
// from DefaultConfig and validates the result.
func ParseConfig(r io.Reader) (Config, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return Config{}, fmt.Errorf("read: %w", err)
	}
	return parseConfig(src, "")
}

// parseConfig is ParseConfig of a document called name in errors.
func parseConfig(src []byte, name string) (Config, error) {
	doc, err := yamlcfg.Parse(src, name, nil)
	if err != nil {
		return Config{}, err
	}
	c := DefaultConfig()
	if err := doc.Decode(&c); err != nil {
		return Config{}, err
	}
	if err := c.validate(doc); err != nil {
		if name != "" {
			return Config{}, fmt.Errorf("%s: %w", name, err)
		}
		return Config{}, err
	}
	return c, nil
}

// Validate checks every value and names the offending key.
func (c Config) Validate() error { return c.validate(nil) }

// validate is Validate, with the line of the offending key when doc (the
// document c was decoded from) gives it: "points.n = 1 (line 2): ...".
func (c Config) validate(doc *yamlcfg.Doc) error {
	line := func(key string) string {
		if l := doc.Line(key); l > 0 { // doc may be nil
			return fmt.Sprintf(" (line %d)", l)
		}
		return ""
	}
	p := c.Points
	switch {
	case p.N < 2 || p.N > maxPoints:
		return fmt.Errorf("points.n = %d%s: want between 2 and %d points", p.N, line("points.n"), maxPoints)
	case p.Classes < 1 || p.Classes > p.N:
		return fmt.Errorf("points.classes = %d%s: want between 1 and points.n = %d", p.Classes, line("points.classes"), p.N)
	case !(p.Spread >= 0) || math.IsInf(p.Spread, 0):
		return fmt.Errorf("points.spread = %v%s: want a finite angle ≥ 0 (radians)", p.Spread, line("points.spread"))
	case !(p.RadiusJitter >= 0 && p.RadiusJitter < 1):
		return fmt.Errorf("points.radius_jitter = %v%s: want a value in [0, 1)", p.RadiusJitter, line("points.radius_jitter"))
	case c.BatchSize < 2 || c.BatchSize > p.N:
		return fmt.Errorf("batch_size = %d%s: want between 2 and points.n = %d", c.BatchSize, line("batch_size"), p.N)
	case c.Sampler.K < 1 || c.Sampler.K > p.N-1:
		return fmt.Errorf("sampler.k = %d%s: want between 1 and points.n−1 = %d neighbours", c.Sampler.K, line("sampler.k"), p.N-1)
	case c.Sampler.M < c.Sampler.K || c.Sampler.M > p.N-1:
		return fmt.Errorf("sampler.m = %d%s: want between sampler.k = %d and points.n−1 = %d candidates", c.Sampler.M, line("sampler.m"), c.Sampler.K, p.N-1)
	case !(c.Sampler.Alpha >= 0 && c.Sampler.Alpha <= 1):
		return fmt.Errorf("sampler.alpha = %v%s: want a restart probability in [0, 1]", c.Sampler.Alpha, line("sampler.alpha"))
	case len(c.Sampler.Alphas) < 1 || len(c.Sampler.Alphas) > maxAlphas:
		return fmt.Errorf("sampler.alphas has %d values%s: want 1 to %d", len(c.Sampler.Alphas), line("sampler.alphas"), maxAlphas)
	case c.Batches < 1 || c.Batches > maxBatch:
		return fmt.Errorf("batches = %d%s: want between 1 and %d", c.Batches, line("batches"), maxBatch)
	}
	for i, a := range c.Sampler.Alphas {
		if !(a >= 0 && a <= 1) {
			key := fmt.Sprintf("sampler.alphas[%d]", i)
			return fmt.Errorf("%s = %v%s: want a restart probability in [0, 1]", key, a, line(key))
		}
	}
	return nil
}
