package table

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/paper"
	"github.com/batchsampler-go/batchsampler/train"
)

// paperImageRows is the paper's image table (appendix, "Overall
// performance comparison on image classification task in terms of Top-1
// Accuracy") as printed, one row per block and sampler, columns CIFAR10,
// CIFAR100, STL10, ImageNet-100. DCL and HCL have no kNN row there; MoCo v3
// is reported on ImageNet only (its body's table), none of these columns.
var paperImageRows = map[string]map[string]string{
	BlockSimCLR: {
		"uniform":      "92.13 68.14 83.26 59.30",
		"knn":          "90.16 62.30 79.25 57.70",
		"batchsampler": "92.54 68.68 84.38 60.80",
	},
	BlockDCL: {
		"uniform":      "92.28 68.52 84.92 59.90",
		"batchsampler": "92.74 68.91 86.39 60.14",
	},
	BlockHCL: {
		"uniform":      "92.39 68.92 88.20 60.60",
		"batchsampler": "92.41 69.13 89.49 61.50",
	},
}

// PaperImageColumns is the column order of the paper's image table.
var PaperImageColumns = []string{"CIFAR10", "CIFAR100", "STL10", "ImageNet-100"}

// PaperImage returns the paper's number for a block, sampler and paper
// column (PaperImageColumns), and false where it reports none.
func PaperImage(block, sampler, column string) (paper.Reported, bool) {
	row, ok := paperImageRows[block][sampler]
	if !ok {
		return paper.Reported{}, false
	}
	i := slices.Index(PaperImageColumns, column)
	if i < 0 {
		return paper.Reported{}, false
	}
	r, err := paper.ParseReported(strings.Fields(row)[i])
	return r, err == nil
}

// ImageColumn is what one column of the image table is: the dataset found
// and the settings its cells ran with.
type ImageColumn struct {
	Data     ImageData     `json:"data"`
	Settings ImageSettings `json:"settings"`
}

// ImageTable is the assembled image table (DIR/table.json): the graph
// table's grid (the untrained reference as the block "untrained", its one
// row "uniform") with what every column is.
type ImageTable struct {
	GraphTable
	Columns map[string]ImageColumn `json:"columns"`
	// Curves are, per dataset, each row's accuracy over training (ReadCurves).
	Curves map[string][]Curve `json:"curves,omitempty"`
}

// ReadCurves reads the accuracy curves of the finished cells of sts from
// their run directories under dir (the table's).
func (t *ImageTable) ReadCurves(dir string, sts []cellrun.Status) {
	for _, st := range sts {
		if st.Results == nil || st.Block == BlockUntrained {
			continue
		}
		if c := readCurves(filepath.Join(dir, st.Dir), st); len(c) > 0 {
			if t.Curves == nil {
				t.Curves = map[string][]Curve{}
			}
			t.Curves[st.Dataset] = append(t.Curves[st.Dataset], c...)
		}
	}
}

// AssembleImages builds the image table from the cells' statuses
// (cellrun.Run or cellrun.Read on PlanImages's cells); data says what each
// dataset of the plan is (ImagePlanData).
func AssembleImages(sts []cellrun.Status, plan *Plan, sets []string, wall time.Duration) *ImageTable {
	t := &ImageTable{GraphTable: GraphTable{Summary: cellrun.NewSummary(plan.Skipped, sets, wall)}, Columns: map[string]ImageColumn{}}
	for _, c := range plan.Cells {
		col, seen := t.Columns[c.Dataset]
		if !seen {
			d, ok := plan.Images[c.Dataset]
			if !ok {
				continue
			}
			col = ImageColumn{Data: d, Settings: ImageSettingsFor(d)}
		}
		if c.Block != BlockUntrained {
			// What the cells ran with, overrides included.
			col.Settings = settingsOf(c.Config, col.Settings)
		}
		t.Columns[c.Dataset] = col
	}
	t.collect(sts, t.paper)
	return t
}

