// Package gctune caps the garbage collector's headroom in bytes, so that a
// process with a large live heap does not grow to twice its size.
//
// Go's collector lets the heap grow by GOGC percent (100 by default) of the
// live heap before it collects again. For a training run whose live heap
// is small (a GIN on NCI1: tens of megabytes) that headroom is cheap, and a
// smaller one only makes collections more frequent. For one whose live heap
// is gigabytes (MVGRL on REDDIT-BINARY-sized graphs: the dataset's two views
// and a step's tensors), it doubles the peak resident memory. A Tuner
// watches the live heap and sets the GC percent so that the headroom is
// about Headroom bytes, within [MinPercent, 100]: 100 while the live heap is
// below Headroom, less above it.
//
// The binaries (cmd/train, cmd/table) start one unless GOGC is set in the
// environment. Results do not depend on it: only when memory is collected.
package gctune

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Defaults of a Tuner.
const (
	DefaultHeadroom   = 256 << 20 // bytes
	DefaultMinPercent = 10
	DefaultInterval   = 250 * time.Millisecond
)

// Tuner sets the GC percent from the live heap.
type Tuner struct {
	Headroom   uint64        // bytes the heap may grow past the live heap (about)
	MinPercent int           // lowest GC percent it sets (1 or more)
	Interval   time.Duration // between two readings of the live heap
	// Live returns the live heap in bytes and SetPercent sets the GC
	// percent, returning the previous one; nil means the runtime's
	// (/gc/heap/live:bytes, debug.SetGCPercent). For tests.
	Live       func() uint64
	SetPercent func(int) int
}

// Percent returns the GC percent that gives a heap of live bytes about
// headroom bytes to grow, clamped to [minPercent, 100].
func Percent(live, headroom uint64, minPercent int) int {
	minPercent = max(minPercent, 1)
	if live <= headroom {
		return 100
	}
	return max(int(100*headroom/live), minPercent)
}

// Start tunes the GC percent until ctx is done or the returned stop is
// called; stop waits for the tuner to finish and restores the GC percent
// the process had before Start.
func (t Tuner) Start(ctx context.Context) (stop func()) {
	live, set := t.Live, t.SetPercent
	if live == nil {
		live = liveHeap
	}
	if set == nil {
		set = debug.SetGCPercent
	}
	interval := t.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	cur := -1
	apply := func() {
		if p := Percent(live(), t.Headroom, t.MinPercent); p != cur {
			set(p)
			cur = p
		}
	}
	orig := set(100) // read the current setting; apply sets the tuned one
	set(orig)
	apply()
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				apply()
			}
		}
	}()
	return func() {
		cancel()
		<-done
		set(orig)
	}
}

// Default returns a Tuner with the default headroom, floor and interval.
func Default() Tuner {
	return Tuner{Headroom: DefaultHeadroom, MinPercent: DefaultMinPercent, Interval: DefaultInterval}
}

// liveHeap returns the heap marked live by the last collection, in bytes.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
