// Reductions over column-major blocks: entry (i, j) of a block at `a` with
// leading dimension `ld` is a[i + j*ld]; the pointers passed already include
// the block's offset. Results are accumulated in double whatever the element
// type.
//
// Launch contract (every kernel of this file): blockDim = (256, 1, 1)
// exactly (the block reductions use 256-entry shared arrays). The grid is
// free: every kernel strides over its work, so any grid is correct; each
// kernel says what it writes per block and which grid is fastest. The host
// combines the per-block partials with the kernel's own rule.
//
// NaN propagates everywhere: a NaN entry makes the result NaN (max, sums) or
// wins (iamax), as LAPACK's dlange and the CPU backend do.
//
// Loads are batched: each thread issues UNROLL independent loads before it
// uses any of them. With one load in flight per thread a 4-byte type reaches
// about 70% of the memory bandwidth of an H100.

#include "common.cuh"

#define BLOCK 256
#define UNROLL 8

// Calls f(i, j, a(i, j)) for every entry of a rows x cols block that belongs
// to this thread, in increasing column-major order, as long as f returns true
// (for_each_entry, UNROLL loads in flight).
template <typename T, typename F>
__device__ __forceinline__ void scan_entries(const T* __restrict__ a, long long ld, long long rows, long long cols,
                                             F f) {
    // A capture drops the parameter's __restrict__, and with it the loads
    // through the read-only data cache: the lambda restates it.
    const auto load = [&](long long i, long long j) {
        const T* __restrict__ p = a;
        return p[i + j * ld];
    };
    for_each_entry<UNROLL>(rows, cols, load, f);
}

// Sum (OP = 0) or NaN-propagating max (OP = 1) of one value per thread over
// the block; the result is valid in thread 0. Shared memory down to one warp,
// then shuffles; the order of the additions is fixed, so results are
// reproducible. Every thread of the block must call it.
template <int OP>
__device__ __forceinline__ double block_reduce(double v) {
    __shared__ double buf[BLOCK];
    const int t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
#pragma unroll
    for (int s = BLOCK / 2; s >= WARP; s >>= 1) {
        if (t < s) buf[t] = OP == 0 ? buf[t] + buf[t + s] : nan_max(buf[t], buf[t + s]);
        __syncthreads();
    }
    double r = 0.0;
    if (t < WARP) r = warp_reduce(buf[t], [](double x, double o) { return OP == 0 ? x + o : nan_max(x, o); });
    // Callers may call again (a loop over columns): every thread must be past
    // its reads of buf first.
    __syncthreads();
    return r;
}

// partial[blockIdx.x] = max |a(i, j)| over the block's entries; NaN if any of
// them is NaN; 0 for a block that saw no entry. 1-D grid; the host takes the
// NaN-propagating max of the gridDim.x partials.
template <typename T>
__device__ __forceinline__ void max_abs_impl(const T* __restrict__ a, long long ld, long long rows, long long cols,
                                             double* __restrict__ partial) {
    double m = 0.0;
    scan_entries(a, ld, rows, cols, [&](long long, long long, T v) {
        m = nan_max(m, abs_d(v));
        return true;
    });
    m = block_reduce<1>(m);
    if (threadIdx.x == 0) partial[blockIdx.x] = m;
}

// partial[blockIdx.x] = sum of (a(i, j) / scale)^2 over the block's entries,
// in double; 0 for a block that saw no entry. 1-D grid; the host adds the
// partials. The host passes scale = max |a| > 0 (finite), so nothing
// overflows and the Frobenius norm is scale * sqrt(sum of partials).
//
// A division per entry would make this kernel compute-bound, so with
// scale = m * 2^e (m in [0.5, 1)) each entry is multiplied by 2^-e, which is
// exact, and the block's sum divided by m^2 once. Outside the range where
// 2^-e is a normal number the kernel divides.
template <typename T>
__device__ __forceinline__ void sum_sq_scaled_impl(const T* __restrict__ a, long long ld, long long rows,
                                                   long long cols, double scale, double* __restrict__ partial) {
    int e;
    const double m = frexp(scale, &e);
    const bool pow2 = e > -1000 && e < 1000;
    const double p = pow2 ? ldexp(1.0, -e) : 1.0;
    double s = 0.0;
    scan_entries(a, ld, rows, cols, [&](long long, long long, T v) {
        const double t = pow2 ? (double)v * p : (double)v / scale;
        s += t * t;
        return true;
    });
    s = block_reduce<0>(s);
    if (threadIdx.x == 0) partial[blockIdx.x] = pow2 ? s / (m * m) : s;
}

