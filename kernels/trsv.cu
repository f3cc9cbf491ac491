// A triangular solve of one vector in FP64 from a triangle stored in float
// or double: op(A) x = b, x overwritten, every entry of A widened (exactly)
// as it is read. With a single-precision factor this is the FP64 solve with
// the widened factor at half its memory traffic, and it is one fixed linear
// operator, which GMRES-based refinement needs of its preconditioner.
//
// trsv_wide_{f32,f64}_{n,t}(a, lda, n, lower, unit, x, incx, ticket, cells,
//                            epoch):
//   a: the uplo triangle (lower != 0: the lower one) of the n x n
//   column-major block at a, leading dimension lda; the other triangle is
//   not read, nor the diagonal when unit != 0. op(A) = A (_n) or A^T (_t).
//   x: n doubles at stride incx, b in, x out.
//   ticket: one int, zero before the launch.
//   cells, epoch: n exchange cells (ll.cuh) and this launch's epoch
//   (1 <= epoch < 2^25), shared with the LU panel kernels of the queue: a
//   solved entry of x is published in cell i with flag (epoch << 7) + 1,
//   which no earlier launch's cell holds.
//
// Launch: ceil(n / TRSV_NB) blocks of TRSV_THREADS threads, dynamic shared
// memory sizeof(double) * TRSV_NB * (TRSV_NB + 1).
//
// One block per block row of TRSV_NB rows of op(A), all in flight at once
// (Liu, Li, Hou and Vinter 2016 solve sparse triangles so, without a
// barrier per level). Each block takes a ticket as it starts and solves the
// block row of that rank in the order of substitution (top down when op(A)
// is lower triangular, bottom up when upper), so it waits only for blocks
// that started before it: no assumption on the order of launch or on how
// many blocks are resident.
//
// Before it waits for anything, a block inverts its diagonal tile in shared
// memory (in FP64, row by row in place). The chain from block to block is
// then one product with the inverse, not a substitution of TRSV_NB
// dependent divisions: the critical path is a poll, a tile product and a
// matrix-vector product per block row. The error of a tile's inverse grows
// with the tile's condition (Du Croz and Higham 1992), not with the whole
// triangle's; in FP64 on a single-precision factor it stays far below
// the factor's own. The block reads each tile of its row of op(A) a tile
// ahead of the part of x that the tile multiplies, and multiplies it once
// the part is published. Each solved entry travels with its flag in one
// 16-byte cell (the LL protocol of ll.cuh), so a reader polls the entry
// itself: no fence and no second round trip to L2 after a flag. Sums are
// formed in a fixed order, so results are reproducible.

#include "common.cuh"
#include "ll.cuh"

#ifndef TRSV_NB
#define TRSV_NB 64
#endif
#ifndef TRSV_THREADS
#define TRSV_THREADS 256
#endif
// Threads per row of a tile, and the rows (or columns) each one takes.
#define TRSV_GROUPS (TRSV_THREADS / TRSV_NB)
#define TRSV_PER (TRSV_NB / TRSV_GROUPS)

// op(A)(i, j) of a column-major A.
template <typename T, bool TRANS>
__device__ __forceinline__ double trsv_at(const T* __restrict__ a, long long lda, long long i, long long j) {
    return TRANS ? (double)a[j + i * lda] : (double)a[i + j * lda];
}

// m := m^-1 for the triangular m (lower when forward) in shared memory,
// its other triangle zero; threads j < TRSV_NB each form column j. Row i of
// the inverse needs row i of m and the rows of the inverse before it (after
// it, backward), which already replaced theirs.
__device__ void trsv_invert(double (*m)[TRSV_NB + 1], bool forward) {
    const int j = threadIdx.x;
    for (int step = 0; step < TRSV_NB; ++step) {
        const int i = forward ? step : TRSV_NB - 1 - step;
        double t = 0.0, d = 1.0;
        if (j < TRSV_NB) {
            d = m[i][i];
            // The same k across threads: m[i][k] is a broadcast, and the
            // inverse's zeros outside its triangle make the range uniform.
            if (forward) {
                for (int k = 0; k < i; ++k) t += m[i][k] * m[k][j];
            } else {
                for (int k = TRSV_NB - 1; k > i; --k) t += m[i][k] * m[k][j];
            }
        }
        __syncthreads();
        if (j < TRSV_NB && (forward ? j <= i : j >= i)) m[i][j] = j == i ? 1.0 / d : -t / d;
        __syncthreads();
    }
}

