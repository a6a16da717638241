package table

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/configs"
	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/train"
)

// writeImageFile writes b to dir/name.
func writeImageFile(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// imageRoot is a data root with one dataset of every kind the image table
// reads (files of the right sizes and headers; their pixels are zeros).
func imageRoot(t *testing.T) string {
	root := t.TempDir()
	writeImageFile(t, root, "c10/data_batch_1.bin", make([]byte, 300*(1+data.CIFARImageBytes)))
	writeImageFile(t, root, "c10/data_batch_2.bin", make([]byte, 200*(1+data.CIFARImageBytes)))
	writeImageFile(t, root, "c10/test_batch.bin", make([]byte, 100*(1+data.CIFARImageBytes)))
	writeImageFile(t, root, "c100/train.bin", make([]byte, 700*(2+data.CIFARImageBytes)))
	writeImageFile(t, root, "c100/test.bin", make([]byte, 10*(2+data.CIFARImageBytes)))
	idx := make([]byte, 16)
	binary.BigEndian.PutUint32(idx[0:], 0x803)
	binary.BigEndian.PutUint32(idx[4:], 60000)
	writeImageFile(t, root, "fm/train-images-idx3-ubyte", idx)
	writeImageFile(t, root, "fm/t10k-images-idx3-ubyte", idx)
	writeImageFile(t, root, "stl/train_X.bin", make([]byte, 3*96*96*3))
	writeImageFile(t, root, "stl/test_X.bin", make([]byte, 96*96*3))
	writeImageFile(t, root, "stl/unlabeled_X.bin", make([]byte, 5*96*96*3))
	for _, f := range []string{"train/a/1.png", "train/a/2.jpg", "train/b/3.JPEG", "train/b/notes.txt", "val/a/4.png"} {
		writeImageFile(t, root, "ImageNet-100/"+f, nil)
		writeImageFile(t, root, "mine/"+strings.Replace(f, "val/", "test/", 1), nil)
	}
	writeImageFile(t, root, "not-images/readme.txt", []byte("x"))
	return root
}

func TestPlanImagesEveryKind(t *testing.T) {
	root := imageRoot(t)
	got := DiscoverImages(root)
	type row struct {
		name, kind, paper string
		n                 int
	}
	var rows []row
	for _, d := range got {
		if d.Path == DebianFashionMNIST {
			continue // this machine's package, not the fixture
		}
		rows = append(rows, row{d.Name, d.Kind, d.Paper, d.Train})
	}
	want := []row{
		{"c10", ImageCIFAR10, "CIFAR10", 500},
		{"c100", ImageCIFAR100, "CIFAR100", 700},
		{"stl", ImageSTL10, "STL10", 8},
		{"ImageNet-100", ImageFolder, "ImageNet-100", 3},
		{"fm", ImageIDX, "", 60000},
		{"mine", ImageFolder, "", 3},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("discovered\n%v\nwant\n%v", rows, want)
	}

	plan, err := PlanImages(PlanOptions{Root: root, Datasets: []string{"c10", "fm", "absent"}, Blocks: []string{BlockSimCLR, BlockMoCoV3}}, "unused")
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Skipped) != 1 || !strings.Contains(plan.Skipped[0], "dataset absent: not found in "+filepath.Join(root, "absent")) {
		t.Errorf("skipped %q", plan.Skipped)
	}
	var dirs []string
	for _, c := range plan.Cells {
		dirs = append(dirs, c.Dir)
	}
	if want := []string{"c10/untrained", "c10/simclr", "c10/mocov3", "fm/untrained", "fm/simclr", "fm/mocov3"}; !reflect.DeepEqual(dirs, want) {
		t.Errorf("cells %v, want %v", dirs, want)
	}
	// A small CIFAR-10 layout: the subset recipe, t at most an epoch;
	// 60,000 images: the paper's t = 100 and CIFAR-10's M, K.
	c10, fm := plan.Cells[1].Config, plan.Cells[4].Config
	sp := func(c train.Config, kind string) sampler3 {
		for _, s := range c.SamplerList() {
			if s.Kind == kind {
				return sampler3{s.RefreshEvery, s.M, s.K}
			}
		}
		return sampler3{}
	}
	if got := sp(c10, "batchsampler"); got != (sampler3{2, 499, 100}) || c10.Train.Epochs != 25 || c10.Data.Root != root {
		t.Errorf("c10: batchsampler %v epochs %d root %q", got, c10.Train.Epochs, c10.Data.Root)
	}
	if got := sp(fm, "batchsampler"); got != (sampler3{100, 500, 100}) || fm.Train.Epochs != FullImageEpochs || fm.Data.Source != "idx" {
		t.Errorf("fm: batchsampler %v epochs %d source %q", got, fm.Train.Epochs, fm.Data.Source)
	}
	if u := plan.Cells[0].Config; u.Train.Epochs != 0 || len(u.SamplerList()) != 1 {
		t.Errorf("untrained cell: epochs %d, %d samplers", u.Train.Epochs, len(u.SamplerList()))
	}
	if m := plan.Cells[2].Config; m.Method != "mocov3" || m.Optim.Kind != "lars" {
		t.Errorf("mocov3 cell: method %q optim %q", m.Method, m.Optim.Kind)
	}
	// Every kind gets a config that validates (STL-10 at 32×32 from
	// train+unlabeled; ImageNet-100 the narrow ResNet-18 at 64×64).
	all, err := PlanImages(PlanOptions{Root: root}, "unused")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range all.Cells {
		switch c.Dataset {
		case "stl":
			if c.Config.Data.Image.Pretrain != "train+unlabeled" || c.Config.Data.Image.Size != 32 {
				t.Errorf("stl: %+v", c.Config.Data.Image)
			}
		case "ImageNet-100":
			if c.Config.Model.Arch != "resnet18-narrow" || c.Config.Data.Image.Size != 64 {
				t.Errorf("imagenet-100: arch %q size %d", c.Config.Model.Arch, c.Config.Data.Image.Size)
			}
		}
	}
	// The kinds not found are listed with how to get them.
	for _, want := range []string{"CIFAR-10 (full, 50,000 images): absent"} {
		if !strings.Contains(strings.Join(all.Skipped, "\n"), want) {
			t.Errorf("skipped %q lacks %q", all.Skipped, want)
		}
	}
}