// Column sums of |a| (for the 1-norm), in double, NaN propagating.
// blockIdx.x strides over the columns (one column per block at a time, its
// threads over the rows: coalesced); blockIdx.y splits the rows into
// gridDim.y equal chunks so that a few tall columns still fill the GPU.
// Writes out[j + blockIdx.y * cols] = sum over chunk blockIdx.y of
// |a(i, j)| (0 for an empty chunk): out holds cols * gridDim.y doubles, and
// the host adds the gridDim.y partials of each column. With gridDim.y = 1,
// out[j] is the column sum itself. Fastest grid: `col_abs_sums_grid`.
// OP = 1: the maxima of |a| instead of the sums (dgeequ's column scales).
template <typename T, int OP>
__device__ __forceinline__ void col_abs_sums_impl(const T* __restrict__ a, long long ld, long long rows,
                                                  long long cols, double* __restrict__ out) {
    const long long chunk = (rows + gridDim.y - 1) / gridDim.y;
    const long long lo = blockIdx.y * chunk;
    const long long hi = lo + chunk < rows ? lo + chunk : rows;
    for (long long j = blockIdx.x; j < cols; j += gridDim.x) {
        const T* col = a + j * ld;
        double s = 0.0;
        for (long long i = lo + threadIdx.x; i < hi; i += (long long)UNROLL * BLOCK) {
            T v[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                if (i + u * BLOCK < hi) v[u] = col[i + u * BLOCK];
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                if (i + u * BLOCK < hi) s = OP == 0 ? s + abs_d(v[u]) : nan_max(s, abs_d(v[u]));
            }
        }
        s = block_reduce<OP>(s);
        if (threadIdx.x == 0) out[j + blockIdx.y * cols] = s;
    }
}

// Row sums of |a| (for the infinity norm), in double, NaN propagating. A
// block takes 32 consecutive rows (blockIdx.x strides over such groups): a
// warp reads 32 consecutive entries of a column (coalesced), and the 8 warps
// take every 8th column, their sums then added in shared memory in a fixed
// order. blockIdx.y splits the columns into gridDim.y equal chunks so that
// few rows still fill the GPU. Writes out[i + blockIdx.y * rows] = sum over
// chunk blockIdx.y of |a(i, j)| (0 for an empty chunk): out holds
// rows * gridDim.y doubles and the host adds the gridDim.y partials of each
// row. With gridDim.y = 1, out[i] is the row sum itself. Fastest grid:
// `row_abs_sums_grid`.
// OP = 1: the maxima of |a| instead of the sums (dgeequ's row scales).
template <typename T, int OP>
__device__ __forceinline__ void row_abs_sums_impl(const T* __restrict__ a, long long ld, long long rows, long long cols,
                                                  double* __restrict__ out) {
    __shared__ double buf[BLOCK / WARP][WARP + 1];
    const int lane = threadIdx.x % WARP;
    const int group = threadIdx.x / WARP;
    const int groups = BLOCK / WARP;
    const long long chunk = (cols + gridDim.y - 1) / gridDim.y;
    const long long lo = blockIdx.y * chunk;
    const long long hi = lo + chunk < cols ? lo + chunk : cols;
    const long long row_groups = (rows + WARP - 1) / WARP;
    for (long long g = blockIdx.x; g < row_groups; g += gridDim.x) {
        const long long i = g * WARP + lane;
        double s = 0.0;
        if (i < rows) {
            for (long long j = lo + group; j < hi; j += (long long)UNROLL * groups) {
                T v[UNROLL];
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) {
                    if (j + u * groups < hi) v[u] = a[i + (j + u * groups) * ld];
                }
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) {
                    if (j + u * groups < hi) s = OP == 0 ? s + abs_d(v[u]) : nan_max(s, abs_d(v[u]));
                }
            }
        }
        buf[group][lane] = s;
        __syncthreads();
        if (group == 0 && i < rows) {
            double r = buf[0][lane];
#pragma unroll
            for (int k = 1; k < groups; ++k) r = OP == 0 ? r + buf[k][lane] : nan_max(r, buf[k][lane]);
            out[i + blockIdx.y * rows] = r;
        }
        __syncthreads();
    }
}

// Whether candidate (k, v) beats the current best (b, bv): a NaN beats every
// number, a larger |x| beats a smaller one, and ties (two NaNs included) go to
// the smaller index. b = -1 means "no entry yet" and loses to everything.
__device__ __forceinline__ bool iamax_better(long long k, double v, long long b, double bv) {
    if (k < 0) return false;
    if (b < 0) return true;
    const bool vn = is_nan(v), bn = is_nan(bv);
    if (vn != bn) return vn;
    if (!vn && v != bv) return v > bv;
    return k < b;
}

