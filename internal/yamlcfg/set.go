package yamlcfg

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// override is one parsed -set key.path=value.
type override struct {
	raw   string     // as given
	key   string     // the key path as given (trimmed)
	segs  []seg      // the key path
	val   *yaml.Node // the value (a template: copied into each tree)
	empty bool       // "key=": no value given
}

// seg is one step of a key path: a mapping key or a list index.
type seg struct {
	name    string
	index   int
	isIndex bool
}

func parseOverride(s string) (*override, error) {
	key, val, ok := strings.Cut(s, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return nil, fmt.Errorf("-set %q: want key.path=value", s)
	}
	o := &override{raw: s, key: key}
	var err error
	if o.segs, err = parsePath(key); err != nil {
		return nil, fmt.Errorf("-set %s: %v", s, err)
	}
	if strings.TrimSpace(val) == "" {
		o.empty = true
		o.val = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
		return o, nil
	}
	var v yaml.Node
	if err := yaml.Unmarshal([]byte(val), &v); err != nil {
		msg := syntaxError(err, []byte(val))
		if !strings.Contains(val, "\n") {
			msg = strings.TrimPrefix(msg, "line 1: ")
		}
		return nil, fmt.Errorf("-set %s: the value is not valid YAML: %s (quote it: %s='...')", s, msg, key)
	}
	if v.Kind == yaml.DocumentNode && len(v.Content) == 1 {
		o.val = v.Content[0]
	} else { // only a comment, say
		o.empty = true
		o.val = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	}
	return o, nil
}

// parsePath parses "a.b[1].c[0][2]".
func parsePath(key string) ([]seg, error) {
	bad := func(why string) error {
		return fmt.Errorf("bad key path %q: %s; want names separated by dots, list entries by index (samplers[1].m)", key, why)
	}
	var segs []seg
	rest := key
	for first := true; ; first = false {
		end := strings.IndexAny(rest, ".[]")
		if end < 0 {
			end = len(rest)
		}
		name := rest[:end]
		if name == "" {
			if first || end == len(rest) || rest[end] != '[' {
				return nil, bad("a key name is empty")
			}
		} else {
			segs = append(segs, seg{name: name})
		}
		rest = rest[end:]
		for strings.HasPrefix(rest, "[") {
			close := strings.IndexByte(rest, ']')
			if close < 0 {
				return nil, bad("no closing ]")
			}
			i, err := strconv.Atoi(rest[1:close])
			if err != nil || i < 0 || strings.HasPrefix(rest[1:close], "+") {
				return nil, bad(fmt.Sprintf("index %q is not a number ≥ 0", rest[1:close]))
			}
			segs = append(segs, seg{index: i, isIndex: true})
			rest = rest[close+1:]
		}
		switch {
		case rest == "":
			return segs, nil
		case rest[0] == ']':
			return nil, bad("unexpected ]")
		case rest[0] == '.':
			rest = rest[1:]
			if rest == "" {
				return nil, bad("a key name is empty")
			}
		default: // a name right after "]"
			return nil, bad("want . or [ after ]")
		}
	}
}

// formatPath writes a key path back ("samplers[1].alpha").
func formatPath(segs []seg) string {
	var b strings.Builder
	for _, s := range segs {
		if s.isIndex {
			fmt.Fprintf(&b, "[%d]", s.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.name)
	}
	return b.String()
}

// errDeferred says an override indexes a list the document does not give:
// it is applied by Decode, which knows the list's default.
var errDeferred = errors.New("yamlcfg: override deferred to Decode")

// resolver returns the default value, as a node, of the key path segs of
// the decoding target; i is the index of the override asking.
type resolver func(i int, segs []seg) (*yaml.Node, error)

// build applies the overrides to root (which it changes) in order. Without
// a resolver, overrides that need a default are skipped and d.deferred set.
func (d *Doc) build(root *yaml.Node, resolve resolver) (tree, error) {
	t := tree{root: root, owner: map[*yaml.Node]int{}, empty: map[*yaml.Node]bool{}, replaced: map[*yaml.Node]*yaml.Node{}}
	for i, o := range d.sets {
		err := t.apply(i, o, resolve)
		if errors.Is(err, errDeferred) {
			d.deferred = true
			continue
		}
		if err != nil {
			return tree{}, err
		}
	}
	return t, nil
}

// own marks n and everything under it (not through aliases) as the
// override's.
func (t *tree) own(n *yaml.Node, o int) {
	t.owner[n] = o
	for _, c := range n.Content {
		t.own(c, o)
	}
}

func (t *tree) apply(i int, o *override, resolve resolver) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("-set %s: %s", o.raw, fmt.Sprintf(format, args...))
	}
	slot := &t.root.Content[0]
	for j, s := range o.segs {
		n := *slot
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = expandAlias(deref(n))
			*slot = n
		}
		at := formatPath(o.segs[:j])
		if at == "" {
			at = "the top level"
		}
		if s.isIndex {
			if n.Kind != yaml.SequenceNode {
				return fail("%s is not a list (it is %s%s)", at, describeNode(n), lineOf(n, t))
			}
			if s.index >= len(n.Content) {
				return fail("%s has %d %s; the index must be below %[2]d (to add entries, give the whole list: %[4]s=[...])",
					at, len(n.Content), plural(len(n.Content), "entry", "entries"), formatPath(o.segs[:j]))
			}
			slot = &n.Content[s.index]
			continue
		}
		if isNull(n) { // "sampler:" with nothing: make it a mapping
			*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
			t.owner[n] = i + 1
		}
		if n.Kind != yaml.MappingNode {
			return fail("%s is not a mapping (it is %s%s)", at, describeNode(n), lineOf(n, t))
		}
		_, v := lookupOwnKey(n, s.name)
		if v == nil {
			// A missing key: an empty mapping on the way, the default
			// of a list to index, or the value itself.
			var nv *yaml.Node
			switch last := j == len(o.segs)-1; {
			case last:
				nv = nil // the value, below
			case o.segs[j+1].isIndex:
				if resolve == nil {
					return errDeferred
				}
				def, err := resolve(i, o.segs[:j+1])
				if err != nil {
					return err
				}
				nv = def
				t.own(nv, -(i + 1))
			default:
				nv = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				t.owner[nv] = i + 1
			}
			k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s.name}
			t.owner[k] = i + 1
			n.Content = append(n.Content, k, nv)
			v = &n.Content[len(n.Content)-1]
		}
		slot = v
	}
	val := copyNode(o.val)
	t.own(val, i+1)
	if o.empty {
		t.empty[val] = true
		t.replaced[val] = *slot // for the example of what to give
	}
	*slot = val
	return nil
}

