// Package sweep runs a config's `sweep:` section (train.SweepConfig): a
// grid (or zip) of values of some keys, or a list of named points, each
// point being the config with those keys changed, every point compared
// with one baseline sampler over the same seeds.
//
// Expand turns the config into cells, the run directories of package
// table: the baseline sampler alone in one cell (one per value of the
// shared axes), and every point in a cell of its own holding the swept
// samplers only. Each cell is an ordinary experiment: the same seeds give
// the baseline's runs and every point's runs the same initialisation and
// the same evaluation folds, so a point and the baseline are paired seed
// by seed. Run runs the cells with cellrun.Run (resumable: a finished
// cell is read, an interrupted one resumes from its checkpoints, a cell
// whose directory holds another config is refused unless asked to rerun
// it) and writes sweep.md and sweep.json in the paper's layout: for two
// axes, rows are the first axis's values and columns the second's; for one
// axis, zip or points, one column per value.
package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/internal/yamlcfg"
	"github.com/batchsampler-go/batchsampler/train"
)

// Plan is an expanded sweep: its cells and how they pair.
type Plan struct {
	// Source names the config (its file path) in errors.
	Source string
	// Config is the base config as parsed, sweep section included.
	Config train.Config
	// Sets are the command line's overrides, applied to every cell first.
	Sets []string
	// Mode is grid, zip or points.
	Mode string
	// Baseline is the baseline sampler's name; Swept the names of the
	// samplers every point's cell holds.
	Baseline string
	Swept    []string
	// Axes are the swept keys (none for points).
	Axes []Axis
	// Baselines are the baseline's cells: one, or one per combination of
	// the shared axes' values (or of the points' shared keys).
	Baselines []Cell
	// Points are the points, in the sweep's order (the first axis
	// outermost).
	Points []Point
}

// Axis is one axis of a plan.
type Axis struct {
	Name   string   `json:"name"`
	Key    string   `json:"key"`
	Labels []string `json:"labels"`
	// Shared: the baseline runs at every value of the axis.
	Shared bool `json:"shared,omitempty"`
}

// Cell is one run directory of the sweep: a cellrun.Cell (Dataset is the
// sweep's name, Block the point's, Dir relative to the sweep's directory)
// and the overrides that made it from the base config.
type Cell struct {
	cellrun.Cell
	Sets []string
}

// Point is one point of the sweep.
type Point struct {
	// Name is "m=500 alpha=0.1" for axes, the point's name for points.
	Name string
	// Labels are the point's value labels, one per axis (for points: its
	// name).
	Labels []string
	// Index is the index of the point's value on every axis (nil for
	// points).
	Index []int
	Cell  Cell
	// Baseline is the index in Plan.Baselines of the cell the point is
	// compared with.
	Baseline int
}

// Cells lists the plan's cells in the order they run: the baselines, then
// the points.
func (p *Plan) Cells() []cellrun.Cell {
	var out []cellrun.Cell
	for _, b := range p.Baselines {
		out = append(out, b.Cell)
	}
	for _, pt := range p.Points {
		out = append(out, pt.Cell.Cell)
	}
	return out
}

// Runs is the number of training runs of the plan ((sampler, seed) pairs
// over all cells).
func (p *Plan) Runs() int {
	n := 0
	for _, c := range p.Cells() {
		n += len(c.Config.SamplerList()) * len(c.Config.Seeds)
	}
	return n
}

// Load reads a sweep config and expands it (Expand).
func Load(path string, sets []string) (*Plan, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	return Expand(src, path, sets)
}

// override is one key a point sets.
type override struct {
	key    string
	val    *yaml.Node
	shared bool
	// explicitUnshared: an axis outside the swept samplers with shared:
	// false (the point differs from its baseline on purpose).
	explicitUnshared bool
	// where is the key path of the value in the sweep section
	// ("sweep.axes[1].values[4]"), what says it in words.
	where, what string
	set         string // key=value, as handed to the config parser
}

// assignment is one point before it is parsed.
type assignment struct {
	name   string
	dir    string
	labels []string
	index  []int
	ovs    []override
}

var samplerKeyRE = regexp.MustCompile(`^samplers\[(\d+)\]`)

