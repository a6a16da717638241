package gemm

// Packing. A panel of width w holds kb consecutive values of l (the k
// index), each as w contiguous floats: dst[l*w+j] = X[p0+l][j0+j] for
// j < nw, zero for nw <= j < w. X is op(B) for B panels (w = nr) and op(A)ᵀ
// for A panels (w = mr). Depending on how X lies in memory, a panel is a
// copy of kb rows of w floats (copyPanel) or a transpose of w rows of kb
// floats (gatherPanel).

// packA packs rows i0..i0+mh-1 and columns p0..p0+kb-1 of op(A) into dst:
// dst[l*mr+r] = op(A)[i0+r][p0+l]. op(A)[i][l] is a[i*lda+l], or a[l*lda+i]
// when trans.
func packA(ks *kernelSet, trans bool, dst, a []float32, lda, i0, mh, p0, kb int) {
	if trans {
		copyPanel(ks, ks.mr, dst, a, lda, p0, kb, i0, mh)
		return
	}
	gatherPanel(ks, ks.mr, dst, a, lda, p0, kb, i0, mh)
}

// packB packs columns j0..j0+nw-1 and rows p0..p0+kb-1 of op(B) into dst:
// dst[l*nr+j] = op(B)[p0+l][j0+j]. op(B)[l][j] is b[l*ldb+j], or b[j*ldb+l]
// when trans.
func packB(ks *kernelSet, trans bool, dst, b []float32, ldb, p0, kb, j0, nw int) {
	if trans {
		gatherPanel(ks, ks.nr, dst, b, ldb, p0, kb, j0, nw)
		return
	}
	copyPanel(ks, ks.nr, dst, b, ldb, p0, kb, j0, nw)
}

// copyPanel packs dst[l*w+j] = src[(p0+l)*lds+j0+j] for l < kb, j < nw, and
// zeros for nw <= j < w.
func copyPanel(ks *kernelSet, w int, dst, src []float32, lds, p0, kb, j0, nw int) {
	dst = dst[:kb*w]
	if nw < w {
		for l := 0; l < kb; l++ {
			d := dst[l*w : l*w+w]
			copy(d, src[(p0+l)*lds+j0:(p0+l)*lds+j0+nw])
			clear(d[nw:])
		}
		return
	}
	if copyPanelAsm(w, dst, src, lds, p0, kb, j0) {
		return
	}
	switch w {
	case 6: // transposed A for the AVX2 kernel
		for l := 0; l < kb; l++ {
			*(*[6]float32)(dst[l*6:]) = *(*[6]float32)(src[(p0+l)*lds+j0:])
		}
	default:
		for l := 0; l < kb; l++ {
			copy(dst[l*w:l*w+w], src[(p0+l)*lds+j0:])
		}
	}
}

// gatherPanel packs dst[l*w+j] = src[(j0+j)*lds+p0+l] for l < kb, j < nw,
// and zeros for nw <= j < w.
func gatherPanel(ks *kernelSet, w int, dst, src []float32, lds, p0, kb, j0, nw int) {
	dst = dst[:kb*w]
	if nw < w {
		clear(dst)
		for j := 0; j < nw; j++ {
			s := src[(j0+j)*lds+p0 : (j0+j)*lds+p0+kb]
			for l, v := range s {
				dst[l*w+j] = v
			}
		}
		return
	}
	done := gatherPanelAsm(w, dst, src, lds, p0, kb, j0)
	if done < kb {
		gatherPanelGo(w, dst[done*w:], src, lds, p0+done, kb-done, j0)
	}
}

// gatherPanelGo is the Go version of gatherPanel for a full panel (used for
// the values of l that the assembly does not handle).
func gatherPanelGo(w int, dst, src []float32, lds, p0, kb, j0 int) {
	for j := 0; j < w; j++ {
		s := src[(j0+j)*lds+p0 : (j0+j)*lds+p0+kb]
		for l, v := range s {
			dst[l*w+j] = v
		}
	}
}
