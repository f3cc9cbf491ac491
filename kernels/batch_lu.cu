// The steps of the blocked LU with partial pivoting on every member of a
// batch of small matrices at once: the panel factorization (one thread
// block per member, its panel in shared memory) and the row interchanges
// on the columns outside the panel. Members are `stride` entries apart;
// blockIdx.x is the member.

#include "common.cuh"

// The better of two pivot candidates: the larger magnitude (a NaN counts
// as infinity, so that it becomes a pivot and fails the member), then the
// smaller row.
__device__ __forceinline__ void better(double& v, int& i, double v2, int i2) {
    if (v2 > v || (v2 == v && i2 < i)) {
        v = v2;
        i = i2;
    }
}

// dgetf2 on the m x nb panel of member blockIdx.x: `a` is its (0, 0), with
// leading dimension ld. Pivot j goes to ipiv[j] as offset + p + 1. A zero
// or non-finite pivot is not divided by; the first one (over all panels)
// is kept in info as offset + j + 1.
template <typename T>
__device__ void batch_getrf_panel(T* a, long long ld, long long stride, int m, int nb, int* ipiv, long long ipiv_inc,
                                  long long ipiv_stride, int* info, long long info_stride, int offset) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* p = reinterpret_cast<T*>(smem);  // the panel, m x nb, leading dimension m
    __shared__ double cand_v[32];
    __shared__ int cand_i[32];
    __shared__ int pivot;
    const long long s = blockIdx.x;
    a += s * stride;
    ipiv += s * ipiv_stride;
    const int t = threadIdx.x, nt = blockDim.x, lane = t % WARP, warp = t / WARP;
    for (int k = t; k < m * nb; k += nt) p[k] = a[(long long)(k / m) * ld + k % m];
    __syncthreads();
    // For the update, threads as rows x column groups: thread t takes rows
    // t % rows_per + k·rows_per and columns t / rows_per + k·groups, so that
    // short panels keep every thread busy.
    int rows_per = WARP;
    while (rows_per < m && rows_per < nt) rows_per *= 2;
    const int groups = nt / rows_per, r0 = t % rows_per, g = t / rows_per;
    int failed = 0;
    for (int j = 0; j < nb; ++j) {
        T* col = p + (long long)j * m;
        double v = -1.0;
        int idx = m;
        for (int i = j + t; i < m; i += nt) {
            const double x = abs_d(col[i]);
            better(v, idx, is_nan(x) ? __longlong_as_double(0x7ff0000000000000LL) : x, i);
        }
        for (int o = WARP / 2; o > 0; o >>= 1) {
            const double v2 = __shfl_down_sync(0xffffffffu, v, o);
            const int i2 = __shfl_down_sync(0xffffffffu, idx, o);
            better(v, idx, v2, i2);
        }
        if (lane == 0) {
            cand_v[warp] = v;
            cand_i[warp] = idx;
        }
        __syncthreads();
        if (t == 0) {
            for (int w = 1; w < nt / WARP; ++w) better(v, idx, cand_v[w], cand_i[w]);
            pivot = idx;
            ipiv[j * ipiv_inc] = offset + idx + 1;
        }
        __syncthreads();
        const int r = pivot;
        if (r != j)
            for (int c = t; c < nb; c += nt) {
                const T x = p[j + (long long)c * m];
                p[j + (long long)c * m] = p[r + (long long)c * m];
                p[r + (long long)c * m] = x;
            }
        __syncthreads();
        const T d = col[j];
        const bool ok = d != T(0) && is_finite(d);
        if (!ok && failed == 0) failed = j + 1;
        // As dgetf2: the reciprocal unless it overflows.
        const T rd = T(1) / d;
        const bool by_reciprocal = is_finite(rd);
        if (ok && g == 0)
            for (int i = j + 1 + r0; i < m; i += rows_per) col[i] = by_reciprocal ? col[i] * rd : col[i] / d;
        if (groups > 1) __syncthreads();
        for (int i = j + 1 + r0; i < m; i += rows_per) {
            const T l = col[i];
            for (int c = j + 1 + g; c < nb; c += groups) p[i + (long long)c * m] -= l * p[j + (long long)c * m];
        }
        __syncthreads();
    }
    for (int k = t; k < m * nb; k += nt) a[(long long)(k / m) * ld + k % m] = p[k];
    if (t == 0 && failed != 0 && info[s * info_stride] == 0) info[s * info_stride] = offset + failed;
}