// Expand parses the config src (name: its file path, for errors), applies
// sets to it, and expands its sweep section into cells. Every point is the
// config with its overrides applied after sets, by the same machinery as
// cmd/train's -set, and must be a valid config itself; an error names the
// axis (or point), the value and the key. A point's config must equal its
// baseline's except for the samplers (unless an axis says shared: false),
// so that the two are paired seed by seed.
func Expand(src []byte, name string, sets []string) (*Plan, error) {
	base, err := train.ParseNamedConfig(src, name, sets)
	if err != nil {
		return nil, err
	}
	if base.Sweep == nil {
		return nil, fmt.Errorf("%s: no sweep: section (an ordinary config: run it with go run ./cmd/train -config %s)", name, name)
	}
	doc, err := yamlcfg.Parse(src, name, sets)
	if err != nil {
		return nil, err
	}
	sw := base.Sweep
	p := &Plan{Source: name, Config: base, Sets: sets, Mode: sw.Mode, Baseline: sw.Baseline}
	bi := -1
	for i, s := range base.Samplers {
		if s.DisplayName() == sw.Baseline {
			bi = i
		} else {
			p.Swept = append(p.Swept, s.DisplayName())
		}
	}
	var as []assignment
	if len(sw.Points) > 0 {
		p.Mode = "points"
		as, err = pointAssignments(sw, doc, bi)
	} else {
		as, err = axisAssignments(p, sw, doc, bi)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	baselineAt := map[string]int{}
	dirs := map[string]string{}
	for _, a := range as {
		pt, err := p.expandPoint(src, name, a, bi)
		if err != nil {
			return nil, err
		}
		var shared []string
		var labels []string
		for i, o := range a.ovs {
			if o.shared {
				shared = append(shared, o.set)
				if a.index != nil {
					labels = append(labels, p.Axes[i].Name+"="+p.Axes[i].Labels[a.index[i]])
				} else {
					labels = append(labels, o.set)
				}
			}
		}
		bkey := strings.Join(shared, "\x00")
		j, ok := baselineAt[bkey]
		if !ok {
			b, err := p.expandBaseline(src, name, shared, labels, bi)
			if err != nil {
				return nil, err
			}
			j = len(p.Baselines)
			baselineAt[bkey] = j
			p.Baselines = append(p.Baselines, b)
		}
		pt.Baseline = j
		if err := pairable(pt, a, p.Baselines[j]); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if prev, ok := dirs[pt.Cell.Dir]; ok {
			return nil, fmt.Errorf("%s: points %s and %s would share the directory %s; give the values distinct labels", name, prev, pt.Name, pt.Cell.Dir)
		}
		dirs[pt.Cell.Dir] = pt.Name
		p.Points = append(p.Points, pt)
	}
	return p, nil
}

// axisAssignments lays out the points of axes: every combination (grid,
// the first axis outermost) or the i-th values together (zip).
func axisAssignments(p *Plan, sw *train.SweepConfig, doc *yamlcfg.Doc, bi int) ([]assignment, error) {
	for i, a := range sw.Axes {
		ax := Axis{Name: a.AxisName(), Key: a.Key, Shared: a.Shared != nil && *a.Shared}
		for j := range a.Values {
			ax.Labels = append(ax.Labels, a.Label(j))
		}
		where := doc.Locate(fmt.Sprintf("sweep.axes[%d]", i))
		if err := checkScope(a.Key, bi, a.Shared, where+" ("+a.Key+")"); err != nil {
			return nil, err
		}
		p.Axes = append(p.Axes, ax)
	}
	var indices [][]int
	if sw.Mode == train.SweepZip {
		for j := range sw.Axes[0].Values {
			idx := make([]int, len(sw.Axes))
			for i := range idx {
				idx[i] = j
			}
			indices = append(indices, idx)
		}
	} else {
		indices = [][]int{nil}
		for _, a := range sw.Axes {
			var next [][]int
			for _, idx := range indices {
				for j := range a.Values {
					next = append(next, append(slices.Clone(idx), j))
				}
			}
			indices = next
		}
	}
	var out []assignment
	for _, idx := range indices {
		a := assignment{index: idx}
		var names, dirs []string
		for i, j := range idx {
			ax, sa := p.Axes[i], sw.Axes[i]
			where := fmt.Sprintf("sweep.axes[%d].values[%d]", i, j)
			o := override{key: sa.Key, val: &sa.Values[j], shared: ax.Shared,
				explicitUnshared: sa.Shared != nil && !*sa.Shared && !samplerKeyRE.MatchString(sa.Key),
				where:            doc.Locate(where), what: fmt.Sprintf("axis %s, value %s", ax.Name, ax.Labels[j])}
			s, err := yamlcfg.SetString(sa.Key, o.val)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", o.where, err)
			}
			o.set = s
			a.ovs = append(a.ovs, o)
			a.labels = append(a.labels, ax.Labels[j])
			names = append(names, ax.Name+"="+ax.Labels[j])
			dirs = append(dirs, dirName(ax.Name)+"="+dirName(ax.Labels[j]))
		}
		a.name, a.dir = strings.Join(names, " "), strings.Join(dirs, "_")
		out = append(out, a)
	}
	return out, nil
}

