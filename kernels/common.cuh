// Device helpers that several kernel files use: IEEE classification and
// NaN-propagating comparisons, warp reductions by shuffle, and the
// grid-stride walk over the entries of a column-major block. Registered with
// NVRTC as a header (`#include "common.cuh"`); everything here is inlined.
//
// Numerics are plain IEEE (no fast math), which the NaN tests rely on.

#ifndef GPUMAT_COMMON_CUH
#define GPUMAT_COMMON_CUH

#define WARP 32

// |x| in double, for accumulating and comparing magnitudes of either type.
__device__ __forceinline__ double abs_d(float x) { return (double)fabsf(x); }
__device__ __forceinline__ double abs_d(double x) { return fabs(x); }

// NaN is the only value that differs from itself.
__device__ __forceinline__ bool is_nan(double x) { return x != x; }

// Finite: neither infinite nor NaN (a NaN fails every comparison).
__device__ __forceinline__ bool is_finite(float x) { return fabsf(x) <= __int_as_float(0x7f7fffff); }
__device__ __forceinline__ bool is_finite(double x) { return fabs(x) <= __longlong_as_double(0x7fefffffffffffffLL); }

// max that propagates NaN: once either side is NaN the result is NaN.
__device__ __forceinline__ double nan_max(double a, double b) { return (b > a || is_nan(b)) ? b : a; }

// The SplitMix64 finalizer (Steele, Lea and Flood 2014), the hash of the
// counter-based random numbers (src/backend/random.rs).
__device__ __forceinline__ unsigned long long splitmix_finalize(unsigned long long x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

// Entry (i, j) of the random matrix of `key`: uniform in [-1, 1), a multiple
// of 2^-52, bit for bit src/backend/random.rs's uniform(key, i, j).
__device__ __forceinline__ double random_uniform(unsigned long long key, unsigned long long i, unsigned long long j) {
    const unsigned long long x = splitmix_finalize((i << 32 | j) ^ key);
    return (double)(x >> 11) * 2.220446049250313080847e-16 - 1.0;
}

// The value of the lane `s` above, for warp_reduce; a file that reduces a
// struct adds an overload for it.
__device__ __forceinline__ double shfl_down(double v, int s) { return __shfl_down_sync(0xffffffffu, v, s); }

// combine(v, value of the lane s above) for s = 16, 8, 4, 2, 1: lane 0 ends
// with the reduction of the warp's 32 values, always in the same order, so
// results are reproducible. Every lane of the warp must call it.
template <typename T, typename Combine>
__device__ __forceinline__ T warp_reduce(T v, Combine combine) {
#pragma unroll
    for (int s = WARP / 2; s > 0; s >>= 1) v = combine(v, shfl_down(v, s));
    return v;
}

// The largest and the smallest of the warp's 32 values, in every lane.
__device__ __forceinline__ unsigned warp_max(unsigned x) {
#if __CUDA_ARCH__ >= 800
    return __reduce_max_sync(0xffffffffu, x);
#else
    for (int s = 16; s > 0; s >>= 1) x = max(x, __shfl_xor_sync(0xffffffffu, x, s));
    return x;
#endif
}

__device__ __forceinline__ unsigned warp_min(unsigned x) { return ~warp_max(~x); }

// For every entry (i, j) of a rows x cols block that belongs to this thread,
// in increasing column-major order: v = load(i, j), then use(i, j, v), until
// use returns false. The thread's entries are k = start + n*stride, k <->
// (i = k % rows, j = k / rows), so any 1-D grid covers the block. STEPS
// entries at a time: their loads are all issued before any is used, so that
// each thread keeps several loads in flight. 64-bit division is slow on the
// GPU (a software routine), so the first k is split into (i, j) once, and
// the loop then advances (i, j) by the stride split the same way: two
// divisions per thread, none per entry.
template <int STEPS, typename Load, typename Use>
__device__ __forceinline__ void for_each_entry(long long rows, long long cols, Load load, Use use) {
    if (rows <= 0 || cols <= 0) return;
    const long long start = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = start % rows;
    long long j = start / rows;
    const long long di = stride % rows;
    const long long dj = stride / rows;
    while (j < cols) {
        long long is[STEPS], js[STEPS];
        decltype(load(0LL, 0LL)) v[STEPS];
#pragma unroll
        for (int u = 0; u < STEPS; ++u) {
            is[u] = i;
            js[u] = j;
            if (j < cols) v[u] = load(i, j);
            i += di;
            j += dj;
            if (i >= rows) {
                i -= rows;
                ++j;
            }
        }
#pragma unroll
        for (int u = 0; u < STEPS; ++u) {
            if (js[u] < cols && !use(is[u], js[u], v[u])) return;
        }
    }
}

#endif  // GPUMAT_COMMON_CUH
