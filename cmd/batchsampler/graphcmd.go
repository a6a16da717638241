package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batchsampler-go/batchsampler/internal/npy"
	"github.com/batchsampler-go/batchsampler/internal/tempfile"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// graphFormat names the sidecar format of graph files.
const graphFormat = "batchsampler-graph/1"

// graphMeta is the JSON sidecar FILE.json written next to every graph (or
// shard) FILE: what it was built from and the CRC-32C (Castagnoli) of its
// .npy data bytes, so merge and batches can tell a damaged or mismatched
// shard.
type graphMeta struct {
	Format string `json:"format"`
	N      int    `json:"n"`
	K      int    `json:"k"`
	Rows   [2]int `json:"rows"`
	Graph  string `json:"graph"`
	M      int    `json:"m"`
	Seed   uint64 `json:"seed"`
	// Candidates is "with_replacement" for the published code's candidate
	// draw (graph -candidates), empty for the default draw.
	Candidates string `json:"candidates,omitempty"`
	Build      uint64 `json:"build"`
	BuildSeed  uint64 `json:"build_seed"`
	CRC32C     uint32 `json:"crc32c"`
	Embeddings string `json:"embeddings,omitempty"`
	D          int    `json:"d,omitempty"`
	// Precision is "float16" when float32/float64 embeddings were rounded
	// to float16 on read (graph -precision float16): the graph is then that
	// of the rounded embeddings. Empty otherwise (float16 files are read
	// exactly whether kept as float16 or widened: the same graph).
	Precision string  `json:"precision,omitempty"`
	Seconds   float64 `json:"build_seconds,omitempty"`
}

func metaPath(p string) string { return p + ".json" }

func readMeta(p string) (*graphMeta, error) {
	b, err := os.ReadFile(metaPath(p))
	if err != nil {
		return nil, err
	}
	var m graphMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", metaPath(p), err)
	}
	if m.Format != graphFormat {
		return nil, fmt.Errorf("%s: format %q, want %q", metaPath(p), m.Format, graphFormat)
	}
	if m.N <= 0 || m.K < 0 || m.Rows[0] < 0 || m.Rows[1] > m.N || m.Rows[0] > m.Rows[1] {
		return nil, fmt.Errorf("%s: rows [%d, %d) of N = %d, K = %d are inconsistent", metaPath(p), m.Rows[0], m.Rows[1], m.N, m.K)
	}
	return &m, nil
}

func writeJSONAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

// parseRows reads "a:b" (either side may be empty: 0 and N).
func parseRows(s string, n int) (int, int, error) {
	if s == "" {
		return 0, n, nil
	}
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, fmt.Errorf("-rows %q: want a:b (rows a to b−1; a or b may be left out)", s)
	}
	lo, hi := 0, n
	var err error
	if a != "" {
		if lo, err = strconv.Atoi(a); err != nil {
			return 0, 0, fmt.Errorf("-rows %q: %q is not an integer", s, a)
		}
	}
	if b != "" {
		if hi, err = strconv.Atoi(b); err != nil {
			return 0, 0, fmt.Errorf("-rows %q: %q is not an integer", s, b)
		}
	}
	if lo < 0 || hi > n || lo > hi {
		return 0, 0, fmt.Errorf("-rows %q: want 0 ≤ a ≤ b ≤ N = %d", s, n)
	}
	return lo, hi, nil
}

// Embedding precisions of graph -precision.
const (
	precisionAuto    = "auto"    // float16 files kept as float16, others float32
	precisionFloat32 = "float32" // everything widened to float32
	precisionFloat16 = "float16" // float32/float64 rounded to float16 on read
)

// embeddingsFile is the embeddings graph builds from: float32 rows (e) or
// float16 rows (h, with half set).
type embeddingsFile struct {
	e    sampler.Embeddings
	h    sampler.Float16Embeddings
	half bool
	from string // the file's dtype, e.g. "<f2"
}

func (f *embeddingsFile) dims() (n, d int) {
	if f.half {
		return f.h.N, f.h.D
	}
	return f.e.N, f.e.D
}

