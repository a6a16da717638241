//go:build amd64 && !purego

package sampler

import "golang.org/x/sys/cpu"

// haveTopKAsm: filterKeysAsm and partitionAsm can run (AVX-512 F and
// POPCNT). Tests turn it off to run the Go loops.
var haveTopKAsm = cpu.X86.HasAVX512F && cpu.X86.HasPOPCNT

// filterKeysAVX512 (topk_amd64.s) is filterKeys on m scores (m a multiple
// of 16): it appends their entries whose keys exceed thr at buf[n:], in
// order, writes anything to at most 8 entries past the new end, and
// returns the new end.
//
//go:noescape
func filterKeysAVX512(seg *float32, m int, buf *int64, n int, base, thr int32) int

// partitionAVX512 (topk_amd64.s) runs the queue form of partitionGT over
// the m entries at x (m a multiple of 8, the queue holding at least 8
// entries): entries > pk are appended to the front part at v[n:] and the
// queue q[hd:tl] is updated; it returns the new n, hd and tl.
//
//go:noescape
func partitionAVX512(x *int64, m int, pk int64, v *int64, n int, q *int64, hd, tl int) (int, int, int)

// filterKeysAsm is filterKeysAVX512 on seg (len a multiple of 16), with
// the bounds checked.
func filterKeysAsm(seg []float32, buf []int64, n int, base, thr int32) int {
	if len(seg) == 0 {
		return n
	}
	_ = buf[n+len(seg)+7]
	return filterKeysAVX512(&seg[0], len(seg), &buf[0], n, base, thr)
}

// partitionAsm is partitionAVX512 on the entries v[i:i+m] (m a multiple
// of 8, n ≤ i), with the bounds checked.
func partitionAsm(v []int64, i, m int, pk int64, n int, q []int64, hd, tl int) (int, int, int) {
	if m == 0 {
		return n, hd, tl
	}
	if n > i || hd > tl || tl-hd < 8 || m%8 != 0 {
		panic("sampler: partitionAsm: bad arguments")
	}
	_ = v[i+m-1]
	_ = q[tl+m-1]
	return partitionAVX512(&v[i], m, pk, &v[0], n, &q[0], hd, tl)
}

// setTopKAsm turns the kernels on or off for the test (restored after it).
func setTopKAsm(t interface{ Cleanup(func()) }, on bool) {
	old := haveTopKAsm
	haveTopKAsm = on && old
	t.Cleanup(func() { haveTopKAsm = old })
}
