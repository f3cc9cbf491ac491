// The residual of weighted least squares' normal equations without the
// normal matrix, r = A·D²·(b − Aᵀ·x), with every sum in double-double: the
// refinement of `solve/wls.rs` converges to the solution of the data, not of
// a rounded G, and its last digits come from here.
//
// A is m x n, column-major with leading dimension lda (column j holds the m
// basis functions at observation j); b and d have n entries, x and r m, each
// with its own stride.
// Three kernels, in order:
//   weighted_misfit:   w_j = d_j²·(b_j − Σ_i a_ij·x_i), w = w_hi + w_lo
//   weighted_partials: part[c][i] = Σ_{j in chunk c} a_ij·w_j
//   weighted_combine:  r_i = Σ_c part[c][i], rounded once to double
//
// Sums use error-free transformations: a·b = p + e exactly by one FMA
// (two_prod), a + b = s + e exactly (two_sum). A sum of products keeps its
// rounding errors in a second accumulator (Ogita, Rump and Oishi's Dot2):
// the result is as accurate as if computed with twice the precision and
// rounded. Nothing here may be contracted or reassociated, and nothing is:
// NVRTC only contracts a*b + c into FMA, which two_sum does not contain and
// two_prod asks for explicitly.
//
// Launch contract: blockDim = (256, 1, 1) for every kernel.
//   weighted_misfit:   one warp per column, grid.x = ceil(n / 8).
//   weighted_partials: grid = (ceil(m / 256), chunks); chunk c takes columns
//                      [c·cols, min(n, (c+1)·cols)).
//   weighted_combine:  grid.x = ceil(m / 256).

#include "common.cuh"

#define BLOCK 256

struct dd {
    double hi, lo;
};

__device__ __forceinline__ dd two_sum(double a, double b) {
    const double s = a + b;
    const double bb = s - a;
    return {s, (a - (s - bb)) + (b - bb)};
}

__device__ __forceinline__ dd two_prod(double a, double b) {
    const double p = a * b;
    return {p, fma(a, b, -p)};
}

// (hi, lo) with |lo| ≤ ulp(hi)/2.
__device__ __forceinline__ dd renormalize(double hi, double lo) { return two_sum(hi, lo); }

__device__ __forceinline__ dd dd_add(dd a, dd b) {
    dd s = two_sum(a.hi, b.hi);
    dd t = two_sum(a.lo, b.lo);
    s = two_sum(s.hi, s.lo + t.hi);
    return renormalize(s.hi, s.lo + t.lo);
}

__device__ __forceinline__ dd dd_mul(dd a, double b) {
    dd p = two_prod(a.hi, b);
    return renormalize(p.hi, p.lo + a.lo * b);
}

// Dot2's step: acc.hi carries the rounded sum, acc.lo the exact errors of
// every product and addition so far (summed in double).
__device__ __forceinline__ void dot2_step(dd& acc, double a, double b) {
    const dd p = two_prod(a, b);
    const dd s = two_sum(acc.hi, p.hi);
    acc.hi = s.hi;
    acc.lo += p.lo + s.lo;
}

// A double-double from the lane `s` above, for warp_reduce.
__device__ __forceinline__ dd shfl_down(dd v, int s) { return {shfl_down(v.hi, s), shfl_down(v.lo, s)}; }

// w_j = d_j²·(b_j − Σ_i a_ij·x_i) in double-double. One warp per column: the
// column's entries are contiguous, so each load of the warp is 256 bytes.
extern "C" __global__ void weighted_misfit_f64(const double* __restrict__ a, long long lda, long long m, long long n,
                                               const double* __restrict__ x, long long incx,
                                               const double* __restrict__ b, long long incb,
                                               const double* __restrict__ d, long long incd,
                                               double* __restrict__ w_hi, double* __restrict__ w_lo) {
    const long long j = (long long)blockIdx.x * (BLOCK / WARP) + threadIdx.x / WARP;
    const int lane = threadIdx.x % WARP;
    if (j >= n) return;  // a whole warp leaves together
    const double* col = a + j * lda;
    dd acc = {0.0, 0.0};
    long long i = lane;
    // Four loads in flight per thread before any is used.
    for (; i + 3 * WARP < m; i += 4 * WARP) {
        const double a0 = col[i], a1 = col[i + WARP], a2 = col[i + 2 * WARP], a3 = col[i + 3 * WARP];
        const double x0 = x[i * incx], x1 = x[(i + WARP) * incx], x2 = x[(i + 2 * WARP) * incx],
                     x3 = x[(i + 3 * WARP) * incx];
        dot2_step(acc, a0, x0);
        dot2_step(acc, a1, x1);
        dot2_step(acc, a2, x2);
        dot2_step(acc, a3, x3);
    }
    for (; i < m; i += WARP) dot2_step(acc, col[i], x[i * incx]);
    acc = warp_reduce(renormalize(acc.hi, acc.lo), dd_add);  // the warp's sum, in lane 0
    if (lane == 0) {
        const double dj = d[j * incd];
        dd s = dd_add({b[j * incb], 0.0}, {-acc.hi, -acc.lo});
        s = dd_mul(dd_mul(s, dj), dj);
        w_hi[j] = s.hi;
        w_lo[j] = s.lo;
    }
}

// part[c·m + i] (hi) and part[(chunks + c)·m + i] (lo) = Σ_j a_ij·w_j over
// chunk c's columns. One thread per row: for a fixed column the warp's loads
// are contiguous.
extern "C" __global__ void weighted_partials_f64(const double* __restrict__ a, long long lda, long long m, long long n,
                                                 const double* __restrict__ w_hi, const double* __restrict__ w_lo,
                                                 long long cols, double* __restrict__ part) {
    const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
    const long long c = blockIdx.y;
    const long long chunks = gridDim.y;
    if (i >= m) return;
    const long long j0 = c * cols;
    const long long j1 = min(n, j0 + cols);
    dd acc = {0.0, 0.0};
    long long j = j0;
    for (; j + 3 < j1; j += 4) {
        const double a0 = a[i + j * lda], a1 = a[i + (j + 1) * lda], a2 = a[i + (j + 2) * lda],
                     a3 = a[i + (j + 3) * lda];
        dot2_step(acc, a0, w_hi[j]);
        dot2_step(acc, a1, w_hi[j + 1]);
        dot2_step(acc, a2, w_hi[j + 2]);
        dot2_step(acc, a3, w_hi[j + 3]);
        // |w_lo| ≤ u·|w_hi|: its products' rounding is second order.
        acc.lo += a0 * w_lo[j] + a1 * w_lo[j + 1] + a2 * w_lo[j + 2] + a3 * w_lo[j + 3];
    }
    for (; j < j1; ++j) {
        const double aj = a[i + j * lda];
        dot2_step(acc, aj, w_hi[j]);
        acc.lo += aj * w_lo[j];
    }
    const dd s = renormalize(acc.hi, acc.lo);
    part[c * m + i] = s.hi;
    part[(chunks + c) * m + i] = s.lo;
}

// r_i = Σ_c part[c][i], in double-double, rounded once.
extern "C" __global__ void weighted_combine_f64(const double* __restrict__ part, long long m, long long chunks,
                                                double* __restrict__ r, long long incr) {
    const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
    if (i >= m) return;
    dd acc = {0.0, 0.0};
    for (long long c = 0; c < chunks; ++c) acc = dd_add(acc, {part[c * m + i], part[(chunks + c) * m + i]});
    r[i * incr] = acc.hi + acc.lo;
}
