//go:build amd64 && !purego && !amd64.v3

#include "textflag.h"

// Constants of math.Exp (exp_amd64.s, its FMA path) and math.Log1p
// (log1p.go), as float64 bits.
DATA spconst<>+0(SB)/8, $0x7fffffffffffffff   // |x| mask
DATA spconst<>+8(SB)/8, $0x8000000000000000   // sign bit
DATA spconst<>+16(SB)/8, $700.0               // the kernel's range: 0 < |s| < 700
DATA spconst<>+24(SB)/8, $1.4426950408889634073599246810018920  // LOG2E
DATA spconst<>+32(SB)/8, $0.69314718055966295651160180568695068359375 // LN2U
DATA spconst<>+40(SB)/8, $0.28235290563031577122588448175013436025525412068e-12 // LN2L
DATA spconst<>+48(SB)/8, $0.0625
DATA spconst<>+56(SB)/8, $2.4801587301587301587e-5
DATA spconst<>+64(SB)/8, $1.9841269841269841270e-4
DATA spconst<>+72(SB)/8, $1.3888888888888888889e-3
DATA spconst<>+80(SB)/8, $8.3333333333333333333e-3
DATA spconst<>+88(SB)/8, $4.1666666666666666667e-2
DATA spconst<>+96(SB)/8, $1.6666666666666666667e-1
DATA spconst<>+104(SB)/8, $0.5
DATA spconst<>+112(SB)/8, $1.0
DATA spconst<>+120(SB)/8, $2.0
DATA spconst<>+128(SB)/8, $1023
DATA spconst<>+136(SB)/8, $0x000fffffffffffff  // mantissa mask
DATA spconst<>+144(SB)/8, $0x0006a09e667f3bcd  // mantissa of Sqrt2
DATA spconst<>+152(SB)/8, $0x3ff0000000000000
DATA spconst<>+160(SB)/8, $0x3fe0000000000000
DATA spconst<>+168(SB)/8, $0x000ffffffffffffc  // iu above it: (2⁵² − iu) >> 2 is 0
DATA spconst<>+176(SB)/8, $4.142135623730950488017e-01 // Sqrt2M1
DATA spconst<>+184(SB)/8, $1.862645149230957e-09        // Small = 2⁻²⁹
DATA spconst<>+192(SB)/8, $5.551115123125783e-17        // Tiny = 2⁻⁵⁴
DATA spconst<>+200(SB)/8, $6.666666666666735130e-01     // Lp1
DATA spconst<>+208(SB)/8, $3.999999999940941908e-01     // Lp2
DATA spconst<>+216(SB)/8, $2.857142874366239149e-01     // Lp3
DATA spconst<>+224(SB)/8, $2.222219843214978396e-01     // Lp4
DATA spconst<>+232(SB)/8, $1.818357216161805012e-01     // Lp5
DATA spconst<>+240(SB)/8, $1.531383769920937332e-01     // Lp6
DATA spconst<>+248(SB)/8, $1.479819860511658591e-01     // Lp7
DATA spconst<>+256(SB)/8, $6.93147180369123816490e-01   // Ln2Hi
DATA spconst<>+264(SB)/8, $1.90821492927058770002e-10   // Ln2Lo
GLOBL spconst<>(SB), RODATA|NOPTR, $272

#define C(off) spconst<>+off(SB)

// func softplusSigmoid8(s *float64, n int, sp, sig *float64, bad *uint8)
//
// For n inputs s (n a multiple of 8), 8 at a time: sp = max(s, 0) +
// log1p(e) and sig = (s >= 0 ? 1 : e)/(1 + e) with e = exp(−|s|), each
// operation that of softplusSigmoid (math.Exp's FMA path, math.Log1p's
// branches for e in (0, 1)) on the same values, so the bits are the same.
// Lanes the kernel does not follow (|s| not in (0, 700): denormal or
// special exponentials, e = 1; and log1p's rare branch iu = 0) get bit j of
// bad[group] set and must be recomputed by the caller.
TEXT ·softplusSigmoid8(SB), NOSPLIT, $0-40
	MOVQ s+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ sp+16(FP), DI
	MOVQ sig+24(FP), DX
	MOVQ bad+32(FP), R8
	VPXORQ Z30, Z30, Z30           // +0
	TESTQ CX, CX
	JZ   done
