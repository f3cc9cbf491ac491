// Elementwise kernels on column-major blocks: entry (i, j) of a block at `a`
// with leading dimension `ld` is a[i + j*ld]; the pointers passed already
// include the block's offset. Sizes, leading dimensions and indices are
// `long long`.
//
// Launch contract (every kernel of this file): any 1-D launch. Each thread
// walks a grid-stride loop over the rows*cols entries in column-major order,
// entry k <-> (i = k % rows, j = k / rows), UNROLL steps at a time, so any
// grid and block size covers the whole block. The backend launches 256 threads per block and
// ceil(rows*cols / 256) blocks, capped at 65535.
//
// Numerics are plain IEEE: no fast math, a product with NaN is NaN.

#include "common.cuh"

// Entries per thread per step of map_entries: their loads are all issued
// before any store, so each thread keeps several loads in flight. With one, a
// 4-byte type stays well under the memory bandwidth.
#define UNROLL 4

// For every entry (i, j) of a rows x cols block that belongs to this thread:
// dst(i, j) = value(i, j), written by store(i, j, v). value() may read memory,
// store() writes it; the reads of UNROLL entries happen before their writes.
template <typename V, typename S>
__device__ __forceinline__ void map_entries(long long rows, long long cols, V value, S store) {
    for_each_entry<UNROLL>(rows, cols, value, [&](long long i, long long j, decltype(value(0LL, 0LL)) v) {
        store(i, j, v);
        return true;
    });
}

// a(i, j) = value for every entry.
template <typename T>
__device__ __forceinline__ void fill_impl(T* a, long long ld, long long rows, long long cols, T value) {
    map_entries(rows, cols, [&](long long, long long) { return value; },
                [&](long long i, long long j, T v) { a[i + j * ld] = v; });
}

// a *= alpha, a plain product (0 * NaN = NaN, unlike BLAS scal's shortcut).
template <typename T>
__device__ __forceinline__ void scale_impl(T* a, long long ld, long long rows, long long cols, T alpha) {
    map_entries(rows, cols, [&](long long i, long long j) { return a[i + j * ld] * alpha; },
                [&](long long i, long long j, T v) { a[i + j * ld] = v; });
}

// y += alpha * x (the compiler may fuse this into one FMA, an IEEE operation
// with a single rounding).
template <typename T>
__device__ __forceinline__ void axpy_impl(T alpha, const T* x, long long ldx, T* y, long long ldy, long long rows,
                                          long long cols) {
    map_entries(rows, cols, [&](long long i, long long j) { return y[i + j * ldy] + alpha * x[i + j * ldx]; },
                [&](long long i, long long j, T v) { y[i + j * ldy] = v; });
}

// a(i, j) *= d[i * incd]: diag(d) * A.
template <typename T>
__device__ __forceinline__ void scale_rows_impl(T* a, long long lda, long long rows, long long cols, const T* d,
                                                long long incd) {
    map_entries(rows, cols, [&](long long i, long long j) { return a[i + j * lda] * d[i * incd]; },
                [&](long long i, long long j, T v) { a[i + j * lda] = v; });
}

// a(i, j) *= d[j * incd]: A * diag(d).
template <typename T>
__device__ __forceinline__ void scale_cols_impl(T* a, long long lda, long long rows, long long cols, const T* d,
                                                long long incd) {
    map_entries(rows, cols, [&](long long i, long long j) { return a[i + j * lda] * d[j * incd]; },
                [&](long long i, long long j, T v) { a[i + j * lda] = v; });
}

// dst = (D)src, entry by entry. A C cast from double to float rounds to
// nearest even (cvt.rn.f32.f64); float to double is exact.
template <typename S, typename D>
__device__ __forceinline__ void cast_impl(const S* src, long long lds, D* dst, long long ldd, long long rows,
                                          long long cols) {
    map_entries(rows, cols, [&](long long i, long long j) { return (D)src[i + j * lds]; },
                [&](long long i, long long j, D v) { dst[i + j * ldd] = v; });
}

