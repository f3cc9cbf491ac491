// Reductions over column-major blocks: entry (i, j) of a block at `a` with
// leading dimension `ld` is a[i + j*ld]; the pointers passed already include
// the block's offset. Results are accumulated in double whatever the element
// type.
//
// Launch contract (unless a kernel says otherwise): blockDim = (256, 1, 1)
// exactly (the block reductions use a 256-entry shared array), any 1-D grid.
// Each block writes one partial result at index blockIdx.x and the host
// combines the gridDim.x partials with the same rule. Threads walk a
// grid-stride loop over the rows*cols entries, k <-> (k % rows, k / rows).
//
// NaN propagates everywhere: a NaN entry makes the result NaN (max, sums) or
// wins (iamax), as LAPACK's dlange and the CPU backend do.

#define BLOCK 256
#define WARP 32

// Calls f(i, j) for every entry of a rows x cols block that belongs to this
// thread, in increasing column-major order. The 64-bit divisions (a software
// routine on the GPU) are done once per thread; the loop advances (i, j) by
// the stride split the same way.
template <typename F>
__device__ __forceinline__ void for_each_entry(long long rows, long long cols, F f) {
    if (rows <= 0 || cols <= 0) return;
    const long long start = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = start % rows;
    long long j = start / rows;
    const long long di = stride % rows;
    const long long dj = stride / rows;
    while (j < cols) {
        if (!f(i, j)) return;  // f returns false to stop early
        i += di;
        j += dj;
        if (i >= rows) {
            i -= rows;
            ++j;
        }
    }
}

__device__ __forceinline__ double abs_d(float x) { return (double)fabsf(x); }
__device__ __forceinline__ double abs_d(double x) { return fabs(x); }

// NaN is the only value that differs from itself (no fast math here).
__device__ __forceinline__ bool is_nan(double x) { return x != x; }

// Finite: neither infinite nor NaN (a NaN fails every comparison).
__device__ __forceinline__ bool is_finite(float x) { return fabsf(x) <= __int_as_float(0x7f7fffff); }
__device__ __forceinline__ bool is_finite(double x) { return fabs(x) <= __longlong_as_double(0x7fefffffffffffffLL); }

// max that propagates NaN: once either side is NaN the result is NaN.
__device__ __forceinline__ double nan_max(double a, double b) { return (b > a || is_nan(b)) ? b : a; }

// Sum (op = 0) or NaN-propagating max (op = 1) of one value per thread over
// the block; the result is valid in thread 0. Shared memory down to one warp,
// then shuffles. Every thread of the block must call it.
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
    if (t < WARP) {
        r = buf[t];
#pragma unroll
        for (int s = WARP / 2; s > 0; s >>= 1) {
            const double o = __shfl_down_sync(0xffffffffu, r, s);
            r = OP == 0 ? r + o : nan_max(r, o);
        }
    }
    // Callers may reuse buf (a loop over columns): make sure every thread is
    // past its reads first.
    __syncthreads();
    return r;
}

// partial[blockIdx.x] = max |a(i, j)| over the block's entries; NaN if any of
// them is NaN; 0 for a block that saw no entry.
template <typename T>
__device__ __forceinline__ void max_abs_impl(const T* __restrict__ a, long long ld, long long rows, long long cols,
                                             double* __restrict__ partial) {
    double m = 0.0;
    for_each_entry(rows, cols, [&](long long i, long long j) {
        m = nan_max(m, abs_d(a[i + j * ld]));
        return true;
    });
    m = block_reduce<1>(m);
    if (threadIdx.x == 0) partial[blockIdx.x] = m;
}

// partial[blockIdx.x] = sum of (a(i, j) / scale)^2 over the block's entries,
// in double. The host passes scale = max |a| > 0, so no square overflows and
// the Frobenius norm is scale * sqrt(sum of partials). A true division (not a
// multiplication by 1/scale, which is subnormal for scale > 2^1022 and then
// loses bits).
template <typename T>
__device__ __forceinline__ void sum_sq_scaled_impl(const T* __restrict__ a, long long ld, long long rows,
                                                   long long cols, double scale, double* __restrict__ partial) {
    double s = 0.0;
    for_each_entry(rows, cols, [&](long long i, long long j) {
        const double t = (double)a[i + j * ld] / scale;
        s += t * t;
        return true;
    });
    s = block_reduce<0>(s);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// out[j] = sum_i |a(i, j)| (for the 1-norm). Launch: blockDim 256, any 1-D
// grid (the backend uses min(cols, 65535) blocks): one block per column,
// blocks stride over the columns, threads over the rows of a column
// (coalesced). One value per column, no partials.
template <typename T>
__device__ __forceinline__ void col_abs_sums_impl(const T* __restrict__ a, long long ld, long long rows,
                                                  long long cols, double* __restrict__ out) {
    for (long long j = blockIdx.x; j < cols; j += gridDim.x) {
        const T* col = a + j * ld;
        double s = 0.0;
        for (long long i = threadIdx.x; i < rows; i += blockDim.x) s += abs_d(col[i]);
        s = block_reduce<0>(s);
        if (threadIdx.x == 0) out[j] = s;
    }
}

// out[i] = sum_j |a(i, j)| (for the infinity norm). Launch: any 1-D launch;
// one thread per row, threads stride over the rows, so a warp reads 32
// consecutive entries of a column at each step (coalesced). No shared memory.
template <typename T>
__device__ __forceinline__ void row_abs_sums_impl(const T* __restrict__ a, long long ld, long long rows, long long cols,
                                                  double* __restrict__ out) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += stride) {
        double s = 0.0;
        for (long long j = 0; j < cols; ++j) s += abs_d(a[i + j * ld]);
        out[i] = s;
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
// best_val[blockIdx.x] = its |x| (NaN stays NaN, 0 when the index is -1).
// Launch: blockDim 256, any 1-D grid; the host combines the partials with
// the same rule (iamax_better).
template <typename T>
__device__ __forceinline__ void iamax_impl(const T* __restrict__ x, long long inc, long long n,
                                           long long* __restrict__ best_idx, double* __restrict__ best_val) {
    __shared__ long long idx[BLOCK];
    __shared__ double val[BLOCK];
    long long b = -1;
    double bv = 0.0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) {
        const double v = abs_d(x[k * inc]);
        // k increases, so among equal values the first one stays.
        if (iamax_better(k, v, b, bv)) {
            b = k;
            bv = v;
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
// launch; it stays so when every entry is finite. Launch: any 1-D launch.
template <typename T>
__device__ __forceinline__ void first_non_finite_impl(const T* __restrict__ a, long long ld, long long rows,
                                                      long long cols, unsigned long long* first) {
    long long hit = -1;
    for_each_entry(rows, cols, [&](long long i, long long j) {
        if (!is_finite(a[i + j * ld])) {
            hit = i + j * rows;
            return false;
        }
        return true;
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
        col_abs_sums_impl<T>(a, ld, rows, cols, out);                                                          \
    }                                                                                                          \
    extern "C" __global__ void row_abs_sums_##SUFFIX(const T* a, long long ld, long long rows, long long cols,  \
                                                     double* out) {                                            \
        row_abs_sums_impl<T>(a, ld, rows, cols, out);                                                          \
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