// pointAssignments lays out named points: their set keys (swept samplers
// only) and shared keys (baseline too), each in sorted order.
func pointAssignments(sw *train.SweepConfig, doc *yamlcfg.Doc, bi int) ([]assignment, error) {
	var out []assignment
	for i, pt := range sw.Points {
		a := assignment{name: pt.Name, dir: dirName(pt.Name), labels: []string{pt.Name}}
		for _, part := range []struct {
			field string
			m     map[string]yaml.Node
			share bool
		}{{"set", pt.Set, false}, {"shared", pt.Shared, true}} {
			keys := make([]string, 0, len(part.m))
			for k := range part.m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				v := part.m[k]
				where := doc.Locate(fmt.Sprintf("sweep.points[%d].%s", i, part.field))
				share := part.share
				if !share && !samplerKeyRE.MatchString(k) {
					return nil, fmt.Errorf("%s (key %s): set holds the swept samplers' keys; a key that applies to the baseline too goes under shared:", where, k)
				}
				if err := checkScope(k, bi, &share, where+" (key "+k+")"); err != nil {
					return nil, err
				}
				s, err := yamlcfg.SetString(k, &v)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", where, err)
				}
				text, _ := train.NodeText(&v)
				a.ovs = append(a.ovs, override{key: k, val: &v, shared: part.share, where: where,
					what: fmt.Sprintf("point %s, %s %s", pt.Name, k, text), set: s})
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// checkScope checks where a swept key applies: a key of a swept sampler
// to the points only; a key of the baseline sampler, or one outside the
// samplers, to the baseline too (shared, which must then be said).
func checkScope(key string, bi int, shared *bool, where string) error {
	root, _, _ := strings.Cut(key, ".")
	root, _, _ = strings.Cut(root, "[")
	switch root {
	case "seeds":
		return fmt.Errorf("%s: the seeds pair every point with the baseline; they are not swept (set them with -set seeds=[...])", where)
	case "sweep", "name":
		return fmt.Errorf("%s: %s is not a key a sweep can change", where, root)
	case "sampler":
		return fmt.Errorf("%s: a sweep's samplers are in samplers: (the baseline and the swept ones); address them as samplers[i]", where)
	case "samplers":
		m := samplerKeyRE.FindStringSubmatch(key)
		if m == nil {
			return fmt.Errorf("%s: the whole samplers: list cannot be swept (the baseline is one of them); sweep samplers[i] or samplers[i].key", where)
		}
		i, _ := strconv.Atoi(m[1])
		switch {
		case i == bi && (shared == nil || !*shared):
			return fmt.Errorf("%s: samplers[%d] is the baseline, which the points do not hold; to change the baseline with every point say shared: true", where, i)
		case i != bi && shared != nil && *shared:
			return fmt.Errorf("%s: samplers[%d] is a swept sampler, which the baseline does not hold: shared: true would not change it", where, i)
		}
		return nil
	}
	if shared == nil {
		return fmt.Errorf("%s: the key is not a swept sampler's: it changes what the baseline runs as well; say shared: true to run the baseline at every value (each point compared at its own value), or shared: false to compare every point with the baseline at the base config's value", where)
	}
	return nil
}

// expandPoint parses the config of one point and keeps its swept samplers.
func (p *Plan) expandPoint(src []byte, name string, a assignment, bi int) (Point, error) {
	sets := slices.Clone(p.Sets)
	for _, o := range a.ovs {
		sets = append(sets, o.set)
	}
	cfg, err := parseCell(src, name, sets, a.ovs)
	if err != nil {
		return Point{}, err
	}
	cfg.Samplers = slices.Delete(slices.Clone(cfg.Samplers), bi, bi+1)
	cfg.Name = p.Config.Name + " " + a.name
	if err := cfg.Validate(); err != nil {
		return Point{}, fmt.Errorf("%s: point %s: %w", name, a.name, err)
	}
	c := Cell{Cell: cellrun.Cell{Dataset: p.Config.Name, Block: a.name, Config: cfg, Dir: filepath.Join("points", a.dir)}, Sets: sets[len(p.Sets):]}
	return Point{Name: a.name, Labels: a.labels, Index: a.index, Cell: c}, nil
}

// expandBaseline parses the config of a baseline cell: the base config
// with the shared overrides, the baseline sampler only.
func (p *Plan) expandBaseline(src []byte, name string, shared, labels []string, bi int) (Cell, error) {
	sets := append(slices.Clone(p.Sets), shared...)
	cfg, err := train.ParseNamedConfig(src, name, sets)
	if err != nil {
		return Cell{}, fmt.Errorf("the baseline at %s: %w", strings.Join(shared, " "), err)
	}
	cfg.Sweep = nil
	cfg.Samplers = cfg.Samplers[bi : bi+1]
	cfg.Name = p.Config.Name + " baseline"
	dir := "baseline"
	block := "baseline"
	if len(labels) > 0 {
		var parts []string
		for _, l := range labels {
			k, v, _ := strings.Cut(l, "=")
			parts = append(parts, dirName(k)+"="+dirName(v))
		}
		dir = filepath.Join(dir, strings.Join(parts, "_"))
		block += " " + strings.Join(labels, " ")
		cfg.Name += " " + strings.Join(labels, " ")
	}
	return Cell{Cell: cellrun.Cell{Dataset: p.Config.Name, Block: block, Config: cfg, Dir: dir}, Sets: shared}, nil
}

// parseCell parses the config with a point's overrides and names, on an
// error, the override to blame: its axis (or point), value and key.
func parseCell(src []byte, name string, sets []string, ovs []override) (train.Config, error) {
	cfg, err := train.ParseNamedConfig(src, name, sets)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), name+": ")
		var ye *yamlcfg.Error
		for _, o := range ovs {
			if (errors.As(err, &ye) && ye.Set == o.set) || strings.Contains(msg, "-set "+o.set) {
				return cfg, fmt.Errorf("%s: %s: %s: %s", name, o.where, o.what, msg)
			}
		}
		var all []string
		for _, o := range ovs {
			all = append(all, o.set)
		}
		return cfg, fmt.Errorf("%s: the point %s: %s", name, strings.Join(all, " "), msg)
	}
	cfg.Sweep = nil
	return cfg, nil
}

