// Package optim holds the optimizers and learning-rate schedules of
// batchsampler-go behind one interface, on plain float32 slices: it depends
// on the standard library only, not on Gorgonia or on the models.
//
// # Interface
//
// An Optimizer is built over a list of Params (a name, the float32 values
// it updates in place, and a NoDecay flag) and is stepped with one gradient
// slice per parameter, in the same order:
//
//	opt, err := optim.New(cfg, params)
//	sched, err := cfg.Schedule.Resolve(cfg.LR, stepsPerEpoch)
//	for step := 0; step < total; step++ {
//		opt.SetLR(cfg.LR * sched.Factor(step, total))
//		... compute grads ...
//		err = opt.Step(grads)
//	}
//
// A nil gradient slice skips its parameter for that step: its value and
// optimizer state stay as they are. The step count is shared by all
// parameters and still advances, so Adam's bias corrections of a parameter
// skipped at some steps use the global count (PyTorch
// keeps a count per parameter instead; the two agree while no gradient is
// skipped). A Step that returns an error changes
// nothing. MarshalBinary and UnmarshalBinary save and restore the whole
// state — kind, hyperparameters including the current learning rate, step
// count, and per-parameter buffers checked against the parameters' names
// and sizes — so that a resumed run takes the same steps, to the bit, as
// an uninterrupted one.
//
// # Optimizers
//
// With g a gradient, p its parameter, η the learning rate and λ the weight
// decay (each element's update is computed in float64 and rounded once to
// float32; the buffers are float32, as in PyTorch):
//
// Adam (torch.optim.Adam), step t from 1:
//
//	g ← g + λ·p;  m ← β₁m + (1−β₁)g;  v ← β₂v + (1−β₂)g²
//	p ← p − η/(1−β₁ᵗ) · m/(√v/√(1−β₂ᵗ) + ε)
//
// AdamW (torch.optim.AdamW): p ← p·(1 − ηλ), then Adam's update without
// the λ·p term.
//
// SGD (torch.optim.SGD) with momentum μ, dampening τ:
//
//	g ← g + λ·p;  b ← g at the first step, else b ← μb + (1−τ)g
//	g ← g + μb (Nesterov) or g ← b;  p ← p − ηg
//
// LARS (MoCo v3's moco/optimizer.py, solo-learn) with momentum μ and trust
// coefficient c:
//
//	d ← g + λ·p;  d ← c·‖p‖/‖d‖ · d  (the ratio is 1 if a norm is 0)
//	b ← μb + d;  d ← d + μb (Nesterov) or d ← b;  p ← p − ηd
//
// # NoDecay
//
// Parameters marked NoDecay — biases and the scale and shift of
// normalisation layers — get no weight decay from any optimizer (Adam's L2
// term, AdamW's decoupled decay, SGD's L2 term) and, in LARS, no trust-ratio
// adaptation either: for them LARS uses d ← g, as MoCo v3 does for its
// one-dimensional parameters and SimCLR and solo-learn
// (exclude_bias_n_norm) do for biases and batch-norm parameters.
//
// # Schedules
//
// Schedule.Factor gives the multiplier of the base learning rate for each
// step: constant, or MoCo v3's linear warm-up then half-cycle cosine,
// evaluated per step. EMAMomentum is MoCo v3's cosine schedule of the
// momentum-encoder coefficient, from m0 to 1, and EMA applies one
// momentum-encoder update t ← m·t + (1−m)·o.
//
// # Configuration
//
// Config is the YAML form (kind, lr, weight_decay, momentum, beta1, beta2,
// eps, trust_coefficient, nesterov, schedule: {kind, warmup_steps,
// warmup_epochs, min_lr}); Default gives Adam with PyTorch's defaults and
// lr 1e-3, Validate reports each bad value under its key path, and New
// builds the optimizer.
package optim
