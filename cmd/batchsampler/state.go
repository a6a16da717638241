package main

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"

	"github.com/batchsampler-go/batchsampler/internal/tempfile"
)

// State file layout (little-endian), written by the batches subcommand and
// the server:
//
//	magic "bssvcst\x00" | version uint32 | body length uint64 | CRC-32C of body uint32
//	body: gob of sessionState (the job configuration, N, T, the next step,
//	      the sampler.Driver's MarshalBinary, the kept batches and the
//	      pending upload)
//
// Incomplete sharded uploads are not saved (the ranks upload again when
// told refresh_due).
const (
	stateMagic      = "bssvcst\x00"
	stateVersion    = 1
	stateHeaderSize = len(stateMagic) + 4 + 8 + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type payloadState struct {
	Rows, Cols int
	Ints       bool
	From       string
	Data       []byte // little-endian float32 or int32
}

type sessionState struct {
	Config      jobConfig
	N, Total    int
	Next        int
	Prepared    bool
	Refreshes   int
	Driver      []byte
	KeptSteps   []int
	KeptLens    []int
	KeptIdx     []byte // int32 little-endian, the kept batches concatenated
	Pending     *payloadState
	Last        *payloadState
	HasSampler  bool
	ReuseUpload bool
}

func payloadToState(p *payload) *payloadState {
	if p == nil {
		return nil
	}
	st := &payloadState{Rows: p.rows, Cols: p.cols, Ints: p.ints, From: p.from}
	if p.ints {
		st.Data = make([]byte, 0, 4*len(p.i32))
		for _, v := range p.i32 {
			st.Data = binary.LittleEndian.AppendUint32(st.Data, uint32(v))
		}
	} else {
		st.Data = make([]byte, 0, 4*len(p.f32))
		for _, v := range p.f32 {
			st.Data = binary.LittleEndian.AppendUint32(st.Data, math.Float32bits(v))
		}
	}
	return st
}

func stateToPayload(st *payloadState) (*payload, error) {
	if st == nil {
		return nil, nil
	}
	if st.Rows <= 0 || st.Cols <= 0 || len(st.Data) != 4*st.Rows*st.Cols {
		return nil, fmt.Errorf("upload of %d×%d with %d bytes", st.Rows, st.Cols, len(st.Data))
	}
	p := &payload{rows: st.Rows, cols: st.Cols, ints: st.Ints, from: st.From}
	n := st.Rows * st.Cols
	if st.Ints {
		p.i32 = make([]int32, n)
		for i := range p.i32 {
			p.i32[i] = int32(binary.LittleEndian.Uint32(st.Data[4*i:]))
		}
	} else {
		p.f32 = make([]float32, n)
		for i := range p.f32 {
			p.f32[i] = math.Float32frombits(binary.LittleEndian.Uint32(st.Data[4*i:]))
		}
	}
	return p, nil
}

// marshal saves everything the next batches depend on.
func (s *session) marshal() ([]byte, error) {
	st := sessionState{Config: s.cfg, N: s.n, Total: s.total, Next: s.next, Prepared: s.prepared, Refreshes: s.refreshes,
		Pending: payloadToState(s.pending), Last: payloadToState(s.last), HasSampler: s.smp != nil, ReuseUpload: s.reuse}
	if s.drv != nil {
		d, err := s.drv.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("save state: %w", err)
		}
		st.Driver = d
	}
	for _, k := range s.kept {
		st.KeptSteps = append(st.KeptSteps, k.step)
		st.KeptLens = append(st.KeptLens, len(k.idx))
		for _, v := range k.idx {
			st.KeptIdx = binary.LittleEndian.AppendUint32(st.KeptIdx, uint32(v))
		}
	}
	var body bytes.Buffer
	if err := gob.NewEncoder(&body).Encode(st); err != nil {
		return nil, fmt.Errorf("save state: encode: %w", err)
	}
	out := make([]byte, 0, stateHeaderSize+body.Len())
	out = append(out, stateMagic...)
	out = binary.LittleEndian.AppendUint32(out, stateVersion)
	out = binary.LittleEndian.AppendUint64(out, uint64(body.Len()))
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(body.Bytes(), castagnoli))
	return append(out, body.Bytes()...), nil
}

// restoreSession rebuilds a session from a state written by marshal. keep
// and reuse are the current options (keep may differ from the saved one;
// the kept batches are trimmed to it).
func restoreSession(p []byte, keep int, reuse bool) (*session, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("state: "+format, a...)
	}
	if len(p) < stateHeaderSize {
		return nil, bad("%d bytes, shorter than the %d-byte header", len(p), stateHeaderSize)
	}
	if string(p[:len(stateMagic)]) != stateMagic {
		return nil, bad("does not start with %q: not a batchsampler state file", stateMagic)
	}
	h := p[len(stateMagic):]
	if v := binary.LittleEndian.Uint32(h); v != stateVersion {
		return nil, bad("version %d, this program reads version %d", v, stateVersion)
	}
	body := p[stateHeaderSize:]
	if n := binary.LittleEndian.Uint64(h[4:]); n != uint64(len(body)) {
		return nil, bad("header says %d bytes follow, %d do (truncated or padded)", n, len(body))
	}
	if crc := binary.LittleEndian.Uint32(h[12:]); crc != crc32.Checksum(body, castagnoli) {
		return nil, bad("checksum mismatch: the state is damaged")
	}
	var st sessionState
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&st); err != nil {
		return nil, bad("decode: %v", err)
	}
	if err := st.Config.check("state.sampler"); err != nil {
		return nil, bad("%v", err)
	}
	s := newSession(st.Config, keep, reuse)
	if st.HasSampler {
		if err := s.init(st.N); err != nil {
			return nil, bad("%v", err)
		}
		if err := s.drv.UnmarshalBinary(st.Driver); err != nil {
			return nil, bad("%v", err)
		}
	}
	if st.Next < 0 || len(st.KeptSteps) != len(st.KeptLens) {
		return nil, bad("next step %d with %d kept steps and %d lengths", st.Next, len(st.KeptSteps), len(st.KeptLens))
	}
	s.total, s.next, s.prepared, s.refreshes = st.Total, st.Next, st.Prepared, st.Refreshes
	off := 0
	for i, step := range st.KeptSteps {
		l := st.KeptLens[i]
		if l < 0 || 4*(off+l) > len(st.KeptIdx) || step >= st.Next || (i > 0 && step <= st.KeptSteps[i-1]) {
			return nil, bad("kept batch %d (step %d) is inconsistent", i, step)
		}
		idx := make([]int, l)
		for j := range idx {
			v := int(int32(binary.LittleEndian.Uint32(st.KeptIdx[4*(off+j):])))
			if v < 0 || v >= s.n {
				return nil, bad("kept batch of step %d holds %d, want an instance in [0, %d)", step, v, s.n)
			}
			idx[j] = v
		}
		off += l
		s.kept = append(s.kept, keptBatch{step: step, idx: idx})
	}
	if over := len(s.kept) - keep; over > 0 {
		s.kept = s.kept[over:]
	}
	var err error
	if s.pending, err = stateToPayload(st.Pending); err != nil {
		return nil, bad("pending %v", err)
	}
	if s.last, err = stateToPayload(st.Last); err != nil {
		return nil, bad("last %v", err)
	}
	if !reuse {
		s.last = nil
	}
	return s, nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, synced and renamed, so that a crash leaves the old or the new
// file, never a torn one.
func writeFileAtomic(path string, data []byte) error {
	f, err := tempfile.Create(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
