package ops

// Row kernels for callers outside the Gorgonia graph (the models'
// evaluation-mode forward passes), on the same AVX-512 code as the ops and
// with the bits of the plain loops written in their doc comments.

// ScaleShiftRows sets x[i·c+j] = x[i·c+j]·scale[j] + shift[j] (a multiply,
// then an add) for every row i of the matrix x with c = len(scale) columns,
// in place. len(shift) must be c and len(x) a multiple of c.
func ScaleShiftRows(x, scale, shift []float32) {
	c := len(scale)
	if c == 0 || len(x) == 0 {
		return
	}
	if len(shift) != c || len(x)%c != 0 {
		panic("ops: ScaleShiftRows: inconsistent lengths")
	}
	if haveKernels {
		bnAffine32(&x[0], &x[0], &scale[0], &shift[0], len(x)/c, c)
		return
	}
	for i := 0; i < len(x); i += c {
		row := x[i : i+c]
		for j, v := range row {
			row[j] = v*scale[j] + shift[j]
		}
	}
}

// AddRows adds every row of the matrix x with c = len(out) columns into
// out, rows in order: out[j] += x[i·c+j]. len(x) must be a multiple of c.
func AddRows(out, x []float32) {
	c := len(out)
	if c == 0 || len(x) == 0 {
		return
	}
	if len(x)%c != 0 {
		panic("ops: AddRows: inconsistent lengths")
	}
	if haveKernels {
		colSum32(&out[0], &x[0], len(x)/c, c)
		return
	}
	for i := 0; i < len(x); i += c {
		for j, v := range x[i : i+c] {
			out[j] += v
		}
	}
}
