package train

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/batchsampler-go/batchsampler/internal/tempfile"
)

// checkpoint is everything a run needs to continue exactly where it stopped.
type checkpoint struct {
	Version      int
	RunID        string
	Step         int
	Params       map[string][]float32 // every parameter and buffer of the method, by name
	Optimizer    []byte
	Sampler      []byte // sampler.Driver state: the sampler, its cache, its seconds
	AugRNG       []byte
	Method       []byte            // a Stateful method's own state
	Hooks        map[string][]byte // the state of stateful hooks, by hook name
	TrainSeconds float64
	// MetricsOffset is the length of the run's metrics file at the
	// checkpoint.
	MetricsOffset int64
	Evals         []EvalRecord
	// The false-negative ratio summed over the current epoch so far, and
	// the mean of the last finished epoch (nil: none, or no labels).
	FNSum       float64
	FNCount     int
	LastEpochFN *float64
	// PendingHook names the epochEnd hook an interruption stopped at Step;
	// on resume it and the epochEnd hooks after it run before the loop.
	PendingHook string
}

const checkpointVersion = 2

// checkpointMagic starts a checkpoint file; the SHA-256 of the encoded
// checkpoint follows it.
const checkpointMagic = "batchsampler-checkpoint\n"

// checkpointNow writes the run's checkpoint atomically.
func (r *run) checkpointNow() error {
	c := &checkpoint{
		Version: checkpointVersion, RunID: r.spec.ID(), Step: r.step,
		Params:       map[string][]float32{},
		Hooks:        map[string][]byte{},
		TrainSeconds: r.trainSeconds, Evals: r.evals, MetricsOffset: r.metrics.offset(),
		FNSum: r.fnSum, FNCount: r.fnCount, LastEpochFN: r.lastEpochFN, PendingHook: r.pendingHook,
	}
	for _, p := range r.method.Params() {
		c.Params[p.Name] = append([]float32(nil), p.Value.Data().([]float32)...)
	}
	var err error
	if c.Optimizer, err = r.opt.MarshalBinary(); err != nil {
		return fmt.Errorf("save optimizer state: %w", err)
	}
	if c.Sampler, err = r.smp.MarshalBinary(); err != nil {
		return fmt.Errorf("save sampler state: %w", err)
	}
	if c.AugRNG, err = r.augSrc.MarshalBinary(); err != nil {
		return fmt.Errorf("save rng state: %w", err)
	}
	if st, ok := r.method.(Stateful); ok {
		if c.Method, err = st.MarshalBinary(); err != nil {
			return fmt.Errorf("save method state: %w", err)
		}
	}
	for name, st := range r.statefulHooks {
		if c.Hooks[name], err = st.MarshalBinary(); err != nil {
			return fmt.Errorf("save state of hook %s: %w", name, err)
		}
	}
	if err := r.metrics.sync(); err != nil {
		return err
	}
	if err := saveCheckpoint(r.ckptPath(), c); err != nil {
		return err
	}
	r.ckptStep = r.step
	return nil
}

// restore continues the run from c.
func (r *run) restore(c *checkpoint) error {
	if c.RunID != r.spec.ID() {
		return fmt.Errorf("checkpoint belongs to run %s, not %s", c.RunID, r.spec.ID())
	}
	for _, p := range r.method.Params() {
		v, ok := c.Params[p.Name]
		dst := p.Value.Data().([]float32)
		if !ok || len(v) != len(dst) {
			return fmt.Errorf("checkpoint has no parameter %s of size %d (the config changed?)", p.Name, len(dst))
		}
		copy(dst, v)
	}
	if err := r.opt.UnmarshalBinary(c.Optimizer); err != nil {
		return fmt.Errorf("restore optimizer: %w", err)
	}
	if err := r.smp.UnmarshalBinary(c.Sampler); err != nil {
		return fmt.Errorf("restore sampler: %w", err)
	}
	if err := r.augSrc.UnmarshalBinary(c.AugRNG); err != nil {
		return fmt.Errorf("restore rng: %w", err)
	}
	if st, ok := r.method.(Stateful); ok {
		if err := st.UnmarshalBinary(c.Method); err != nil {
			return fmt.Errorf("restore method state: %w", err)
		}
	}
	for name, st := range r.statefulHooks {
		b, ok := c.Hooks[name]
		if !ok {
			return fmt.Errorf("checkpoint has no state of hook %s (the config changed?)", name)
		}
		if err := st.UnmarshalBinary(b); err != nil {
			return fmt.Errorf("restore hook %s: %w", name, err)
		}
	}
	r.step, r.trainSeconds, r.evals = c.Step, c.TrainSeconds, c.Evals
	r.fnSum, r.fnCount, r.lastEpochFN, r.pendingHook = c.FNSum, c.FNCount, c.LastEpochFN, c.PendingHook
	r.ckptStep = c.Step
	return nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, synced and renamed, so a crash leaves either the old or the new
// file, never a torn one.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := tempfile.Create(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	ok = true
	return nil
}