// Makes the n x n block symmetric from one triangle: from_lower = 1 copies
// a(i, j) to a(j, i) for i > j (lower to upper), from_lower = 0 copies upper
// to lower. Each thread writes only entries of the target triangle and reads
// only entries of the source triangle, so there is no race. The reads are
// strided (one column of the target is a row of the source); copy_block with
// transpose = 1 and a triangle mask does the same job with coalesced reads.
template <typename T>
__device__ __forceinline__ void symmetrize_impl(T* a, long long ld, long long n, int from_lower) {
    // (i, j) is a target entry iff from_lower ? i < j : i > j.
    map_entries(n, n, [&](long long i, long long j) { return (from_lower ? i < j : i > j) ? a[j + i * ld] : T(0); },
                [&](long long i, long long j, T v) {
                    if (from_lower ? i < j : i > j) a[i + j * ld] = v;
                });
}

// Sets the strict lower (upper = 0: i > j) or strict upper (upper = 1: i < j)
// triangle of a rows x cols block to value; the rest is not touched.
template <typename T>
__device__ __forceinline__ void fill_strict_triangle_impl(T* a, long long ld, long long rows, long long cols, int upper,
                                                          T value) {
    map_entries(rows, cols, [&](long long, long long) { return value; },
                [&](long long i, long long j, T v) {
                    if (upper ? i < j : i > j) a[i + j * ld] = v;
                });
}

// a(i, j) = entry (i0 + i, j0 + j) of the counter-based random matrix of
// `key`, bit for bit that of src/backend/random.rs: the hash of the two
// indices (the larger first when symmetric) scaled to a multiple of 2^-52 in
// [-1, 1), every step exact, then rounded to T.
template <typename T>
__device__ __forceinline__ void fill_random_impl(T* a, long long ld, long long rows, long long cols, long long i0,
                                                 long long j0, unsigned long long key, int symmetric) {
    map_entries(rows, cols,
                [&](long long i, long long j) {
                    unsigned long long gi = i0 + i, gj = j0 + j;
                    if (symmetric && gi < gj) {
                        unsigned long long t = gi;
                        gi = gj;
                        gj = t;
                    }
                    return (T)random_uniform(key, gi, gj);
                },
                [&](long long i, long long j, T v) { a[i + j * ld] = v; });
}

#define GPUMAT_FILL(T, SUFFIX)                                                                            \
    extern "C" __global__ void fill_##SUFFIX(T* a, long long ld, long long rows, long long cols, T value) { \
        fill_impl<T>(a, ld, rows, cols, value);                                                           \
    }

#define GPUMAT_FLOAT_KERNELS(T, SUFFIX)                                                                           \
    extern "C" __global__ void scale_##SUFFIX(T* a, long long ld, long long rows, long long cols, T alpha) {        \
        scale_impl<T>(a, ld, rows, cols, alpha);                                                                  \
    }                                                                                                             \
    extern "C" __global__ void axpy_##SUFFIX(T alpha, const T* x, long long ldx, T* y, long long ldy,             \
                                             long long rows, long long cols) {                                    \
        axpy_impl<T>(alpha, x, ldx, y, ldy, rows, cols);                                                          \
    }                                                                                                             \
    extern "C" __global__ void scale_rows_##SUFFIX(T* a, long long lda, long long rows, long long cols, const T* d, \
                                                   long long incd) {                                              \
        scale_rows_impl<T>(a, lda, rows, cols, d, incd);                                                          \
    }                                                                                                             \
    extern "C" __global__ void scale_cols_##SUFFIX(T* a, long long lda, long long rows, long long cols, const T* d, \
                                                   long long incd) {                                              \
        scale_cols_impl<T>(a, lda, rows, cols, d, incd);                                                          \
    }                                                                                                             \
    extern "C" __global__ void symmetrize_##SUFFIX(T* a, long long ld, long long n, int from_lower) {              \
        symmetrize_impl<T>(a, ld, n, from_lower);                                                                 \
    }                                                                                                             \
    extern "C" __global__ void fill_strict_triangle_##SUFFIX(T* a, long long ld, long long rows, long long cols,   \
                                                             int upper, T value) {                                \
        fill_strict_triangle_impl<T>(a, ld, rows, cols, upper, value);                                            \
    }                                                                                                             \
    extern "C" __global__ void fill_random_##SUFFIX(T* a, long long ld, long long rows, long long cols,             \
                                                    long long i0, long long j0, unsigned long long key,            \
                                                    int symmetric) {                                              \
        fill_random_impl<T>(a, ld, rows, cols, i0, j0, key, symmetric);                                           \
    }