// The members of the warp-per-member kernels: W lanes a member (32, or 16
// for members of up to 16 rows, two to a warp). A group past the last
// member stays in the loops (the shuffles need every lane of the warp)
// but reads and writes nothing.
template <int W>
struct Group {
    int lane;        // within the member's group of W lanes
    long long s;     // the member
    bool live;       // s < count
    unsigned shift;  // the group's first lane in the warp
    __device__ Group(long long count)
        : lane(threadIdx.x % W),
          s((long long)blockIdx.x * (blockDim.x / W) + threadIdx.x / W),
          live(s < count),
          shift(threadIdx.x % WARP / W * W) {}
    // The lowest lane of this group for which `pred` holds, or -1.
    __device__ int first(bool pred) const {
        const unsigned bits = __ballot_sync(0xffffffffu, pred) >> shift;
        return __ffs(W == WARP ? bits : bits & ((1u << W) - 1)) - 1;
    }
};

// batch_getrf_panel for panels of at most W ≤ 32 rows and NB ≥ nb columns:
// W lanes per member (see Group), lane i holding row i in registers. Rows
// are not moved while the panel is factored: each lane keeps the position
// its row has after the interchanges so far (LAPACK's sequence of swaps,
// simulated), the pivot search runs over the positions not yet pivoted,
// and the rows go to their positions when stored. So a step costs the
// search and one broadcast per column, all shuffles, with no barrier.
// Loops over columns are unrolled to NB with a guard (not a break, which
// would stop the unrolling and send `row` to local memory).
template <typename T, int NB, int W>
__device__ void batch_getrf_warp(T* a, long long ld, long long stride, int m, int nb, int* ipiv, long long ipiv_inc,
                                 long long ipiv_stride, int* info, long long info_stride, int offset, long long count) {
    const Group<W> g(count);
    const int lane = g.lane, rows = g.live ? m : 0;
    a += g.s * stride;
    ipiv += g.s * ipiv_stride;
    T row[NB];
#pragma unroll
    for (int c = 0; c < NB; ++c) row[c] = c < nb && lane < rows ? a[lane + c * ld] : T(0);
    int pos = lane;  // this row's position after the interchanges so far
    int failed = 0;
#pragma unroll
    for (int j = 0; j < NB; ++j) {
        if (j < nb) {
            // The largest magnitude over the positions j.., the first
            // position on ties, as dgetf2.
            const double x = abs_d(row[j]);
            double v = pos >= j && lane < rows ? (is_nan(x) ? __longlong_as_double(0x7ff0000000000000LL) : x) : -1.0;
            int p = pos;
            for (int o = W / 2; o > 0; o >>= 1) {
                const double v2 = __shfl_xor_sync(0xffffffffu, v, o, W);
                const int p2 = __shfl_xor_sync(0xffffffffu, p, o, W);
                better(v, p, v2, p2);
            }
            const int owner = g.first(pos == p && lane < rows);
            // Swap positions j and p.
            if (pos == j) pos = p;
            else if (lane == owner) pos = j;
            const T d = __shfl_sync(0xffffffffu, row[j], owner, W);
            const bool ok = d != T(0) && is_finite(d);
            if (!ok && failed == 0) failed = j + 1;
            if (lane == 0 && g.live) ipiv[j * ipiv_inc] = offset + p + 1;
            const T rd = T(1) / d;
            const bool below = pos > j && lane < rows;
            if (ok && below) row[j] = is_finite(rd) ? row[j] * rd : row[j] / d;
#pragma unroll
            for (int c = j + 1; c < NB; ++c) {
                const T u = __shfl_sync(0xffffffffu, row[c], owner, W);
                if (below) row[c] -= row[j] * u;
            }
        }
    }
#pragma unroll
    for (int c = 0; c < NB; ++c)
        if (c < nb && lane < rows) a[pos + c * ld] = row[c];
    if (lane == 0 && g.live && failed != 0 && info[g.s * info_stride] == 0) info[g.s * info_stride] = offset + failed;
}

