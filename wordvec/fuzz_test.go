package wordvec

import (
	"bytes"
	"slices"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
)

func FuzzRead(f *testing.F) {
	vocab, err := data.NewVocabFromWords([]string{data.UnkToken, "a", "b"}, []int64{0, 3, 2}, data.Tokenizer{})
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := (&Vectors{Vocab: vocab, Dim: 2, Data: []float32{0, 0, 1, 0, 0.6, 0.8}}).Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("batchsampler-wordvec 1 words=1 dim=1 keep_punct=false float32le crc32=00000000\n<unk>\t0\n\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := Read(bytes.NewReader(in), "fuzz.bin")
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := v.Write(&out); err != nil {
			t.Fatal(err)
		}
		w, err := Read(&out, "again")
		if err != nil || !slices.Equal(w.Data, v.Data) {
			t.Fatalf("round trip failed: %v", err)
		}
	})
}
