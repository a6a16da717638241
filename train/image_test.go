package train

import (
	"context"
	"errors"
	"maps"
	"math"
	"strings"
	"testing"
)

// tinyImages is a few seconds of SimCLR on generated 16×16 images with a
// two-stage ResNet of 4/8 channels.
const tinyImages = `
name: tiny-images
modality: image
data:
  source: synthetic
  image: {images: 96, test_images: 48, classes: 4, size: 16, noise: 0.05, seed: 2}
model: {kind: resnet, arch: resnet8, widths: [4, 8], blocks: [1, 1], proj_hidden: 8, proj_dim: 8}
samplers:
  - {kind: uniform}
  - {kind: batchsampler, label: bs, m: 20, k: 5, walk: rwr, alpha: {start: 0.2, end: 0.05}, refresh_every: 4}
train: {epochs: 2, batch_size: 20, lr: 0.001, log_every: 1}
eval: {kind: linear_probe, knn_k: 10}
seeds: [0]
`

func TestImageRunAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("image training run: skipped with -short")
	}
	cfg := mustParse(t, tinyImages)
	ref := t.TempDir()
	want, err := Run(context.Background(), cfg, Options{OutDir: ref})
	if err != nil {
		t.Fatal(err)
	}
	res := resultsOf(t, want)
	if len(res) != 2 {
		t.Fatalf("want 2 runs, got %v", res)
	}
	for run, v := range res {
		// 4 balanced classes: a probe on any non-degenerate features beats
		// chance; the score must be a percentage.
		if !(v > 25 && v <= 100) {
			t.Errorf("%s: linear probe accuracy %v%%, want in (25, 100]", run, v)
		}
	}
	wantLoss := readLosses(t, ref)

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	hooks := Observer{Step: func(s StepInfo) {
		if s.Run == "bs-seed0" && s.Step == 7 {
			cancel()
		}
	}}
	if _, err := Run(ctx, cfg, Options{OutDir: dir, Observer: hooks}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v", err)
	}
	got, err := Run(context.Background(), cfg, Options{OutDir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if g := resultsOf(t, got); !maps.Equal(g, res) {
		t.Errorf("resumed results %v, uninterrupted %v", g, res)
	}
	sameLosses(t, wantLoss, readLosses(t, dir))
}

func TestImageConfigErrors(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"model.arch=resnet99", "model.arch"},
		{"data.source=imagenet", "data.source"},
		{"augment.image=strong", "augment.image"},
		{"eval.kind=svm", "eval.kind"},
		{"model.blocks=[1]", "model.widths, model.blocks"},
		{"data.image.images=0", "data.image.images"},
		{"data.image.colour=1", "colour"},
		{"model.conv=fft", "model.conv"},
	} {
		_, err := ParseConfig([]byte(tinyImages), []string{tc.set})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("-set %s: error %v, want it to name %q", tc.set, err, tc.want)
		}
	}
}

// TestImageWinogradConv: model.conv: winograd trains (8-channel stages, so
// the Winograd path is taken), gives the same losses on a second run, and
// follows the direct run's first losses to float32 rounding while not
// having its bits.
func TestImageWinogradConv(t *testing.T) {
	if testing.Short() {
		t.Skip("image training runs: skipped with -short")
	}
	sets := []string{"model.widths=[8, 8]", "samplers=[{kind: uniform}]", "train.epochs=1"}
	losses := map[string]map[int]float64{}
	for _, run := range []struct{ name, conv string }{{"direct", "direct"}, {"winograd", "winograd"}, {"winograd-again", "winograd"}} {
		cfg := mustParse(t, tinyImages, append(sets, "model.conv="+run.conv)...)
		dir := t.TempDir()
		res, err := Run(context.Background(), cfg, Options{OutDir: dir})
		if err != nil {
			t.Fatalf("%s: %v", run.name, err)
		}
		for id, v := range resultsOf(t, res) {
			if !(v > 25 && v <= 100) {
				t.Errorf("%s %s: linear probe accuracy %v%%, want in (25, 100]", run.name, id, v)
			}
		}
		l := readLosses(t, dir)
		if len(l) != 1 {
			t.Fatalf("%s: want one run, got %d", run.name, len(l))
		}
		for _, steps := range l {
			losses[run.name] = steps
		}
	}
	if !maps.Equal(losses["winograd"], losses["winograd-again"]) {
		t.Errorf("two Winograd runs with the same seed logged different losses")
	}
	if maps.Equal(losses["winograd"], losses["direct"]) {
		t.Errorf("the Winograd run logged the direct run's losses bit for bit: was it taken?")
	}
	// The first step sees the same weights and views: the same loss up to
	// the convolutions' rounding.
	first := math.MaxInt
	for s := range losses["direct"] {
		first = min(first, s)
	}
	d, w := losses["direct"][first], losses["winograd"][first]
	if math.Abs(d-w) > 1e-5*math.Abs(d) {
		t.Errorf("step %d: loss %v with direct convolutions, %v with Winograd's", first, d, w)
	}
}

// TestSumGrads checks the sum of the two views' parameter gradients: each
// element a+b in float32 (what Gorgonia's addition of a node's two gradient
// terms computes), a copy of the one given when the other is nil, nil for
// neither, and dst's buffers reused when their sizes fit.
func TestSumGrads(t *testing.T) {
	a := [][]float32{{1, 2.5, -3}, nil, {0.1}, nil}
	b := [][]float32{{4, 0.25, 3}, {7, 8}, nil, nil}
	want := [][]float32{{5, 2.75, 0}, {7, 8}, {0.1}, nil}
	dst := [][]float32{make([]float32, 3), nil, nil, {9}}
	keep := &dst[0][0]
	got := sumGrads(dst, a, b)
	for k := range want {
		if (got[k] == nil) != (want[k] == nil) || len(got[k]) != len(want[k]) {
			t.Fatalf("parameter %d: %v, want %v", k, got[k], want[k])
		}
		for i := range want[k] {
			if got[k][i] != want[k][i] {
				t.Fatalf("parameter %d: %v, want %v", k, got[k], want[k])
			}
		}
	}
	if &got[0][0] != keep {
		t.Error("dst[0] had the right size but was reallocated")
	}
	got[1][0] = -1
	if b[1][0] != 7 {
		t.Error("the copy of b[1] aliases it")
	}
}
