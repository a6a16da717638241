// Package site builds and serves the teaching page of cmd/samplerdemo: the
// page's files (assets/, embedded), the WebAssembly build of
// cmd/samplerdemo/wasm and the Go runtime's wasm_exec.js, written into one
// folder that works from any static host and from file://.
//
// The wasm binary is built when the folder is written (Export), by the Go
// toolchain that runs the command (GOOS=js GOARCH=wasm go build), rather
// than committed: it is then always the code of the checkout, sampler
// included, and wasm_exec.js always matches the toolchain that built it.
// The cost is a few seconds (Go's build cache makes rebuilds cheap) and the
// need for the Go toolchain, which `go run ./cmd/samplerdemo` has anyway.
//
// Browsers refuse fetch() of a file:// URL, so the folder holds the binary
// twice: main.wasm, which the page fetches over http(s), and main.wasm.js,
// the same bytes in base64 in a script, which the page loads with a
// <script> tag when it is opened from the disk.
package site

import (
	"bytes"
	"context"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

//go:embed assets
var assets embed.FS

// Module is the import path of this module; WasmPackage is the package
// built to WebAssembly.
const (
	Module      = "github.com/batchsampler-go/batchsampler"
	WasmPackage = Module + "/cmd/samplerdemo/wasm"
)

// Files of an exported folder besides the assets.
const (
	FileWasm     = "main.wasm"
	FileWasmJS   = "main.wasm.js"
	FileExec     = "wasm_exec.js"
	FileBuild    = "build.js"
	wasmJSPrefix = "window.BSDEMO_WASM_BASE64 = \""
)

// BuildInfo is build.js (window.BSDEMO_BUILD): what the page says about its
// own build; a script rather than JSON so that file:// can load it too.
type BuildInfo struct {
	GoVersion string  `json:"goVersion"`
	WasmBytes int64   `json:"wasmBytes"`
	BuildSecs float64 `json:"buildSeconds"`
}

// GoTool returns the go command: the one on PATH, else the one of the Go
// installation that built this program.
func GoTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no go command on PATH nor at %s: the page's WebAssembly is built with the Go toolchain", p)
	}
	return p, nil
}

// ModuleDir returns the root of this module's checkout containing dir (the
// directory of its go.mod), or an error saying where to run from.
func ModuleDir(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			first, _, _ := strings.Cut(string(b), "\n")
			if strings.TrimSpace(strings.TrimPrefix(first, "module")) == Module {
				return d, nil
			}
			return "", fmt.Errorf("%s/go.mod is module %q, not %s: run samplerdemo -serve/-export inside a checkout of batchsampler-go (it builds the page's WebAssembly from it)", d, strings.TrimSpace(strings.TrimPrefix(first, "module")), Module)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod above %s: run samplerdemo -serve/-export inside a checkout of batchsampler-go (it builds the page's WebAssembly from it)", dir)
		}
		d = parent
	}
}

// BuildWasm builds the page's WebAssembly binary into out (a file) from the
// module checkout at moduleDir, and returns wasm_exec.js of the same
// toolchain.
func BuildWasm(ctx context.Context, moduleDir, out string) (execJS []byte, err error) {
	gotool, err := GoTool()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, gotool, "build", "-trimpath", "-ldflags=-s -w", "-o", out, WasmPackage)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("GOOS=js GOARCH=wasm go build %s: %w\n%s", WasmPackage, err, stderr.String())
	}
	root, err := exec.CommandContext(ctx, gotool, "env", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOROOT: %w", err)
	}
	goroot := strings.TrimSpace(string(root))
	for _, p := range []string{"lib/wasm/wasm_exec.js", "misc/wasm/wasm_exec.js"} { // Go ≥ 1.24, before
		if b, err := os.ReadFile(filepath.Join(goroot, p)); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("no wasm_exec.js under %s (lib/wasm or misc/wasm)", goroot)
}

// Export writes the page into dir (created if needed): the assets, the
// WebAssembly binary built from the checkout at moduleDir, its base64
// script, wasm_exec.js and build.js. It returns the build's facts.
func Export(ctx context.Context, moduleDir, dir string) (BuildInfo, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return BuildInfo{}, fmt.Errorf("-export %s: %w", dir, err)
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return BuildInfo{}, err
	}
	if err := fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, p), b, 0o644)
	}); err != nil {
		return BuildInfo{}, fmt.Errorf("write the page into %s: %w", dir, err)
	}
	t0 := time.Now()
	wasmPath := filepath.Join(dir, FileWasm)
	execJS, err := BuildWasm(ctx, moduleDir, wasmPath)
	if err != nil {
		return BuildInfo{}, err
	}
	info := BuildInfo{GoVersion: runtime.Version(), BuildSecs: time.Since(t0).Seconds()}
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		return BuildInfo{}, err
	}
	info.WasmBytes = int64(len(wasm))
	var js bytes.Buffer
	js.WriteString("// The WebAssembly of the page in base64, for file:// where fetch() is refused (see index.html).\n")
	js.WriteString(wasmJSPrefix)
	js.WriteString(base64.StdEncoding.EncodeToString(wasm))
	js.WriteString("\";\n")
	bi, err := json.Marshal(info)
	if err != nil {
		return BuildInfo{}, err
	}
	bi = append(append([]byte("window.BSDEMO_BUILD = "), bi...), ';')
	for _, f := range []struct {
		name string
		b    []byte
	}{{FileWasmJS, js.Bytes()}, {FileExec, execJS}, {FileBuild, append(bi, '\n')}} {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.b, 0o644); err != nil {
			return BuildInfo{}, fmt.Errorf("write %s: %w", f.name, err)
		}
	}
	return info, nil
}

// Files lists the files Export writes, sorted.
func Files() ([]string, error) {
	var out []string
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, strings.TrimPrefix(p, "assets/"))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	out = append(out, FileWasm, FileWasmJS, FileExec, FileBuild)
	if len(out) < 5 {
		return nil, errors.New("site: no assets embedded")
	}
	return out, nil
}
