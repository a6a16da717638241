//go:build !amd64 || purego

package half

// Without the assembly kernel ToFloat32Scaled is pure Go.
const haveKernel = false

func scaledKernel(dst *float32, src *uint16, n int, scale float64) { panic("half: no kernel") }
