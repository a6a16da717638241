package model

import "github.com/batchsampler-go/batchsampler/optim"

// newAdam is the optimizer of the package's tests and benchmarks: the
// framework's optim.Adam (PyTorch's defaults) over the trainable
// parameters of ps in order, which is the order of the gradients
// Bound.Grads returns. The parameters must be float32.
func newAdam(lr float64, ps []*Param) *optim.Adam {
	var out []optim.Param
	for _, p := range ps {
		if p != nil && p.Trainable {
			out = append(out, optim.Param{Name: p.Name, Value: p.Value.Float32s()})
		}
	}
	return optim.NewAdam(out, lr)
}
