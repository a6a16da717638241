package train

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

var typeOfConfig = reflect.TypeOf(Config{})

// checkKeys walks a YAML node alongside the Go type it will be decoded into
// and reports the first unknown key or badly typed scalar with its full key
// path (e.g. "samplers[1].alpha.start"), its line, and what is allowed.
func checkKeys(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Tag == "!!null" {
		return nil
	}
	name := path
	if name == "" {
		name = "the top level"
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind == yaml.ScalarNode && reflect.PointerTo(t).Implements(reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()) {
			return nil // the type decodes scalars itself (e.g. alpha: 0.2)
		}
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s (line %d): expected a mapping of keys %s", name, n.Line, strings.Join(yamlKeys(t), ", "))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := fieldByTag(t, k.Value)
			child := k.Value
			if path != "" {
				child = path + "." + k.Value
			}
			if !ok {
				return fmt.Errorf("%s (line %d): unknown key; allowed keys under %s: %s", child, k.Line, name, strings.Join(yamlKeys(t), ", "))
			}
			if err := checkKeys(v, f.Type, child); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("%s (line %d): expected a list, got %q", name, n.Line, n.Value)
		}
		for i, c := range n.Content {
			if err := checkKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		if n.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s (line %d): expected an integer", name, n.Line)
		}
		if _, err := strconv.ParseInt(n.Value, 0, 64); err != nil {
			return fmt.Errorf("%s (line %d): expected an integer, got %q", name, n.Line, n.Value)
		}
	case reflect.Uint64, reflect.Uint, reflect.Uint32:
		if n.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s (line %d): expected a non-negative integer", name, n.Line)
		}
		if _, err := strconv.ParseUint(n.Value, 0, 64); err != nil {
			return fmt.Errorf("%s (line %d): expected a non-negative integer, got %q", name, n.Line, n.Value)
		}
	case reflect.Float64, reflect.Float32:
		if n.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s (line %d): expected a number", name, n.Line)
		}
		if _, err := strconv.ParseFloat(n.Value, 64); err != nil {
			return fmt.Errorf("%s (line %d): expected a number, got %q", name, n.Line, n.Value)
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || !slices.Contains([]string{"true", "false", "True", "False", "TRUE", "FALSE"}, n.Value) {
			return fmt.Errorf("%s (line %d): expected true or false, got %q", name, n.Line, n.Value)
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s (line %d): expected a string", name, n.Line)
		}
	}
	return nil
}

func yamlTag(f reflect.StructField) string {
	tag := f.Tag.Get("yaml")
	name, _, _ := strings.Cut(tag, ",")
	return name
}

func fieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if name := yamlTag(f); name != "" && name != "-" && name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func yamlKeys(t reflect.Type) []string {
	var ks []string
	for i := 0; i < t.NumField(); i++ {
		if name := yamlTag(t.Field(i)); name != "" && name != "-" {
			ks = append(ks, name)
		}
	}
	slices.Sort(ks)
	return ks
}