// pairable checks that a point's config equals its baseline's but for
// the samplers and the name, so that their runs pair seed by seed (the
// same initialisation, data and evaluation folds); an axis with shared:
// false differs on purpose.
func pairable(pt Point, a assignment, b Cell) error {
	for _, o := range a.ovs {
		if o.explicitUnshared {
			return nil
		}
	}
	strip := func(c train.Config) (string, error) {
		c.Samplers, c.Name = nil, ""
		var buf bytes.Buffer
		err := train.WriteConfig(&buf, &c)
		return buf.String(), err
	}
	x, err := strip(pt.Cell.Config)
	if err != nil {
		return err
	}
	y, err := strip(b.Config)
	if err != nil {
		return err
	}
	if x == y {
		return nil
	}
	xl, yl := strings.Split(x, "\n"), strings.Split(y, "\n")
	for i := range min(len(xl), len(yl)) {
		if xl[i] != yl[i] {
			return fmt.Errorf("point %s: its config differs from its baseline's beyond the samplers (%q vs %q), so the two would not be paired seed by seed", pt.Name, strings.TrimSpace(xl[i]), strings.TrimSpace(yl[i]))
		}
	}
	return fmt.Errorf("point %s: its config differs from its baseline's beyond the samplers", pt.Name)
}

// dirName makes a label a directory name: letters (α too), digits and
// ._+- kept, runs of anything else become one "-" ("0.2→0.05" →
// "0.2-0.05").
func dirName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._+-", r)
		if ok {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" || out == "." || out == ".." {
		return "x"
	}
	return out
}