loop:
	VMOVUPD (SI), Z0               // s
	VPANDQ.BCST C(0), Z0, Z1       // a = |s|
	VPXORQ.BCST C(8), Z1, Z2       // x = −a
	VCMPPD $0x1e, Z30, Z1, K1      // a > 0 (ordered: not NaN)
	VCMPPD.BCST $0x11, C(16), Z1, K2 // a < 700
	KANDW K1, K2, K1               // K1: the kernel's lanes

	// e = exp(x) (exp_amd64.s, avxfma)
	VMULPD.BCST C(24), Z2, Z3      // x·LOG2E
	VCVTPD2DQ Z3, Y4               // exponent (nearest)
	VCVTDQ2PD Y4, Z5
	VMOVAPD Z2, Z6
	VFNMADD231PD.BCST C(32), Z5, Z6 // r = x − k·LN2U (fused)
	VFNMADD231PD.BCST C(40), Z5, Z6 // r −= k·LN2L (fused)
	VMULPD.BCST C(48), Z6, Z6      // r·0.0625
	VBROADCASTSD C(56), Z7         // Taylor series
	VFMADD213PD.BCST C(64), Z6, Z7
	VFMADD213PD.BCST C(72), Z6, Z7
	VFMADD213PD.BCST C(80), Z6, Z7
	VFMADD213PD.BCST C(88), Z6, Z7
	VFMADD213PD.BCST C(96), Z6, Z7
	VFMADD213PD.BCST C(104), Z6, Z7
	VFMADD213PD.BCST C(112), Z6, Z7
	VMULPD Z7, Z6, Z6
	VADDPD.BCST C(120), Z6, Z7
	VMULPD Z7, Z6, Z6
	VADDPD.BCST C(120), Z6, Z7
	VMULPD Z7, Z6, Z6
	VADDPD.BCST C(120), Z6, Z7
	VMULPD Z7, Z6, Z6
	VADDPD.BCST C(120), Z6, Z7
	VFMADD213PD.BCST C(112), Z7, Z6 // r = r·t + 1 (fused)
	VPMOVSXDQ Y4, Z8
	VPADDQ.BCST C(128), Z8, Z8
	VPSLLQ $52, Z8, Z8             // 2^k
	VMULPD Z8, Z6, Z9              // e

	// log1p(e), e in (0, 1) (log1p.go)
	VADDPD.BCST C(112), Z9, Z10    // u = 1 + e
	VSUBPD.BCST C(112), Z10, Z11   // u − 1
	VSUBPD Z11, Z9, Z11            // e − (u − 1)
	VDIVPD Z10, Z11, Z11           // c = (e − (u − 1))/u
	VPANDQ.BCST C(136), Z10, Z12   // iu = mantissa of u
	VPCMPUQ.BCST $1, C(144), Z12, K3 // iu < mantissa of Sqrt2: k = 0
	VPORQ.BCST C(152), Z12, Z13    // u normalised
	VPORQ.BCST C(160), Z12, Z14    // u/2 normalised (k = 1)
	VMOVAPD Z13, K3, Z14
	VSUBPD.BCST C(112), Z14, Z15   // f = u − 1
	VCMPPD.BCST $0x1d, C(176), Z9, K5 // e >= Sqrt2M1: the branch with u
	VMOVAPD Z9, Z16
	VMOVAPD Z15, K5, Z16           // f (e itself below Sqrt2M1)
	KNOTW K3, K6
	KANDW K5, K6, K6               // K6: k = 1
	VPCMPUQ.BCST $6, C(168), Z12, K7 // iu > 2⁵² − 4: (2⁵² − iu) >> 2 = 0
	KANDW K6, K7, K7
	VCMPPD.BCST $0x00, C(120), Z10, K4 // u = 2: k = 1 before normalising
	KANDW K5, K4, K4
	KORW K4, K7, K7                // rare branches: not followed
	KANDNW K1, K7, K1
	VMULPD.BCST C(104), Z16, Z17   // hfsq = 0.5·f·f
	VMULPD Z16, Z17, Z17
	VADDPD.BCST C(120), Z16, Z18   // s = f/(2 + f)
	VDIVPD Z18, Z16, Z18
	VMULPD Z18, Z18, Z19           // z = s·s
	VMULPD.BCST C(248), Z19, Z20   // R = z·(Lp1 + z·(… + z·Lp7))
	VADDPD.BCST C(240), Z20, Z20
	VMULPD Z20, Z19, Z20
	VADDPD.BCST C(232), Z20, Z20
	VMULPD Z20, Z19, Z20
	VADDPD.BCST C(224), Z20, Z20
	VMULPD Z20, Z19, Z20
	VADDPD.BCST C(216), Z20, Z20
	VMULPD Z20, Z19, Z20
	VADDPD.BCST C(208), Z20, Z20
	VMULPD Z20, Z19, Z20
	VADDPD.BCST C(200), Z20, Z20
	VMULPD Z20, Z19, Z20
	VADDPD Z20, Z17, Z21           // hfsq + R
	VMULPD Z21, Z18, Z21           // s·(hfsq + R)
	VSUBPD Z21, Z17, Z22           // k = 0: f − (hfsq − s·(hfsq+R))
	VSUBPD Z22, Z16, Z23
	VADDPD.BCST C(264), Z11, Z24   // k = 1: Ln2Hi − ((hfsq − (s·(hfsq+R) + (Ln2Lo + c))) − f)
	VADDPD Z24, Z21, Z24
	VSUBPD Z24, Z17, Z24
	VSUBPD Z16, Z24, Z24
	VBROADCASTSD C(256), Z25
	VSUBPD Z24, Z25, Z25
	VMOVAPD Z25, K6, Z23
	VMULPD Z9, Z9, Z26             // e < Small: e − e·e·0.5
	VMULPD.BCST C(104), Z26, Z26
	VSUBPD Z26, Z9, Z26
	VCMPPD.BCST $0x11, C(184), Z9, K2
	VMOVAPD Z26, K2, Z23
	VCMPPD.BCST $0x11, C(192), Z9, K2 // e < Tiny: e
	VMOVAPD Z9, K2, Z23

	// sp = max(s, 0) + log1p(e); sig = (s >= 0 ? 1 : e)/(1 + e)
	VMAXPD Z30, Z0, Z27
	VADDPD Z23, Z27, Z27
	VADDPD.BCST C(112), Z9, Z28
	VCMPPD $0x1d, Z30, Z0, K2      // s >= 0
	VMOVAPD Z9, Z29
	VBROADCASTSD C(112), Z26
	VMOVAPD Z26, K2, Z29
	VDIVPD Z28, Z29, Z29
	VMOVUPD Z27, (DI)
	VMOVUPD Z29, (DX)
	KNOTW K1, K1
	KMOVW K1, AX
	MOVB AL, (R8)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $64, DX
	INCQ R8
	SUBQ $8, CX
	JNZ  loop
done:
	VZEROUPPER
	RET
