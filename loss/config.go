// Package loss implements the in-batch contrastive objectives used with
// BatchSampler (appendix "InfoNCE Objective and its Variants" of the KDD'23
// paper): InfoNCE in its SimCLR (NT-Xent), GraphCL and SimCSE forms, and the
// debiased (DCL) and hard-negative (HCL) variants as their authors
// implemented them.
//
// Every objective is one fused Gorgonia op on two B×d views (row i of z1 and
// row i of z2 form a positive pair). It computes cosine similarities, the
// loss and its analytic gradient in float64 with log-sum-exp shifts, so it is
// stable in float32 for small temperatures and huge raw projections.
// Gorgonia's own SoftMax, LogSoftMax and LogSumExp are not used: in v0.9.18
// they are numerically unsafe or broken.
//
// LocalGlobal (jsd.go, kind "jsd") is InfoGraph's Jensen–Shannon
// local–global estimator, MVGRL's objective: node representations against
// the graph representations of the batch, again one fused op with an
// analytic gradient. LocalGlobalNCE (localnce.go, kind "nce_local_global")
// is its InfoNCE form: the same positives and negatives scored by a
// softmax over the batch's graphs of cosine similarities divided by τ.
package loss

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Kinds of objective accepted in Config.Kind.
const (
	KindInfoNCE = "infonce" // plain InfoNCE
	KindDCL     = "dcl"     // debiased contrastive loss (Chuang et al., 2020)
	KindHCL     = "hcl"     // hard-negative contrastive loss (Robinson et al., 2021)
	// KindJSD is InfoGraph's Jensen–Shannon local–global estimator
	// (LocalGlobal), the objective of method mvgrl. It contrasts node
	// representations with graph representations, not two views'
	// projections: Build and Value refuse it, and it ignores form,
	// temperature, tau_plus and beta.
	KindJSD = "jsd"
	// KindNCELocalGlobal is the InfoNCE form of the same local–global
	// contrast (LocalGlobalNCE): a node's positive is its own graph, its
	// negatives the batch's other graphs, scored by cosine similarity over
	// Temperature. Build and Value refuse it; it ignores form, tau_plus and
	// beta.
	KindNCELocalGlobal = "nce_local_global"
)

// ContrastiveKinds are the kinds Build and Value compute: InfoNCE and the
// variants that reweight its negatives.
var ContrastiveKinds = []string{KindInfoNCE, KindDCL, KindHCL}

// LocalGlobalKinds are the kinds that contrast node representations with
// graph representations (LocalGlobal, LocalGlobalNCE), not two views'
// projections.
var LocalGlobalKinds = []string{KindJSD, KindNCELocalGlobal}

// Kinds are all the kinds Config.Validate accepts: ContrastiveKinds, then
// LocalGlobalKinds.
var Kinds = slices.Concat(ContrastiveKinds, LocalGlobalKinds)

// Forms accepted in Config.Form: which pairs of a batch are negatives.
const (
	// FormSimCLR is NT-Xent: both views stacked into 2B points; each of
	// the 2B anchors has its partner as positive and the 2B−2 other
	// points as negatives; the loss is averaged over the 2B anchors.
	FormSimCLR = "simclr"
	// FormGraphCL is GraphCL's loss_cal: one direction (anchors in view 1,
	// candidates in view 2), positive excluded from the denominator.
	FormGraphCL = "graphcl"
	// FormSimCSE is SimCSE's cross-entropy over the B×B similarity matrix
	// (anchors in view 1, candidates in view 2), positive included.
	FormSimCSE = "simcse"
)

// Forms are the forms Config.Validate accepts.
var Forms = []string{FormSimCLR, FormGraphCL, FormSimCSE}

