// B := op(A)⁻¹·B on every member of a batch: A a triangle of order m ≤ 64,
// B m x cols; members `stride` entries apart. The (member, column) pairs
// are dealt out blockDim.y to a thread block, so that small members with
// one right-hand side still fill blocks; thread (x, y) holds row x of its
// pair's column in a register. Substitution goes one row at a time, every
// row below (or above) it updated at once: m steps of one barrier each.
// A is read from global memory, where its few kilobytes stay in L1.

#include "common.cuh"

template <typename T>
__device__ void batch_trsm(const T* a, long long lda, long long astride, T* b, long long ldb, long long bstride, int m,
                           int cols, long long pairs, int lower, int trans, int unit) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* pivot = reinterpret_cast<T*>(smem);  // two rows of blockDim.y: x_i of each pair, by step parity
    const int r = threadIdx.x, y = threadIdx.y, ny = blockDim.y;
    const long long q = (long long)blockIdx.x * ny + y;
    const bool live = q < pairs, mine = live && r < m;
    const long long s = live ? q / cols : 0, c = live ? q % cols : 0;
    a += s * astride;
    b += s * bstride + c * ldb;
    T v = mine ? b[r] : T(0);
    // op(A)(i, j).
    auto at = [&](int i, int j) { return trans ? a[j + i * lda] : a[i + j * lda]; };
    // op(A) is lower when exactly one of `lower` and `trans` holds.
    const bool forward = (lower != 0) != (trans != 0);
    for (int k = 0; k < m; ++k) {
        const int i = forward ? k : m - 1 - k;
        T* slot = pivot + (k & 1) * ny + y;
        if (mine && r == i) {
            if (!unit) v /= at(i, i);
            *slot = v;
        }
        __syncthreads();
        if (mine && (forward ? r > i : r < i)) v -= at(r, i) * *slot;
    }
    if (mine) b[r] = v;
}

#define ENTRY(T)                                                                                                  \
    extern "C" __global__ void batch_trsm_##T(const T* a, long long lda, long long astride, T* b, long long ldb, \
                                              long long bstride, int m, int cols, long long pairs, int lower,    \
                                              int trans, int unit) {                                             \
        batch_trsm(a, lda, astride, b, ldb, bstride, m, cols, pairs, lower, trans, unit);                         \
    }
typedef float f32;
typedef double f64;
ENTRY(f32)
ENTRY(f64)