type sampler3 struct{ t, m, k int }

func TestPlanImagesErrors(t *testing.T) {
	root := imageRoot(t)
	if _, err := PlanImages(PlanOptions{Root: root, Blocks: []string{"graphcl"}}, ""); err == nil || !strings.Contains(err.Error(), `method "graphcl": expected one of simclr, dcl, hcl, mocov3`) {
		t.Errorf("bad block: %v", err)
	}
	if _, err := PlanImages(PlanOptions{Root: root, Datasets: []string{"nope"}}, ""); err == nil || !strings.Contains(err.Error(), "dataset nope: not found") {
		t.Errorf("no dataset: %v", err)
	}
	if _, err := PlanImages(PlanOptions{Root: root, Datasets: []string{"c10"}, Sets: []string{"train.bogus=1"}}, ""); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("bad override: %v", err)
	}
}

// The table's SimCLR and MoCo v3 cells on a CIFAR-10 subset are the
// shipped configs of the recorded runs (name aside), so their rows are
// those runs; DCL and HCL are the shipped configs/*-cifar10-subset.yaml
// that golden records pin.
func TestImageCellsAreShippedConfigs(t *testing.T) {
	root := t.TempDir()
	// The shared subset's size: 5 × 1,017 training images (sparse files).
	for _, f := range []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"} {
		writeImageFile(t, root, "c10/"+f, nil)
		if err := os.Truncate(filepath.Join(root, "c10", f), 1017*(1+data.CIFARImageBytes)); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := PlanImages(PlanOptions{Root: root, Datasets: []string{"c10"}}, "unused")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{BlockSimCLR: "simclr-cifar10-subset.yaml", BlockDCL: "dcl-cifar10-subset.yaml",
		BlockHCL: "hcl-cifar10-subset.yaml", BlockMoCoV3: "mocov3-cifar10-subset.yaml"}
	for _, c := range plan.Cells {
		file, ok := files[c.Block]
		if !ok {
			continue
		}
		y, err := configs.Read(file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := train.ParseConfig(y, []string{"data.path=c10", "data.root=" + root})
		if err != nil {
			t.Fatal(err)
		}
		got := c.Config
		got.Name, want.Name = "", ""
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the table's config differs from configs/%s:\n got %+v\nwant %+v", c.Block, file, got, want)
		}
	}
}

// tinyCIFAR writes a CIFAR-10 binary layout of n training and m test images
// with random pixels and labels cycling over 10 classes.
func tinyCIFAR(t *testing.T, dir string, n, m int) {
	t.Helper()
	rec := func(count int) []byte {
		b := make([]byte, count*(1+data.CIFARImageBytes))
		for i := range count {
			r := b[i*(1+data.CIFARImageBytes):]
			r[0] = byte(i % 10)
			for j := 1; j <= data.CIFARImageBytes; j++ {
				r[j] = byte((i*31 + j*17 + j*j) % 251)
			}
		}
		return b
	}
	writeImageFile(t, dir, "data_batch_1.bin", rec(n))
	writeImageFile(t, dir, "test_batch.bin", rec(m))
}

