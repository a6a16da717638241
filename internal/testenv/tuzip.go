package testenv

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TinyTUZip returns the zip of a small valid TU dataset NAME, laid out as
// the TU server's zips are (a NAME/ folder): 12 graphs in two classes,
// cycles (label 1) and stars (label 2) of 4 to 6 nodes, with node labels.
// The download and quick-start tests serve it from a local HTTP server.
func TinyTUZip(tb testing.TB, name string) []byte {
	tb.Helper()
	var a, ind, glab, nlab strings.Builder
	node := 0 // last global node id (TU ids are 1-based)
	for g := 1; g <= 12; g++ {
		n := 4 + g%3
		first := node + 1
		star := g%2 == 0
		for i := 0; i < n; i++ {
			node++
			fmt.Fprintln(&ind, g)
			label := 0
			if star && i == 0 {
				label = 1
			}
			fmt.Fprintln(&nlab, label)
		}
		edge := func(u, v int) { fmt.Fprintf(&a, "%d, %d\n%d, %d\n", u, v, v, u) }
		for i := 1; i < n; i++ {
			if star {
				edge(first, first+i)
			} else {
				edge(first+i-1, first+i)
			}
		}
		if !star {
			edge(first+n-1, first)
		}
		class := 1
		if star {
			class = 2
		}
		fmt.Fprintln(&glab, class)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range []struct{ suffix, content string }{
		{"_A.txt", a.String()}, {"_graph_indicator.txt", ind.String()},
		{"_graph_labels.txt", glab.String()}, {"_node_labels.txt", nlab.String()},
	} {
		w, err := zw.Create(name + "/" + name + f.suffix)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write([]byte(f.content)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}
