package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultRoot(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("HOME", filepath.Join(tmp, "home"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "cache"))
	t.Setenv("LocalAppData", filepath.Join(tmp, "appdata"))
	wd := filepath.Join(tmp, "checkout")
	if err := os.MkdirAll(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	user, err := UserRoot()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(user, tmp) || filepath.Base(user) != "data" || filepath.Base(filepath.Dir(user)) != "batchsampler" {
		t.Fatalf("UserRoot %s: want .../batchsampler/data under %s", user, tmp)
	}
	check := func(want, wantSource string) {
		t.Helper()
		root, source := DefaultRootSource()
		if root != want || !strings.Contains(source, wantSource) || DefaultRoot() != want {
			t.Fatalf("DefaultRootSource() = %s (%s), want %s (%s)", root, source, want, wantSource)
		}
	}
	// Neither $BATCHSAMPLER_DATA nor ../shared/data: the user cache directory.
	t.Setenv(RootEnv, "")
	check(user, "user cache")
	// ../shared/data, when it exists, comes before it.
	if err := os.MkdirAll(filepath.Join(tmp, "shared", "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	check(SharedRoot, "shared")
	// $BATCHSAMPLER_DATA comes first.
	env := filepath.Join(tmp, "env")
	t.Setenv(RootEnv, env)
	check(env, "$"+RootEnv)
}

func TestDataPaths(t *testing.T) {
	if got := TUPath("MUTAG"); got != "tu/MUTAG" {
		t.Errorf("TUPath = %s", got)
	}
	for name, want := range map[string]string{"cifar-10": "cifar-10-batches-bin", "CIFAR-100": "cifar-100-binary"} {
		if got, err := CIFARPath(name); err != nil || got != want {
			t.Errorf("CIFARPath(%s) = %s, %v; want %s", name, got, err, want)
		}
	}
	if _, err := CIFARPath("cifar-1000"); err == nil {
		t.Error("CIFARPath(cifar-1000): no error")
	}
	for _, n := range CIFARNames {
		if _, err := CIFARPath(n); err != nil {
			t.Error(err)
		}
	}
}
