package augment

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		specs   []Spec
		mode    string
		want    GraphAugmenter
		wantErr []string // substrings of the error; nil means success
	}{
		{
			name:  "graphcl random4",
			specs: []Spec{{"node_drop", 0.1}, {"edge_remove", 0.1}, {"subgraph", 0.2}, {"attr_mask", 0.1}},
			mode:  "random_choice",
			want:  RandomChoice{Augs: []GraphAugmenter{NodeDrop{0.1}, EdgeRemove{0.1}, Subgraph{0.2}, AttrMask{0.1}}},
		},
		{
			name:  "compose",
			specs: []Spec{{"edge_perturb", 0}, {"identity", 0}, {"subgraph", 1}},
			mode:  "compose",
			want:  Compose{Augs: []GraphAugmenter{EdgePerturb{0}, Identity{}, Subgraph{1}}},
		},
		{
			name:  "one spec is still wrapped",
			specs: []Spec{{"node_drop", 0.5}},
			mode:  "random_choice",
			want:  RandomChoice{Augs: []GraphAugmenter{NodeDrop{0.5}}},
		},
		{name: "bad mode", specs: []Spec{{"identity", 0}}, mode: "random", wantErr: []string{"mode", `"random"`, "random_choice", "compose"}},
		{name: "empty mode", specs: []Spec{{"identity", 0}}, mode: "", wantErr: []string{"mode", "random_choice"}},
		{name: "no specs", specs: nil, mode: "compose", wantErr: []string{"specs is empty", "node_drop"}},
		{name: "unknown kind", specs: []Spec{{"node_drop", 0.1}, {"drop_edges", 0.1}}, mode: "compose",
			wantErr: []string{"specs[1].kind", `"drop_edges"`, "node_drop, edge_remove, edge_perturb, subgraph, attr_mask, identity"}},
		{name: "kind is case sensitive", specs: []Spec{{"Node_Drop", 0.1}}, mode: "compose", wantErr: []string{"specs[0].kind"}},
		{name: "node_drop ratio 1", specs: []Spec{{"node_drop", 1}}, mode: "compose", wantErr: []string{"specs[0].ratio", "[0, 1)", "node_drop"}},
		{name: "edge_remove negative", specs: []Spec{{"subgraph", 0.2}, {"edge_remove", -0.1}}, mode: "compose", wantErr: []string{"specs[1].ratio", "-0.1", "[0, 1)"}},
		{name: "edge_perturb NaN", specs: []Spec{{"edge_perturb", math.NaN()}}, mode: "compose", wantErr: []string{"specs[0].ratio", "NaN", "[0, 1)"}},
		{name: "attr_mask 1.5", specs: []Spec{{"attr_mask", 1.5}}, mode: "random_choice", wantErr: []string{"specs[0].ratio", "[0, 1)"}},
		{name: "subgraph 0", specs: []Spec{{"subgraph", 0}}, mode: "compose", wantErr: []string{"specs[0].ratio", "(0, 1]", "subgraph"}},
		{name: "subgraph 1.01", specs: []Spec{{"subgraph", 1.01}}, mode: "compose", wantErr: []string{"specs[0].ratio", "(0, 1]"}},
		{name: "identity with ratio", specs: []Spec{{"identity", 0.3}}, mode: "compose", wantErr: []string{"specs[0].ratio", "want 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := New(tt.specs, tt.mode)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("New = %#v, want %#v", got, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, got %#v", got)
			}
			if got != nil {
				t.Fatalf("augmenter %#v returned with the error", got)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestString(t *testing.T) {
	want := "without_isolated(random_choice(node_drop(0.1), edge_remove(0.1), subgraph(0.2), attr_mask(0.1)))"
	if got := GraphCLDefault().(interface{ String() string }).String(); got != want {
		t.Fatalf("GraphCLDefault() = %s, want %s", got, want)
	}
	c := Compose{Augs: []GraphAugmenter{EdgePerturb{0.3}, nil, Identity{}, marker(1)}}
	if got, want := c.String(), "compose(edge_perturb(0.3), identity, identity, ?)"; got != want {
		t.Fatalf("String() = %s, want %s", got, want)
	}
}
