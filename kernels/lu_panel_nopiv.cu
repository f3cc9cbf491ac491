// LU without row exchanges of a narrow panel (dgetf2 with no pivoting), for
// matrices that need none: those made safe by random butterflies, the
// diagonally dominant ones. Unlike the pivoting panels, no block waits for
// another. Each factors the panel's nb x nb diagonal block itself, in
// shared memory, with the same arithmetic as every other block (so all
// hold the same U11), then solves its own rows below, L21 = A21·U11^-1, a
// row per thread in registers. The diagonal block is written back by the
// last block to finish, counted in `arrivals` (zero between launches; the
// last block resets it): until then others may still read it.
//
// getrf_panel_nopiv_{f32,f64}(a, ld, m, nb, ipiv, incp, info, offset, tol,
//                             arrivals), nb <= NOPIV_NB <= m: the m x nb
// panel at a. ipiv[j] = offset + j + 1. A pivot of magnitude <= tol (or not
// finite) is not divided by: its column of L is zero and, if *info is still
// 0, *info becomes offset + j + 1.
// Launch: max(1, ceil((m - nb) / NOPIV_ROWS)) blocks of NOPIV_ROWS threads.

#include "common.cuh"

#define NOPIV_NB 64
#define NOPIV_ROWS 128

template <typename T>
__device__ void getrf_panel_nopiv_impl(T* a, long long ld, long long m, long long nb, int* ipiv, long long incp,
                                       int* info, long long offset, double tol, unsigned int* arrivals) {
    // d[i][k] = A(i, k) of the diagonal block (zero past nb); padded so that
    // a warp loading a column writes 32 banks.
    __shared__ T d[NOPIV_NB][NOPIV_NB + 1];
    __shared__ T inv[NOPIV_NB];  // 1/U(j, j), 0 for a failed pivot
    __shared__ bool last;
    const int t = threadIdx.x;
    const int w = (int)nb;
    for (int e = t; e < NOPIV_NB * NOPIV_NB; e += blockDim.x) {
        const int i = e % NOPIV_NB, k = e / NOPIV_NB;
        d[i][k] = i < w && k < w ? a[i + k * ld] : T(0);
    }
    for (int j = t; j < NOPIV_NB; j += blockDim.x) inv[j] = T(0);
    __syncthreads();
    // Right-looking elimination of the diagonal block: the column of L,
    // then the trailing block, a barrier after each.
    for (int j = 0; j < w; ++j) {
        const T p = d[j][j];
        const bool ok = fabs((double)p) > tol && is_finite(p);
        const T s = ok ? T(1) / p : T(0);
        for (int i = j + 1 + t; i < w; i += blockDim.x) d[i][j] *= s;
        if (t == 0) {
            inv[j] = s;
            if (!ok && blockIdx.x == 0) atomicCAS(info, 0, (int)(offset + j + 1));
        }
        __syncthreads();
        const int rest = w - j - 1;
        for (int e = t; e < rest * rest; e += blockDim.x) {
            const int i = j + 1 + e % rest, k = j + 1 + e / rest;
            d[i][k] -= d[i][j] * d[j][k];
        }
        __syncthreads();
    }
    // This thread's row below the diagonal block, eliminated with U11.
    const long long i = nb + (long long)blockIdx.x * NOPIV_ROWS + t;
    if (i < m) {
        T r[NOPIV_NB];
#pragma unroll
        for (int k = 0; k < NOPIV_NB; ++k) r[k] = k < w ? a[i + k * ld] : T(0);
#pragma unroll
        for (int j = 0; j < NOPIV_NB; ++j) {
            const T l = r[j] * inv[j];
            r[j] = l;
#pragma unroll
            for (int k = j + 1; k < NOPIV_NB; ++k) r[k] -= l * d[j][k];
        }
#pragma unroll
        for (int k = 0; k < NOPIV_NB; ++k)
            if (k < w) a[i + k * ld] = r[k];
    }
    __threadfence();
    __syncthreads();
    if (t == 0) {
        last = atomicAdd(arrivals, 1u) == gridDim.x - 1;
        if (last) *arrivals = 0;
    }
    __syncthreads();
    if (!last) return;
    for (int e = t; e < w * w; e += blockDim.x) {
        const int r = e % w, k = e / w;
        a[r + k * ld] = d[r][k];
    }
    for (int j = t; j < w; j += blockDim.x) ipiv[j * incp] = (int)(offset + j + 1);
}

#define GPUMAT_NOPIV(T, SUFFIX)                                                                                  \
    extern "C" __global__ void __launch_bounds__(NOPIV_ROWS)                                                     \
        getrf_panel_nopiv_##SUFFIX(T* a, long long ld, long long m, long long nb, int* ipiv, long long incp,     \
                                   int* info, long long offset, double tol, unsigned int* arrivals) {            \
        getrf_panel_nopiv_impl<T>(a, ld, m, nb, ipiv, incp, info, offset, tol, arrivals);                        \
    }

GPUMAT_NOPIV(float, f32)
GPUMAT_NOPIV(double, f64)