// Per block: the index of the first entry of largest |x[k*inc]|, k < n.
// best_idx[blockIdx.x] = that index (-1 if the block saw no entry),
// best_val[blockIdx.x] = its |x| as a double (NaN stays NaN; 0 with -1).
// 1-D grid; the host combines the partials with the same rule
// (iamax_better).
template <typename T>
__device__ __forceinline__ void iamax_impl(const T* __restrict__ x, long long inc, long long n,
                                           long long* __restrict__ best_idx, double* __restrict__ best_val) {
    __shared__ long long idx[BLOCK];
    __shared__ double val[BLOCK];
    long long b = -1;
    double bv = 0.0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += UNROLL * stride) {
        T v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            if (k + u * stride < n) v[u] = x[(k + u * stride) * inc];
        }
        // Increasing k, so among equal values the first one stays.
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            if (k + u * stride < n && iamax_better(k + u * stride, abs_d(v[u]), b, bv)) {
                b = k + u * stride;
                bv = abs_d(v[u]);
            }
        }
    }
    const int t = threadIdx.x;
    idx[t] = b;
    val[t] = bv;
    __syncthreads();
#pragma unroll
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s && iamax_better(idx[t + s], val[t + s], idx[t], val[t])) {
            idx[t] = idx[t + s];
            val[t] = val[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        best_idx[blockIdx.x] = idx[0];
        best_val[blockIdx.x] = val[0];
    }
}

// atomicMin(first, k) with k = i + j*rows, the column-major position in the
// block, for the first non-finite (NaN or infinite) entry each thread meets.
// A thread's positions increase along its loop, so it stops at its first hit
// and issues at most one atomic. The host sets *first = ULLONG_MAX before the
// launch; it stays so when every entry is finite. 1-D grid.
template <typename T>
__device__ __forceinline__ void first_non_finite_impl(const T* __restrict__ a, long long ld, long long rows,
                                                      long long cols, unsigned long long* first) {
    long long hit = -1;
    scan_entries(a, ld, rows, cols, [&](long long i, long long j, T v) {
        if (is_finite(v)) return true;
        hit = i + j * rows;
        return false;
    });
    if (hit >= 0) atomicMin(first, (unsigned long long)hit);
}

#define GPUMAT_REDUCE_KERNELS(T, SUFFIX)                                                                         \
    extern "C" __global__ void max_abs_##SUFFIX(const T* a, long long ld, long long rows, long long cols,       \
                                                double* partial) {                                             \
        max_abs_impl<T>(a, ld, rows, cols, partial);                                                           \
    }                                                                                                          \
    extern "C" __global__ void sum_sq_scaled_##SUFFIX(const T* a, long long ld, long long rows, long long cols, \
                                                      double scale, double* partial) {                         \
        sum_sq_scaled_impl<T>(a, ld, rows, cols, scale, partial);                                              \
    }                                                                                                          \
    extern "C" __global__ void col_abs_sums_##SUFFIX(const T* a, long long ld, long long rows, long long cols,  \
                                                     double* out) {                                            \
        col_abs_sums_impl<T, 0>(a, ld, rows, cols, out);                                                       \
    }                                                                                                          \
    extern "C" __global__ void col_abs_max_##SUFFIX(const T* a, long long ld, long long rows, long long cols,   \
                                                    double* out) {                                             \
        col_abs_sums_impl<T, 1>(a, ld, rows, cols, out);                                                       \
    }                                                                                                          \
    extern "C" __global__ void row_abs_sums_##SUFFIX(const T* a, long long ld, long long rows, long long cols,  \
                                                     double* out) {                                            \
        row_abs_sums_impl<T, 0>(a, ld, rows, cols, out);                                                       \
    }                                                                                                          \
    extern "C" __global__ void row_abs_max_##SUFFIX(const T* a, long long ld, long long rows, long long cols,   \
                                                    double* out) {                                             \
        row_abs_sums_impl<T, 1>(a, ld, rows, cols, out);                                                       \
    }                                                                                                          \
    extern "C" __global__ void iamax_##SUFFIX(const T* x, long long inc, long long n, long long* best_idx,      \
                                              double* best_val) {                                              \
        iamax_impl<T>(x, inc, n, best_idx, best_val);                                                          \
    }                                                                                                          \
    extern "C" __global__ void first_non_finite_##SUFFIX(const T* a, long long ld, long long rows,              \
                                                         long long cols, unsigned long long* first) {          \
        first_non_finite_impl<T>(a, ld, rows, cols, first);                                                    \
    }

GPUMAT_REDUCE_KERNELS(float, f32)
GPUMAT_REDUCE_KERNELS(double, f64)
