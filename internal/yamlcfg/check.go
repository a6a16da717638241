package yamlcfg

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

var (
	unmarshalerType         = reflect.TypeFor[yaml.Unmarshaler]()
	obsoleteUnmarshalerType = reflect.TypeFor[interface {
		UnmarshalYAML(unmarshal func(any) error) error
	}]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	durationType        = reflect.TypeFor[time.Duration]()
	nodeType            = reflect.TypeFor[yaml.Node]()
)

// checker walks the document alongside the Go type it decodes into.
type checker struct {
	doc *Doc
	// seen holds the (anchor, type) pairs already checked through an
	// alias: each is checked once, which keeps "billion laughs" documents
	// linear and stops anchors that contain themselves.
	seen map[visit]bool
}

type visit struct {
	n *yaml.Node
	t reflect.Type
}

// fail makes the error of node n (a key, or a value) at key path path; line
// is the line to quote (that of the value's key, or of the list entry).
func (c *checker) fail(n *yaml.Node, path string, line int, msg string) *Error {
	if o := c.doc.owner[n]; o != 0 {
		if o < 0 {
			o = -o
		}
		return &Error{Set: c.doc.sets[o-1].raw, Key: path, Msg: msg}
	}
	return &Error{Doc: c.doc.name, Key: path, Line: line, Msg: msg}
}

// check reports the first unknown key or badly typed value under n, which
// decodes into type t (v is the current value there, with its defaults,
// or invalid when there is none).
func (c *checker) check(n *yaml.Node, v reflect.Value, t reflect.Type, path string, line int) error {
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return nil // yaml.v3 reports it
		}
		k := visit{n.Alias, t}
		if c.seen[k] {
			return nil
		}
		c.seen[k] = true
		n = deref(n)
	}
	if c.doc.empty[n] {
		et := t
		for et.Kind() == reflect.Pointer {
			et = et.Elem()
		}
		if et.Kind() != reflect.String {
			return c.emptyValue(n, v, t, path)
		}
		// "-set data.text.vectors_cache=" sets a string to "" (e.g. to
		// switch off an option whose default is a path).
		n.Kind, n.Tag, n.Value, n.Style = yaml.ScalarNode, "!!str", "", yaml.DoubleQuotedStyle
		delete(c.doc.empty, n)
	}
	for t.Kind() == reflect.Pointer {
		if v.IsValid() && !v.IsNil() {
			v = v.Elem()
		} else {
			v = reflect.Value{}
		}
		t = t.Elem()
	}
	if isNull(n) {
		return nil // yaml.v3 leaves the value alone (or nils a pointer, slice or map)
	}
	if t == nodeType {
		return nil // a yaml.Node takes any value, unchecked: its reader checks it
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(unmarshalerType) || pt.Implements(obsoleteUnmarshalerType) || pt.Implements(textUnmarshalerType) && n.Kind == yaml.ScalarNode {
		return c.checkCustom(n, v, t, path, line)
	}
	if t == durationType {
		var d time.Duration
		if n.Kind != yaml.ScalarNode || n.Decode(&d) != nil {
			return c.fail(n, path, line, "expected a duration (such as 1m30s), got "+describeNode(n))
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			msg := fmt.Sprintf("expected %s, got %s", describeType(t), describeNode(n))
			if n.Kind == yaml.ScalarNode {
				msg += colonHint(n.Value, "value")
			}
			return c.fail(n, path, line, msg)
		}
		return c.checkMapping(n, v, t, path)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return c.fail(n, path, line, "expected a mapping, got "+describeNode(n))
		}
		return c.checkMapping(n, v, t, path)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice && n.Kind == yaml.ScalarNode {
			return nil // []byte from !!binary or a string
		}
		if n.Kind != yaml.SequenceNode {
			return c.fail(n, path, line, "expected a list, got "+describeNode(n))
		}
		if t.Kind() == reflect.Array && len(n.Content) != t.Len() {
			return c.fail(n, path, line, fmt.Sprintf("expected a list of %d values, got %d", t.Len(), len(n.Content)))
		}
		for i, e := range n.Content {
			ev := reflect.Value{}
			if v.IsValid() && i < v.Len() {
				ev = v.Index(i)
			}
			if err := c.check(e, ev, t.Elem(), fmt.Sprintf("%s[%d]", path, i), e.Line); err != nil {
				return err
			}
		}
		return nil
	case reflect.Interface:
		return nil // anything goes
	}
	if n.Kind != yaml.ScalarNode {
		return c.fail(n, path, line, fmt.Sprintf("expected %s, got %s", describeType(t), describeNode(n)))
	}
	tag := n.ShortTag()
	ok := true
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		// yaml.v3 would truncate 1.5 to 1: only integers are integers
		ok = tag == "!!int" && n.Decode(reflect.New(t).Interface()) == nil
		if !ok && tag == "!!int" {
			bits := t.Bits()
			return c.fail(n, path, line, fmt.Sprintf("expected an integer from %d to %d, got %s", int64(-1)<<(bits-1), uint64(1)<<(bits-1)-1, describeNode(n)))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		ok = tag == "!!int" && n.Decode(reflect.New(t).Interface()) == nil
		if !ok && tag == "!!int" && !strings.HasPrefix(n.Value, "-") {
			return c.fail(n, path, line, fmt.Sprintf("expected a non-negative integer up to %d, got %s", uint64(math.MaxUint64)>>(64-t.Bits()), describeNode(n)))
		}
	case reflect.Float32, reflect.Float64:
		ok = (tag == "!!float" || tag == "!!int") && n.Decode(reflect.New(t).Interface()) == nil
	case reflect.Bool:
		// only true and false: not YAML 1.1's yes, no, on and off
		ok = tag == "!!bool"
	case reflect.String:
		ok = n.Decode(reflect.New(t).Interface()) == nil
	}
	if !ok {
		return c.fail(n, path, line, fmt.Sprintf("expected %s, got %s", describeType(t), describeNode(n)))
	}
	return nil
}

