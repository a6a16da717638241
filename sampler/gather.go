package sampler

import (
	"fmt"
	"unsafe"
)

// gatherAhead is how many rows ahead of the one it copies gatherRows asks
// for: enough misses in flight to cover a row's latency from memory, few
// enough that the rows are still cached when copied (4 to 16 measured
// alike at ImageNet scale).
const gatherAhead = 8

// gatherRows copies rows idx of the row-major matrix u (rows of d values)
// to dst (row j at dst[j·d:]), asking for row idx[j+gatherAhead] while it
// copies row j: rows scattered over a matrix far larger than the caches
// (and its page tables) are then fetched several at a time rather than one
// after another. Rows of whole 64-byte lines are copied by an AVX-512 loop
// (gatherRows64) where there is one: a block's 1001 candidate rows of 512
// bytes at ImageNet scale took 0.6–0.7 of the CPU time of plain copies
// (BenchmarkGather1001); other rows by copy, with the same requests.
func gatherRows[T float32 | uint16](dst, u []T, d int, idx []int32) {
	var z T
	rowBytes := d * int(unsafe.Sizeof(z))
	if len(idx) == 0 {
		return
	}
	if haveGatherAsm && rowBytes%64 == 0 {
		_ = dst[len(idx)*d-1]
		n := len(u) / d
		for _, v := range idx {
			if uint(v) >= uint(n) {
				panic(fmt.Sprintf("sampler: gatherRows: row %d of %d", v, n))
			}
		}
		gatherRows64((*byte)(unsafe.Pointer(&dst[0])), (*byte)(unsafe.Pointer(&u[0])), &idx[0], len(idx), rowBytes)
		return
	}
	lines := (rowBytes + 63) / 64
	for j := range min(gatherAhead, len(idx)) {
		prefetchRow(u, d, idx[j], lines)
	}
	for j, v := range idx {
		if j+gatherAhead < len(idx) {
			prefetchRow(u, d, idx[j+gatherAhead], lines)
		}
		copy(dst[j*d:(j+1)*d], u[int(v)*d:(int(v)+1)*d])
	}
}

// prefetchRow asks for the lines of row v of u (bounds checked).
func prefetchRow[T float32 | uint16](u []T, d int, v int32, lines int) {
	row := u[int(v)*d : (int(v)+1)*d]
	if len(row) > 0 {
		prefetchLines((*byte)(unsafe.Pointer(&row[0])), lines)
	}
}
