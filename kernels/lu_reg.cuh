// The rows of a register panel kernel (getrf_panel_reg, getrf_panel_cluster):
// each thread holds one row of the panel in registers, and the interchanges
// are bookkeeping of the rows' positions. Here: the pivot keys that those
// kernels compare, the access to a register row by a column index uniform
// across the block, the elimination of one column, and the final store with
// the interchanges applied to the rest of the block column.

#ifndef GPUMAT_LU_REG_CUH
#define GPUMAT_LU_REG_CUH

#include "lu.cuh"

// Widest panel of the register kernels: the entries of a row per thread.
#define REG_NB 32

// A pivot candidate of the register kernel: |a(i, j)| as the bits of a
// double, which order as unsigned integers for numbers >= 0 (a NaN made the
// canonical one, above every number, so that it wins), and the row's
// position after the interchanges so far. No candidate: {0, NO_POS}, which
// loses to every row, a zero one included. In shared memory a key is a
// pair of 64-bit words.
struct Key {
    unsigned long long v;
    unsigned pos;
};
#define NO_POS 0xffffffffu

template <typename T>
__device__ __forceinline__ unsigned long long key_of(T x) {
    const double a = abs_d(x);
    return is_nan(a) ? 0x7ff8000000000000ull : bits_of(a);
}

__device__ __forceinline__ bool key_better(Key a, Key b) { return a.v > b.v || (a.v == b.v && a.pos < b.pos); }

// The best key of the warp, in every lane: three reductions of 32-bit words.
__device__ __forceinline__ Key warp_best_key(Key k) {
    const unsigned hi = warp_max((unsigned)(k.v >> 32));
    const unsigned lo = warp_max((unsigned)(k.v >> 32) == hi ? (unsigned)k.v : 0u);
    const unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return Key{v, warp_min(k.v == v ? k.pos : NO_POS)};
}

// The best of the `count` keys stored as word pairs at `pairs` (shared
// memory), in every lane of the calling warp, and its index in *at.
__device__ __forceinline__ Key best_key(const unsigned long long* pairs, int count, unsigned* at) {
    Key k = {0, NO_POS};
    unsigned q = NO_POS;
    for (int e = threadIdx.x & 31; e < count; e += 32) {
        const Key o = {pairs[2 * e], (unsigned)pairs[2 * e + 1]};
        if (key_better(o, k)) k = o, q = e;
    }
    const Key b = warp_best_key(k);
    *at = warp_min(k.v == b.v && k.pos == b.pos ? q : NO_POS);
    return b;
}

// Entry j of a row held in registers, for a j uniform across the block: a
// jump table keeps the row in registers (an indexed array would go to local
// memory).
#define REG_CASES_30(F)                                                                                          \
    F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) F(12) F(13) F(14) F(15) F(16) F(17) F(18) F(19) \
    F(20) F(21) F(22) F(23) F(24) F(25) F(26) F(27) F(28) F(29) F(30)
#define REG_CASES(F) REG_CASES_30(F) F(31)

template <typename T>
__device__ __forceinline__ T reg_get(const T (&x)[REG_NB], int j) {
    switch (j) {
#define REG_GET(k) \
    case k:        \
        return x[k];
        REG_CASES(REG_GET)
#undef REG_GET
    }
    return T(0);
}

template <typename T>
__device__ __forceinline__ void reg_set(T (&x)[REG_NB], int j, T v) {
    switch (j) {
#define REG_SET(k) \
    case k:        \
        x[k] = v;  \
        break;
        REG_CASES(REG_SET)
#undef REG_SET
    }
}

// x[c] -= l * row[c] for c > j: a jump into an unrolled chain of updates
// (entries past the panel's width are updated too, and never stored).
template <typename T>
__device__ __forceinline__ void reg_update(T (&x)[REG_NB], int j, T l, const double* row) {
    switch (j) {
#define REG_UPDATE(k) \
    case k:           \
        x[k + 1] -= l * (T)row[k + 1];
        REG_CASES_30(REG_UPDATE)
#undef REG_UPDATE
    }
}

// Column j of a register kernel once every block knows its pivot, at
// position p, and the pivot row `rowp`: records the pivot, updates this
// thread's row position (the pivot row takes position j, the row at j takes
// p) and eliminates column j from the row.
template <typename T>
__device__ __forceinline__ void reg_eliminate(T (&x)[REG_NB], int j, unsigned p, const double* rowp, bool& active,
                                              unsigned& pos, int* ipiv, long long incp, int* pivots, int* info,
                                              long long offset, int partial, double tol) {
    if (blockIdx.x == 0 && threadIdx.x == 0) ipiv[j * incp] = (int)(offset + p + 1);
    if (threadIdx.x == 0) pivots[j] = (int)p;
    if (active) {
        if (pos == p) active = false, pos = (unsigned)j;
        else if (pos == (unsigned)j) pos = p;
    }
    // Uniform across the grid: every block read the same pivot.
    const T d = (T)rowp[j];
    if (pivot_fails(d, partial, tol, info, offset + j + 1) || !active) return;
    const T r = T(1) / d;
    const T xj = reg_get(x, j);
    const T l = isfinite(r) ? xj * r : xj / d;
    reg_set(x, j, l);
    reg_update(x, j, l, rowp);
}

// The end of a register kernel: each row stored at its final position, and
// the same interchanges on the other columns of the block column, a share of
// them in each block (every block knows the pivots).
template <typename T>
__device__ __forceinline__ void reg_store(T* a, long long ld, const T (&x)[REG_NB], bool mine, unsigned pos, int w,
                                          long long left, long long right, const int* pivots) {
#pragma unroll
    for (int c = 0; c < REG_NB; ++c)
        if (mine && c < w) a[pos + c * ld] = x[c];
    if (left + right > 0) {
        __syncthreads();
        laswp_apply<REG_NB, 1>(
            a, ld, left + right, 0, w, 0, [&](int s) { return pivots[s]; },
            [&](long long c) { return c < left ? c - left : c - left + w; });
    }
}

#endif  // GPUMAT_LU_REG_CUH
