package train

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"
)

// checkpoint is everything a run needs to continue exactly where it stopped.
type checkpoint struct {
	Version        int
	RunID          string
	Step           int
	Params         map[string][]float32 // every parameter and buffer, by name
	Adam           []byte
	Sampler        []byte
	AugRNG         []byte
	TrainSeconds   float64
	SamplerSeconds float64
	MetricsOffset  int64 // length of the run's metrics file at the checkpoint
	Evals          []EvalRecord
	Cache          []float32 // training-time embeddings (sampler embedding "cached")
	CacheDim       int
}

const checkpointVersion = 1

// writeFileAtomic writes data to path through a temporary file in the same
// directory, synced and renamed, so a crash leaves either the old or the new
// file, never a torn one.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
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

func saveCheckpoint(path string, c *checkpoint) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(c); err != nil {
		return fmt.Errorf("encode checkpoint: %w", err)
	}
	if err := writeFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return nil
}

func loadCheckpoint(path string) (*checkpoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c checkpoint
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&c); err != nil {
		return nil, fmt.Errorf("checkpoint %s is damaged: %w", path, err)
	}
	if c.Version != checkpointVersion {
		return nil, fmt.Errorf("checkpoint %s has version %d, this program reads version %d", path, c.Version, checkpointVersion)
	}
	return &c, nil
}