template <typename T, bool TRANS>
__device__ void trsv_wide(const T* __restrict__ a, long long lda, long long n, int lower, int unit, double* x,
                          long long incx, int* ticket_counter, Cell* cells, unsigned epoch) {
    extern __shared__ double trsv_smem[];
    double(*inv)[TRSV_NB + 1] = reinterpret_cast<double(*)[TRSV_NB + 1]>(trsv_smem);
    __shared__ double xs[2][TRSV_NB];
    __shared__ double part[TRSV_GROUPS][TRSV_NB];
    __shared__ double rhs[TRSV_NB];
    __shared__ int ticket;
    const int tid = threadIdx.x, lane = tid % WARP;
    // A thread's place in a tile: `along` runs along memory (op(A)'s row
    // without transposition, its column with), `g` picks the other index.
    const int along = tid % TRSV_NB, g = tid / TRSV_NB;
    const unsigned flag = (epoch << 7) + 1;
    if (tid == 0) ticket = atomicAdd(ticket_counter, 1);
    __syncthreads();
    const long long blocks = (n + TRSV_NB - 1) / TRSV_NB;
    // op(A) is lower triangular: substitution runs forward.
    const bool forward = (lower != 0) != TRANS;
    const long long bi = forward ? ticket : blocks - 1 - ticket;
    const long long r0 = bi * TRSV_NB;
    const int rows = (int)min((long long)TRSV_NB, n - r0);

    // The diagonal tile of op(A), its stored triangle only, the identity
    // past the last row; then its inverse.
    for (int e = tid; e < TRSV_NB * TRSV_NB; e += TRSV_THREADS) {
        const int fast = e % TRSV_NB, slow = e / TRSV_NB;
        const int i = TRANS ? slow : fast, j = TRANS ? fast : slow;
        const bool stored = forward ? i > j : i < j;
        double v = 0.0;
        if (i == j) {
            v = (i < rows && !unit) ? trsv_at<T, TRANS>(a, lda, r0 + i, r0 + i) : 1.0;
        } else if (i < rows && j < rows && stored) {
            v = trsv_at<T, TRANS>(a, lda, r0 + i, r0 + j);
        }
        inv[i][j] = v;
    }
    double b = 0.0;
    if (tid < rows) b = __ldcg(&x[(r0 + tid) * incx]);
    __syncthreads();
    trsv_invert(inv, forward);

    // acc[q]: without transposition, row `along` of the tile times x over
    // columns g + q·GROUPS (summed over q); with it, row g + q·GROUPS times
    // x at column `along`.
    double acc[TRSV_PER];
#pragma unroll
    for (int q = 0; q < TRSV_PER; ++q) acc[q] = 0.0;
    const long long tiles = forward ? bi : blocks - 1 - bi;
    // This thread's entries of tile t, loaded a tile ahead.
    auto load = [&](long long t, T(&v)[TRSV_PER]) {
        const long long c0 = (forward ? t : blocks - 1 - t) * TRSV_NB;
        const int cols = (int)min((long long)TRSV_NB, n - c0);
#pragma unroll
        for (int q = 0; q < TRSV_PER; ++q) {
            const int other = g + q * TRSV_GROUPS;
            if (TRANS) {
                v[q] = (along < cols && other < rows) ? a[(c0 + along) + (r0 + other) * lda] : T(0);
            } else {
                v[q] = (along < rows && other < cols) ? a[(r0 + along) + (c0 + other) * lda] : T(0);
            }
        }
    };
    T v[TRSV_PER], next[TRSV_PER] = {};
    if (tiles > 0) load(0, v);
    for (long long t = 0; t < tiles; ++t) {
        const long long bj = forward ? t : blocks - 1 - t;
        const long long c0 = bj * TRSV_NB;
        const int cols = (int)min((long long)TRSV_NB, n - c0);
        if (t + 1 < tiles) load(t + 1, next);
        double* xb = xs[t & 1];
        if (tid < TRSV_NB) {
            xb[tid] = tid < cols ? double_of(ll_load(cells + c0 + tid, flag)) : 0.0;
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < TRSV_PER; ++q) {
            acc[q] += (double)v[q] * xb[TRANS ? along : g + q * TRSV_GROUPS];
            v[q] = next[q];
        }
    }

    // The off-diagonal sums of the block's rows, in a fixed order.
    if (TRANS) {
        // Row g + q·GROUPS: the sum over `along`, TRSV_NB / WARP warps. A
        // transposing reduction: at each level a lane keeps half of its
        // sums and sends the other half to its partner, so the warp's 16
        // sums take 16 shuffles in 5 dependent steps (a tree for each sum
        // took 80, on the chain's critical path).
        // Lanes 2q and 2q + 1 end with sum q.
        static_assert(TRSV_PER == 16 && WARP == 32, "the reduction's levels assume 16 sums a lane");
#pragma unroll
        for (int half = TRSV_PER / 2, bit = WARP / 2; half >= 1; half >>= 1, bit >>= 1) {
            const bool upper = (lane & bit) != 0;
#pragma unroll
            for (int i = 0; i < half; ++i) {
                const double keep = upper ? acc[half + i] : acc[i], send = upper ? acc[i] : acc[half + i];
                acc[i] = keep + __shfl_xor_sync(0xffffffffu, send, bit);
            }
        }
        const double s = acc[0] + __shfl_xor_sync(0xffffffffu, acc[0], 1);
        if ((lane & 1) == 0) part[along / WARP][g + (lane >> 1) * TRSV_GROUPS] = s;
    } else {
        double s = 0.0;
#pragma unroll
        for (int q = 0; q < TRSV_PER; ++q) s += acc[q];
        part[g][along] = s;
    }
    __syncthreads();
    if (tid < TRSV_NB) {
        double s = 0.0;
        const int parts = TRANS ? TRSV_NB / WARP : TRSV_GROUPS;
        for (int p = 0; p < parts; ++p) s += part[p][tid];
        rhs[tid] = b - s;
    }
    __syncthreads();

    // x = inv · rhs: thread (along, g) sums row `along` over the columns
    // g + q·GROUPS, then one warp adds the groups' sums.
    double y = 0.0;
#pragma unroll
    for (int q = 0; q < TRSV_PER; ++q) {
        const int c = g + q * TRSV_GROUPS;
        y += inv[along][c] * rhs[c];
    }
    part[g][along] = y;
    __syncthreads();
    if (tid >= WARP) return;
    for (int r = lane; r < rows; r += WARP) {
        double s = 0.0;
        for (int p = 0; p < TRSV_GROUPS; ++p) s += part[p][r];
        x[(r0 + r) * incx] = s;
        ll_store(cells + r0 + r, bits_of(s), flag);
    }
}

#define GPUMAT_TRSV_KERNELS(T, SUFFIX)                                                                        \
    extern "C" __global__ void __launch_bounds__(TRSV_THREADS)                                                \
        trsv_wide_##SUFFIX##_n(const T* a, long long lda, long long n, int lower, int unit, double* x,        \
                               long long incx, int* ticket, Cell* cells, unsigned epoch) {                    \
        trsv_wide<T, false>(a, lda, n, lower, unit, x, incx, ticket, cells, epoch);                           \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(TRSV_THREADS)                                                \
        trsv_wide_##SUFFIX##_t(const T* a, long long lda, long long n, int lower, int unit, double* x,        \
                               long long incx, int* ticket, Cell* cells, unsigned epoch) {                    \
        trsv_wide<T, true>(a, lda, n, lower, unit, x, incx, ticket, cells, epoch);                            \
    }

GPUMAT_TRSV_KERNELS(float, f32)
GPUMAT_TRSV_KERNELS(double, f64)
