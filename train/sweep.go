package train

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Sweep modes of SweepConfig.Mode.
const (
	SweepGrid = "grid" // the cartesian product of the axes (default)
	SweepZip  = "zip"  // axes of equal length, paired element-wise
)

// SweepConfig is a config's `sweep:` section: the experiment is run once
// per point of the sweep, each point being the config with some keys
// changed, and every point is compared with one baseline sampler over the
// same seeds. Package sweep expands and runs it (cmd/train does when a
// config has this section); a config with a sweep is not one experiment,
// so Run refuses it.
//
//	sweep:
//	  mode: grid          # grid (default) | zip
//	  baseline: uniform   # the sampler of samplers: run once per seed and shared by every point
//	  axes:
//	    - key: samplers[1].m
//	      values: [500, 1000, 2000]
//	    - key: samplers[1].alpha
//	      values: [0.1, {start: 0.2, end: 0.05}]
//	      labels: ["0.1", "0.2→0.05"]
//	    - {key: train.batch_size, values: [64, 256], shared: true} # the baseline runs at each value too
//	# or, instead of axes, named points:
//	#  points:
//	#    - name: covering
//	#      set:
//	#        samplers[1].epoch: covering
//
// A key with brackets is written in block style as above, or quoted in a
// flow mapping ({key: "samplers[1].m", ...}): YAML's flow mappings end a
// plain word at "[". Values are YAML values of any shape; they are applied to the config
// with the same machinery as cmd/train's -set overrides, so every point is
// checked exactly as a config file is.
type SweepConfig struct {
	// Mode is "grid" (default: every combination of the axes' values,
	// the first axis outermost) or "zip" (the i-th value of every axis
	// together; the axes have equal lengths).
	Mode string `yaml:"mode"`
	// Baseline is the name (label, else kind) of the sampler of
	// `samplers:` every point is compared with. It is run once per seed
	// (once per value of the shared axes) in a cell of its own; every
	// point's cell holds the other samplers.
	Baseline string `yaml:"baseline"`
	// Axes are the swept keys; Points the named points. Give one of them.
	Axes   []SweepAxis  `yaml:"axes,omitempty"`
	Points []SweepPoint `yaml:"points,omitempty"`
}

// SweepAxis is one swept key and its values.
type SweepAxis struct {
	// Key is the key path the values are set at, as -set writes it:
	// samplers[1].m, samplers[1].alpha, train.batch_size.
	Key string `yaml:"key"`
	// Name heads the axis in sweep.md and names the points' directories
	// (default: the key's last name, "m" for samplers[1].m).
	Name string `yaml:"name,omitempty"`
	// Values are the values, each a YAML value (a number, a string, a
	// mapping such as {start: 0.2, end: 0.05}).
	Values []yaml.Node `yaml:"values"`
	// Labels name the values in sweep.md and the directories (default:
	// each value written on one line).
	Labels []string `yaml:"labels,omitempty"`
	// Shared applies the axis to the baseline as well: the baseline is run
	// at every value and each point is compared with the baseline at its
	// own value (a batch-size table compares samplers at equal B). It must
	// be given for a key outside the swept samplers: true, or false to
	// compare every point with the baseline at the base config's value.
	Shared *bool `yaml:"shared,omitempty"`
}

// SweepPoint is one named point: the keys it sets on the swept samplers
// (Set) and on the baseline as well (Shared). Keys are applied in sorted
// order, so a whole entry (samplers[1]) goes before its keys
// (samplers[1].m).
type SweepPoint struct {
	Name   string               `yaml:"name"`
	Set    map[string]yaml.Node `yaml:"set,omitempty"`
	Shared map[string]yaml.Node `yaml:"shared,omitempty"`
}

// AxisName is the axis's Name, else the last name of its key ("m" for
// samplers[1].m, "batch_size" for train.batch_size).
func (a SweepAxis) AxisName() string {
	if a.Name != "" {
		return a.Name
	}
	k := a.Key
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		k = k[i+1:]
	}
	return k
}

// Label is the name of value i: Labels[i], else the value on one line.
func (a SweepAxis) Label(i int) string {
	if i < len(a.Labels) {
		return a.Labels[i]
	}
	s, err := NodeText(&a.Values[i])
	if err != nil {
		return fmt.Sprintf("value %d", i)
	}
	return s
}

