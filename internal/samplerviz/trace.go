package samplerviz

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// StepKind tells how a traced walk reached a node.
type StepKind int

// Kinds of Step.
const (
	// Move: the walker stayed where it was and moved along one of its
	// out-edges (From is the current node).
	Move StepKind = iota
	// Restart: the walker returned to the restart node u (probability α)
	// and moved along one of u's out-edges (From is u).
	Restart
	// Jump: the fallback of sampler.Walk (step cap, or no new node for a
	// long time) continued the walk from a new random start node, which
	// becomes the restart node; no edge is followed.
	Jump
)

// Step is one step of a traced walk.
type Step struct {
	From, To int
	Kind     StepKind
	New      bool // To joined the batch at this step
}

// Trace is a random walk with restart together with its batch.
type Trace struct {
	Batch  []int  // the distinct visited nodes in order of first visit, start first
	Steps  []Step // every step, in order
	Starts []int  // the start node and every fallback start
}

// Restarts returns the number of Restart steps.
func (t Trace) Restarts() int { return t.count(Restart) }

// Jumps returns the number of fallback Jump steps.
func (t Trace) Jumps() int { return t.count(Jump) }

func (t Trace) count(k StepKind) int {
	n := 0
	for _, s := range t.Steps {
		if s.Kind == k {
			n++
		}
	}
	return n
}

// Constants of sampler.Walk that TraceRWR mirrors (walk.go: stallFactor and
// the default step cap 100·B).
const (
	walkStallFactor  = 16
	walkStepsDefault = 100
)

// TraceRWR is sampler.Walk for the RWR and RW kinds, recording every step:
// given the same graph, start, options and generator state it draws the same
// random numbers and returns the same batch as sampler.Walk (the tests check
// this on many walks), and in addition the path that produced it, which
// sampler.Walk does not expose. BFS and DFS are not traced.
func TraceRWR(g *sampler.Graph, start int, opt sampler.WalkOptions, src *rand.PCG) (Trace, error) {
	if g == nil || len(g.Adj) != g.N*g.K {
		return Trace{}, fmt.Errorf("samplerviz: trace: need a graph with N·K adjacency entries")
	}
	if start < 0 || start >= g.N {
		return Trace{}, fmt.Errorf("samplerviz: trace: start node %d is not in [0,%d)", start, g.N)
	}
	alpha := opt.Alpha
	switch opt.Kind {
	case "", sampler.WalkRWR:
	case sampler.WalkRW:
		alpha = 0
	default:
		return Trace{}, fmt.Errorf("samplerviz: trace: walk %q cannot be traced; want %q or %q", opt.Kind, sampler.WalkRWR, sampler.WalkRW)
	}
	if opt.B <= 0 || !(opt.Alpha >= 0 && opt.Alpha <= 1) || opt.MaxSteps < 0 {
		return Trace{}, fmt.Errorf("samplerviz: trace: need B ≥ 1, α in [0,1], MaxSteps ≥ 0; got B=%d α=%v MaxSteps=%d", opt.B, opt.Alpha, opt.MaxSteps)
	}
	maxSteps := opt.MaxSteps
	if maxSteps == 0 {
		maxSteps = walkStepsDefault * opt.B
	}
	b := min(opt.B, g.N)
	in := make([]bool, g.N)
	t := Trace{Batch: []int{start}, Starts: []int{start}}
	in[start] = true
	k := uint64(g.K)
	athr := uint64(math.Ldexp(alpha, 32)) // restart ⇔ high 32 bits < α·2³²
	stall := walkStallFactor * (g.K + 1)
	u, cur := start, start
	steps, since := 0, 0
	for len(t.Batch) < b {
		if k == 0 || steps >= maxSteps || since >= stall {
			v := int((uint64(uint32(src.Uint64())) * uint64(g.N)) >> 32)
			for in[v] {
				if v++; v == g.N {
					v = 0
				}
			}
			in[v] = true
			t.Batch = append(t.Batch, v)
			t.Starts = append(t.Starts, v)
			t.Steps = append(t.Steps, Step{From: cur, To: v, Kind: Jump, New: true})
			u, cur = v, v
			steps, since = 0, 0
			continue
		}
		r := src.Uint64()
		from, kind := cur, Move
		if r>>32 < athr {
			from, kind = u, Restart
		}
		v := int(g.Adj[uint64(from)*k+(uint64(uint32(r))*k)>>32])
		cur = v
		steps++
		st := Step{From: from, To: v, Kind: kind}
		if !in[v] {
			in[v] = true
			t.Batch = append(t.Batch, v)
			st.New = true
			since = 0
		} else {
			since++
		}
		t.Steps = append(t.Steps, st)
	}
	return t, nil
}
