package optim

import (
	"math"
	"testing"
)

func TestScheduleFactor(t *testing.T) {
	wc := Schedule{Kind: WarmupCosine, Warmup: 10}
	wcMin := Schedule{Kind: WarmupCosine, Warmup: 10, MinFactor: 0.1}
	noWarm := Schedule{Kind: WarmupCosine}
	for _, c := range []struct {
		name        string
		s           Schedule
		step, total int
		want        float64
	}{
		{"constant", Schedule{Kind: Constant}, 57, 100, 1},
		{"empty kind is constant", Schedule{}, 0, 100, 1},
		{"warm-up start", wc, 0, 110, 0},
		{"warm-up first quarter", wc, 2, 110, 0.2},
		{"warm-up last step", wc, 9, 110, 0.9},
		{"warm-up end", wc, 10, 110, 1},
		{"cosine midpoint", wc, 60, 110, 0.5},
		{"cosine quarter", wc, 35, 110, 0.5 * (1 + math.Sqrt2/2)},
		{"last step", wc, 109, 110, 0.5 * (1 + math.Cos(math.Pi*99/100))},
		{"after the end", wc, 110, 110, 0},
		{"min: warm-up ignores it", wcMin, 5, 110, 0.5},
		{"min: midpoint", wcMin, 60, 110, 0.55},
		{"min: end", wcMin, 110, 110, 0.1},
		{"no warm-up: first step", noWarm, 0, 4, 1},
		{"no warm-up: step 2 of 4", noWarm, 2, 4, 0.5},
		{"total within warm-up", Schedule{Kind: WarmupCosine, Warmup: 10, MinFactor: 0.2}, 12, 8, 0.2},
	} {
		if got := c.s.Factor(c.step, c.total); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s: Factor(%d, %d) = %v, want %v", c.name, c.step, c.total, got, c.want)
		}
	}
}

// TestScheduleMatchesMoCoV3 checks the per-step factor against MoCo v3's
// adjust_learning_rate evaluated at fractional epochs, as its training
// loop calls it (epoch + i/iters_per_epoch).
func TestScheduleMatchesMoCoV3(t *testing.T) {
	const epochs, warmupEpochs, iters = 7, 2, 13
	s, err := ScheduleConfig{Kind: WarmupCosine, WarmupEpochs: warmupEpochs}.Resolve(1, iters)
	if err != nil {
		t.Fatal(err)
	}
	step := 0
	for epoch := range epochs {
		for i := range iters {
			e := float64(epoch) + float64(i)/iters
			var want float64
			if e < warmupEpochs {
				want = e / warmupEpochs
			} else {
				want = 0.5 * (1 + math.Cos(math.Pi*(e-warmupEpochs)/(epochs-warmupEpochs)))
			}
			if got := s.Factor(step, epochs*iters); math.Abs(got-want) > 1e-12 {
				t.Fatalf("epoch %d iter %d: %v, want %v", epoch, i, got, want)
			}
			step++
		}
	}
}

func TestResolve(t *testing.T) {
	s, err := ScheduleConfig{Kind: WarmupCosine, WarmupEpochs: 3, MinLR: 0.01}.Resolve(0.1, 50)
	if err != nil || s.Warmup != 150 || math.Abs(s.MinFactor-0.1) > 1e-15 || s.Kind != WarmupCosine {
		t.Errorf("Resolve = %+v, %v; want warm-up 150, min factor 0.1", s, err)
	}
	s, err = ScheduleConfig{Kind: WarmupCosine, WarmupSteps: 7}.Resolve(0.1, 0)
	if err != nil || s.Warmup != 7 || s.MinFactor != 0 {
		t.Errorf("Resolve = %+v, %v; want warm-up 7", s, err)
	}
	if _, err := (ScheduleConfig{Kind: WarmupCosine, WarmupEpochs: 3}).Resolve(0.1, 0); err == nil {
		t.Error("warm-up epochs without steps per epoch: want an error")
	}
}

func TestEMAMomentum(t *testing.T) {
	for _, c := range []struct {
		m0          float64
		step, total int
		want        float64
	}{
		{0.99, 0, 1000, 0.99},
		{0.99, 1000, 1000, 1},
		{0.99, 500, 1000, 0.995},
		{0.996, 250, 1000, 1 - 0.004*(math.Sqrt2/2+1)/2},
		{0.99, -5, 1000, 0.99},
		{0.99, 2000, 1000, 1},
		{0.9, 3, 0, 0.9},
	} {
		if got := EMAMomentum(c.m0, c.step, c.total); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("EMAMomentum(%v, %d, %d) = %v, want %v", c.m0, c.step, c.total, got, c.want)
		}
	}
}

func TestEMA(t *testing.T) {
	target := []float32{1, -2, 0.1}
	online := []float32{3, 2, 0.3}
	if err := EMA(target, online, 0.75); err != nil {
		t.Fatal(err)
	}
	// 0.75·1 + 0.25·3 = 1.5; 0.75·(−2) + 0.25·2 = −1; 0.1 rounds once from
	// 0.75·float64(float32(0.1)) + 0.25·float64(float32(0.3)).
	want2 := float32(0.75*float64(float32(0.1)) + 0.25*float64(float32(0.3)))
	if target[0] != 1.5 || target[1] != -1 || target[2] != want2 {
		t.Errorf("EMA = %v, want [1.5 -1 %v]", target, want2)
	}
	if online[0] != 3 {
		t.Error("EMA changed online")
	}
	if err := EMA(target, online[:2], 0.5); err == nil {
		t.Error("different lengths: want an error")
	}
	if target[0] != 1.5 {
		t.Error("a failed EMA changed target")
	}
	same := []float32{0.123, 4}
	if err := EMA(same, []float32{9, 9}, 1); err != nil || same[0] != 0.123 || same[1] != 4 {
		t.Errorf("m = 1 must keep the target: %v", same)
	}
}
