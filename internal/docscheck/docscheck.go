// Package docscheck checks the repository's Markdown against the code, so
// that the documentation cannot drift from it unseen:
//
//   - every command line in code — `go run ./cmd/X …`, a built binary
//     `./X …` or `batchsampler SUB …` — names a command (and subcommand)
//     that exists and only flags of its flag set;
//   - every `make T` names a target of the Makefile;
//   - every repository path named (configs/…, results/…, scripts/…, a
//     package directory) exists, ALL-CAPS and <…> placeholders matching
//     anything;
//   - every relative link resolves, and so does its #anchor (GitHub's
//     heading slugs).
//
// A word that looks like a repository path but names something else (a
// folder of another project, a file of an example error message) is
// declared in the document by an HTML comment, which GitHub does not show:
//
//	<!-- docscheck: not-a-path data/downstream configs/x.yaml -->
//
// Parse reads one Markdown file into what it names; a Checker checks a set
// of files. The flag sets come from the commands themselves: a Checker asks
// its Help function, which the test implements by running
// `go run ./cmd/NAME [SUB] -h` (ParseHelp reads that output).
package docscheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// A Problem is one thing a document names that does not exist.
type Problem struct {
	File string // relative to the checker's root
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// A Command is one command line found in a document's code.
type Command struct {
	Line int
	Name string // the directory under cmd/: "train", "batchsampler", ...
	// Sub is the first positional argument (a subcommand candidate; only
	// checked for commands that have subcommands).
	Sub string
	// Flags are the flag names used, without dashes or values.
	Flags []string
	Text  string // the command line as written
}

// A Ref is something a document names at a line: a make target, a path, a
// link destination.
type Ref struct {
	Line int
	Name string
}

// Doc is what one Markdown file names.
type Doc struct {
	Commands []Command
	Makes    []Ref // make targets
	Paths    []Ref // repository paths (relative to the root, maybe with wildcards)
	Links    []Ref // link destinations as written
	// Anchors are the GitHub slugs of the document's headings.
	Anchors map[string]bool
	// NotPaths are the words declared by "docscheck: not-a-path" comments.
	NotPaths map[string]bool
}

// Names are what Parse needs to know of the repository.
type Names struct {
	// Commands are the command names, the directories under cmd/.
	Commands []string
	// Binaries are the commands with subcommands: a bare "NAME SUB" in code
	// is taken as a run of the built binary only for them.
	Binaries []string
	// Tops are the repository's top-level entries: a path is taken as a
	// repository path when its first element is one of them.
	Tops []string
}

// Parse reads a Markdown document.
func Parse(src []byte, names Names) (*Doc, error) {
	md := goldmark.New(goldmark.WithExtensions(extension.Table))
	root := md.Parser().Parse(text.NewReader(src))
	d := &Doc{Anchors: map[string]bool{}, NotPaths: map[string]bool{}}
	lineOf := lineIndex(src)
	slugs := map[string]int{}
	p := &parser{d: d, Names: names}
	err := ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			s := Slug(inlineText(n, src))
			if k := slugs[s]; k > 0 {
				d.Anchors[fmt.Sprintf("%s-%d", s, k)] = true
			} else {
				d.Anchors[s] = true
			}
			slugs[s]++
		case *ast.FencedCodeBlock:
			switch string(n.Language(src)) {
			case "", "sh", "bash", "shell", "console", "text":
				lines := n.Lines()
				for i := 0; i < lines.Len(); i++ {
					seg := lines.At(i)
					p.code(string(seg.Value(src)), lineOf(seg.Start), true)
				}
			}
			return ast.WalkSkipChildren, nil
		case *ast.CodeBlock:
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				p.code(string(seg.Value(src)), lineOf(seg.Start), true)
			}
			return ast.WalkSkipChildren, nil
		case *ast.CodeSpan:
			p.code(inlineText(n, src), lineOf(firstPos(n)), false)
			return ast.WalkSkipChildren, nil
		case *ast.Link:
			d.Links = append(d.Links, Ref{lineOf(firstPos(n)), string(n.Destination)})
		case *ast.Image:
			d.Links = append(d.Links, Ref{lineOf(firstPos(n)), string(n.Destination)})
		case *ast.Text:
			p.prose(string(n.Segment.Value(src)), lineOf(n.Segment.Start))
		case *ast.HTMLBlock:
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				p.directive(string(seg.Value(src)))
			}
		case *ast.RawHTML:
			for i := 0; i < n.Segments.Len(); i++ {
				seg := n.Segments.At(i)
				p.directive(string(seg.Value(src)))
			}
		}
		return ast.WalkContinue, nil
	})
	return d, err
}