// Config selects and parameterises a contrastive objective. It is the
// "loss" section of a training configuration.
type Config struct {
	// Kind is the objective: "infonce", "dcl" or "hcl" (the contrastive
	// objectives of Build), or "jsd" or "nce_local_global" (LocalGlobal,
	// LocalGlobalNCE: method mvgrl).
	Kind string `yaml:"kind"`
	// Form decides which pairs are negatives: "simclr", "graphcl" or
	// "simcse". For DCL and HCL, "graphcl" and "simcse" are the same
	// objective (negatives j≠i of the other view).
	Form string `yaml:"form"`
	// Temperature τ > 0 divides the cosine similarities (of InfoNCE, DCL,
	// HCL and nce_local_global; jsd has none).
	Temperature float64 `yaml:"temperature"`
	// TauPlus is DCL/HCL's class prior τ⁺ ∈ [0,1) (ignored by InfoNCE,
	// but still validated).
	TauPlus float64 `yaml:"tau_plus"`
	// Beta is HCL's concentration β ≥ 0 (ignored by InfoNCE and DCL, but
	// still validated). β = 0 makes HCL equal to DCL.
	Beta float64 `yaml:"beta"`
}

// Default returns the paper's objective for a modality: "graph" is GraphCL's
// InfoNCE with τ=0.2, "image" is SimCLR's NT-Xent with τ=0.5, "text" is
// SimCSE's InfoNCE with τ=0.05. τ⁺=0.1 and β=1 are filled in for switching
// Kind to "dcl" or "hcl". An unknown modality gets the graph defaults.
func Default(modality string) Config {
	c := Config{Kind: KindInfoNCE, Form: FormGraphCL, Temperature: 0.2, TauPlus: 0.1, Beta: 1}
	switch modality {
	case "image":
		c.Form, c.Temperature = FormSimCLR, 0.5
	case "text":
		c.Form, c.Temperature = FormSimCSE, 0.05
	}
	return c
}

// Validate reports the first invalid field, naming its configuration key
// (e.g. "loss.temperature") and the allowed values or range.
func (c Config) Validate() error {
	if !slices.Contains(Kinds, c.Kind) {
		return fmt.Errorf("loss.kind: unknown kind %q; allowed: %s", c.Kind, quoted(Kinds))
	}
	if !slices.Contains(Forms, c.Form) {
		return fmt.Errorf("loss.form: unknown form %q; allowed: %s", c.Form, quoted(Forms))
	}
	if !(c.Temperature > 0) || math.IsInf(c.Temperature, 0) {
		return fmt.Errorf("loss.temperature: got %v; expected a finite number > 0", c.Temperature)
	}
	if !(c.TauPlus >= 0 && c.TauPlus < 1) {
		return fmt.Errorf("loss.tau_plus: got %v; expected a class prior in [0, 1)", c.TauPlus)
	}
	if !(c.Beta >= 0) || math.IsInf(c.Beta, 0) {
		return fmt.Errorf("loss.beta: got %v; expected a finite number >= 0", c.Beta)
	}
	return nil
}

// validateContrastive is Validate for Build and Value, which compute the
// InfoNCE family only.
func (c Config) validateContrastive() error {
	if err := c.Validate(); err != nil {
		return err
	}
	switch c.Kind {
	case KindJSD:
		return fmt.Errorf("loss.kind: %q is the local–global objective of LocalGlobal (method mvgrl), not a contrastive loss of two views' projections; allowed here: %s", c.Kind, quoted(ContrastiveKinds))
	case KindNCELocalGlobal:
		return fmt.Errorf("loss.kind: %q is the local–global objective of LocalGlobalNCE (method mvgrl), not a contrastive loss of two views' projections; allowed here: %s", c.Kind, quoted(ContrastiveKinds))
	}
	return nil
}

// String renders the configuration compactly, e.g.
// "dcl/simclr(τ=0.5,τ⁺=0.1)".
func (c Config) String() string {
	switch c.Kind {
	case KindDCL:
		return fmt.Sprintf("%s/%s(τ=%g,τ⁺=%g)", c.Kind, c.Form, c.Temperature, c.TauPlus)
	case KindHCL:
		return fmt.Sprintf("%s/%s(τ=%g,τ⁺=%g,β=%g)", c.Kind, c.Form, c.Temperature, c.TauPlus, c.Beta)
	case KindJSD:
		return c.Kind
	case KindNCELocalGlobal:
		return fmt.Sprintf("%s(τ=%g)", c.Kind, c.Temperature)
	}
	return fmt.Sprintf("%s/%s(τ=%g)", c.Kind, c.Form, c.Temperature)
}

// quoted lists values as %q each, separated by commas.
func quoted(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}
