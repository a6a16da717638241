package table

import (
	"bytes"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/testenv"
	"github.com/batchsampler-go/batchsampler/train"
)

var updateWritten = flag.Bool("update-written", false, "rewrite table/testdata/written-*.txt from the planned cells' config.yaml as it stands")

// TestCellConfigsWritten pins the config.yaml (train.WriteConfig) of the
// cells the tables plan, byte for byte, in testdata/written-MODALITY.txt:
// a table resumes a cell only when the config.yaml in its directory is the
// one the code writes now (sameConfig), so a refactor of the config must
// leave every byte of them, or a long experiment starts its cells again.
// The datasets are described, not read: every graph block on a dataset of
// the paper with and without the caps and on one it does not name; every
// image block (and the untrained reference) on each kind of image data;
// every text block. Regenerate (only for an intended change, in its own
// commit) with
//
//	go test ./table -run TestCellConfigsWritten -update-written
func TestCellConfigsWritten(t *testing.T) {
	type cell struct {
		name string
		cfg  func() (train.Config, error)
	}
	var graph, image, text []cell
	for _, d := range []GraphData{
		{Name: "MUTAG", Source: "tu", Path: "tu/MUTAG"},
		{Name: "COLLAB", Source: "tu", Path: "tu/COLLAB"},
		{Name: "REDDIT-BINARY", Source: "gin", Path: "tu_gin_format/REDDIT-BINARY/REDDIT-BINARY.txt"},
		{Name: "ENZYMES", Source: "tu", Path: "tu/ENZYMES"},
	} {
		for _, b := range GraphBlocks {
			graph = append(graph, cell{b + "/" + d.Name, func() (train.Config, error) { return GraphConfig(b, d, 1113, "/data", nil) }})
		}
	}
	for _, d := range []ImageData{
		{Name: "cifar10", Kind: ImageCIFAR10, Path: "cifar10", Train: 5085, Classes: 10},
		{Name: "cifar-10-full", Kind: ImageCIFAR10, Path: "cifar-10-full", Train: 50000, Classes: 10, Paper: "CIFAR10"},
		{Name: "cifar-100", Kind: ImageCIFAR100, Path: "cifar-100", Train: 50000, Classes: 100, Paper: "CIFAR100"},
		{Name: "fashion-mnist", Kind: ImageIDX, Path: DebianFashionMNIST, Train: 60000, Classes: 10},
		{Name: "stl10", Kind: ImageSTL10, Path: "stl10", Train: 5000, Classes: 10, Paper: "STL10"},
		{Name: "imagenet-100", Kind: ImageFolder, Path: "imagenet-100", Train: 126689, Classes: 100, Paper: "ImageNet-100"},
	} {
		for _, b := range append([]string{BlockUntrained}, ImageBlocks...) {
			image = append(image, cell{b + "/" + d.Name, func() (train.Config, error) { return ImageConfig(b, d, "", nil) }})
		}
	}
	for _, b := range TextBlocks {
		text = append(text, cell{b, func() (train.Config, error) { return TextConfig(b, "/data", nil) }})
	}
	for _, m := range []struct {
		modality string
		cells    []cell
	}{{"graph", graph}, {"image", image}, {"text", text}} {
		t.Run(m.modality, func(t *testing.T) {
			var got bytes.Buffer
			for _, c := range m.cells {
				cfg, err := c.cfg()
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				fmt.Fprintf(&got, "### %s\n", c.name)
				if err := train.WriteConfig(&got, &cfg); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
			}
			path := filepath.Join("testdata", "written-"+m.modality+".txt")
			want := testenv.GoldenFile(t, path, got.Bytes(), *updateWritten, "-update-written")
			if bytes.Equal(got.Bytes(), want) {
				return
			}
			w, g := strings.Split(string(want), "\n"), strings.Split(got.String(), "\n")
			cellName := ""
			for i := 0; i < max(len(w), len(g)); i++ {
				var wl, gl string
				if i < len(w) {
					wl = w[i]
				}
				if i < len(g) {
					gl = g[i]
				}
				if strings.HasPrefix(wl, "### ") {
					cellName = wl[4:]
				}
				if wl != gl {
					t.Fatalf("%s: the config.yaml of cell %s differs at line %d: want %q, got %q", path, cellName, i+1, wl, gl)
				}
			}
		})
	}
}
