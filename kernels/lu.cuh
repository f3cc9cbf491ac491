// What the LU kernels share: the conventions of their column-major blocks,
// the pivot candidates of partial pivoting (from pivot.cuh), the test of a
// failing pivot, row interchanges (laswp_apply), and the cells through which
// the blocks of a panel kernel exchange candidates and rows in L2.
//
// Entry (i, j) of a block at `a` with leading dimension `ld` is a[i + j*ld],
// the pointer already at the block's (0, 0). Sizes, leading dimensions and
// strides are `long long`. Pivot j is stored 1-based in the whole matrix,
// ipiv[j*incp] = offset + p + 1, as LAPACK's dgetrf.

#ifndef GPUMAT_LU_CUH
#define GPUMAT_LU_CUH

#include "ll.cuh"
#include "pivot.cuh"

// Columns of a batch of laswp_apply: their moved entries are all loaded,
// then stored.
#define LASWP_COLS 8
// Widest panel of the grid-wide and shared-memory kernels.
#define GRID_MAX_NB 64

// Whether pivot d fails (exactly zero with partial pivoting, |d| <= tol
// without); the first failure of the factorization goes to *info as the
// 1-based `index`, by one thread of block 0.
template <typename T>
__device__ __forceinline__ bool pivot_fails(T d, int partial, double tol, int* info, long long index) {
    const bool bad = partial ? (d == T(0)) : !(abs_d(d) > tol);
    if (bad && blockIdx.x == 0 && threadIdx.x == 0) atomicCAS(info, 0, (int)index);
    return bad;
}

// Row interchanges as dlaswp on columns column(0..n) of a block: steps
// s = 0..K-1 (in reverse order if `reverse`) exchange rows first + s and
// row(s), the row that step s names (-1: none, the step is skipped). Each
// block first finds where each displaced row comes from, on row numbers in
// shared memory (slot q < K is row first + q, slot K + s the row that step s
// names when that row is outside those and step s is the first to name it;
// a thread per slot traces it back through the K exchanges), and then moves
// each displaced row once: all of a batch of LASWP_COLS columns' moved
// entries are loaded, then stored. Batches go round the grid. Called by
// whole blocks, PER * blockDim.x >= 2*K.
template <int KMAX, int PER, typename T, typename Row, typename Column>
__device__ void laswp_apply(T* a, long long ld, long long n, long long first, int K, int reverse, Row row,
                            Column column) {
    __shared__ int target[KMAX];       // row named by step s, or -1 if skipped
    __shared__ int slot[KMAX];         // its slot
    __shared__ int content[2 * KMAX];  // the row that ends up in each slot
    const int t = threadIdx.x;
    for (int s = t; s < K; s += blockDim.x) target[s] = row(reverse ? K - 1 - s : s);
    __syncthreads();
    for (int s = t; s < K; s += blockDim.x) {
        const int r = target[s];
        int q = r - (int)first;
        if (r >= 0 && (q < 0 || q >= K)) {
            q = K + s;
            for (int u = 0; u < s; ++u)
                if (target[u] == r) {
                    q = K + u;
                    break;
                }
        }
        slot[s] = q;
    }
    __syncthreads();
    // The row each moved slot ends up with: its row traced back through the
    // exchanges, last to first (each maps the two rows it exchanges onto
    // each other), a slot per thread.
    for (int e = t; e < 2 * K; e += blockDim.x) {
        if (e >= K && (target[e - K] < 0 || slot[e - K] != e)) continue;
        int q = e < K ? (int)first + e : target[e - K];
#pragma unroll 8
        for (int s = K - 1; s >= 0; --s) {
            const int r = target[s], p = (int)first + (reverse ? K - 1 - s : s);
            q = r < 0 ? q : q == p ? r : q == r ? p : q;
        }
        content[e] = q;
    }
    __syncthreads();
    // Gather: every moved row of a column is read before any is written.
    const long long batches = (n + LASWP_COLS - 1) / LASWP_COLS;
    for (long long b = blockIdx.x; b < batches; b += gridDim.x) {
        T v[LASWP_COLS][PER];
        int to[PER];
#pragma unroll
        for (int u = 0; u < PER; ++u) {
            const int e = t + u * (int)blockDim.x;
            int dst = -1, src = -1;
            if (e < K) {
                dst = (int)first + e;
                src = content[e];
            } else if (e < 2 * K && target[e - K] >= 0 && slot[e - K] == e) {
                dst = target[e - K];
                src = content[e];
            }
            to[u] = dst != src ? dst : -1;
#pragma unroll
            for (int c = 0; c < LASWP_COLS; ++c) {
                const long long j = b * LASWP_COLS + c;
                if (to[u] >= 0 && j < n) v[c][u] = a[src + column(j) * ld];
            }
        }
        __syncthreads();
#pragma unroll
        for (int u = 0; u < PER; ++u)
#pragma unroll
            for (int c = 0; c < LASWP_COLS; ++c) {
                const long long j = b * LASWP_COLS + c;
                if (to[u] >= 0 && j < n) a[to[u] + column(j) * ld] = v[c][u];
            }
    }
}

#endif  // GPUMAT_LU_CUH