// lineIndex returns a function from a byte offset of src to its 1-based
// line (0 for an unknown offset).
func lineIndex(src []byte) func(int) int {
	var starts []int
	starts = append(starts, 0)
	for i, b := range src {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return func(off int) int {
		if off < 0 {
			return 0
		}
		return sort.Search(len(starts), func(i int) bool { return starts[i] > off })
	}
}

// firstPos is the source offset of n or of its first descendant that has one.
func firstPos(n ast.Node) int {
	if t, ok := n.(*ast.Text); ok {
		return t.Segment.Start
	}
	if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
		return n.Lines().At(0).Start
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if p := firstPos(c); p >= 0 {
			return p
		}
	}
	return -1
}

// inlineText is the text of n's inline descendants, as rendered (code
// spans without their backticks, links by their text).
func inlineText(n ast.Node, src []byte) string {
	var b strings.Builder
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				b.Write(c.Segment.Value(src))
				if c.SoftLineBreak() || c.HardLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(c.Value)
			default:
				walk(c)
			}
		}
	}
	walk(n)
	return b.String()
}

// Slug is GitHub's anchor for a heading's text: lower case, letters,
// digits, marks, '-' and '_' kept, spaces turned into '-', everything else
// dropped.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

type parser struct {
	d *Doc
	Names
}

var notAPath = regexp.MustCompile(`docscheck:\s*not-a-path\s+(.*?)\s*(?:-->|$)`)

// directive reads a "docscheck: not-a-path WORD..." comment.
func (p *parser) directive(html string) {
	if m := notAPath.FindStringSubmatch(html); m != nil {
		for _, w := range strings.Fields(m[1]) {
			p.d.NotPaths[w] = true
		}
	}
}

// separators end one command of a shell line and may start another.
var separators = map[string]bool{"&&": true, "||": true, ";": true, "|": true, "&": true, "(": true, ")": true}

// code reads one line of shell (a code block's line or a code span).
func (p *parser) code(line string, n int, block bool) {
	p.paths(line, n)
	toks := Tokenize(line)
	if block {
		if i := slices.IndexFunc(toks, func(t string) bool { return strings.HasPrefix(t, "#") }); i >= 0 {
			toks = toks[:i]
		}
	}
	for len(toks) > 0 {
		i := slices.IndexFunc(toks, func(t string) bool { return separators[t] })
		seg := toks
		if i >= 0 {
			seg, toks = toks[:i], toks[i+1:]
		} else {
			toks = nil
		}
		p.segment(seg, n, line)
	}
}

// segment finds the commands of one separator-free run of tokens.
func (p *parser) segment(toks []string, n int, line string) {
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t == "go" && i+1 < len(toks) && toks[i+1] == "run":
			// go run [go flags] ./cmd/X args...
			for j := i + 2; j < len(toks); j++ {
				if name, ok := strings.CutPrefix(strings.TrimSuffix(toks[j], "/"), "./cmd/"); ok {
					p.command(name, toks[j+1:], n, line)
					return
				}
				if !strings.HasPrefix(toks[j], "-") {
					return
				}
			}
			return
		case t == "go" && i+1 < len(toks) && slices.Contains([]string{"test", "build", "vet"}, toks[i+1]):
			for _, a := range toks[i+2:] {
				if pkg, ok := strings.CutPrefix(a, "./"); ok && pkg != "..." && !strings.HasPrefix(pkg, ".") {
					p.d.Paths = append(p.d.Paths, Ref{n, strings.TrimSuffix(strings.TrimSuffix(pkg, "/..."), "/")})
				}
			}
			return
		case t == "make":
			for _, a := range toks[i+1:] {
				if strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
					continue
				}
				p.d.Makes = append(p.d.Makes, Ref{n, a})
			}
			return
		case strings.HasPrefix(t, "./") && slices.Contains(p.Commands, t[2:]):
			p.command(t[2:], toks[i+1:], n, line)
			return
		case slices.Contains(p.Binaries, t) && i+1 < len(toks) && !strings.HasPrefix(toks[i+1], "-") && (i == 0 || isPrefixWord(toks[:i])):
			// a binary on the PATH followed by a subcommand: "batchsampler graph ..."
			p.command(t, toks[i+1:], n, line)
			return
		}
	}
}