// readEmbeddingsFile reads an N×d float16/32/64 .npy file at the given
// precision (precisionAuto, precisionFloat32 or precisionFloat16).
func readEmbeddingsFile(path, precision string) (*embeddingsFile, error) {
	mode := halfNative
	switch precision {
	case precisionAuto:
	case precisionFloat32:
		mode = halfNever
	case precisionFloat16:
		mode = halfAlways
	default:
		return nil, fmt.Errorf("-precision %q: want %s, %s or %s", precision, precisionAuto, precisionFloat32, precisionFloat16)
	}
	p, err := readPayloadFile(path, mode, embeddingsOnly)
	if err != nil {
		return nil, fmt.Errorf("embeddings %s: %w", path, err)
	}
	if p.f16 != nil {
		return &embeddingsFile{h: sampler.Float16Embeddings{N: p.rows, D: p.cols, Bits: p.f16}, half: true, from: p.from}, nil
	}
	return &embeddingsFile{e: sampler.Embeddings{N: p.rows, D: p.cols, Data: p.f32}, from: p.from}, nil
}

// crcWriter is the CRC-32C of what is written through it.
type crcWriter struct{ h hash.Hash32 }

func (c crcWriter) Write(p []byte) (int, error) { return c.h.Write(p) }

// writeGraphFile writes rows of a neighbour table as an int32 .npy file and
// its sidecar, both atomically.
func writeGraphFile(path string, shape []int, adj []int32, meta graphMeta) error {
	f, err := tempfile.Create(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := w.Write(npy.AppendHeader(nil, npy.Int32, shape)); err != nil {
		f.Close()
		return err
	}
	crc := crcWriter{crc32.New(castagnoli)}
	if err := npy.WriteInt32Data(io.MultiWriter(w, crc), adj); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	meta.Format, meta.CRC32C = graphFormat, crc.h.Sum32()
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return writeJSONAtomic(metaPath(path), meta)
}

// cmdGraph is the graph subcommand.
func cmdGraph(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	fs.SetOutput(stderr)
	emb := fs.String("emb", "", "N×d embeddings `file` (.npy float16/32/64, C order)")
	out := fs.String("out", "", "output `file`: the int32 .npy neighbour table, with FILE.json beside it")
	m := fs.Int("m", sampler.DefaultM, "M, candidates drawn per node")
	k := fs.Int("k", sampler.DefaultK, "K, neighbours kept per node")
	kind := fs.String("graph-kind", sampler.GraphProximity, "proximity (Algorithm 2) or knn (exact)")
	candidates := fs.String("candidates", sampler.CandidatesWithoutReplacement, "proximity graph's candidate draw: without_replacement (M distinct other nodes) or with_replacement (the published code's: M uniform draws from all N nodes, the node itself and repeats kept, M not clamped)")
	seed := fs.Uint64("seed", 1, "the sampler seed of the job that will use the graph")
	build := fs.Uint64("build", 1, "which graph of that sampler: its build-th refresh (1: before step 0)")
	rows := fs.String("rows", "", "build only rows `a:b` (a shard for an array job; merge joins them)")
	workers := fs.Int("workers", 0, "goroutines (0: GOMAXPROCS); the graph does not depend on it")
	precision := fs.String("precision", precisionAuto, "embeddings held as: auto (a float16 file as float16, half the memory, the same graph; others float32), float32 (always widened), or float16 (float32/64 rounded to float16 on read: scores of the rounded rows, near-equal candidates may reorder)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: batchsampler graph -emb E.npy -out G.npy [-m M -k K -graph-kind proximity -candidates without_replacement -seed S -build 1 -rows a:b -precision auto]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *emb == "" || *out == "" {
		return errors.New("graph: -emb and -out are required")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("graph: unexpected arguments %q", fs.Args())
	}
	if *build < 1 {
		return errors.New("graph: -build counts from 1 (the refresh before step 0)")
	}
	if *m < *k {
		return fmt.Errorf("graph: -m %d: want M ≥ K = %d", *m, *k)
	}
	t0 := time.Now()
	ef, err := readEmbeddingsFile(*emb, *precision)
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	n, d := ef.dims()
	lo, hi, err := parseRows(*rows, n)
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	t1 := time.Now()
	if err := checkCandidates(*candidates, *kind); err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	opt := sampler.GraphOptions{M: *m, K: *k, Workers: *workers, Seed: sampler.BuildSeed(*seed, *build), Candidates: *candidates}
	var g *sampler.GraphRows
	held := "float32"
	if ef.half {
		// float16 rows stay float16 (N×d×2 bytes), converted to normalised
		// float32 block by block while scoring: the same graph as widened.
		held = "float16"
		g, err = sampler.BuildGraphRowsFloat16(ef.h, *kind, opt, lo, hi)
	} else {
		// The embeddings were read for this build only: normalise them in
		// place rather than beside a copy (N×d×4 bytes less at the peak).
		if err = sampler.NormalizeRowsInPlace(ef.e); err == nil {
			g, err = sampler.BuildGraphRowsNormalized(ef.e, *kind, opt, lo, hi)
		}
	}
	if err != nil {
		return fmt.Errorf("graph: %s: %w", *emb, err)
	}
	secs := time.Since(t1).Seconds()
	meta := graphMeta{N: n, K: g.K, Rows: [2]int{lo, hi}, Graph: *kind, M: min(*m, n-1), Seed: *seed, Build: *build,
		BuildSeed: opt.Seed, Embeddings: *emb, D: d, Seconds: secs}
	if ef.half && ef.from != npy.Float16.String() && ef.from != (npy.DType{Kind: 'f', Size: 2, BigEndian: true}).String() {
		meta.Precision = precisionFloat16
	}
	if *candidates == sampler.CandidatesWithReplacement {
		meta.M, meta.Candidates = *m, *candidates
	}
	if *kind == sampler.GraphKNN {
		meta.M, meta.BuildSeed = 0, 0
	}
	if err := writeGraphFile(*out, []int{hi - lo, g.K}, g.Adj, meta); err != nil {
		return fmt.Errorf("graph: write %s: %w", *out, err)
	}
	fmt.Fprintf(stdout, "graph: rows [%d, %d) of N = %d, K = %d (%s, M = %d, seed %d, build %d) from %s (d = %d, %s held as %s) in %.2fs (read %.2fs) → %s\n",
		lo, hi, n, g.K, *kind, meta.M, *seed, *build, *emb, d, ef.from, held, secs, t1.Sub(t0).Seconds(), *out)
	return nil
}

// cmdMerge is the merge subcommand: it joins the shards of one graph in
// row order, streaming (memory O(1)), checking every shard's checksum.
func cmdMerge(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "output `file`: the whole int32 .npy neighbour table, with FILE.json")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: batchsampler merge -out G.npy SHARD.npy...\n\nEvery shard needs its SHARD.npy.json (written by graph -rows); the shards may be given in any order.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return errors.New("merge: -out and at least one shard are required")
	}
	type part struct {
		path string
		meta *graphMeta
	}
	var parts []part
	for _, p := range fs.Args() {
		m, err := readMeta(p)
		if err != nil {
			return fmt.Errorf("merge: shard %s: %w (every shard needs the sidecar graph -rows writes)", p, err)
		}
		parts = append(parts, part{p, m})
	}
	slices.SortFunc(parts, func(a, b part) int { return a.meta.Rows[0] - b.meta.Rows[0] })
	ref := *parts[0].meta
	next := 0
	for _, p := range parts {
		m := p.meta
		if m.N != ref.N || m.K != ref.K || m.Graph != ref.Graph || m.M != ref.M || m.Seed != ref.Seed || m.Build != ref.Build || m.Candidates != ref.Candidates {
			return fmt.Errorf("merge: shard %s is of another graph (N=%d K=%d %s M=%d seed %d build %d) than %s (N=%d K=%d %s M=%d seed %d build %d)",
				p.path, m.N, m.K, m.Graph, m.M, m.Seed, m.Build, parts[0].path, ref.N, ref.K, ref.Graph, ref.M, ref.Seed, ref.Build)
		}
		if m.Precision != ref.Precision {
			return fmt.Errorf("merge: shard %s is of another graph (embeddings precision %q) than %s (%q): build every shard with the same -precision",
				p.path, m.Precision, parts[0].path, ref.Precision)
		}
		switch {
		case m.Rows[0] > next:
			return fmt.Errorf("merge: rows [%d, %d) are missing (shard %s starts at %d)", next, m.Rows[0], p.path, m.Rows[0])
		case m.Rows[0] < next:
			return fmt.Errorf("merge: shard %s (rows [%d, %d)) overlaps the rows before it (up to %d)", p.path, m.Rows[0], m.Rows[1], next)
		}
		next = m.Rows[1]
	}
	if next != ref.N {
		return fmt.Errorf("merge: rows [%d, %d) are missing (the last shard ends at %d)", next, ref.N, next)
	}
	f, err := tempfile.Create(filepath.Dir(*out), filepath.Base(*out)+".tmp*")
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	w := bufio.NewWriterSize(f, 1<<20)
	crc := crc32.New(castagnoli)
	copyPart := func(p part) error {
		in, err := os.Open(p.path)
		if err != nil {
			return err
		}
		defer in.Close()
		r := bufio.NewReaderSize(in, 1<<20)
		h, err := npy.ReadHeader(r)
		if err != nil {
			return err
		}
		rows, cols, err := h.Matrix()
		if err != nil {
			return err
		}
		if h.DType != npy.Int32 || rows != p.meta.Rows[1]-p.meta.Rows[0] || cols != p.meta.K {
			return fmt.Errorf("holds %s %s, its sidecar says (%d, %d) <i4", npy.ShapeString(h.Shape), h.DType, p.meta.Rows[1]-p.meta.Rows[0], p.meta.K)
		}
		own := crc32.New(castagnoli)
		n, err := io.Copy(io.MultiWriter(w, crc, own), io.LimitReader(r, h.DataBytes()))
		if err != nil {
			return err
		}
		if n != h.DataBytes() {
			return fmt.Errorf("data truncated: got %d of %d bytes", n, h.DataBytes())
		}
		if err := npy.ExpectEOF(r); err != nil {
			return err
		}
		if own.Sum32() != p.meta.CRC32C {
			return errors.New("checksum mismatch with its sidecar: the shard is damaged or was rewritten")
		}
		return nil
	}
	if _, err := w.Write(npy.AppendHeader(nil, npy.Int32, []int{ref.N, ref.K})); err != nil {
		f.Close()
		return fmt.Errorf("merge: %w", err)
	}
	for _, p := range parts {
		if err := copyPart(p); err != nil {
			f.Close()
			return fmt.Errorf("merge: shard %s: %w", p.path, err)
		}
	}
	if err := w.Flush(); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("merge: write %s: %w", *out, err)
	}
	if err := os.Rename(tmp, *out); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	meta := ref
	meta.Rows, meta.CRC32C, meta.Seconds = [2]int{0, ref.N}, crc.Sum32(), 0
	for _, p := range parts {
		meta.Seconds += p.meta.Seconds
	}
	if err := writeJSONAtomic(metaPath(*out), meta); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	fmt.Fprintf(stdout, "merge: %d shards → %s (N = %d, K = %d)\n", len(parts), *out, ref.N, ref.K)
	return nil
}