// Members a block of the 64-row kernels, 64 threads each.
#define ROWS_MEMBERS 2

// batch_getrf_warp for panels of 33 to 64 rows and at most NB columns: two
// warps per member (ROWS_MEMBERS members a block), thread i holding row i
// in registers and tracking its position as there. A column step finds
// each warp's candidate by shuffles and the member's through shared
// memory, and the pivot row reaches every row through shared memory: two
// barriers a column, the buffers alternating by column parity so that a
// step's writes never meet the previous step's reads.
template <typename T, int NB>
__device__ void batch_getrf_rows(T* a, long long ld, long long stride, int m, int nb, int* ipiv, long long ipiv_inc,
                                 long long ipiv_stride, int* info, long long info_stride, int offset,
                                 long long count) {
    __shared__ double cand_v[2][ROWS_MEMBERS][2];
    __shared__ int cand_p[2][ROWS_MEMBERS][2];
    __shared__ T prow[2][ROWS_MEMBERS][NB];
    const int mem = threadIdx.x / 64, lane = threadIdx.x % 64, half = lane / WARP;
    const long long s = (long long)blockIdx.x * ROWS_MEMBERS + mem;
    const int rows = s < count ? m : 0;
    a += s * stride;
    ipiv += s * ipiv_stride;
    T row[NB];
#pragma unroll
    for (int c = 0; c < NB; ++c) row[c] = c < nb && lane < rows ? a[lane + c * ld] : T(0);
    int pos = lane;
    int failed = 0;
#pragma unroll
    for (int j = 0; j < NB; ++j) {
        if (j < nb) {
            const int par = j & 1;
            const double x = abs_d(row[j]);
            double v = pos >= j && lane < rows ? (is_nan(x) ? __longlong_as_double(0x7ff0000000000000LL) : x) : -1.0;
            int p = pos;
            for (int o = WARP / 2; o > 0; o >>= 1) {
                const double v2 = __shfl_xor_sync(0xffffffffu, v, o);
                const int p2 = __shfl_xor_sync(0xffffffffu, p, o);
                better(v, p, v2, p2);
            }
            if (lane % WARP == 0) cand_v[par][mem][half] = v, cand_p[par][mem][half] = p;
            __syncthreads();
            v = cand_v[par][mem][0], p = cand_p[par][mem][0];
            better(v, p, cand_v[par][mem][1], cand_p[par][mem][1]);
            const bool owner = lane < rows && pos == p;
            if (owner)
#pragma unroll
                for (int c = 0; c < NB; ++c)
                    if (c >= j) prow[par][mem][c] = row[c];
            // Swap positions j and p.
            if (pos == j) pos = p;
            else if (owner) pos = j;
            __syncthreads();
            const T d = prow[par][mem][j];
            const bool ok = d != T(0) && is_finite(d);
            if (!ok && failed == 0) failed = j + 1;
            if (lane == 0 && rows > 0) ipiv[j * ipiv_inc] = offset + p + 1;
            const T rd = T(1) / d;
            const bool below = pos > j && lane < rows;
            if (ok && below) row[j] = is_finite(rd) ? row[j] * rd : row[j] / d;
#pragma unroll
            for (int c = j + 1; c < NB; ++c)
                if (below) row[c] -= row[j] * prow[par][mem][c];
        }
    }
#pragma unroll
    for (int c = 0; c < NB; ++c)
        if (c < nb && lane < rows) a[pos + c * ld] = row[c];
    if (lane == 0 && rows > 0 && failed != 0 && info[s * info_stride] == 0) info[s * info_stride] = offset + failed;
}

