package docscheck_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchsampler-go/batchsampler/internal/docscheck"
)

// root is the module root, two levels above this package.
const root = "../.."

// docFiles are the documents whose commands, paths and links must hold:
// the README, every page of docs/ and the READMEs beside the recorded runs
// and the Python client.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "results/README.md", "clients/python/README.md"}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no docs/*.md found")
	}
	for _, p := range pages {
		files = append(files, "docs/"+filepath.Base(p))
	}
	return files
}

var (
	helpMu    sync.Mutex
	helpCache = map[string]helpOut{}
)

type helpOut struct {
	flags map[string]bool
	subs  []string
	err   error
}

// help runs `go run ./cmd/NAME [SUB] -h` and reads the command's flags and
// subcommands; results are cached. go run caches the executables it links
// (Go 1.24 and later), so after the first run of the test, and after a
// user's own go run of the same command, this costs no link.
func help(t *testing.T) func(cmd, sub string) (map[string]bool, []string, error) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goTool); err != nil {
			t.Skip("no go command to run the commands with")
		}
	}
	return func(cmd, sub string) (map[string]bool, []string, error) {
		key := cmd + " " + sub
		helpMu.Lock()
		defer helpMu.Unlock()
		if h, ok := helpCache[key]; ok {
			return h.flags, h.subs, h.err
		}
		var h helpOut
		if st, err := os.Stat(filepath.Join(root, "cmd", cmd)); err != nil || !st.IsDir() {
			h.err = errors.New("no such directory")
		} else {
			args := []string{"run", "./cmd/" + cmd}
			if sub != "" {
				args = append(args, sub)
			}
			args = append(args, "-h")
			// -h exits 0 or 2 depending on the command (go run then says
			// "exit status 2"): only a failure to build or a hang is an error.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			c := exec.CommandContext(ctx, goTool, args...)
			c.Dir = root
			out, err := c.CombinedOutput()
			switch {
			case ctx.Err() != nil:
				h.err = fmt.Errorf("go %s: %v", strings.Join(args, " "), ctx.Err())
			case err != nil && !strings.Contains(string(out), "exit status"):
				h.err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
			default:
				h.flags, h.subs = docscheck.ParseHelp(string(out))
			}
			cancel()
		}
		helpCache[key] = h
		return h.flags, h.subs, h.err
	}
}

