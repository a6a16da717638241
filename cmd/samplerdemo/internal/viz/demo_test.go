package viz

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batchsampler-go/batchsampler/sampler"
)

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

var allFiles = []string{FilePoints, FileGraph, FileGraphM, FileBatchUniform, FileBatchKNN, FileBatchSampler, FileBatchesAlpha, FileSummary}

// TestRunWritesFiles runs the demo with the default configuration and checks
// every file: PNG magic bytes, a sane size, the summary's file list.
func TestRunWritesFiles(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Now()
	res, err := Run(DefaultConfig(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Run with the default configuration: %v", time.Since(t0))
	if !slices.Equal(res.Files, allFiles) {
		t.Errorf("files %v, want %v", res.Files, allFiles)
	}
	for _, f := range allFiles {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".png") {
			if !bytes.HasPrefix(b, pngMagic) {
				t.Errorf("%s does not start with the PNG signature", f)
			}
			if len(b) < 10000 {
				t.Errorf("%s has only %d bytes", f, len(b))
			}
		}
	}
	sum, err := os.ReadFile(filepath.Join(dir, FileSummary))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range allFiles {
		if !strings.Contains(string(sum), "`"+f+"`") {
			t.Errorf("summary.md does not list %s", f)
		}
	}
}

// TestRunStatistics checks the summary against a direct computation with
// the sampler diagnostics, and the orderings the pictures teach, on the
// default configuration and two other seeds of points and samplers.
func TestRunStatistics(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Points.Seed, cfg.Seed = seed, seed
			res, err := Run(cfg, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			e, labels, err := CirclePoints(cfg.Points)
			if err != nil {
				t.Fatal(err)
			}
			n, b := cfg.Points.N, cfg.BatchSize
			sum, err := os.ReadFile(filepath.Join(res.Dir, FileSummary))
			if err != nil {
				t.Fatal(err)
			}
			fn := map[string]float64{}
			for _, row := range res.Rows {
				var s sampler.Sampler
				switch row.Sampler {
				case NameUniform:
					s, err = sampler.NewUniform(n, b, cfg.Seed)
				case NameKNN:
					var k *sampler.KNN
					if k, err = sampler.NewKNN(n, b, 0, cfg.Seed); err == nil {
						err = k.Refresh(e)
					}
					s = k
				case NameBatchSampler:
					var bs *sampler.BatchSampler
					if bs, err = sampler.NewBatchSampler(sampler.Config{BatchSize: b, M: row.M, K: row.K,
						Alpha: sampler.Schedule{Start: row.Alpha, Kind: sampler.ScheduleConstant}}, n, cfg.Seed); err == nil {
						err = bs.Refresh(e)
					}
					s = bs
				default:
					t.Fatalf("unknown sampler %q", row.Sampler)
				}
				if err != nil {
					t.Fatal(err)
				}
				var f, c float64
				for range cfg.Batches {
					batch := s.Next()
					f += sampler.FalseNegativeRatio(batch, labels)
					c += sampler.MeanCosine(batch, e)
				}
				f /= float64(cfg.Batches)
				c /= float64(cfg.Batches)
				if math.Abs(f-row.Stats.FNRatio) > 1e-12 || math.Abs(c-row.Stats.MeanCosine) > 1e-12 || row.Stats.Batches != cfg.Batches {
					t.Errorf("%s M=%d α=%v: summary FN %v cos %v over %d batches; direct FN %v cos %v", row.Sampler, row.M, row.Alpha,
						row.Stats.FNRatio, row.Stats.MeanCosine, row.Stats.Batches, f, c)
				}
				if !strings.Contains(string(sum), fmt.Sprintf("| %.4f ± %.4f | %.4f |", row.Stats.FNRatio, row.Stats.FNStdErr, row.Stats.MeanCosine)) {
					t.Errorf("summary.md lacks the row of %s M=%d α=%v", row.Sampler, row.M, row.Alpha)
				}
				if row.Picture != "" && row.Picture != FileBatchesAlpha {
					fn[row.Picture] = row.Stats.FNRatio
				}
				if row.Sampler == NameUniform {
					if d := math.Abs(row.Stats.FNRatio - res.UniformExpected); d > 5*row.Stats.FNStdErr {
						t.Errorf("Uniform FN ratio %.4f ± %.4f, expected %.4f", row.Stats.FNRatio, row.Stats.FNStdErr, res.UniformExpected)
					}
				}
			}
			u, bsr, k := fn[FileBatchUniform], fn[FileBatchSampler], fn[FileBatchKNN]
			if !(u < bsr && bsr < k) {
				t.Errorf("false-negative ratios Uniform %.4f, BatchSampler %.4f, kNN %.4f: want Uniform < BatchSampler < kNN", u, bsr, k)
			}
			// The graphs: label agreement and edge cosine grow with M.
			g := res.Graphs
			if !(g[0].Stats.LabelAgreement < g[1].Stats.LabelAgreement && g[1].Stats.LabelAgreement <= g[2].Stats.LabelAgreement &&
				g[0].Stats.MeanCosine < g[1].Stats.MeanCosine && g[1].Stats.MeanCosine <= g[2].Stats.MeanCosine) {
				t.Errorf("graph statistics do not grow with M: %+v", g)
			}
			// The walks from one start: every batch has B distinct nodes,
			// so the inclusion frequencies sum to B; restarting more often
			// (α 0.05 → 0.2 → 0.5) keeps the batch closer to u.
			var prev float64
			for i, aw := range res.Walks {
				total := 0.0
				for _, f := range aw.Freq {
					total += f
				}
				if math.Abs(total-float64(b)) > 1e-9 {
					t.Errorf("α=%v: frequencies sum to %v, want B = %d", aw.Alpha, total, b)
				}
				if aw.Walk.Batch[0] != res.Start || len(aw.Walk.Batch) != b {
					t.Errorf("α=%v: traced walk starts at %d with %d nodes", aw.Alpha, aw.Walk.Batch[0], len(aw.Walk.Batch))
				}
				if aw.Alpha < 1 {
					if i > 0 && !(aw.Stats.MeanCosine > prev) {
						t.Errorf("mean cosine of walks from u does not grow with α: %v at α=%v after %v", aw.Stats.MeanCosine, aw.Alpha, prev)
					}
					prev = aw.Stats.MeanCosine
				}
			}
		})
	}
}

func TestRunDeterministic(t *testing.T) {
	cfg, err := LoadConfig("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, b := t.TempDir(), t.TempDir()
	if _, err := Run(cfg, a); err != nil {
		t.Fatal(err)
	}
	res, err := Run(cfg, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Walks) != 2 {
		t.Errorf("%d walk columns, want one per alpha (2)", len(res.Walks))
	}
	for _, f := range res.Files {
		x, err1 := os.ReadFile(filepath.Join(a, f))
		y, err2 := os.ReadFile(filepath.Join(b, f))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs of the same configuration", f)
		}
	}
}

func TestRunErrors(t *testing.T) {
	bad := DefaultConfig()
	bad.Sampler.M = 2
	if _, err := Run(bad, t.TempDir()); err == nil || !strings.Contains(err.Error(), "sampler.m = 2") {
		t.Errorf("Run with m < k: %v", err)
	}
	if _, err := Run(DefaultConfig(), ""); err == nil {
		t.Error("Run with an empty directory accepted")
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(DefaultConfig(), filepath.Join(file, "sub")); err == nil {
		t.Error("Run into a directory below a file accepted")
	}
}