// batch_getrs_warp for members of 33 to NB rows: two warps per member
// (ROWS_MEMBERS members a block), thread i holding row i of LU in registers
// and entry i of the right-hand side being solved. The interchanges are
// applied by one thread in shared memory; each step of the substitutions
// publishes the finished entry there for the rows that still need it: one
// barrier a step.
template <typename T, int NB>
__device__ void batch_getrs_rows(const T* lu, long long ld, long long stride, int n, const int* ipiv,
                                 long long ipiv_inc, long long ipiv_stride, T* b, long long ldb, long long bstride,
                                 int nrhs, long long count) {
    __shared__ T xs[ROWS_MEMBERS][NB];
    __shared__ int pv[ROWS_MEMBERS][NB];
    const int mem = threadIdx.x / 64, lane = threadIdx.x % 64;
    const long long s = (long long)blockIdx.x * ROWS_MEMBERS + mem;
    const int rows = s < count ? n : 0;
    lu += s * stride;
    ipiv += s * ipiv_stride;
    b += s * bstride;
    T row[NB];
#pragma unroll
    for (int c = 0; c < NB; ++c) row[c] = c < n && lane < rows ? lu[lane + c * ld] : T(0);
    if (lane < NB) pv[mem][lane] = lane < rows ? ipiv[lane * ipiv_inc] - 1 : lane;
    T* x_ = xs[mem];
    for (int q = 0; q < nrhs; ++q) {
        if (lane < NB) x_[lane] = lane < rows ? b[lane + q * ldb] : T(0);
        __syncthreads();
        if (lane == 0)
            for (int i = 0; i < rows; ++i) {
                const int r = pv[mem][i];
                const T t = x_[i];
                x_[i] = x_[r];
                x_[r] = t;
            }
        __syncthreads();
        T x = lane < NB ? x_[lane] : T(0);
#pragma unroll
        for (int j = 0; j < NB; ++j) {
            if (j < n) {
                if (lane == j) x_[j] = x;
                __syncthreads();
                if (lane > j) x -= row[j] * x_[j];
            }
        }
        __syncthreads();  // the last step's readers, before row n - 1 writes again
#pragma unroll
        for (int j = NB - 1; j >= 0; --j) {
            if (j < n) {
                if (lane == j) {
                    x /= row[j];
                    x_[j] = x;
                }
                __syncthreads();
                if (lane < j) x -= row[j] * x_[j];
            }
        }
        if (lane < rows) b[lane + q * ldb] = x;
        __syncthreads();  // x_ is the next right-hand side's
    }
}

// dgetrs for members of at most NB ≤ W rows: W lanes per member (see
// Group), lane i holding row i of LU in registers and entry i of the
// right-hand side being solved; the interchanges, the forward and the back
// substitution are shuffles, so the factors are read once and there is no
// barrier.
template <typename T, int NB, int W>
__device__ void batch_getrs_warp(const T* lu, long long ld, long long stride, int n, const int* ipiv,
                                 long long ipiv_inc, long long ipiv_stride, T* b, long long ldb, long long bstride,
                                 int nrhs, long long count) {
    const Group<W> g(count);
    const int lane = g.lane, rows = g.live ? n : 0;
    lu += g.s * stride;
    ipiv += g.s * ipiv_stride;
    b += g.s * bstride;
    T row[NB];
#pragma unroll
    for (int c = 0; c < NB; ++c) row[c] = c < n && lane < rows ? lu[lane + c * ld] : T(0);
    const int piv = lane < rows ? ipiv[lane * ipiv_inc] - 1 : lane;
    for (int q = 0; q < nrhs; ++q) {
        T x = lane < rows ? b[lane + q * ldb] : T(0);
        for (int i = 0; i < n; ++i) {
            const int r = __shfl_sync(0xffffffffu, piv, i, W);
            const T xi = __shfl_sync(0xffffffffu, x, i, W), xr = __shfl_sync(0xffffffffu, x, r, W);
            if (lane == i) x = xr;
            if (lane == r) x = xi;
        }
#pragma unroll
        for (int j = 0; j < NB; ++j) {
            const T xj = __shfl_sync(0xffffffffu, x, j, W);
            if (j < n && lane > j) x -= row[j] * xj;
        }
#pragma unroll
        for (int j = NB - 1; j >= 0; --j) {
            if (j < n) {
                if (lane == j && lane < rows) x /= row[j];
                const T xj = __shfl_sync(0xffffffffu, x, j, W);
                if (lane < j) x -= row[j] * xj;
            }
        }
        if (lane < rows) b[lane + q * ldb] = x;
    }
}