// isPrefixWord says whether the tokens before a bare command name are only
// environment assignments or wrappers (nice, time), so that the name is the
// command run and not an argument.
func isPrefixWord(toks []string) bool {
	for _, t := range toks {
		if !strings.Contains(t, "=") && !slices.Contains([]string{"nice", "-n", "time", "/usr/bin/time", "-v", "exec"}, t) && !isNumber(t) {
			return false
		}
	}
	return true
}

func isNumber(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// flagToken matches a flag as written, possibly wrapped in the brackets and
// ellipses of a usage line: "-set", "[-out", "--x=1".
var (
	flagToken = regexp.MustCompile(`^[\[(]*--?([A-Za-z][A-Za-z0-9_.-]*)`)
	subWord   = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

func (p *parser) command(name string, args []string, n int, line string) {
	c := Command{Line: n, Name: name, Text: strings.TrimSpace(line)}
	for i, a := range args {
		if m := flagToken.FindStringSubmatch(a); m != nil {
			c.Flags = append(c.Flags, strings.TrimRight(m[1], ".-"))
			continue
		}
		if i == 0 && subWord.MatchString(a) {
			c.Sub = a
		}
	}
	p.d.Commands = append(p.d.Commands, c)
}

// pathToken finds repository-looking paths in code: words whose first
// element is followed by a slash.
var pathToken = regexp.MustCompile(`(?:^|[\s` + "`" + `'"(\[=:,])((?:\./)?[A-Za-z_][A-Za-z0-9_.-]*/[^\s` + "`" + `'"()<>;|]*)`)

func (p *parser) paths(s string, n int) {
	for _, m := range pathToken.FindAllStringSubmatch(s, -1) {
		if r, ok := p.repoPath(m[1]); ok {
			p.d.Paths = append(p.d.Paths, Ref{n, r})
		}
	}
}

// proseRoots are the top-level directories whose paths are checked in
// prose too (elsewhere only in code).
var proseRoots = []string{"configs", "results", "scripts", "docs"}

// prose reads a text run outside code: only paths under proseRoots.
func (p *parser) prose(s string, n int) {
	for _, m := range pathToken.FindAllStringSubmatch(s, -1) {
		first, _, _ := strings.Cut(strings.TrimPrefix(m[1], "./"), "/")
		if !slices.Contains(proseRoots, first) {
			continue
		}
		if r, ok := p.repoPath(m[1]); ok {
			p.d.Paths = append(p.d.Paths, Ref{n, r})
		}
	}
}

var (
	goIdent     = regexp.MustCompile(`/[a-z0-9_]+(\.)[A-Z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*$`)
	placeholder = regexp.MustCompile(`<[^<>/]*>|\b[A-Z][A-Z0-9_]+\b`)
	braces      = regexp.MustCompile(`\{([^{}]*)\}`)
)

// repoPath cleans a path-looking word and says whether it names a
// repository path: trailing punctuation dropped, placeholders (NAME, <id>)
// turned into wildcards.
func (p *parser) repoPath(w string) (string, bool) {
	w = strings.TrimPrefix(w, "./")
	w = strings.TrimRight(w, ".,:;!?]")
	if m := goIdent.FindStringSubmatchIndex(w); m != nil {
		w = w[:m[2]] // model/ops.Conv2D: the package model/ops
	}
	first, rest, _ := strings.Cut(w, "/")
	if !slices.Contains(p.Tops, first) || strings.Contains(rest, "…") || strings.Contains(w, "..") || strings.Contains(w, "$") {
		return "", false
	}
	return placeholder.ReplaceAllStringFunc(w, func(m string) string {
		if realNames[m] {
			return m
		}
		return "*"
	}), true
}

// realNames are upper-case words of real file names, not placeholders.
var realNames = map[string]bool{"README": true, "LICENSE": true, "SOURCES": true, "NOTICE": true}

// Tokenize splits a shell line into words: quotes group and are removed,
// backslashes escape; the operators ";", "|", "||", "&" and "&&" are words
// of their own.
func Tokenize(line string) []string {
	var toks []string
	var cur strings.Builder
	inWord := false
	var quote rune
	flush := func() {
		if inWord {
			toks = append(toks, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			inWord = true
		case unicode.IsSpace(r):
			flush()
		case r == ';' || r == '|' || r == '&':
			flush()
			op := string(r)
			if i+1 < len(rs) && rs[i+1] == r && r != ';' {
				op += string(r)
				i++
			}
			toks = append(toks, op)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return toks
}

// ParseHelp reads a command's -h output: the flags listed by Go's
// flag.PrintDefaults ("  -name type") or in a "usage:" line
// ("usage: cmd -a X [-b Y]"), and the subcommands listed under a
// "commands:" line ("  name   what it does").
func ParseHelp(out string) (flags map[string]bool, subs []string) {
	flags = map[string]bool{"h": true, "help": true}
	defLine := regexp.MustCompile(`^ {1,4}-([A-Za-z][A-Za-z0-9_.-]*)`)
	usageFlag := regexp.MustCompile(`(?:^|[\s\[(|])-([A-Za-z][A-Za-z0-9_.-]*)`)
	subLine := regexp.MustCompile(`^\s+([a-z][a-z0-9-]*)\s{2,}\S`)
	inCommands := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case defLine.MatchString(l):
			flags[defLine.FindStringSubmatch(l)[1]] = true
		case strings.HasPrefix(strings.ToLower(strings.TrimSpace(l)), "usage:"):
			for _, m := range usageFlag.FindAllStringSubmatch(l, -1) {
				flags[m[1]] = true
			}
		case strings.TrimSpace(l) == "commands:":
			inCommands = true
		case inCommands && strings.TrimSpace(l) == "":
			inCommands = false
		case inCommands && subLine.MatchString(l):
			if s := subLine.FindStringSubmatch(l)[1]; s != "help" {
				subs = append(subs, s)
			}
		}
	}
	return flags, subs
}

// MakeTargets reads the explicit targets of a Makefile.
func MakeTargets(makefile []byte) map[string]bool {
	targets := map[string]bool{}
	rule := regexp.MustCompile(`^([A-Za-z0-9_.%/-]+(?:[ \t]+[A-Za-z0-9_.%/-]+)*)[ \t]*:([^=]|$)`)
	sc := bufio.NewScanner(bytes.NewReader(makefile))
	for sc.Scan() {
		m := rule.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		for _, t := range strings.Fields(m[1]) {
			if !strings.HasPrefix(t, ".") {
				targets[t] = true
			}
		}
	}
	return targets
}

// A Checker checks documents of the repository at Root.
type Checker struct {
	Root string
	// Help returns the flags of a command (sub "") or of one of its
	// subcommands, and the command's subcommands; an error when the command
	// does not exist.
	Help func(cmd, sub string) (flags map[string]bool, subs []string, err error)

	docs    map[string]*Doc
	targets map[string]bool
	names   Names
}

func (c *Checker) init() error {
	if c.docs != nil {
		return nil
	}
	c.docs = map[string]*Doc{}
	mk, err := os.ReadFile(filepath.Join(c.Root, "Makefile"))
	if err != nil {
		return err
	}
	c.targets = MakeTargets(mk)
	ents, err := os.ReadDir(filepath.Join(c.Root, "cmd"))
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		c.names.Commands = append(c.names.Commands, e.Name())
		if _, subs, err := c.Help(e.Name(), ""); err == nil && len(subs) > 0 {
			c.names.Binaries = append(c.names.Binaries, e.Name())
		}
	}
	tops, err := trackedTops(c.Root)
	if err != nil {
		return err
	}
	c.names.Tops = append(c.names.Tops, tops...)
	return nil
}

// trackedTops lists the repository's top-level entries: those git tracks
// (so that ignored outputs such as runs/ or bin/ are not taken for
// sources), or, without git, the directory's entries but hidden ones and
// runs/ (run directories, not sources).
func trackedTops(root string) ([]string, error) {
	if out, err := exec.Command("git", "-C", root, "ls-files").Output(); err == nil && len(out) > 0 {
		var tops []string
		for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			first, _, _ := strings.Cut(f, "/")
			if !strings.HasPrefix(first, ".") && !slices.Contains(tops, first) {
				tops = append(tops, first)
			}
		}
		return tops, nil
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var tops []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") && e.Name() != "runs" {
			tops = append(tops, e.Name())
		}
	}
	return tops, nil
}

