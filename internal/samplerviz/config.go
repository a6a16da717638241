package samplerviz

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
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
		Sampler:   SamplerConfig{M: 60, K: 8, Alpha: 0.2, Alphas: []float64{0.05, 0.2, 0.5, 1}},
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
// their DefaultConfig values. Errors name the file, the line and the key.
func LoadConfig(path string) (Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("samplerviz: config: %w", err)
	}
	c, err := ParseConfig(bytes.NewReader(src))
	if err != nil {
		return Config{}, fmt.Errorf("samplerviz: config %s: %w", path, err)
	}
	return c, nil
}

// ParseConfig decodes a YAML configuration strictly (unknown keys are
// errors that name the key and the keys allowed there), fills the keys it
// does not set from DefaultConfig and validates the result.
func ParseConfig(r io.Reader) (Config, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return Config{}, fmt.Errorf("read: %w", err)
	}
	c := DefaultConfig()
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return Config{}, fmt.Errorf("not valid YAML: %w", err)
	}
	if root.Kind == 0 { // empty document: the defaults
		return c, c.Validate()
	}
	if err := checkKeys(root.Content[0], reflect.TypeOf(c), ""); err != nil {
		return Config{}, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// checkKeys walks a YAML node alongside the Go type it decodes into and
// reports the first unknown key or badly typed scalar with its key path
// (e.g. "sampler.alpha"), its line and what is expected.
func checkKeys(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	name := path
	if name == "" {
		name = "the top level"
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s (line %d): expected a mapping with keys %s", name, n.Line, strings.Join(yamlKeys(t), ", "))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			child := k.Value
			if path != "" {
				child = path + "." + k.Value
			}
			f, ok := fieldByTag(t, k.Value)
			if !ok {
				return fmt.Errorf("%s (line %d): unknown key; allowed under %s: %s", child, k.Line, name, strings.Join(yamlKeys(t), ", "))
			}
			if err := checkKeys(v, f.Type, child); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("%s (line %d): expected a list", name, n.Line)
		}
		for i, c := range n.Content {
			if err := checkKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Int:
		if _, err := strconv.ParseInt(n.Value, 0, 64); n.Kind != yaml.ScalarNode || err != nil {
			return fmt.Errorf("%s (line %d): expected an integer, got %q", name, n.Line, n.Value)
		}
	case reflect.Uint64:
		if _, err := strconv.ParseUint(n.Value, 0, 64); n.Kind != yaml.ScalarNode || err != nil {
			return fmt.Errorf("%s (line %d): expected a non-negative integer, got %q", name, n.Line, n.Value)
		}
	case reflect.Float64:
		var f float64
		if n.Kind != yaml.ScalarNode || n.Decode(&f) != nil {
			return fmt.Errorf("%s (line %d): expected a number, got %q", name, n.Line, n.Value)
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s (line %d): expected a string", name, n.Line)
		}
	}
	return nil
}

func fieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); yamlName(f) == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func yamlKeys(t reflect.Type) []string {
	var ks []string
	for i := 0; i < t.NumField(); i++ {
		ks = append(ks, yamlName(t.Field(i)))
	}
	return ks
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// Validate checks every value and names the offending key.
func (c Config) Validate() error {
	p := c.Points
	switch {
	case p.N < 2 || p.N > maxPoints:
		return fmt.Errorf("points.n = %d: want between 2 and %d points", p.N, maxPoints)
	case p.Classes < 1 || p.Classes > p.N:
		return fmt.Errorf("points.classes = %d: want between 1 and points.n = %d", p.Classes, p.N)
	case !(p.Spread >= 0) || math.IsInf(p.Spread, 0):
		return fmt.Errorf("points.spread = %v: want a finite angle ≥ 0 (radians)", p.Spread)
	case !(p.RadiusJitter >= 0 && p.RadiusJitter < 1):
		return fmt.Errorf("points.radius_jitter = %v: want a value in [0, 1)", p.RadiusJitter)
	case c.BatchSize < 2 || c.BatchSize > p.N:
		return fmt.Errorf("batch_size = %d: want between 2 and points.n = %d", c.BatchSize, p.N)
	case c.Sampler.K < 1 || c.Sampler.K > p.N-1:
		return fmt.Errorf("sampler.k = %d: want between 1 and points.n−1 = %d neighbours", c.Sampler.K, p.N-1)
	case c.Sampler.M < c.Sampler.K || c.Sampler.M > p.N-1:
		return fmt.Errorf("sampler.m = %d: want between sampler.k = %d and points.n−1 = %d candidates", c.Sampler.M, c.Sampler.K, p.N-1)
	case !(c.Sampler.Alpha >= 0 && c.Sampler.Alpha <= 1):
		return fmt.Errorf("sampler.alpha = %v: want a restart probability in [0, 1]", c.Sampler.Alpha)
	case len(c.Sampler.Alphas) < 1 || len(c.Sampler.Alphas) > maxAlphas:
		return fmt.Errorf("sampler.alphas has %d values: want 1 to %d", len(c.Sampler.Alphas), maxAlphas)
	case c.Batches < 1 || c.Batches > maxBatch:
		return fmt.Errorf("batches = %d: want between 1 and %d", c.Batches, maxBatch)
	}
	for i, a := range c.Sampler.Alphas {
		if !(a >= 0 && a <= 1) {
			return fmt.Errorf("sampler.alphas[%d] = %v: want a restart probability in [0, 1]", i, a)
		}
	}
	return nil
}
