package train

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeSTL10 writes a generated set in STL-10's binary format (96×96×3,
// column-major, labels 1..10) to dir: n images per split, the class of an
// image drawn into its colour so a probe can learn it.
func writeSTL10(t *testing.T, dir string, n map[string]int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	for split, k := range n {
		x := make([]byte, 0, k*96*96*3)
		var y []byte
		for range k {
			c := rng.IntN(3)
			for ch := range 3 {
				for col := range 96 {
					for row := range 96 {
						v := 40 + rng.IntN(40)
						if ch == c {
							v += 120
						}
						x = append(x, byte(v+(row+col)%16))
					}
				}
			}
			y = append(y, byte(c+1))
		}
		if err := os.WriteFile(filepath.Join(dir, split+"_X.bin"), x, 0o644); err != nil {
			t.Fatal(err)
		}
		if split != "unlabeled" {
			if err := os.WriteFile(filepath.Join(dir, split+"_y.bin"), y, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// writeFolder writes PNGs into dir/train/CLASS, dir/test/CLASS and
// dir/unlabeled, of sizes that need resizing and cropping.
func writeFolder(t *testing.T, dir string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	write := func(path string, c int) {
		img := image.NewRGBA(image.Rect(0, 0, 30+rng.IntN(10), 20+rng.IntN(10)))
		for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
			for x := img.Rect.Min.X; x < img.Rect.Max.X; x++ {
				v := [3]uint8{uint8(40 + rng.IntN(40)), uint8(40 + rng.IntN(40)), uint8(40 + rng.IntN(40))}
				v[c] += 120
				img.Set(x, y, color.RGBA{v[0], v[1], v[2], 255})
			}
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
	}
	for split, n := range map[string]int{"train": 12, "test": 6} {
		for i := range n {
			c := i % 3
			write(filepath.Join(dir, split, []string{"cat", "dog", "eel"}[c], fmt.Sprintf("%d.png", i)), c)
		}
	}
	for i := range 10 {
		write(filepath.Join(dir, "unlabeled", fmt.Sprintf("u%d.png", i)), i%3)
	}
}

const tinyOwnImages = `
name: own-images
modality: image
model: {kind: resnet, arch: resnet8, widths: [4, 8], blocks: [1, 1], proj_hidden: 8, proj_dim: 8}
samplers:
  - {kind: uniform}
  - {kind: batchsampler, label: bs, m: 10, k: 3, alpha: 0.3, refresh_every: 2}
train: {epochs: 1, batch_size: 8, lr: 0.001, log_every: 1}
eval: {kind: linear_probe, knn_k: 5}
seeds: [0]
`

// TestImageSourcesWithUnlabeled trains on STL-10's format and on a folder
// of the user's own images, each pre-training on labelled + unlabeled
// images: the sampler draws from all of them, the probe is fitted on the
// labelled ones only, and both methods run.
func TestImageSourcesWithUnlabeled(t *testing.T) {
	stl := t.TempDir()
	writeSTL10(t, stl, map[string]int{"train": 12, "test": 9, "unlabeled": 20})
	own := t.TempDir()
	writeFolder(t, own)
	for _, tc := range []struct {
		name            string
		sets            []string
		labeled, others int
	}{
		{"stl10", []string{"data={source: stl10, path: " + stl + ", image: {size: 16, pretrain: train+unlabeled}}"}, 12, 20},
		{"stl10-max", []string{"data={source: stl10, path: " + stl + ", image: {size: 12, pretrain: train+unlabeled, max_unlabeled: 5, max_train: 10}}"}, 10, 5},
		{"stl10-labelled-only", []string{"data={source: stl10, path: " + stl + ", image: {size: 16}}"}, 12, 0},
		{"folder", []string{"data={source: folder, path: " + own + ", image: {size: 16, pretrain: train+unlabeled}}"}, 12, 10},
		{"folder-mocov3", append([]string{"data={source: folder, path: " + own + ", image: {size: 16, pretrain: train+unlabeled}}"}, tinyMoCo...), 12, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustParse(t, tinyOwnImages, tc.sets...)
			ds, err := dataSpecs["image"].Load(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			d := ds.(*imageDataset)
			if d.NumInstances() != tc.labeled+tc.others || d.labeled != tc.labeled || len(d.labels) != tc.labeled {
				t.Fatalf("%d instances, %d labelled (%d labels); want %d + %d", d.NumInstances(), d.labeled, len(d.labels), tc.labeled, tc.others)
			}
			if (d.Labels() == nil) != (tc.others > 0) {
				t.Errorf("Labels() = %v with %d unlabeled images", d.Labels(), tc.others)
			}
			if split, _ := d.ProbeSplit(); (split == "labeled") != (tc.others > 0) {
				t.Errorf("probe split %q with %d unlabeled images", split, tc.others)
			}
			res, err := Run(context.Background(), cfg, Options{OutDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Runs {
				if !(r.Value >= 0 && r.Value <= 100) {
					t.Errorf("%s: %s %v", r.ID, r.Metric, r.Value)
				}
			}
		})
	}
}

func TestImageSourceErrors(t *testing.T) {
	stl := t.TempDir()
	writeSTL10(t, stl, map[string]int{"train": 3, "test": 3})
	for _, tc := range []struct {
		set, want string
	}{
		{"data={source: cifar10, path: x, image: {pretrain: train+unlabeled}}", "data.image.pretrain"},
		{"data={source: stl10, path: x, image: {size: 97}}", "data.image.size"},
		{"data={source: folder, path: x, image: {size: 4}}", "data.image.size"},
		{"data={source: stl10, path: x, image: {pretrain: all}}", "data.image.pretrain"},
	} {
		_, err := ParseConfig([]byte(tinyOwnImages), []string{tc.set})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("-set %s: error %v, want one naming %s", tc.set, err, tc.want)
		}
	}
	// STL-10 without its unlabeled file, and a folder without test/.
	cfg := mustParse(t, tinyOwnImages, "data={source: stl10, path: "+stl+", image: {size: 16, pretrain: train+unlabeled}}")
	if _, err := dataSpecs["image"].Load(&cfg); err == nil || !strings.Contains(err.Error(), "unlabeled_X.bin") {
		t.Errorf("missing unlabeled_X.bin: error %v", err)
	}
	own := t.TempDir()
	writeFolder(t, own)
	if err := os.RemoveAll(filepath.Join(own, "test")); err != nil {
		t.Fatal(err)
	}
	cfg = mustParse(t, tinyOwnImages, "data={source: folder, path: "+own+", image: {size: 16}}")
	if _, err := dataSpecs["image"].Load(&cfg); err == nil || !strings.Contains(err.Error(), "test/") {
		t.Errorf("folder without test/: error %v", err)
	}
}

// TestImageReadersCoverSources checks that every allowed data.source of the
// image modality has a reader and every reader an allowed value.
func TestImageReadersCoverSources(t *testing.T) {
	for _, s := range imageSources {
		if imageReaders[s] == nil {
			t.Errorf("data.source %q is allowed but has no reader in imageReaders", s)
		}
	}
	for s := range imageReaders {
		if !slices.Contains(imageSources, s) {
			t.Errorf("imageReaders has a reader for %q, which imageSources does not allow", s)
		}
	}
}
