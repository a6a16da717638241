package lab

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/batchsampler-go/batchsampler/internal/npy"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// MaxNPYBytes bounds the embeddings a page loads (the browser holds them
// twice, as the file and as Go's copy).
const MaxNPYBytes = 256 << 20

// ReadRun reads "your own run": the N×D embeddings cmd/train -embed writes
// (FILE.npy: float16, float32 or float64) and the labels beside them
// (FILE_labels.npy: N integers, int32 or int64, of any shape holding N
// values). The labels are renumbered 0..C−1 in increasing order of their
// values; names are the files' names for the errors.
func ReadRun(emb, labels []byte, embName, labelsName string) (sampler.Embeddings, []int, error) {
	m, err := npy.ReadFloat32Matrix(bytes.NewReader(emb), MaxNPYBytes)
	if err != nil {
		return sampler.Embeddings{}, nil, fmt.Errorf("%s: %w (want the N×D embeddings of cmd/train -embed)", embName, err)
	}
	if m.Rows < 2 || m.Cols < 1 {
		return sampler.Embeddings{}, nil, fmt.Errorf("%s: %d×%d embeddings: want at least 2 rows and 1 column", embName, m.Rows, m.Cols)
	}
	r := bytes.NewReader(labels)
	h, err := npy.ReadHeader(r)
	if err != nil {
		return sampler.Embeddings{}, nil, fmt.Errorf("%s: %w (want the labels file cmd/train -embed writes beside the embeddings, FILE_labels.npy)", labelsName, err)
	}
	if h.DType.Kind != 'i' || h.DType.Size != 4 && h.DType.Size != 8 {
		return sampler.Embeddings{}, nil, fmt.Errorf("%s: dtype %s: want int32 or int64 labels", labelsName, h.DType)
	}
	if h.Elements() != int64(m.Rows) {
		return sampler.Embeddings{}, nil, fmt.Errorf("%s: shape %s holds %d labels, but %s has %d rows", labelsName, npy.ShapeString(h.Shape), h.Elements(), embName, m.Rows)
	}
	raw := make([]int32, m.Rows)
	if err := npy.ReadInt32s(r, h, raw); err != nil {
		return sampler.Embeddings{}, nil, fmt.Errorf("%s: %w", labelsName, err)
	}
	if err := npy.ExpectEOF(r); err != nil {
		return sampler.Embeddings{}, nil, fmt.Errorf("%s: %w", labelsName, err)
	}
	vals := slices.Clone(raw)
	slices.Sort(vals)
	vals = slices.Compact(vals)
	out := make([]int, len(raw))
	for i, v := range raw {
		out[i], _ = slices.BinarySearch(vals, v)
	}
	return sampler.Embeddings{N: m.Rows, D: m.Cols, Data: m.Data}, out, nil
}