// NodeText writes a YAML value on one line, in flow style.
func NodeText(n *yaml.Node) (string, error) {
	c := *n
	if c.Kind == yaml.MappingNode || c.Kind == yaml.SequenceNode {
		c.Style |= yaml.FlowStyle
	}
	b, err := yaml.Marshal(&c)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// Size is the number of points of the sweep (0 when its shape is wrong:
// Validate says why).
func (s *SweepConfig) Size() int {
	if len(s.Points) > 0 {
		return len(s.Points)
	}
	if len(s.Axes) == 0 {
		return 0
	}
	if s.Mode == SweepZip {
		return len(s.Axes[0].Values)
	}
	n := 1
	for _, a := range s.Axes {
		n *= len(a.Values)
	}
	return n
}

// problems checks the shape of the sweep section against the config's
// samplers (the points themselves are checked when package sweep expands
// them: each must be a valid config).
func (s *SweepConfig) problems(c *Config) []string {
	var errs []string
	if s.Mode == "" {
		s.Mode = SweepGrid
	}
	if err := oneOf("sweep.mode", s.Mode, SweepGrid, SweepZip); err != nil {
		errs = append(errs, err.Error())
	}
	var names []string
	for _, sp := range c.Samplers {
		names = append(names, sp.DisplayName())
	}
	switch {
	case len(c.Samplers) < 2:
		errs = append(errs, "sweep: needs `samplers:` with the baseline and at least one sampler to sweep")
	case s.Baseline == "":
		errs = append(errs, fmt.Sprintf("sweep.baseline: name the sampler every point is compared with, one of %s", strings.Join(names, ", ")))
	case !slices.Contains(names, s.Baseline):
		errs = append(errs, fmt.Sprintf("sweep.baseline: %q is not a sampler of samplers:; allowed: %s", s.Baseline, strings.Join(names, ", ")))
	}
	switch {
	case len(s.Axes) > 0 && len(s.Points) > 0:
		errs = append(errs, "sweep.axes, sweep.points: give one of them, not both")
	case len(s.Axes) == 0 && len(s.Points) == 0:
		errs = append(errs, "sweep: give axes (keys and their values) or points (named sets of keys)")
	}
	seen := map[string]string{}
	for i, a := range s.Axes {
		key := fmt.Sprintf("sweep.axes[%d]", i)
		if strings.TrimSpace(a.Key) == "" {
			errs = append(errs, key+".key: give the key path to sweep, as -set writes it (samplers[1].m)")
		}
		if len(a.Values) == 0 {
			errs = append(errs, key+".values: give at least one value")
		}
		if len(a.Labels) > 0 && len(a.Labels) != len(a.Values) {
			errs = append(errs, fmt.Sprintf("%s.labels: %d labels for %d values; give one per value or none", key, len(a.Labels), len(a.Values)))
		}
		if prev, ok := seen[a.AxisName()]; ok {
			errs = append(errs, fmt.Sprintf("%s: axis name %q is also that of %s; give one of them a name", key, a.AxisName(), prev))
		}
		seen[a.AxisName()] = key
		for j, l := range a.Labels {
			if slices.Contains(a.Labels[:j], l) {
				errs = append(errs, fmt.Sprintf("%s.labels[%d]: %q is given twice", key, j, l))
			}
		}
		if s.Mode == SweepZip && len(a.Values) != len(s.Axes[0].Values) {
			errs = append(errs, fmt.Sprintf("%s.values: mode zip pairs the axes' values element-wise, but this axis (%s) has %d values and sweep.axes[0] (%s) has %d",
				key, a.Key, len(a.Values), s.Axes[0].Key, len(s.Axes[0].Values)))
		}
	}
	if s.Mode == SweepZip && len(s.Points) > 0 {
		errs = append(errs, "sweep.mode: zip pairs the values of axes; points are already paired (leave mode out)")
	}
	names = names[:0]
	for i, p := range s.Points {
		key := fmt.Sprintf("sweep.points[%d]", i)
		switch {
		case strings.TrimSpace(p.Name) == "":
			errs = append(errs, key+".name: give the point a name")
		case slices.Contains(names, p.Name):
			errs = append(errs, fmt.Sprintf("%s.name: %q is the name of another point", key, p.Name))
		}
		names = append(names, p.Name)
		if len(p.Set) == 0 && len(p.Shared) == 0 {
			errs = append(errs, key+": give the keys the point sets (set: {key: value})")
		}
		for k := range p.Shared {
			if _, ok := p.Set[k]; ok {
				errs = append(errs, fmt.Sprintf("%s: key %s is both in set and in shared", key, k))
			}
		}
	}
	return errs
}
