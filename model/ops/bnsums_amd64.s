//go:build amd64 && !purego

#include "textflag.h"

// BatchNorm's per-plane sums with four float64 accumulators a lane, as the
// scalar loops of sumShifted64, sumProdDev64 and maskedSums keep them:
// lane j of a YMM accumulator takes elements i ≡ j (mod 4) in order, with
// separate subtracts, multiplies and adds (no fused multiply-add). Each
// kernel does the first n &^ 3 elements and stores its accumulators to
// acc[0:4] (first sums) and acc[4:8] (second sums); the caller adds the
// tail and combines the lanes. VEX instructions only (AVX2).

// SHIFTED(off): d = v − k (Y15); a += d; b += d·d, for 4 values at off(SI).
#define SHIFTED(off) \
	VCVTPS2PD off(SI), Y2; \
	VSUBPD Y15, Y2, Y2; \
	VADDPD Y2, Y0, Y0; \
	VMULPD Y2, Y2, Y3; \
	VADDPD Y3, Y1, Y1

// PRODDEV(off): a += g; b += g·(x − m), g at off(SI), x at off(DI).
#define PRODDEV(off) \
	VCVTPS2PD off(SI), Y2; \
	VADDPD Y2, Y0, Y0; \
	VCVTPS2PD off(DI), Y3; \
	VSUBPD Y15, Y3, Y3; \
	VMULPD Y3, Y2, Y3; \
	VADDPD Y3, Y1, Y1

// MASKED(off): g = dy (off(SI)) where int32(bits(y)) > 0 (y at off(R10)),
// else +0; out (off(R9)) = g; then PRODDEV's sums.
#define MASKED(off) \
	VMOVDQU off(R10), X4; \
	VPCMPGTD X14, X4, X4; \
	VPAND off(SI), X4, X5; \
	VMOVDQU X5, off(R9); \
	VCVTPS2PD X5, Y2; \
	VADDPD Y2, Y0, Y0; \
	VCVTPS2PD off(DI), Y3; \
	VSUBPD Y15, Y3, Y3; \
	VMULPD Y3, Y2, Y3; \
	VADDPD Y3, Y1, Y1

// func sumShifted4x32(v *float32, n int, k float64, acc *float64)
TEXT ·sumShifted4x32(SB), NOSPLIT, $0-32
	MOVQ v+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSD k+16(FP), Y15
	MOVQ acc+24(FP), DX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	MOVQ CX, R8
	SHRQ $4, R8
	JZ   sumShifted4x32_four
sumShifted4x32_sixteen:
	SHIFTED(0)
	SHIFTED(16)
	SHIFTED(32)
	SHIFTED(48)
	ADDQ $64, SI
	DECQ R8
	JNZ  sumShifted4x32_sixteen
sumShifted4x32_four:
	ANDQ $15, CX
	SHRQ $2, CX
	JZ   sumShifted4x32_done
sumShifted4x32_fourloop:
	SHIFTED(0)
	ADDQ $16, SI
	DECQ CX
	JNZ  sumShifted4x32_fourloop
sumShifted4x32_done:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VZEROUPPER
	RET

// func sumProdDev4x32(gv, x *float32, n int, m float64, acc *float64)
TEXT ·sumProdDev4x32(SB), NOSPLIT, $0-40
	MOVQ gv+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ n+16(FP), CX
	VBROADCASTSD m+24(FP), Y15
	MOVQ acc+32(FP), DX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	MOVQ CX, R8
	SHRQ $4, R8
	JZ   sumProdDev4x32_four
sumProdDev4x32_sixteen:
	PRODDEV(0)
	PRODDEV(16)
	PRODDEV(32)
	PRODDEV(48)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ R8
	JNZ  sumProdDev4x32_sixteen
sumProdDev4x32_four:
	ANDQ $15, CX
	SHRQ $2, CX
	JZ   sumProdDev4x32_done
sumProdDev4x32_fourloop:
	PRODDEV(0)
	ADDQ $16, SI
	ADDQ $16, DI
	DECQ CX
	JNZ  sumProdDev4x32_fourloop
sumProdDev4x32_done:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VZEROUPPER
	RET

// func maskedSums4x32(out, y, dy, x *float32, n int, m float64, acc *float64)
TEXT ·maskedSums4x32(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), R9
	MOVQ y+8(FP), R10
	MOVQ dy+16(FP), SI
	MOVQ x+24(FP), DI
	MOVQ n+32(FP), CX
	VBROADCASTSD m+40(FP), Y15
	MOVQ acc+48(FP), DX
	VPXOR X14, X14, X14
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	MOVQ CX, R8
	SHRQ $4, R8
	JZ   maskedSums4x32_four
maskedSums4x32_sixteen:
	MASKED(0)
	MASKED(16)
	MASKED(32)
	MASKED(48)
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ R8
	JNZ  maskedSums4x32_sixteen
maskedSums4x32_four:
	ANDQ $15, CX
	SHRQ $2, CX
	JZ   maskedSums4x32_done
maskedSums4x32_fourloop:
	MASKED(0)
	ADDQ $16, R9
	ADDQ $16, R10
	ADDQ $16, SI
	ADDQ $16, DI
	DECQ CX
	JNZ  maskedSums4x32_fourloop
maskedSums4x32_done:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VZEROUPPER
	RET
