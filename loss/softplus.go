package loss

// softplusSigmoids writes softplusSigmoid(s[i]) to sp[i] and sig[i] for
// every i, the same bits, 8 at a time with AVX-512 where it can
// (softplusSigmoid8: math.Exp's and math.Log1p's operations in vector
// registers) and one by one otherwise, for the lanes the kernel leaves
// (|s| outside (0, 700) and log1p's rare branches) and the tail. bad is
// scratch of at least len(s)/8 bytes.
func softplusSigmoids(s, sp, sig []float64, bad []uint8) {
	n := len(s)
	sp, sig = sp[:n], sig[:n]
	m := 0
	if haveSoftplus8 && n >= 8 {
		m = n &^ 7
		bad = bad[:m/8]
		softplusSigmoid8(&s[0], m, &sp[0], &sig[0], &bad[0])
		for q, mask := range bad {
			for mask != 0 {
				j := q*8 + trailingZeros8(mask)
				sp[j], sig[j] = softplusSigmoid(s[j])
				mask &= mask - 1
			}
		}
	}
	for j := m; j < n; j++ {
		sp[j], sig[j] = softplusSigmoid(s[j])
	}
}

// trailingZeros8 is the index of the lowest set bit of a non-zero m.
func trailingZeros8(m uint8) int {
	n := 0
	for m&1 == 0 {
		m >>= 1
		n++
	}
	return n
}