GPUMAT_FILL(float, f32)
GPUMAT_FILL(double, f64)
GPUMAT_FILL(int, i32)
GPUMAT_FLOAT_KERNELS(float, f32)
GPUMAT_FLOAT_KERNELS(double, f64)

extern "C" __global__ void cast_f64_f32(const double* src, long long lds, float* dst, long long ldd, long long rows,
                                        long long cols) {
    cast_impl<double, float>(src, lds, dst, ldd, rows, cols);
}

extern "C" __global__ void cast_f32_f64(const float* src, long long lds, double* dst, long long ldd, long long rows,
                                        long long cols) {
    cast_impl<float, double>(src, lds, dst, ldd, rows, cols);
}

// dst = src rounded to nearest (even) in IEEE half or bfloat16, as bits: the
// operands of a product on the tensor cores (Backend::gemm_in).
extern "C" __global__ void cast_f32_f16(const float* src, long long lds, unsigned short* dst, long long ldd,
                                        long long rows, long long cols) {
    map_entries(rows, cols,
                [&](long long i, long long j) {
                    unsigned short h;
                    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(src[i + j * lds]));
                    return h;
                },
                [&](long long i, long long j, unsigned short v) { dst[i + j * ldd] = v; });
}

extern "C" __global__ void cast_f32_bf16(const float* src, long long lds, unsigned short* dst, long long ldd,
                                         long long rows, long long cols) {
    map_entries(rows, cols,
                [&](long long i, long long j) {
                    const float v = src[i + j * lds];
                    unsigned short h;
#if __CUDA_ARCH__ >= 800
                    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
#else
                    // Nearest even on the bits (NaN kept quiet).
                    const unsigned int u = __float_as_uint(v);
                    h = (u & 0x7fffffffu) > 0x7f800000u ? (unsigned short)((u >> 16) | 0x40u)
                                                        : (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#endif
                    return h;
                },
                [&](long long i, long long j, unsigned short v) { dst[i + j * ldd] = v; });
}

// src = hi + 2^-11·lo with hi and lo IEEE half (as bits), both dense with
// leading dimension rows: hi is src rounded, lo the rounding error scaled up
// by 2^11 so that it stays a normal number (Ootomo and Yokota 2022). Three
// half-precision products then give FP32's accuracy (Backend::gemm_in).
extern "C" __global__ void split_f32_f16x2(const float* src, long long lds, unsigned short* hi, unsigned short* lo,
                                           long long rows, long long cols) {
    map_entries(rows, cols, [&](long long i, long long j) { return src[i + j * lds]; },
                [&](long long i, long long j, float v) {
                    unsigned short h, l;
                    float hv;
                    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
                    asm("cvt.f32.f16 %0, %1;" : "=f"(hv) : "h"(h));
                    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(l) : "f"((v - hv) * 2048.0f));
                    hi[i + j * rows] = h;
                    lo[i + j * rows] = l;
                });
}

// c = beta·c + alpha·p on the lower (upper = 0) or upper triangle of the
// n x n blocks, the other triangle of c untouched: a symmetric product
// formed whole (on the tensor cores) and added to one triangle.
extern "C" __global__ void add_triangle_f32(float* c, long long ldc, const float* p, long long ldp, long long n,
                                            int upper, float alpha, float beta) {
    map_entries(n, n, [&](long long i, long long j) { return (upper ? i <= j : i >= j) ? p[i + j * ldp] : 0.0f; },
                [&](long long i, long long j, float v) {
                    // beta = 0 does not read c (BLAS: it may hold NaN).
                    if (upper ? i <= j : i >= j) c[i + j * ldc] = (beta == 0.0f ? 0.0f : beta * c[i + j * ldc]) + alpha * v;
                });
}
