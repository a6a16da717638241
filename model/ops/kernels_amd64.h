// Macros shared by the AVX-512 kernels of this package (*_amd64.s).

// LOWMASK(K) sets mask register K to its low CX bits (CX in 0..16), the
// lanes of a partial block. Clobbers AX.
#define LOWMASK(K) \
	MOVQ $1, AX \
	SHLQ CX, AX \
	DECQ AX \
	KMOVW AX, K