// checkMapping checks the keys of mapping n against struct or map type t.
func (c *checker) checkMapping(n *yaml.Node, v reflect.Value, t reflect.Type, path string) error {
	seen := map[string]int{}
	return c.checkKeys(n, v, t, path, seen)
}

func (c *checker) checkKeys(n *yaml.Node, v reflect.Value, t reflect.Type, path string, seen map[string]int) error {
	var info *structInfo
	if t.Kind() == reflect.Struct {
		info = structInfoOf(t)
	}
	// The mapping's own keys first, then the merged ones (<<), which
	// yield to them.
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if isMerge(k) {
			merges = append(merges, k, val)
			continue
		}
		if k.Kind == yaml.AliasNode {
			k = deref(k)
		}
		if k.Kind != yaml.ScalarNode {
			return c.fail(k, path, k.Line, "expected a key name, got "+describeNode(k))
		}
		child := k.Value
		if path != "" {
			child = path + "." + k.Value
		}
		if first, dup := seen[k.Value]; dup {
			return c.fail(k, child, k.Line, fmt.Sprintf("key given twice (first on line %d)", first))
		}
		seen[k.Value] = k.Line
		fv, ft := reflect.Value{}, reflect.Type(nil)
		switch {
		case info == nil: // a map
			kv := reflect.New(t.Key())
			if err := k.Decode(kv.Interface()); err != nil {
				return c.fail(k, child, k.Line, fmt.Sprintf("expected a key that is %s, got %s", describeType(t.Key()), describeNode(k)))
			}
			if v.IsValid() && !v.IsNil() {
				fv = v.MapIndex(kv.Elem())
			}
			ft = t.Elem()
		default:
			f, ok := info.byKey[k.Value]
			switch {
			case ok:
				fv, ft = fieldValue(v, f.index), f.typ
			case info.inlineMap != nil:
				ft = info.inlineMap.Elem()
			case info.open:
				continue
			default:
				e := c.fail(k, child, k.Line, "unknown key")
				e.allowed, e.unknown, e.hint = info.keys, true, colonHint(k.Value, "key")
				return e
			}
		}
		if err := c.check(val, fv, ft, child, k.Line); err != nil {
			return err
		}
	}
	for i := 0; i+1 < len(merges); i += 2 {
		k, val := merges[i], merges[i+1]
		ms := mergedMappings(val)
		if len(ms) == 0 {
			return c.fail(val, path, k.Line, "<< must merge a mapping or a list of mappings, got "+describeNode(deref(val)))
		}
		for _, m := range ms {
			mseen := map[string]int{}
			for key, line := range seen {
				mseen[key] = line
			}
			if err := c.checkMerged(m, v, t, path, mseen); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkMerged checks a merged mapping: keys the mapping overrides are not
// duplicates.
func (c *checker) checkMerged(m *yaml.Node, v reflect.Value, t reflect.Type, path string, seen map[string]int) error {
	vk := visit{m, t}
	if c.seen[vk] {
		return nil
	}
	c.seen[vk] = true
	// Drop the keys the including mapping gives: they win, and are checked.
	pruned := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: m.Line}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && !isMerge(k) {
			if _, ok := seen[k.Value]; ok {
				continue
			}
		}
		pruned.Content = append(pruned.Content, m.Content[i], m.Content[i+1])
	}
	return c.checkKeys(pruned, v, t, path, map[string]int{})
}

// checkCustom checks a value of a type that decodes itself: the keys of a
// mapping against the type's fields when it is a struct (its decoder
// likely decodes a mapping into them, leniently), then the decoder's
// verdict.
func (c *checker) checkCustom(n *yaml.Node, v reflect.Value, t reflect.Type, path string, line int) error {
	if t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode {
		if err := c.checkMapping(n, v, t, path); err != nil {
			return err
		}
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		return c.fail(n, path, line, fmt.Sprintf("%s is not accepted: %s", describeNode(n), cleanYAMLError(err)))
	}
	return nil
}

var lineRE = regexp.MustCompile(`^(yaml: )?(unmarshal errors:\n\s*)?line \d+: `)

