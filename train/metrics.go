package train

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
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

// metricsCSVFirst are the leading columns of metrics.csv, in this order;
// any other scalar of the step records follows in name order.
var metricsCSVFirst = []string{"run", "sampler", "seed", "step", "epoch", "loss", "lr", "alpha", "fn_ratio", "batch_cos", "seconds"}

// writeMetricsCSV writes DIR/metrics.csv from DIR/metrics.jsonl: one row per
// logged step (the records without an "event"), one column per scalar; an
// empty cell where a record lacks the value or it is null.
func writeMetricsCSV(dir string) error {
	in, err := os.Open(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		return err
	}
	defer in.Close()
	var rows []map[string]any
	cols := map[string]bool{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("metrics.jsonl: %w", err)
		}
		if m["event"] != nil {
			continue
		}
		for k, v := range m {
			switch v.(type) {
			case map[string]any, []any:
			default:
				cols[k] = true
			}
		}
		rows = append(rows, m)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("metrics.jsonl: %w", err)
	}
	var header []string
	for _, c := range metricsCSVFirst {
		if cols[c] {
			header = append(header, c)
			delete(cols, c)
		}
	}
	header = append(header, keys(cols)...)
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(header)
	for _, m := range rows {
		rec := make([]string, len(header))
		for i, c := range header {
			switch v := m[c].(type) {
			case nil:
			case float64:
				rec[i] = strconv.FormatFloat(v, 'g', -1, 64)
			default:
				rec[i] = fmt.Sprint(v)
			}
		}
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, "metrics.csv"), buf.Bytes())
}