// doc parses (once) the document at rel, a slash path relative to Root.
func (c *Checker) doc(rel string) (*Doc, error) {
	if d, ok := c.docs[rel]; ok {
		return d, nil
	}
	src, err := os.ReadFile(filepath.Join(c.Root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	d, err := Parse(src, c.names)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	c.docs[rel] = d
	return d, nil
}

// Check checks the documents at files (slash paths relative to Root) and
// returns every problem found, in file and line order.
func (c *Checker) Check(files []string) ([]Problem, error) {
	if err := c.init(); err != nil {
		return nil, err
	}
	var probs []Problem
	for _, f := range files {
		d, err := c.doc(f)
		if err != nil {
			return nil, err
		}
		add := func(line int, format string, args ...any) {
			probs = append(probs, Problem{f, line, fmt.Sprintf(format, args...)})
		}
		for _, cmd := range d.Commands {
			c.checkCommand(cmd, add)
		}
		for _, m := range d.Makes {
			if !c.hasTarget(m.Name) {
				add(m.Line, "make %s: no such target in the Makefile", m.Name)
			}
		}
		for _, p := range d.Paths {
			if !d.NotPaths[p.Name] && !c.exists(p.Name) {
				add(p.Line, "%s: no such file or directory in the repository", p.Name)
			}
		}
		for _, l := range d.Links {
			if msg := c.checkLink(f, d, l.Name); msg != "" {
				add(l.Line, "link %s: %s", l.Name, msg)
			}
		}
	}
	slices.SortStableFunc(probs, func(a, b Problem) int {
		if a.File != b.File {
			return strings.Compare(a.File, b.File)
		}
		return a.Line - b.Line
	})
	return probs, nil
}

func (c *Checker) checkCommand(cmd Command, add func(int, string, ...any)) {
	flags, subs, err := c.Help(cmd.Name, "")
	if err != nil {
		add(cmd.Line, "%s: no command cmd/%s (%v)", cmd.Text, cmd.Name, err)
		return
	}
	where := "cmd/" + cmd.Name
	if len(subs) > 0 && cmd.Sub != "" {
		if !slices.Contains(subs, cmd.Sub) {
			add(cmd.Line, "%s: %s has no subcommand %q (it has %s)", cmd.Text, where, cmd.Sub, strings.Join(subs, ", "))
			return
		}
		if flags, _, err = c.Help(cmd.Name, cmd.Sub); err != nil {
			add(cmd.Line, "%s: %s %s: %v", cmd.Text, where, cmd.Sub, err)
			return
		}
		where += " " + cmd.Sub
	}
	for _, f := range cmd.Flags {
		if !flags[f] {
			add(cmd.Line, "%s: -%s is not a flag of %s", cmd.Text, f, where)
		}
	}
}

func (c *Checker) hasTarget(t string) bool {
	if c.targets[t] {
		return true
	}
	if !placeholder.MatchString(t) {
		return false
	}
	pat := placeholder.ReplaceAllString(t, "*")
	for k := range c.targets {
		if ok, _ := path.Match(pat, k); ok {
			return true
		}
	}
	return false
}

// exists says whether a repository path (maybe with wildcards and {a,b}
// alternatives) names at least one file or directory.
func (c *Checker) exists(p string) bool {
	for _, alt := range expandBraces(p) {
		ms, _ := filepath.Glob(filepath.Join(c.Root, filepath.FromSlash(alt)))
		if len(ms) == 0 {
			return false
		}
	}
	return true
}

func expandBraces(p string) []string {
	m := braces.FindStringSubmatchIndex(p)
	if m == nil {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[m[2]:m[3]], ",") {
		out = append(out, expandBraces(p[:m[0]]+alt+p[m[1]:])...)
	}
	return out
}

// checkLink returns what is wrong with a link of document from, "" if
// nothing.
func (c *Checker) checkLink(from string, d *Doc, dest string) string {
	if dest == "" {
		return "empty destination"
	}
	if strings.Contains(dest, "://") || strings.HasPrefix(dest, "mailto:") {
		return ""
	}
	target, anchor, _ := strings.Cut(dest, "#")
	td := d
	if target != "" {
		rel := path.Clean(path.Join(path.Dir(from), target))
		if strings.HasPrefix(rel, "../") {
			return "points outside the repository"
		}
		st, err := os.Stat(filepath.Join(c.Root, filepath.FromSlash(rel)))
		if err != nil {
			return "no such file or directory"
		}
		if anchor == "" {
			return ""
		}
		if st.IsDir() || !strings.HasSuffix(rel, ".md") {
			return "an anchor into a file that is not Markdown"
		}
		if td, err = c.doc(rel); err != nil {
			return err.Error()
		}
	}
	if anchor != "" && !td.Anchors[anchor] {
		return fmt.Sprintf("no heading with the anchor #%s", anchor)
	}
	return ""
}
