//go:build !amd64 || purego || amd64.v3

package loss

// haveSoftplus8 is false: softplusSigmoids runs softplusSigmoid.
const haveSoftplus8 = false

func softplusSigmoid8(s *float64, n int, sp, sig *float64, bad *uint8) {
	panic("loss: softplusSigmoid8 without AVX-512")
}

// setSoftplus8 does nothing: there is no kernel.
func setSoftplus8(t interface{ Cleanup(func()) }, on bool) {}