// dlaswp on the columns of every member: rows i and ipiv[i] - 1 - shift
// exchanged for i in 0..k (in reverse order when `reverse`). One thread a
// (member, column) pair, `pairs` of them in all.
template <typename T>
__device__ void batch_laswp(T* a, long long ld, long long stride, int rows, int cols, long long pairs, const int* ipiv,
                            long long ipiv_inc, long long ipiv_stride, int k, int shift, int reverse) {
    const long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= pairs) return;
    const long long s = q / cols;
    T* col = a + s * stride + (q % cols) * ld;
    const int* piv = ipiv + s * ipiv_stride;
    for (int p = 0; p < k; ++p) {
        const int i = reverse ? k - 1 - p : p;
        const int r = piv[i * ipiv_inc] - 1 - shift;
        if (r == i || r < 0 || r >= rows) continue;
        const T x = col[i];
        col[i] = col[r];
        col[r] = x;
    }
}

// batch_laswp for members of at most 32·LASWP_REGS rows: the interchanges
// composed once per member into a permutation (thread 0, in shared memory:
// row x ends up holding row perm[x]), then a warp per column moves the
// rows that change, reading them all before writing any. blockIdx.x is the
// member, blockIdx.y a tile of LASWP_COLS columns per warp, so that the
// permutation, composed serially, serves that many columns.
#define LASWP_REGS 16
#define LASWP_COLS 4
template <typename T>
__device__ void batch_laswp_perm(T* a, long long ld, long long stride, int rows, int cols, const int* ipiv,
                                 long long ipiv_inc, long long ipiv_stride, int k, int shift, int reverse) {
    extern __shared__ int perm[];
    __shared__ int reach;  // one past the last row that moves
    const int tid = threadIdx.x, nt = blockDim.x, lane = tid % WARP;
    const long long s = blockIdx.x;
    for (int x = tid; x < rows; x += nt) perm[x] = x;
    __syncthreads();
    if (tid == 0) {
        const int* piv = ipiv + s * ipiv_stride;
        int hi = 0;
        for (int p = 0; p < k; ++p) {
            const int i = reverse ? k - 1 - p : p;
            const int r = piv[i * ipiv_inc] - 1 - shift;
            if (r == i || r < 0 || r >= rows) continue;
            const int t = perm[i];
            perm[i] = perm[r];
            perm[r] = t;
            hi = max(hi, max(i, r) + 1);
        }
        reach = hi;
    }
    __syncthreads();
    const int warps = nt / WARP;
    for (int cc = 0; cc < LASWP_COLS; ++cc) {
        const int c = (blockIdx.y * LASWP_COLS + cc) * warps + tid / WARP;
        if (c >= cols) return;
        T* col = a + s * stride + (long long)c * ld;
        T v[LASWP_REGS];
#pragma unroll
        for (int q = 0; q < LASWP_REGS; ++q) {
            const int x = lane + WARP * q;
            v[q] = x < reach && perm[x] != x ? col[perm[x]] : T(0);
        }
        __syncwarp();
#pragma unroll
        for (int q = 0; q < LASWP_REGS; ++q) {
            const int x = lane + WARP * q;
            if (x < reach && perm[x] != x) col[x] = v[q];
        }
    }
}

