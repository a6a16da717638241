package train_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/train"
)

// allowedMethods returns the list of methods the error of a config with an
// unknown method offers (after "allowed values: ").
func allowedMethods(t *testing.T) []string {
	t.Helper()
	_, err := train.ParseConfig([]byte(tinyGraphs), []string{"method=no-such-method"})
	if err == nil {
		t.Fatal("method no-such-method accepted")
	}
	const marker = `"no-such-method" is not allowed; allowed values: `
	_, rest, ok := strings.Cut(err.Error(), marker)
	if !ok || !strings.Contains(err.Error(), "method (-set method=no-such-method)") {
		t.Fatalf("error for an unknown method: %v", err)
	}
	rest, _, _ = strings.Cut(rest, "\n")
	return strings.Split(rest, ", ")
}

// TestAllowedMethodsFromRegistry: the allowed values in the error for an
// unknown method are the registered methods, sorted; a method registered
// from outside the package appears there with no other edit, and is gone
// once the test that registered it unregisters it.
func TestAllowedMethodsFromRegistry(t *testing.T) {
	before := allowedMethods(t)
	for _, m := range []string{"graphcl", "mocov3", "mvgrl", "simclr", "simcse"} {
		if !slices.Contains(before, m) {
			t.Errorf("allowed methods %q lack the built-in %s", before, m)
		}
	}
	const fake = "aaa-test-fake"
	t.Run("registered", func(t *testing.T) {
		train.RegisterMethod(fake, train.MethodSpec{Modalities: []string{"graph"},
			New: func(*train.Config, train.Dataset, uint64) (train.Method, error) {
				return nil, errors.New("a fake method trains nothing")
			}})
		t.Cleanup(func() { train.UnregisterMethod(fake) })
		got := allowedMethods(t)
		if !slices.IsSorted(got) {
			t.Errorf("allowed methods %q are not sorted", got)
		}
		if want := slices.Sorted(slices.Values(append(slices.Clone(before), fake))); !slices.Equal(got, want) {
			t.Errorf("allowed methods with %s registered: %q, want %q", fake, got, want)
		}
	})
	if after := allowedMethods(t); !slices.Equal(after, before) {
		t.Errorf("after the cleanup: %q, want %q (the fake method is still registered)", after, before)
	}
}
