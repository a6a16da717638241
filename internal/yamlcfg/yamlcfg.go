// Package yamlcfg is the product's one strict YAML configuration decoder.
//
// Parse reads a YAML document and applies the command line's -set
// overrides ("train.batch_size=64", "samplers[1].m=500", "seeds=[0,1,2]");
// Doc.Value reads a scalar before decoding (to choose defaults, e.g. by
// modality); Doc.Decode decodes over the defaults already in a Go value and
// refuses, before decoding anything, every key the value's type does not
// have and every value of the wrong type. Every error names the key path
// and where it came from, so that the user can find it:
//
//	configs/x.yaml: train.bach_size (line 2): unknown key; allowed keys under train: batch_size, epochs, lr
//	configs/x.yaml: train.batch_size (line 4): expected an integer, got "abc"
//	-set train.batch_size=abc: expected an integer, got "abc"
//	-set train.bach_size=5: unknown key train.bach_size; allowed keys under train: batch_size, epochs, lr
//
// An error caused by an override is blamed on the override, never on a line
// of a document the user may not see (an embedded default, say).
//
// Validation happens after decoding, on Go values. OneOf, Positive and
// Errors word its messages the same way in every package, and Doc.Locate
// adds the line (or the override) a key came from:
//
//	train.batch_size (line 5): must be a positive integer, got -5
//
// The package knows yaml.v3's rules for struct fields (yaml tags,
// lower-cased field names, `,inline` structs and maps, "-"), pointers,
// slices, arrays, maps, anchors, aliases and merge keys (<<), and types
// that decode themselves (yaml.Unmarshaler, encoding.TextUnmarshaler).
package yamlcfg

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Doc is a parsed YAML document with -set overrides applied.
type Doc struct {
	name string
	sets []*override
	// orig is the document as read, kept when an override indexes a list
	// the document does not give: Decode then takes that list from the
	// defaults in its target and applies the overrides again, in order.
	orig     *yaml.Node
	deferred bool
	blank    bool // the document sets no key (see Blank)
	tree          // the document with the overrides applied
}

// tree is a document (a DocumentNode holding one mapping) with the nodes
// the overrides put there.
type tree struct {
	root *yaml.Node
	// owner maps every node an override created to 1+its index in sets;
	// nodes copied from the defaults to hold an override map to -(1+index).
	owner map[*yaml.Node]int
	// empty marks the value nodes of overrides with an empty value.
	empty map[*yaml.Node]bool
	// replaced maps those nodes to the document's value they replaced.
	replaced map[*yaml.Node]*yaml.Node
}

