package yamlcfg

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Error is a problem at one key: an unknown key, or a value of the wrong
// type. It says where the key is, in the document or in an override:
//
//	configs/x.yaml: train.bach_size (line 2): unknown key; allowed keys under train: batch_size, epochs
//	configs/x.yaml: train.batch_size (line 4): expected an integer, got "abc"
//	-set train.bach_size=5: unknown key train.bach_size; allowed keys under train: batch_size, epochs
//	-set train.batch_size=abc: expected an integer, got "abc"
//	-set samplers=[{kind: uniform, mm: 3}]: unknown key samplers[0].mm; allowed keys under samplers[0]: kind, m
type Error struct {
	Doc  string // the document's name ("" for an override's error, or an unnamed document)
	Set  string // the override to blame, as given ("train.batch_size=abc"); "" for the document's error
	Key  string // the key path ("samplers[1].alpha"; "" is the top level)
	Line int    // the line of Key in the document (0: unknown, or the error is an override's)
	Msg  string // what is wrong ("expected an integer, got \"abc\"")

	unknown bool     // Msg is "unknown key"
	allowed []string // the keys allowed beside an unknown key
	hint    string   // after "unknown key": " (YAML reads ...)", or ""
}

// identifier matches a key name as the configurations spell them.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// colonHint explains a key or value like "kind:uniform", which YAML reads
// as one string because a mapping's colon must be followed by a space:
// ` (YAML reads "kind:uniform" as one key: put a space after the colon,
// kind: uniform)`, or "" when s does not look like that. what is "key" or
// "value".
func colonHint(s, what string) string {
	k, v, ok := strings.Cut(s, ":")
	if !ok || v == "" || v[0] == ' ' || !identifier.MatchString(k) || strings.ContainsAny(v, " \n") {
		return ""
	}
	return fmt.Sprintf(" (YAML reads %q as one %s: put a space after the colon, %s: %s)", s, what, k, v)
}

// Allowed returns the keys allowed beside an unknown key (nil for other
// errors).
func (e *Error) Allowed() []string { return e.allowed }

func (e *Error) Error() string {
	var b strings.Builder
	key := e.Key
	if key == "" {
		key = "the top level"
	}
	if e.Set != "" {
		fmt.Fprintf(&b, "-set %s: ", e.Set)
		setKey, _, _ := strings.Cut(e.Set, "=")
		switch {
		case e.unknown:
			fmt.Fprintf(&b, "unknown key %s%s; ", key, e.hint)
			b.WriteString(allowedKeys(e.Key, e.allowed))
			return b.String()
		case e.Key != strings.TrimSpace(setKey):
			b.WriteString(key + ": ")
		}
		b.WriteString(e.Msg)
		return b.String()
	}
	b.WriteString(prefix(e.Doc))
	b.WriteString(key)
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	b.WriteString(": " + e.Msg)
	if e.unknown {
		b.WriteString(e.hint + "; " + allowedKeys(e.Key, e.allowed))
	}
	return b.String()
}

// allowedKeys is "allowed keys under train: a, b" for the siblings of key.
func allowedKeys(key string, allowed []string) string {
	parent := ""
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		parent = key[:i]
	}
	list := strings.Join(allowed, ", ")
	if len(allowed) == 0 {
		list = "none"
	}
	if parent == "" {
		return "allowed keys at the top level: " + list
	}
	return "allowed keys under " + parent + ": " + list
}

// OneOf checks that v is one of the allowed values:
//
//	sampler.walk: "jump" is not allowed; allowed values: rwr, rw, bfs, dfs
//
// An allowed "" (meaning: the default) is accepted but not listed.
func OneOf(key, v string, allowed ...string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	var shown []string
	for _, a := range allowed {
		if a != "" {
			shown = append(shown, a)
		}
	}
	return fmt.Errorf("%s: %q is not allowed; allowed values: %s", key, v, strings.Join(shown, ", "))
}

// Positive checks that v > 0:
//
//	train.batch_size: must be a positive integer, got -5
func Positive(key string, v int) error {
	if v <= 0 {
		return fmt.Errorf("%s: must be a positive integer, got %d", key, v)
	}
	return nil
}

// Errors joins the validation errors of a configuration (nil ones are
// skipped) into one, nil if there are none:
//
//	invalid config:
//	  train.epochs: must be a positive integer, got 0
//	  seeds: need at least one seed
//
// The result unwraps to the errors (errors.Is and errors.As see them).
func Errors(errs []error) error {
	var kept []error
	for _, err := range errs {
		if err != nil {
			kept = append(kept, err)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return invalid(kept)
}

type invalid []error

func (e invalid) Error() string {
	var b strings.Builder
	b.WriteString("invalid config:")
	for _, err := range e {
		b.WriteString("\n  ")
		b.WriteString(strings.ReplaceAll(err.Error(), "\n", "\n    "))
	}
	return b.String()
}

func (e invalid) Unwrap() []error { return e }
