//go:build amd64 && !purego

package data

import "golang.org/x/sys/cpu"

// havePPRKernel: pprTermAVX512 can run.
var havePPRKernel = cpu.X86.HasAVX512F

//go:noescape
func pprTermAVX512(rows *int32, nrows int, rowptr, col *int32, w, x, next, acc, am, norm *float64)