// Parse reads one YAML document and applies the overrides in sets, in
// order. name is how errors call the document: a file path, or something
// like "the embedded default" ("" leaves errors unprefixed).
//
// An override is "key.path=value", the value in YAML syntax: seeds=[0,1,2],
// samplers=[{kind: uniform}], and data.root="" (with the quotes) for an
// empty string. List entries are addressed by index: samplers[1].m=500,
// eval.cs[0]=10. A path through a missing mapping creates it; an index
// past the end of a list is an error naming the list and its length. When
// the document does not give the list, the override indexes the list's
// default, which Decode takes from its target.
//
// Parse checks the YAML syntax and the overrides' paths; the keys and the
// types are checked by Decode, which knows the Go type.
func Parse(src []byte, name string, sets []string) (doc *Doc, err error) {
	defer func() {
		// yaml.v3 has panicked on hostile input before; never let a
		// configuration file crash the program.
		if r := recover(); r != nil {
			doc, err = nil, fmt.Errorf("%snot valid YAML: %v", prefix(name), r)
		}
	}()
	d := &Doc{name: name}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%snot valid YAML: %s", prefix(name), syntaxError(err, src))
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, fmt.Errorf("%snot valid YAML: %s", prefix(name), syntaxError(err, src))
	default:
		return nil, fmt.Errorf("%smore than one YAML document (the second starts on line %d); give one", prefix(name), max(next.Line, 1))
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || isNull(root.Content[0]) {
		// empty (or only comments, or null): no key is set
		root = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	if c := root.Content[0]; c.Kind == yaml.MappingNode && len(c.Content) == 0 {
		d.blank = true
	}
	for _, s := range sets {
		o, err := parseOverride(s)
		if err != nil {
			return nil, err
		}
		d.sets = append(d.sets, o)
	}
	if len(d.sets) > 0 {
		d.orig = copyNode(&root)
	}
	d.tree, err = d.build(&root, nil)
	if err != nil {
		return nil, err
	}
	if !d.deferred {
		d.orig = nil
	}
	return d, nil
}

// Blank reports whether the document itself sets no key (an empty file,
// one of comments only, null or {}), whatever the overrides set.
func (d *Doc) Blank() bool { return d != nil && d.blank }

// Name is the document's name as given to Parse. (Value, Line and Locate
// also work on a nil *Doc, which gives no key.)
func (d *Doc) Name() string { return d.name }

// Value returns the scalar at a key path ("modality", "data.source",
// "samplers[1].kind") of the document with the overrides applied, and
// whether there is one (false for a missing key, a null, a list or a
// mapping). It reads the document only: it knows nothing of defaults.
func (d *Doc) Value(key string) (string, bool) {
	n, _ := d.lookup(key)
	if n == nil || d.empty[n] {
		return "", false
	}
	if n = deref(n); n.Kind != yaml.ScalarNode || isNull(n) {
		return "", false
	}
	return n.Value, true
}

// Line returns the line of a key path in the document ("train.batch_size",
// "samplers[1].alpha"): the line of its key, or of the list entry. It is 0
// when the document does not give the key or an override set it.
func (d *Doc) Line(key string) int {
	n, line := d.lookup(key)
	if n == nil || d.owner[n] != 0 {
		return 0
	}
	return line
}

// Locate returns key annotated with where its value came from, for the
// messages of validation (which happens after decoding, on Go values):
// "train.batch_size (line 5)" when the document sets it,
// "train.batch_size (-set train.batch_size=-5)" when an override does, and
// key alone when the value is a default. So
//
//	yamlcfg.Positive(doc.Locate("train.batch_size"), c.Train.BatchSize)
//
// reads "train.batch_size (line 5): must be a positive integer, got -5".
func (d *Doc) Locate(key string) string {
	n, line := d.lookup(key)
	if n == nil {
		return key
	}
	switch o := d.owner[n]; {
	case o < 0:
		return key
	case o > 0:
		return fmt.Sprintf("%s (-set %s)", key, d.sets[o-1].raw)
	case line > 0:
		return fmt.Sprintf("%s (line %d)", key, line)
	}
	return key
}

// lookup finds the node of a key path and the line of its key.
func (d *Doc) lookup(key string) (*yaml.Node, int) {
	segs, err := parsePath(key)
	if err != nil || d == nil || d.root == nil {
		return nil, 0
	}
	n, line := d.root.Content[0], 0
	for _, s := range segs {
		n = deref(n)
		if s.isIndex {
			if n.Kind != yaml.SequenceNode || s.index >= len(n.Content) {
				return nil, 0
			}
			n = n.Content[s.index]
			line = n.Line
			continue
		}
		if n.Kind != yaml.MappingNode {
			return nil, 0
		}
		k, v := lookupKey(n, s.name)
		if v == nil {
			return nil, 0
		}
		n, line = v, k.Line
	}
	return n, line
}

// lookupKey returns the key and value nodes of name in mapping n (nil if
// absent; the last one if the key is given twice). Merged mappings (<<)
// are searched after the mapping's own keys.
func lookupKey(n *yaml.Node, name string) (k, v *yaml.Node) {
	return lookupMerged(n, name, map[*yaml.Node]bool{})
}

func lookupMerged(n *yaml.Node, name string, seen map[*yaml.Node]bool) (k, v *yaml.Node) {
	if seen[n] { // an anchor that merges itself
		return nil, nil
	}
	seen[n] = true
	for i := 0; i+1 < len(n.Content); i += 2 {
		if c := n.Content[i]; !isMerge(c) && c.Kind == yaml.ScalarNode && c.Value == name {
			k, v = c, n.Content[i+1]
		}
	}
	if v != nil {
		return k, v
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if isMerge(n.Content[i]) {
			for _, m := range mergedMappings(n.Content[i+1]) {
				if k, v = lookupMerged(m, name, seen); v != nil {
					return k, v
				}
			}
		}
	}
	return nil, nil
}

// Decode decodes the document over the value dst points to, so that the
// defaults already in *dst survive wherever the document is silent. It is
// strict: first it checks every key against dst's type (yaml tags, `,inline`
// structs, pointers, slices, maps, types implementing yaml.Unmarshaler) and
// every scalar against its field's type, and returns the first problem
// with its key path and line (or its override); then it decodes with
// yaml.v3's KnownFields(true). On an error *dst may be partly decoded.
func (d *Doc) Decode(dst any) (err error) {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("yamlcfg: Decode needs a non-nil pointer, got %T", dst)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%scannot decode: %v", prefix(d.name), r)
		}
	}()
	if d.deferred {
		t, err := d.build(copyNode(d.orig), func(i int, segs []seg) (*yaml.Node, error) {
			return d.defaultsAt(rv.Elem(), i, segs)
		})
		if err != nil {
			return err
		}
		d.tree = t
	}
	c := checker{doc: d, seen: map[visit]bool{}}
	if err := c.check(d.root.Content[0], rv.Elem(), rv.Elem().Type(), "", d.root.Content[0].Line); err != nil {
		return err
	}
	if top := d.root.Content[0]; top.Kind == yaml.MappingNode && len(top.Content) == 0 {
		return nil // nothing to decode: the defaults stand
	}
	// The overrides live in the node tree only; yaml.v3's Decoder (the one
	// with KnownFields) reads text, so write the tree out and read it back.
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(d.root); err != nil {
		return fmt.Errorf("%scannot decode: %w", prefix(d.name), err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("%scannot decode: %w", prefix(d.name), err)
	}
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	if err := dec.Decode(dst); err != nil && !errors.Is(err, io.EOF) {
		// The check above should have caught it; yaml.v3's lines are those
		// of the rewritten text, so do not quote them as the document's.
		return fmt.Errorf("%scannot decode: %s", prefix(d.name), strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
}

// parserProblems are the problems yaml.v3's parser (as opposed to its
// scanner) reports. It numbers their lines from 0 ("line 1" for the second
// line); syntaxError adds the 1. Both leave out "line 0", the first line.
var parserProblems = []string{
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"did not find expected <document start>",
	"did not find expected <stream-start>",
	"did not find expected key",
	"did not find expected node content",
	"found duplicate %TAG directive",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found undefined tag handle",
}

var syntaxRE = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// syntaxError words a yaml.v3 syntax error, "line 3: did not find ...",
// with the right line: an error at the end of src is on its last line.
func syntaxError(err error, src []byte) string {
	m := syntaxRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	line, _ := strconv.Atoi(m[1]) // 0 when absent
	switch {
	case slices.Contains(parserProblems, m[2]):
		line++
	case line == 0 && !strings.HasPrefix(m[2], "unknown anchor"):
		line = 1 // a scanner problem on the first line
	}
	if line == 0 {
		return m[2]
	}
	last := bytes.Count(bytes.TrimRight(src, "\n"), []byte("\n")) + 1
	return fmt.Sprintf("line %d: %s", min(line, last), m[2])
}

func prefix(name string) string {
	if name == "" {
		return ""
	}
	return name + ": "
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge"
}

// mergedMappings returns the mappings a merge key's value names (one
// mapping, or a list of them), aliases resolved.
func mergedMappings(v *yaml.Node) []*yaml.Node {
	v = deref(v)
	switch v.Kind {
	case yaml.MappingNode:
		return []*yaml.Node{v}
	case yaml.SequenceNode:
		var ms []*yaml.Node
		for _, c := range v.Content {
			if c = deref(c); c.Kind == yaml.MappingNode {
				ms = append(ms, c)
			}
		}
		return ms
	}
	return nil
}

// deref follows aliases (a bounded number of times: an alias cannot name
// an alias in valid YAML, but be safe).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; i < 8 && n.Kind == yaml.AliasNode && n.Alias != nil; i++ {
		n = n.Alias
	}
	return n
}

// copyNode copies a document tree; the copy's aliases name the copy's
// anchors.
func copyNode(n *yaml.Node) *yaml.Node {
	return copyTree(n, map[*yaml.Node]*yaml.Node{})
}

func copyTree(n *yaml.Node, copies map[*yaml.Node]*yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	copies[n] = &c
	if n.Kind == yaml.AliasNode {
		if a, ok := copies[n.Alias]; ok {
			c.Alias = a
		}
	}
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, x := range n.Content {
			c.Content[i] = copyTree(x, copies)
		}
	}
	return &c
}

// expandAlias copies the node an alias names, to be changed by an override
// without changing the anchor's other aliases. The copy defines no anchor,
// so that aliases after it still name the original.
func expandAlias(n *yaml.Node) *yaml.Node {
	c := *n
	c.Anchor = ""
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, x := range n.Content {
			c.Content[i] = expandAlias(x)
		}
	}
	return &c
}