// lookupOwnKey returns the key and a pointer to the value slot of name in
// mapping n, among n's own keys (not merged ones: an override of a merged
// key adds the key to n, which takes precedence over the merge).
func lookupOwnKey(n *yaml.Node, name string) (*yaml.Node, **yaml.Node) {
	for i := len(n.Content) - 2; i >= 0; i -= 2 {
		if c := n.Content[i]; !isMerge(c) && c.Kind == yaml.ScalarNode && c.Value == name {
			return c, &n.Content[i+1]
		}
	}
	return nil, nil
}

// lineOf is " on line N" for a node of the document, "" for one an
// override made.
func lineOf(n *yaml.Node, t *tree) string {
	if n.Line == 0 || t.owner[n] != 0 {
		return ""
	}
	return fmt.Sprintf(" on line %d", n.Line)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// defaultsAt returns the value at segs of dst (the decoding target, with
// its defaults) as a node; the zero value where dst has none (a nil
// pointer, an index past the end).
func (d *Doc) defaultsAt(dst reflect.Value, i int, segs []seg) (*yaml.Node, error) {
	o := d.sets[i]
	v, t := dst, dst.Type()
	for j, s := range segs {
		for t.Kind() == reflect.Pointer {
			if v.IsValid() && !v.IsNil() {
				v = v.Elem()
			} else {
				v = reflect.Value{}
			}
			t = t.Elem()
		}
		at := formatPath(segs[:j])
		switch {
		case s.isIndex && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
			if v.IsValid() && s.index < v.Len() {
				v = v.Index(s.index)
			} else {
				v = reflect.Value{}
			}
			t = t.Elem()
		case !s.isIndex && t.Kind() == reflect.Struct:
			info := structInfoOf(t)
			f, ok := info.byKey[s.name]
			if !ok {
				if info.open {
					return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}, nil
				}
				if info.inlineMap == nil {
					return nil, &Error{Set: o.raw, Key: formatPath(segs[:j+1]), Msg: "unknown key", allowed: info.keys, unknown: true}
				}
				v, t = reflect.Value{}, info.inlineMap.Elem()
				continue
			}
			v, t = fieldValue(v, f.index), f.typ
		case !s.isIndex && t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
			if v.IsValid() && !v.IsNil() {
				v = v.MapIndex(reflect.ValueOf(s.name).Convert(t.Key()))
			} else {
				v = reflect.Value{}
			}
			t = t.Elem()
		case t.Kind() == reflect.Interface:
			v = reflect.Value{}
		default:
			what := "a mapping"
			if s.isIndex {
				what = "a list"
			}
			return nil, &Error{Set: o.raw, Key: at, Msg: fmt.Sprintf("expected %s, not %s", describeType(t), what)}
		}
	}
	if !v.IsValid() || !v.CanInterface() {
		v = reflect.Zero(t)
	}
	var n yaml.Node
	if err := n.Encode(v.Interface()); err != nil {
		return nil, fmt.Errorf("-set %s: cannot write the default of %s: %v", o.raw, formatPath(segs), err)
	}
	return &n, nil
}

// SetString writes the override "key=value" that sets key to the YAML
// value v, v in flow style ({schedule: linear, start: 0.2}): what a
// program that holds a value as a node (a sweep's axis) hands to Parse
// beside the command line's -set overrides, so that both go through the
// same path, type checks and error messages.
func SetString(key string, v *yaml.Node) (string, error) {
	if v == nil {
		return "", fmt.Errorf("%s: no value", key)
	}
	n := copyNode(v)
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	flow(n)
	b, err := yaml.Marshal(n)
	if err != nil {
		return "", fmt.Errorf("%s: cannot write the value: %w", key, err)
	}
	return key + "=" + strings.TrimSuffix(string(b), "\n"), nil
}