// saveCheckpoint writes c as the magic line, the SHA-256 of the gob
// encoding, and the gob encoding.
func saveCheckpoint(path string, c *checkpoint) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(c); err != nil {
		return fmt.Errorf("encode checkpoint: %w", err)
	}
	sum := sha256.Sum256(buf.Bytes())
	out := make([]byte, 0, len(checkpointMagic)+len(sum)+buf.Len())
	out = append(append(append(out, checkpointMagic...), sum[:]...), buf.Bytes()...)
	if err := writeFileAtomic(path, out); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return nil
}

// errDamaged marks a checkpoint that fails its checksum or does not decode.
var errDamaged = errors.New("damaged")

func loadCheckpoint(path string) (*checkpoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	damaged := func(why string) error {
		return fmt.Errorf("checkpoint %s is %w (%s); it was not used: delete it to train this run again from the start, or restore a good copy", path, errDamaged, why)
	}
	if len(b) < len(checkpointMagic)+sha256.Size || string(b[:len(checkpointMagic)]) != checkpointMagic {
		return nil, damaged("not a checkpoint of this program, or truncated")
	}
	body := b[len(checkpointMagic)+sha256.Size:]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], b[len(checkpointMagic):len(checkpointMagic)+sha256.Size]) {
		return nil, damaged("checksum mismatch")
	}
	var c checkpoint
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&c); err != nil {
		return nil, damaged(err.Error())
	}
	if c.Version != checkpointVersion {
		return nil, fmt.Errorf("checkpoint %s has version %d, this program reads version %d", path, c.Version, checkpointVersion)
	}
	return &c, nil
}

// encodeFloatState encodes a step and float32 buffers (a stateful hook's
// state): step int64 | count uint32 | per buffer: length uint32, values.
func encodeFloatState(step int64, bufs [][]float32) []byte {
	var out []byte
	out = binary.LittleEndian.AppendUint64(out, uint64(step))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(bufs)))
	for _, b := range bufs {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(b)))
		for _, v := range b {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		}
	}
	return out
}

// decodeFloatState reads what encodeFloatState wrote into bufs, whose
// count and lengths must match; on error bufs are unchanged.
func decodeFloatState(b []byte, bufs [][]float32) (int64, error) {
	if len(b) < 12 {
		return 0, fmt.Errorf("state of %d bytes is truncated", len(b))
	}
	step := int64(binary.LittleEndian.Uint64(b))
	n := int(binary.LittleEndian.Uint32(b[8:]))
	if n != len(bufs) {
		return 0, fmt.Errorf("state has %d buffers, want %d", n, len(bufs))
	}
	p := b[12:]
	offs := make([]int, n)
	off := 0
	for i, dst := range bufs {
		if len(p)-off < 4 {
			return 0, fmt.Errorf("state is truncated at buffer %d", i)
		}
		l := int(binary.LittleEndian.Uint32(p[off:]))
		off += 4
		if l != len(dst) || len(p)-off < 4*l {
			return 0, fmt.Errorf("buffer %d has %d values, want %d (or is truncated)", i, l, len(dst))
		}
		offs[i] = off
		off += 4 * l
	}
	if off != len(p) {
		return 0, fmt.Errorf("state has %d trailing bytes", len(p)-off)
	}
	for i, dst := range bufs {
		for k := range dst {
			dst[k] = math.Float32frombits(binary.LittleEndian.Uint32(p[offs[i]+4*k:]))
		}
	}
	return step, nil
}