// settingsOf returns s with the settings of cfg: network, image side,
// epochs, batch size and BatchSampler's t, M, K and α.
func settingsOf(cfg train.Config, s ImageSettings) ImageSettings {
	s.Arch, s.Epochs, s.BatchSize, s.Size = cfg.Model.Arch, cfg.Train.Epochs, cfg.Train.BatchSize, 0
	if cfg.Data.Source == ImageSTL10 || cfg.Data.Source == ImageFolder {
		s.Size = cfg.Data.Image.Size
	}
	for _, sp := range cfg.SamplerList() {
		if sp.Kind == "batchsampler" {
			s.RefreshEvery, s.M, s.K, s.AlphaStart, s.Alpha = sp.RefreshEvery, sp.M, sp.K, sp.Alpha.Start, sp.Alpha.End
			if sp.Alpha.Constant {
				s.Alpha = sp.Alpha.Start
			}
		}
	}
	return s
}

// paper is PaperImage by dataset: the paper's column the dataset stands for.
func (t *ImageTable) paper(block, sampler, dataset string) (paper.Reported, bool) {
	return PaperImage(block, sampler, t.Columns[dataset].Data.Paper)
}

// columnTitle names a column: the dataset, its kind and its size.
func (t *ImageTable) columnTitle(dataset string) string {
	c, ok := t.Columns[dataset]
	if !ok {
		return dataset
	}
	paper := ""
	if c.Data.Paper != "" {
		paper = ", paper: " + c.Data.Paper
	}
	return fmt.Sprintf("%s (%s, N = %s, N/B ≈ %d%s)", dataset, imageKindTitle[c.Data.Kind], thousands(c.Data.Train),
		(c.Data.Train+c.Settings.BatchSize/2)/max(c.Settings.BatchSize, 1), paper)
}

// imageKindTitle names a dataset kind.
var imageKindTitle = map[string]string{ImageCIFAR10: "CIFAR-10 format", ImageCIFAR100: "CIFAR-100", ImageIDX: "IDX",
	ImageSTL10: "STL-10", ImageFolder: "image folders"}

// thousands formats n with comma separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Markdown renders the image table: one column per dataset; the untrained
// encoder's row, then a block of three rows per method (alone, w/ kNN
// Sampler, w/ BatchSampler), each cell the measured mean ± std [the paper's
// number] and for the sampler rows the paired difference with the method
// alone; then the cost of every cell, each column's settings and what they
// scale down from, and the figures of every cell.
func (t *ImageTable) Markdown() string {
	l := gridLayout{
		heading: "## Image table: linear-probe top-1 accuracy (%)\n\n",
		intro: "Each cell: measured mean ± std over seeds [the paper's number for the dataset it stands for, at the paper's scale: " +
			"ResNet-50, 1000 epochs]; sampler rows: difference with the method alone over the same seeds (paired t-test, two-sided p; " +
			"**bold** when p < 0.05). – : not run or no result. Untrained encoder: the same network at its random initialisation, " +
			"scored by the same probe (the floor every trained row starts from).\n\n",
		blockTitle:  imageBlockTitle,
		paper:       t.paper,
		columnTitle: t.columnTitle,
	}
	var b strings.Builder
	grid := t.GraphTable
	grid.Blocks = slices.DeleteFunc(slices.Clone(t.Blocks), func(s string) bool { return s == BlockUntrained })
	grid.markdownGrid(&b, l)
	// The reference row goes first, after the header.
	if slices.Contains(t.Blocks, BlockUntrained) {
		var row strings.Builder
		row.WriteString("| Untrained encoder |")
		for _, d := range t.Datasets {
			if e := t.entry(BlockUntrained, "uniform", d); e != nil {
				fmt.Fprintf(&row, " %.2f±%.2f |", e.Mean, e.Std)
			} else {
				row.WriteString(" – |")
			}
		}
		row.WriteString("\n")
		md := b.String()
		sep := "\n|---|" + strings.Repeat("---|", len(t.Datasets)) + "\n"
		if i := strings.Index(md, sep); i >= 0 {
			i += len(sep)
			md = md[:i] + row.String() + md[i:]
		}
		b.Reset()
		b.WriteString(md)
	}
	l.blockTitle = map[string]string{BlockUntrained: "Untrained encoder"}
	for k, v := range imageBlockTitle {
		l.blockTitle[k] = v
	}
	t.GraphTable.markdownCost(&b, l)
	t.markdownSettings(&b)
	t.markdownCurves(&b)
	t.markdownFigures(&b)
	t.markdownTail(&b, "Datasets absent or skipped")
	return b.String()
}

