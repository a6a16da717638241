package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/batchsampler-go/batchsampler/internal/npy"
)

// readEmbFlagFile reads the embeddings .npy file of batches -emb.
func readEmbFlagFile(path string) (*payload, error) {
	p, err := readPayloadFile(path, halfNever, embeddingsOnly)
	if err != nil {
		if errors.Is(err, errWantEmbeddings) {
			return nil, fmt.Errorf("-emb %s: %w (a neighbour table goes with -graph)", path, err)
		}
		return nil, fmt.Errorf("-emb %s: %w", path, err)
	}
	return p, nil
}

// batchMatrix lays batches out as a steps × width int64 matrix, width the
// longest batch, shorter rows padded with −1.
func batchMatrix(batches [][]int) (data []int64, width int) {
	for _, b := range batches {
		width = max(width, len(b))
	}
	data = make([]int64, 0, len(batches)*width)
	for _, b := range batches {
		for _, v := range b {
			data = append(data, int64(v))
		}
		for i := len(b); i < width; i++ {
			data = append(data, -1)
		}
	}
	return data, width
}

// cmdBatches is the batches subcommand.
func cmdBatches(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("batches", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sf := addSamplerFlags(fs)
	emb := fs.String("emb", "", "N×d embeddings `file` (.npy float16/32/64): used by every refresh due in this run")
	graphFile := fs.String("graph", "", "neighbour table `file` from the graph subcommand (int32/int64 N×K .npy): installed at every refresh due in this run")
	n := fs.Int("n", 0, "N, the number of instances (for kind uniform, which reads no embeddings)")
	statePath := fs.String("state", "", "sampler state `file`: read when it exists, written after the batches")
	steps := fs.Int("steps", 0, "number of steps to write (0: up to the end of the current epoch, a whole epoch from an epoch's start)")
	out := fs.String("out", "", "output `file`: int64 .npy, steps × B (−1 pads a short batch; B+1 columns when N mod B = 1)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: batchsampler batches [sampler flags] (-emb E.npy | -graph G.npy | -n N) -state S.bin -out O.npy [-steps n]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("batches: unexpected arguments %q", fs.Args())
	}
	if *out == "" {
		return errors.New("batches: -out is required")
	}
	if *emb != "" && *graphFile != "" {
		return errors.New("batches: give -emb or -graph, not both")
	}
	if *steps < 0 {
		return fmt.Errorf("batches: -steps %d: want ≥ 0", *steps)
	}
	cfg, err := sf.config()
	if err != nil {
		return fmt.Errorf("batches: %w", err)
	}
	var s *session
	if b, err := os.ReadFile(*statePath); *statePath != "" && err == nil {
		if s, err = restoreSession(b, 0, true); err != nil {
			return fmt.Errorf("batches: %s: %w", *statePath, err)
		}
		if err := mismatch(cfg, s.cfg, setFlags(fs), *statePath); err != nil {
			return fmt.Errorf("batches: %w", err)
		}
	} else if *statePath != "" && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("batches: %w", err)
	} else {
		s = newSession(cfg, 0, true)
	}
	if *n > 0 {
		if s.n == 0 {
			if err := s.init(*n); err != nil {
				return fmt.Errorf("batches: -n: %w", err)
			}
		} else if s.n != *n {
			return fmt.Errorf("batches: -n %d, the state has N = %d", *n, s.n)
		}
	}
	for _, in := range []string{*emb, *graphFile} {
		if in == "" {
			continue
		}
		var p *payload
		if in == *graphFile {
			p, _, err = readGraphFile(in)
		} else {
			p, err = readEmbFlagFile(in)
		}
		if err != nil {
			return fmt.Errorf("batches: %w", err)
		}
		if _, err := s.submit(p, 0, 1, 0); err != nil {
			return fmt.Errorf("batches: %s: %w", in, err)
		}
	}
	if s.n == 0 {
		return errors.New("batches: N is not known: give -emb, -graph or -n")
	}
	bpe := s.smp.BatchesPerEpoch()
	count := *steps
	if count == 0 {
		count = bpe - s.next%bpe
	}
	if s.total > 0 {
		if s.next >= s.total {
			return fmt.Errorf("batches: all T = %d training steps were handed out", s.total)
		}
		count = min(count, s.total-s.next)
	}
	first := s.next
	batches := make([][]int, 0, count)
	for i := 0; i < count; i++ {
		b, err := s.batch(s.next)
		if err != nil {
			var ae *apiError
			if errors.As(err, &ae) && ae.code == "refresh_due" {
				return fmt.Errorf("batches: refresh due before step %d: give -emb (the current embeddings) or -graph", s.next)
			}
			return fmt.Errorf("batches: %w", err)
		}
		batches = append(batches, b)
	}
	data, width := batchMatrix(batches)
	var buf bytes.Buffer
	if err := npy.WriteInt64s(&buf, []int{len(batches), width}, data); err != nil {
		return err
	}
	if err := writeFileAtomic(*out, buf.Bytes()); err != nil {
		return fmt.Errorf("batches: write %s: %w", *out, err)
	}
	// The uploads serve this run only: the next run is given the current
	// embeddings (or graph) again.
	s.pending, s.last = nil, nil
	if *statePath != "" {
		st, err := s.marshal()
		if err != nil {
			return fmt.Errorf("batches: %w", err)
		}
		if err := writeFileAtomic(*statePath, st); err != nil {
			return fmt.Errorf("batches: write %s: %w", *statePath, err)
		}
	}
	fmt.Fprintf(stdout, "batches: steps [%d, %d) (epoch %d, %d batches per epoch) of N = %d, B = %d → %s", first, s.next, s.epochOf(first), bpe, s.n, s.cfg.B, *out)
	if *statePath != "" {
		fmt.Fprintf(stdout, "; state → %s", *statePath)
	}
	fmt.Fprintln(stdout)
	return nil
}
