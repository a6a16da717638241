package data

import (
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/testenv"
)

func BenchmarkReadTUNCI1(b *testing.B) {
	dir := testenv.Path(b, "tu", "NCI1")
	for b.Loop() {
		if _, err := ReadTU(dir, "NCI1"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadTUMUTAG(b *testing.B) {
	dir := testenv.Path(b, "tu", "MUTAG")
	for b.Loop() {
		if _, err := ReadTU(dir, "MUTAG"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadGINCOLLAB(b *testing.B) {
	path := testenv.Path(b, "tu_gin_format", "COLLAB", "COLLAB.txt.gz")
	for b.Loop() {
		if _, err := ReadGIN(path); err != nil {
			b.Fatal(err)
		}
	}
}