// markdownSettings writes each column's settings and the paper's.
func (t *ImageTable) markdownSettings(b *strings.Builder) {
	b.WriteString("\n### Settings per dataset (2 CPU cores) and what they scale down from\n\n")
	b.WriteString("| Dataset | network | image | epochs | B | t | M | K | α | the paper's (appendix) |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, d := range t.Datasets {
		c, ok := t.Columns[d]
		if !ok {
			continue
		}
		s := c.Settings
		size := "native"
		if s.Size > 0 {
			size = fmt.Sprintf("%d×%d", s.Size, s.Size)
		}
		alpha := fmt.Sprintf("%g → %g", s.AlphaStart, s.Alpha)
		if s.AlphaStart == s.Alpha {
			alpha = fmt.Sprintf("%g", s.Alpha)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %d | %d | %d | %d | %d | %s | %s |\n", d, s.Arch, size, s.Epochs, s.BatchSize, s.RefreshEvery, s.M, s.K, alpha, s.Paper)
	}
}

// markdownCurves shows each dataset's accuracy-over-training figure and
// the Uniform rows' last two evaluations (has the accuracy stopped rising?).
func (t *ImageTable) markdownCurves(b *strings.Builder) {
	var lines []string
	for _, d := range t.Datasets {
		cs := t.Curves[d]
		if len(cs) == 0 {
			continue
		}
		var last []string
		for _, c := range cs {
			if c.Sampler != "uniform" || len(c.Points) < 2 {
				continue
			}
			p, q := c.Points[len(c.Points)-2], c.Points[len(c.Points)-1]
			last = append(last, fmt.Sprintf("%s %.2f at epoch %d → %.2f at epoch %d (%+.2f)", imageBlockTitle[c.Block], p.Mean, p.Epoch, q.Mean, q.Epoch, q.Mean-p.Mean))
		}
		lines = append(lines, fmt.Sprintf("**%s** — Uniform rows, last two evaluations: %s.\n\n![%s: accuracy over training](%s)\n", d, strings.Join(last, "; "), d, curveFigure(d)))
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\n### Accuracy over training (train.eval_every)\n\n")
	b.WriteString(strings.Join(lines, "\n"))
}

// markdownFigures links every finished cell's plots: the false-negative
// ratio of the batches over training per sampler and the in-batch cosine
// histograms (the paper's vision figures), and the loss.
func (t *ImageTable) markdownFigures(b *strings.Builder) {
	var lines []string
	for _, d := range t.Datasets {
		for _, blk := range t.Blocks {
			if blk == BlockUntrained {
				continue
			}
			e := t.entry(blk, "uniform", d)
			if e == nil {
				continue
			}
			dir := path.Join(filepath.ToSlash(e.Dir), "plots")
			lines = append(lines, fmt.Sprintf("| %s | %s | [false negatives](%s/fn_ratio.png) | [in-batch cosine](%s/similarity_hist.png) | [loss](%s/loss.png) |",
				d, imageBlockTitle[blk], dir, dir, dir))
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\n### Figures per cell (all three samplers in each)\n\n| Dataset | Method | | | |\n|---|---|---|---|---|\n")
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n")
}

// Write writes t to dir as its figures (WriteFigures), table.json and
// table.md; the figures first, so that table.md never names a figure that
// is not there.
func (t *ImageTable) Write(dir string) error {
	if err := t.WriteFigures(dir); err != nil {
		return err
	}
	return cellrun.WriteReport(dir, "table", t, t.Markdown())
}

// ReadImageTable reads an image table's table.json.
func ReadImageTable(file string) (*ImageTable, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var t ImageTable
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &t, nil
}