// TestDocs checks every command, make target, path and link of the
// documentation against the code as it stands.
func TestDocs(t *testing.T) {
	c := &docscheck.Checker{Root: root, Help: help(t)}
	probs, err := c.Check(docFiles(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Error(p)
	}
}

// TestDocsNameWhatTheyCheck guards the check itself: the README must hold
// commands, flags, make targets, paths and links for TestDocs to check, so
// that a parser that silently found nothing cannot pass.
func TestDocsNameWhatTheyCheck(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := docscheck.Parse(src, docscheck.Names{Commands: []string{"train", "table", "batchsampler"},
		Binaries: []string{"batchsampler"}, Tops: []string{"configs", "results", "docs", "train", "cmd"}})
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, c := range d.Commands {
		if c.Name == "train" {
			flags = append(flags, c.Flags...)
		}
	}
	for _, want := range []string{"out", "config", "evaluate", "embed", "set", "o"} {
		if !slices.Contains(flags, want) {
			t.Errorf("README: no `go run ./cmd/train -%s` found (flags found: %v)", want, flags)
		}
	}
	if !slices.ContainsFunc(d.Makes, func(r docscheck.Ref) bool { return r.Name == "test" }) {
		t.Errorf("README: no `make test` found in %v", d.Makes)
	}
	if !slices.ContainsFunc(d.Paths, func(r docscheck.Ref) bool { return r.Name == "configs/graphcl-mutag.yaml" }) {
		t.Errorf("README: the path configs/graphcl-mutag.yaml not found in %v", d.Paths)
	}
	if !slices.ContainsFunc(d.Links, func(r docscheck.Ref) bool { return r.Name == "docs/results.md" }) {
		t.Errorf("README: no link to docs/results.md found")
	}
	if !d.Anchors["the-answer"] {
		t.Errorf("README: no anchor #the-answer among %v", slices.Sorted(maps.Keys(d.Anchors)))
	}
}

// TestRenamedFlagIsCaught renames a flag of cmd/train (-config, as if the
// code now called it -cfg) and expects the documentation to fail the check
// on every line that uses it.
func TestRenamedFlagIsCaught(t *testing.T) {
	real := help(t)
	renamed := func(cmd, sub string) (map[string]bool, []string, error) {
		flags, subs, err := real(cmd, sub)
		if cmd == "train" && err == nil {
			flags = maps.Clone(flags)
			delete(flags, "config")
			flags["cfg"] = true
		}
		return flags, subs, err
	}
	probs, err := (&docscheck.Checker{Root: root, Help: renamed}).Check([]string{"README.md"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range probs {
		if strings.Contains(p.Msg, "-config is not a flag of cmd/train") {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("renaming cmd/train's -config went unnoticed; problems: %v", probs)
	}
}

// TestFixture checks testdata/bogus.md, whose every wrong line must be
// reported once, and whose right lines not at all.
func TestFixture(t *testing.T) {
	c := &docscheck.Checker{Root: root, Help: help(t)}
	probs, err := c.Check([]string{"internal/docscheck/testdata/bogus.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`:5: go run ./cmd/train -confg configs/graphcl-mutag.yaml: -confg is not a flag of cmd/train`,
		`:9: ./batchsampler graph -emb e.npy -epochs 3 -out g.npy: -epochs is not a flag of cmd/batchsampler graph`,
		`:10: batchsampler frobnicate -x 1: cmd/batchsampler has no subcommand "frobnicate"`,
		`:11: go run ./cmd/nosuch -h: no command cmd/nosuch (no such directory)`,
		`:11: cmd/nosuch: no such file or directory in the repository`,
		`:12: go run ./cmd/download -dataset MUTAG -mirror x: -mirror is not a flag of cmd/download`,
		`:16: make no-such-target: no such target in the Makefile`,
		`:20: configs/no-such-config.yaml: no such file or directory in the repository`,
		`:21: results/no-such-run: no such file or directory in the repository`,
		`:25: link no-such-page.md: no such file or directory`,
		`:26: link #no-such-heading: no heading with the anchor #no-such-heading`,
		`:27: link ../../../README.md#no-such-heading: no heading with the anchor #no-such-heading`,
	}
	var got []string
	for _, p := range probs {
		got = append(got, p.String())
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
			t.Errorf("not reported: %s", w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}

func TestParseHelp(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		flags     []string
		subs      []string
	}{
		{"PrintDefaults", "Usage of train:\n  -config string\n    \tYAML config\n  -o FILE.npy\n    \tthe output\n  -plan\n    \tlist\n",
			[]string{"config", "h", "help", "o", "plan"}, nil},
		{"usage line", "usage: download -dataset NAME [-root DIR] [-sha256 HEX|any] [-keep-zip]\n\nFetches -x from the text.\n",
			[]string{"dataset", "h", "help", "keep-zip", "root", "sha256"}, nil},
		{"subcommands", "usage: batchsampler <command> [flags]\n\ncommands:\n  graph    build a graph\n  serve    serve batches\n  help     this text\n\nmore\n",
			[]string{"h", "help"}, []string{"graph", "serve"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flags, subs := docscheck.ParseHelp(tc.out)
			if got := slices.Sorted(maps.Keys(flags)); !slices.Equal(got, tc.flags) {
				t.Errorf("flags %v, want %v", got, tc.flags)
			}
			if !slices.Equal(subs, tc.subs) {
				t.Errorf("subcommands %v, want %v", subs, tc.subs)
			}
		})
	}
}

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`go run ./cmd/train -set 'samplers=[{kind: uniform}]' -out x`, []string{"go", "run", "./cmd/train", "-set", "samplers=[{kind: uniform}]", "-out", "x"}},
		{`A=1 make x && ./b -y "a b"; c | d`, []string{"A=1", "make", "x", "&&", "./b", "-y", "a b", ";", "c", "|", "d"}},
		{`-bench 'GraphBuild\|Batch4096' a\ b`, []string{"-bench", `GraphBuild\|Batch4096`, "a b"}},
	} {
		if got := docscheck.Tokenize(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"The answer":                                   "the-answer",
		"MVGRL (method: mvgrl)":                        "mvgrl-method-mvgrl",
		"Sweeps: t and M × α on IMDB-BINARY":           "sweeps-t-and-m--α-on-imdb-binary",
		"Vision speed (2 cores, go test -bench)":       "vision-speed-2-cores-go-test--bench",
		"MVGRL on dense graphs: model.diffusion.top_k": "mvgrl-on-dense-graphs-modeldiffusiontop_k",
	} {
		if got := docscheck.Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// Example shows what Parse finds in a few lines of Markdown.
func Example() {
	md := "Train with `go run ./cmd/train -config configs/graphcl-mutag.yaml -out runs/m`,\n" +
		"then `make test`; see [the results](docs/results.md#graphs).\n"
	d, err := docscheck.Parse([]byte(md), docscheck.Names{Commands: []string{"train"}, Tops: []string{"configs", "docs"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range d.Commands {
		fmt.Println("command", c.Name, c.Flags)
	}
	fmt.Println("make", d.Makes[0].Name)
	fmt.Println("path", d.Paths[0].Name)
	fmt.Println("link", d.Links[0].Name)
	// Output:
	// command train [config out]
	// make test
	// path configs/graphcl-mutag.yaml
	// link docs/results.md#graphs
}
