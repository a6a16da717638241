package train

import "runtime/metrics"

// heapObjectsMetric is the runtime/metrics name of the bytes occupied by
// heap objects: the live ones and those dead but not yet swept (MemStats'
// HeapAlloc), read without stopping the world.
const heapObjectsMetric = "/memory/classes/heap/objects:bytes"

// memTracker records the high-water mark of the Go heap during a run, as
// the largest value of heapObjectsMetric it was shown: runOne samples it
// when the run is built (the method's data, e.g. MVGRL's views, are then
// in memory), after every training step (the step's values, garbage by
// then, count until the next collection, so the sample is near the step's
// peak unless a collection ran during the step) and after the final
// evaluation; Evaluate samples it before and after its evaluation. Peaks
// between two samples (inside a step or an evaluation) are missed; the
// process's peak RSS (processMaxRSS) bounds them.
type memTracker struct {
	sample [1]metrics.Sample
	peak   uint64
}

// newMemTracker returns a tracker that has taken its first sample.
func newMemTracker() *memTracker {
	t := &memTracker{}
	t.sample[0].Name = heapObjectsMetric
	t.observe()
	return t
}

// observe reads the heap's size and raises the peak if it is larger. A nil
// tracker does nothing.
func (t *memTracker) observe() {
	if t == nil {
		return
	}
	metrics.Read(t.sample[:])
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return // not supported by this runtime: the peak stays 0 (unknown)
	}
	if v := t.sample[0].Value.Uint64(); v > t.peak {
		t.peak = v
	}
}

// Peak returns the largest heap size observed, in bytes (0: unknown). A
// nil tracker returns 0.
func (t *memTracker) Peak() uint64 {
	if t == nil {
		return 0
	}
	return t.peak
}
