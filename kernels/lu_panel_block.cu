// LU with partial pivoting of a narrow panel (dgetf2) by one block, the
// fallback of the panel kernels (lu.cuh: conventions).
//
// getrf_panel_{f32,f64}(a, ld, m, nb, ipiv, incp, info, offset, partial, tol):
//   P·A = L·U of the tall m x nb block (m >= nb), in place. Pivot j is stored
//   1-based in the whole matrix, ipiv[j*incp] = offset + p + 1. partial = 1:
//   p is the row of largest magnitude in column j at or below the diagonal
//   (first on ties, a NaN wins); partial = 0: no exchanges, and a pivot of
//   magnitude <= tol fails. A failing pivot (exactly zero with partial
//   pivoting) is not divided by; *info, if still 0, becomes offset + j + 1,
//   and the factorization goes on, as LAPACK's dgetrf.
//   Launch: one block of GETRF_THREADS threads (a multiple of 32, <= 1024).
//   The blocked factorization calls it only on narrow leaves of its
//   recursive panel; everything wider goes through cuBLAS trsm and gemm.

#include "lu.cuh"

// Threads of the one block.
#define GETRF_THREADS 512

template <typename T>
__device__ void getrf_panel_impl(T* a, long long ld, long long m, long long nb, int* ipiv, long long incp, int* info,
                                 long long offset, int partial, double tol) {
    __shared__ Candidate best[32];
    __shared__ long long pivot;
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5, warps = blockDim.x >> 5;
    int failed = 0;  // uniform
    for (long long j = 0; j < nb; ++j) {
        T* cj = a + j * ld;
        if (partial) {
            Candidate c = {-1.0, m};
            for (long long i = j + t; i < m; i += blockDim.x) {
                const Candidate o = {abs_d(cj[i]), i};
                if (better(o, c)) c = o;
            }
            c = warp_best(c);
            if (lane == 0) best[warp] = c;
            __syncthreads();
            if (warp == 0) {
                c = lane < warps ? best[lane] : Candidate{-1.0, m};
                c = warp_best(c);
                if (lane == 0) pivot = c.i < m ? c.i : j;
            }
            __syncthreads();
        } else if (t == 0) {
            pivot = j;
        }
        if (!partial) __syncthreads();
        const long long p = pivot;
        if (t == 0) ipiv[j * incp] = (int)(offset + p + 1);
        if (p != j) {
            for (long long k = t; k < nb; k += blockDim.x) {
                const T x = a[j + k * ld];
                a[j + k * ld] = a[p + k * ld];
                a[p + k * ld] = x;
            }
        }
        __syncthreads();
        const T d = cj[j];
        const bool bad = partial ? (d == T(0)) : !(abs_d(d) > tol);
        if (bad) {  // uniform: every thread read the same pivot
            if (t == 0 && !failed) atomicCAS(info, 0, (int)(offset + j + 1));
            failed = 1;
            __syncthreads();  // the pivot search of the next column reads `best`
            continue;
        }
        const T r = T(1) / d;
        const bool by_reciprocal = isfinite(r);
        // Each thread scales its rows of column j and updates the same rows
        // of the columns to the right: no barrier between the two.
        for (long long i = j + 1 + t; i < m; i += blockDim.x) {
            const T l = by_reciprocal ? cj[i] * r : cj[i] / d;
            cj[i] = l;
            for (long long k = j + 1; k < nb; ++k) a[i + k * ld] -= l * a[j + k * ld];
        }
        __syncthreads();
    }
}

extern "C" __global__ void getrf_panel_f32(float* a, long long ld, long long m, long long nb, int* ipiv,
                                           long long incp, int* info, long long offset, int partial, double tol) {
    getrf_panel_impl(a, ld, m, nb, ipiv, incp, info, offset, partial, tol);
}

extern "C" __global__ void getrf_panel_f64(double* a, long long ld, long long m, long long nb, int* ipiv,
                                           long long incp, int* info, long long offset, int partial, double tol) {
    getrf_panel_impl(a, ld, m, nb, ipiv, incp, info, offset, partial, tol);
}