func TestImageRunResumeAssemble(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 8 small runs")
	}
	root := t.TempDir()
	tinyCIFAR(t, filepath.Join(root, "tiny"), 48, 20)
	sets := []string{"seeds=[0, 1]", "train.epochs=2", "train.batch_size=16", "train.eval_every=1",
		"samplers=[{kind: uniform}, {kind: knn, refresh_every: 2}, {kind: batchsampler, m: 20, k: 5, walk: rwr, graph: proximity, alpha: {start: 0.2, end: 0.05}, refresh_every: 2}]"}
	plan, err := PlanImages(PlanOptions{Root: root, Datasets: []string{"tiny"}, Blocks: []string{BlockSimCLR}, Sets: sets}, "unused")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sts, err := cellrun.Run(context.Background(), plan.Cells, cellrun.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	tab := AssembleImages(sts, plan, sets, 0)
	if len(tab.Failed) != 0 {
		t.Fatalf("failed: %q", tab.Failed)
	}
	// The curves: an evaluation after epoch 1, the final one after epoch 2,
	// each the mean of the two seeds; the final point is the row's result.
	tab.ReadCurves(dir, sts)
	if cs := tab.Curves["tiny"]; len(cs) != 3 {
		t.Errorf("curves: %+v", cs)
	} else {
		for _, c := range cs {
			e := tab.entry(c.Block, c.Sampler, "tiny")
			if len(c.Points) != 2 || c.Points[0].Epoch != 1 || c.Points[1].Epoch != 2 || len(c.Points[0].PerSeed) != 2 ||
				c.Points[1].Mean != e.Mean || (c.Points[0].PerSeed[0]+c.Points[0].PerSeed[1])/2 != c.Points[0].Mean {
				t.Errorf("curve %s/%s: %+v (row %v)", c.Block, c.Sampler, c.Points, e.PerSeed)
			}
		}
	}
	if err := tab.Write(dir); err != nil {
		t.Fatal(err)
	}
	md := tab.Markdown()
	for _, want := range []string{
		"## Image table: linear-probe top-1 accuracy (%)",
		"| Method | tiny (CIFAR-10 format, N = 48, N/B ≈ 3, paper: CIFAR10) |",
		"| Untrained encoder |", "| SimCLR |", "| w/ kNN Sampler |", "| w/ BatchSampler |",
		"[92.13]", "[90.16]", "[92.54]", // the paper's CIFAR10 numbers beside the rows
		"### Settings per dataset", "| tiny | resnet8 | native | 2 | 16 | 2 | 20 | 5 | 0.2 → 0.05 |",
		"### Accuracy over training", "![tiny: accuracy over training](figures/tiny-probe-curve.png)",
		"[false negatives](tiny/simclr/plots/fn_ratio.png)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("table.md lacks %q:\n%s", want, md)
		}
	}
	// Every linked figure exists.
	if _, err := os.Stat(filepath.Join(dir, "figures", "tiny-probe-curve.png")); err != nil {
		t.Errorf("curve figure: %v", err)
	}
	if out := os.Getenv("BATCHSAMPLER_FIGURES"); out != "" { // to look at it
		b, _ := os.ReadFile(filepath.Join(dir, "figures", "tiny-probe-curve.png"))
		os.WriteFile(filepath.Join(out, "tiny-probe-curve.png"), b, 0o644)
	}
	for _, f := range []string{"fn_ratio.png", "similarity_hist.png", "loss.png"} {
		if _, err := os.Stat(filepath.Join(dir, "tiny", "simclr", "plots", f)); err != nil {
			t.Errorf("figure: %v", err)
		}
	}
	// table.json reads back to the same table.
	back, err := ReadImageTable(filepath.Join(dir, "table.json"))
	if err != nil {
		t.Fatal(err)
	}
	if back.Markdown() != md {
		t.Errorf("table.json reads back to another table")
	}
	// A second pass runs nothing and assembles the same numbers.
	sts2, err := cellrun.Run(context.Background(), plan.Cells, cellrun.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range sts2 {
		if st.Ran {
			t.Errorf("cell %s ran again", plan.Cells[i].Dir)
		}
	}
	again := AssembleImages(sts2, plan, sets, 0)
	for i := range tab.Entries {
		if !reflect.DeepEqual(tab.Entries[i].PerSeed, again.Entries[i].PerSeed) {
			t.Errorf("entry %d: %v then %v", i, tab.Entries[i].PerSeed, again.Entries[i].PerSeed)
		}
	}
}
