package viz

import (
	"fmt"
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

// TraceRWR is sampler.Walk for the RWR and RW kinds, recording every step
// through sampler.WalkOptions.Trace: it returns the same batch as
// sampler.Walk, and in addition the path that produced it. BFS and DFS are
// not traced.
func TraceRWR(g *sampler.Graph, start int, opt sampler.WalkOptions, src *rand.PCG) (Trace, error) {
	switch opt.Kind {
	case "", sampler.WalkRWR, sampler.WalkRW:
	default:
		return Trace{}, fmt.Errorf("viz: trace: walk %q cannot be traced; want %q or %q", opt.Kind, sampler.WalkRWR, sampler.WalkRW)
	}
	t := Trace{Starts: []int{start}}
	opt.Trace = func(s sampler.WalkStep) {
		st := Step{From: s.From, To: s.To, Kind: Move, New: s.New}
		switch {
		case s.Jump:
			st.Kind = Jump
			t.Starts = append(t.Starts, s.To)
		case s.Restart:
			st.Kind = Restart
		}
		t.Steps = append(t.Steps, st)
	}
	batch, err := sampler.Walk(g, start, opt, src)
	if err != nil {
		return Trace{}, fmt.Errorf("viz: trace: %w", err)
	}
	t.Batch = batch
	return t, nil
}
