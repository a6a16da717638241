package train

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
)

// metricsWriter appends JSON lines to the run's own metrics file and to the
// experiment's DIR/metrics.jsonl.
type metricsWriter struct {
	run, all *os.File
	runPath  string
}

func openMetrics(runPath, allPath string) (*metricsWriter, error) {
	run, err := os.OpenFile(runPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	all, err := os.OpenFile(allPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		run.Close()
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return &metricsWriter{run: run, all: all, runPath: runPath}, nil
}

func (m *metricsWriter) write(rec map[string]any) error {
	for k, v := range rec { // JSON has no NaN: an undefined statistic is null
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			rec[k] = nil
		}
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	b = append(b, '\n')
	if _, err := m.run.Write(b); err != nil {
		return fmt.Errorf("metrics %s: %w", m.runPath, err)
	}
	if _, err := m.all.Write(b); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

func (m *metricsWriter) offset() int64 {
	st, err := m.run.Stat()
	if err != nil {
		return 0
	}
	return st.Size()
}

func (m *metricsWriter) sync() error {
	if err := m.run.Sync(); err != nil {
		return fmt.Errorf("metrics %s: %w", m.runPath, err)
	}
	return m.all.Sync()
}

func (m *metricsWriter) close() error {
	e1 := m.run.Close()
	e2 := m.all.Close()
	if e1 != nil {
		return e1
	}
	return e2
}

// truncateFile cuts path to n bytes (used when a run resumes from a
// checkpoint: lines logged after it are logged again).
func truncateFile(path string, n int64) error {
	if err := os.Truncate(path, n); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("truncate %s: %w", path, err)
	}
	return nil
}

// concatFiles writes the concatenation of srcs (missing ones skipped) to dst.
func concatFiles(dst string, srcs []string) error {
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	for _, s := range srcs {
		f, err := os.Open(s)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			out.Close()
			return err
		}
		_, err = io.Copy(out, f)
		f.Close()
		if err != nil {
			out.Close()
			return err
		}
	}
	return out.Close()
}