#define WARP_ENTRY(T, NB, W)                                                                                   \
    extern "C" __global__ void batch_getrs_warp##NB##x##W##_##T(                                               \
        const T* lu, long long ld, long long stride, int n, const int* ipiv, long long ipiv_inc,               \
        long long ipiv_stride, T* b, long long ldb, long long bstride, int nrhs, long long count) {            \
        batch_getrs_warp<T, NB, W>(lu, ld, stride, n, ipiv, ipiv_inc, ipiv_stride, b, ldb, bstride, nrhs,      \
                                   count);                                                                     \
    }                                                                                                          \
    extern "C" __global__ void batch_getrf_warp##NB##x##W##_##T(                                               \
        T* a, long long ld, long long stride, int m, int nb, int* ipiv, long long ipiv_inc,                    \
        long long ipiv_stride, int* info, long long info_stride, int offset, long long count) {                \
        batch_getrf_warp<T, NB, W>(a, ld, stride, m, nb, ipiv, ipiv_inc, ipiv_stride, info, info_stride,       \
                                   offset, count);                                                             \
    }
#define ENTRIES(T)                                                                                             \
    extern "C" __global__ void batch_laswp_perm_##T(T* a, long long ld, long long stride, int rows, int cols,  \
                                                    const int* ipiv, long long ipiv_inc, long long ipiv_stride, \
                                                    int k, int shift, int reverse) {                           \
        batch_laswp_perm(a, ld, stride, rows, cols, ipiv, ipiv_inc, ipiv_stride, k, shift, reverse);          \
    }                                                                                                          \
    extern "C" __global__ void batch_getrf_panel_##T(T* a, long long ld, long long stride, int m, int nb,      \
                                                     int* ipiv, long long ipiv_inc, long long ipiv_stride,     \
                                                     int* info, long long info_stride, int offset) {           \
        batch_getrf_panel(a, ld, stride, m, nb, ipiv, ipiv_inc, ipiv_stride, info, info_stride, offset);       \
    }                                                                                                          \
    WARP_ENTRY(T, 8, 16)                                                                                       \
    WARP_ENTRY(T, 16, 16)                                                                                      \
    WARP_ENTRY(T, 8, 32)                                                                                       \
    WARP_ENTRY(T, 16, 32)                                                                                      \
    WARP_ENTRY(T, 32, 32)                                                                                      \
    extern "C" __global__ void batch_getrf_rows64_##T(T* a, long long ld, long long stride, int m, int nb,     \
                                                      int* ipiv, long long ipiv_inc, long long ipiv_stride,    \
                                                      int* info, long long info_stride, int offset,            \
                                                      long long count) {                                       \
        batch_getrf_rows<T, 64>(a, ld, stride, m, nb, ipiv, ipiv_inc, ipiv_stride, info, info_stride, offset,  \
                                count);                                                                        \
    }                                                                                                          \
    extern "C" __global__ void batch_getrs_rows64_##T(                                                         \
        const T* lu, long long ld, long long stride, int n, const int* ipiv, long long ipiv_inc,               \
        long long ipiv_stride, T* b, long long ldb, long long bstride, int nrhs, long long count) {            \
        batch_getrs_rows<T, 64>(lu, ld, stride, n, ipiv, ipiv_inc, ipiv_stride, b, ldb, bstride, nrhs, count); \
    }                                                                                                          \
    extern "C" __global__ void batch_laswp_##T(T* a, long long ld, long long stride, int rows, int cols,       \
                                               long long pairs, const int* ipiv, long long ipiv_inc,           \
                                               long long ipiv_stride, int k, int shift, int reverse) {         \
        batch_laswp(a, ld, stride, rows, cols, pairs, ipiv, ipiv_inc, ipiv_stride, k, shift, reverse);        \
    }
typedef float f32;
typedef double f64;
ENTRIES(f32)
ENTRIES(f64)
