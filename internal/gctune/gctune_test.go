package gctune

import (
	"context"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		live, headroom uint64
		min, want      int
	}{
		{0, 512 * mb, 10, 100},
		{100 * mb, 512 * mb, 10, 100},
		{512 * mb, 512 * mb, 10, 100},
		{1024 * mb, 512 * mb, 10, 50},
		{2048 * mb, 512 * mb, 10, 25},
		{3000 * mb, 512 * mb, 10, 17},
		{8192 * mb, 512 * mb, 10, 10},
		{8192 * mb, 512 * mb, 0, 6},
		{1 << 50, 1, 0, 1},
	} {
		if got := Percent(tc.live, tc.headroom, tc.min); got != tc.want {
			t.Errorf("Percent(%d MB, %d MB, %d) = %d, want %d", tc.live/mb, tc.headroom/mb, tc.min, got, tc.want)
		}
	}
}

// TestStart: the tuner follows the live heap and restores the original
// percent when stopped.
func TestStart(t *testing.T) {
	var live atomic.Uint64
	var mu sync.Mutex
	percent, calls := 80, []int{}
	set := func(p int) int {
		mu.Lock()
		defer mu.Unlock()
		old := percent
		percent = p
		calls = append(calls, p)
		return old
	}
	get := func() int {
		mu.Lock()
		defer mu.Unlock()
		return percent
	}
	live.Store(100)
	stop := Tuner{Headroom: 1000, MinPercent: 10, Interval: time.Millisecond, Live: live.Load, SetPercent: set}.Start(context.Background())
	if p := get(); p != 100 {
		t.Fatalf("live 100 of headroom 1000: percent %d, want 100", p)
	}
	live.Store(4000)
	waitFor(t, func() bool { return get() == 25 }, "percent 25 for live 4000")
	live.Store(50000)
	waitFor(t, func() bool { return get() == 10 }, "percent 10 (the floor) for live 50000")
	stop()
	if p := get(); p != 80 {
		t.Errorf("after stop: percent %d, want the original 80", p)
	}
	mu.Lock()
	n := len(calls)
	mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != n {
		t.Errorf("the tuner set the percent after stop: %v", calls[n:])
	}
}

// TestStartRuntime: with the runtime's live heap and GC percent, the
// tuner sets 100 for this small test process and stop restores the
// setting it found.
func TestStartRuntime(t *testing.T) {
	orig := debug.SetGCPercent(70)
	defer debug.SetGCPercent(orig)
	stop := Default().Start(context.Background())
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("small heap: percent %d, want 100", p)
	}
	stop()
	if p := debug.SetGCPercent(orig); p != 70 {
		t.Errorf("after stop: percent %d, want 70", p)
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