// cleanYAMLError drops the "yaml: line N: " yaml.v3 and decoders put
// first: the error quotes the line itself.
func cleanYAMLError(err error) string {
	s := err.Error()
	for {
		t := lineRE.ReplaceAllString(s, "")
		if t == s {
			return strings.TrimPrefix(s, "yaml: ")
		}
		s = t
	}
}

// emptyValue is the error of "-set key=" (no value): say what to give, with
// the document's value, or else the default, as the example.
func (c *checker) emptyValue(n *yaml.Node, v reflect.Value, t reflect.Type, path string) error {
	o := c.doc.sets[c.doc.owner[n]-1]
	msg := "empty value; give " + describeShort(t)
	ex, ok := exampleNode(c.doc.replaced[n])
	if !ok {
		ex, ok = example(v)
	}
	if ok {
		msg += fmt.Sprintf(" (e.g. %s=%s)", o.key, ex)
	}
	return &Error{Set: o.raw, Key: path, Msg: msg}
}

// example writes v in YAML's flow style on one short line.
func example(v reflect.Value) (string, bool) {
	if !v.IsValid() || !v.CanInterface() {
		return "", false
	}
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Slice || v.Kind() == reflect.Map) && v.IsNil() {
		return "", false
	}
	var n yaml.Node
	if err := n.Encode(v.Interface()); err != nil {
		return "", false
	}
	return exampleNode(&n)
}

// exampleNode writes n in YAML's flow style on one short line.
func exampleNode(n *yaml.Node) (string, bool) {
	if n == nil || isNull(n) || n.Kind == yaml.AliasNode {
		return "", false
	}
	n = copyNode(n)
	flow(n)
	b, err := yaml.Marshal(n)
	s := strings.TrimSpace(string(b))
	if err != nil || s == "" || strings.Contains(s, "\n") || len(s) > 60 {
		return "", false
	}
	return s, true
}

func flow(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment, n.Anchor = "", "", "", ""
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style |= yaml.FlowStyle
	}
	for _, c := range n.Content {
		flow(c)
	}
}

// describeNode says what a node is, for "got ...".
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias *" + n.Value
	}
	if isNull(n) {
		return "null"
	}
	s := n.Value
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return strconv.Quote(s)
}

// describeType says what a value of t is written as, for "expected ...".
func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		if keys := structInfoOf(t).keys; len(keys) > 0 {
			return "a mapping of keys " + strings.Join(keys, ", ")
		}
	}
	return describeShort(t)
}

func describeShort(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(unmarshalerType) || pt.Implements(obsoleteUnmarshalerType) || pt.Implements(textUnmarshalerType) {
		return "a value"
	}
	if t == durationType {
		return "a duration"
	}
	if t == nodeType {
		return "a value"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return "a value"
}

// structInfo is what yaml.v3 makes of a struct type's fields.
type structInfo struct {
	byKey     map[string]field
	keys      []string     // sorted
	inlineMap reflect.Type // the map type of an `,inline` map field, if any
	open      bool         // an `,inline` field decodes itself: any key may be its
}

type field struct {
	index []int // through `,inline` fields
	typ   reflect.Type
}

var structInfos sync.Map // reflect.Type → *structInfo

// structInfoOf follows yaml.v3's getStructInfo: exported fields (and
// embedded ones) keyed by their yaml tag's name, else the lower-cased field
// name; "-" skipped; `,inline` structs (and pointers to them) contribute
// their fields.
func structInfoOf(t reflect.Type) *structInfo {
	if si, ok := structInfos.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{byKey: map[string]field{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.PkgPath != "" && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "" && !strings.Contains(string(f.Tag), ":") {
			tag = string(f.Tag)
		}
		if tag == "-" {
			continue
		}
		name, flags, _ := strings.Cut(tag, ",")
		if slices.Contains(strings.Split(flags, ","), "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft.Kind() == reflect.Map:
				si.inlineMap = ft
			case ft.Kind() != reflect.Struct:
			case reflect.PointerTo(ft).Implements(unmarshalerType):
				si.open = true
			default:
				sub := structInfoOf(ft)
				for k, sf := range sub.byKey {
					si.byKey[k] = field{index: append([]int{i}, sf.index...), typ: sf.typ}
				}
				si.inlineMap = cmpOr(si.inlineMap, sub.inlineMap)
				si.open = si.open || sub.open
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		si.byKey[name] = field{index: []int{i}, typ: f.Type}
	}
	for k := range si.byKey {
		si.keys = append(si.keys, k)
	}
	slices.Sort(si.keys)
	structInfos.Store(t, si)
	return si
}

func cmpOr(a, b reflect.Type) reflect.Type {
	if a != nil {
		return a
	}
	return b
}

// fieldValue is v.FieldByIndex through nil pointers (invalid there).
func fieldValue(v reflect.Value, index []int) reflect.Value {
	for _, i := range index {
		for v.IsValid() && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}
			}
			v = v.Elem()
		}
		if !v.IsValid() {
			return v
		}
		v = v.Field(i)
	}
	return v
}