// readGraphFile reads a whole neighbour table for batches -graph. With a
// sidecar, its checksum and that it is a whole graph (not a shard) are
// checked, and the sidecar is returned.
func readGraphFile(path string) (*payload, *graphMeta, error) {
	p, err := readPayloadFile(path, halfNever, graphOnly)
	if err != nil {
		return nil, nil, fmt.Errorf("graph %s: %w", path, err)
	}
	meta, err := readMeta(path)
	if errors.Is(err, os.ErrNotExist) {
		return p, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("graph %s: %w", path, err)
	}
	if meta.Rows != [2]int{0, meta.N} {
		return nil, nil, fmt.Errorf("graph %s: holds rows [%d, %d) of a graph of %d nodes (a shard): merge the shards first", path, meta.Rows[0], meta.Rows[1], meta.N)
	}
	if p.rows != meta.N || p.cols != meta.K {
		return nil, nil, fmt.Errorf("graph %s: is %d×%d, its sidecar says %d×%d", path, p.rows, p.cols, meta.N, meta.K)
	}
	crc := crc32.New(castagnoli)
	buf := make([]byte, 0, 1<<16)
	for i := 0; i < len(p.i32); i += 1 << 14 {
		buf = buf[:0]
		for _, v := range p.i32[i:min(i+1<<14, len(p.i32))] {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(v))
		}
		crc.Write(buf)
	}
	if p.from != npy.Int32.String() || crc.Sum32() != meta.CRC32C {
		return nil, nil, fmt.Errorf("graph %s: checksum mismatch with %s: the file is damaged or was rewritten", path, metaPath(path))
	}
	return p, meta, nil
}

// checkCandidates validates -candidates: one of sampler.CandidateDraws, and
// with_replacement only for a proximity graph (the kNN graph draws none).
func checkCandidates(c, kind string) error {
	if !slices.Contains(sampler.CandidateDraws, c) {
		return fmt.Errorf("-candidates %q: want one of %s", c, strings.Join(sampler.CandidateDraws, ", "))
	}
	if c == sampler.CandidatesWithReplacement && kind != sampler.GraphProximity {
		return fmt.Errorf("-candidates %s: only for -graph-kind %s (the %s graph draws no candidates)", c, sampler.GraphProximity, kind)
	}
	return nil
}
