package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/testenv"
)

// TestWriteTURoundTrip: ReadTU(WriteTU(s)) is s, for the TOY fixture (node
// and edge labels, attributes, self-loops, class values −1/1), a generated
// set and, when the shared data is there, MUTAG and NCI1.
func TestWriteTURoundTrip(t *testing.T) {
	toy, err := ReadTU(filepath.Join("testdata", "tu", "TOY"), "TOY")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := GenerateGraphs(SynthConfig{Graphs: 30, Classes: 3, MinNodes: 6, MaxNodes: 14, NodeLabels: 0, Noise: 0.1}, 5)
	if err != nil {
		t.Fatal(err)
	}
	gen.Name = "GEN"
	sets := []*GraphSet{toy, gen}
	for _, name := range []string{"MUTAG", "NCI1"} {
		dir := filepath.Join(testenv.DataDir(), "tu", name)
		if _, err := os.Stat(dir); err != nil {
			t.Logf("%s not under the data root (%v): skipped", name, err)
			continue
		}
		s, err := ReadTU(dir, name)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, s)
	}
	for _, s := range sets {
		t.Run(s.Name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			if err := WriteTU(dir, s); err != nil {
				t.Fatal(err)
			}
			back, err := ReadTU(dir, s.Name)
			if err != nil {
				t.Fatal(err)
			}
			sameGraphs(t, back, s)
		})
	}
}

func TestWriteTUErrors(t *testing.T) {
	g := &Graph{NumNodes: 2, Edges: [][2]int32{{0, 1}}, Label: 0}
	empty := &Graph{NumNodes: 0, Label: 0}
	labelled := &Graph{NumNodes: 1, NodeLabels: []int32{0}, Label: 0}
	for _, tc := range []struct {
		name string
		set  *GraphSet
		want string
	}{
		{"no name", &GraphSet{Graphs: []*Graph{g}, NumClasses: 1, ClassValues: []int{0}}, "needs a name"},
		{"no graphs", &GraphSet{Name: "X", NumClasses: 1, ClassValues: []int{0}}, "no graphs"},
		{"class values", &GraphSet{Name: "X", Graphs: []*Graph{g}, NumClasses: 2, ClassValues: []int{0}}, "1 class values for 2 classes"},
		{"empty graph", &GraphSet{Name: "X", Graphs: []*Graph{g, empty}, NumClasses: 1, ClassValues: []int{0}}, "graph 1 has no nodes"},
		{"class out of range", &GraphSet{Name: "X", Graphs: []*Graph{{NumNodes: 1, Label: 3}}, NumClasses: 1, ClassValues: []int{0}}, "graph 0 has class 3"},
		{"mixed labels", &GraphSet{Name: "X", Graphs: []*Graph{labelled, {NumNodes: 1}}, NumClasses: 1, ClassValues: []int{0}}, "graph 1 lacks node labels"},
		{"bad edge", &GraphSet{Name: "X", Graphs: []*Graph{{NumNodes: 1, Edges: [][2]int32{{0, 4}}}}, NumClasses: 1, ClassValues: []int{0}}, "graph 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := WriteTU(t.TempDir(), tc.set)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// A file where the directory should be.
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteTU(filepath.Join(f, "sub"), &GraphSet{Name: "X", Graphs: []*Graph{g}, NumClasses: 1, ClassValues: []int{0}})
	if err == nil || !strings.Contains(err.Error(), "write TU dataset X") {
		t.Fatalf("error %v, want one naming the dataset", err)
	}
}
