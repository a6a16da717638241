package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// imageRoot is a data root holding one CIFAR-10 layout of 5 × 1,017
// training images (sparse files: only their sizes are read by -plan).
func imageRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "cifar10")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"} {
		fh, err := os.Create(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := fh.Truncate(1017 * 3073); err != nil {
			t.Fatal(err)
		}
		fh.Close()
	}
	return root
}

// TestImagePlan: -modality image -plan prints each dataset's settings
// beside the paper's and the cells; bad methods and datasets are refused.
func TestImagePlan(t *testing.T) {
	root := imageRoot(t)
	out, err := stdout(t, func() error {
		return run([]string{"-modality", "image", "-root", root, "-datasets", "cifar10", "-methods", "simclr,hcl", "-plan"})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| cifar10 | cifar10 | cifar10 | 5085 | 20 | CIFAR10 | resnet8 | native | 25 | 256 | 20 | 500 | 100 | 0.2→0.05 | ResNet-50, 1000 epochs, 32×32, B 256, t 100, M 500, K 100 |",
		"| cifar10/untrained | simclr | infonce/simclr(τ=0.5) | uniform | 0 | 3 |",
		"| cifar10/hcl | simclr | hcl/simclr(τ=0.5,τ⁺=0.1,β=1) | uniform, knn, batchsampler | 25 | 3 |",
		"3 cells.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("-plan lacks %q:\n%s", want, out)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-modality", "image", "-root", root, "-methods", "mvgrl", "-plan"}, `method "mvgrl": expected one of simclr, dcl, hcl, mocov3`},
		{[]string{"-modality", "image", "-root", root, "-datasets", "nope", "-plan"}, "no dataset to run"},
		{[]string{"-modality", "image", "-root", root, "-set", "train.bogus=1", "-plan"}, "bogus"},
	} {
		if err := run(tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.args, err, tt.want)
		}
	}
}
