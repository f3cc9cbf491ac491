// A block reflector applied to a few columns (LAPACK's dlarfb, left side,
// forward, columnwise): C := H^T C or H C, H = I - V T V^T, for the m x kb
// unit lower trapezoidal V that Householder QR leaves (its unit diagonal
// implicit, the entries above it not read), kb <= LARFB_MAX_KB, and C of
// nc <= NC columns. Two launches and two passes over V, against the seven
// calls of the level-3 form, each mostly launch when C is a vector (a
// least-squares right-hand side). The time is latency: every thread issues
// its loads LARFB_BATCH at a time before using any. Sums are formed in a
// fixed order, so results are reproducible.
//
// larfb_dots_{f32,f64}_{NC}(v, ldv, m, kb, c, ldc, nc, w):
//   W(j, :) = V(:, j)^T C by block j of kb, into w (kb x nc, leading
//   dimension kb).
//
// larfb_update_{f32,f64}_{NC}(v, ldv, m, kb, t, ldt, trans, w, c, ldc, nc):
//   every block forms Y = op(T) W in shared memory (op(T) = T^T when trans),
//   then C(i, :) -= V(i, :) Y over chunks of LARFB_ROWS rows, grid-stride,
//   LARFB_GROUPS threads a row, each taking the columns of V j = g (mod
//   LARFB_GROUPS).
//
// Launch: blockDim.x = LARFB_THREADS.

#include "common.cuh"

#define LARFB_THREADS 256
#define LARFB_WARPS (LARFB_THREADS / WARP)
#define LARFB_MAX_KB 128
#define LARFB_BATCH 8
#define LARFB_ROWS 64
#define LARFB_GROUPS (LARFB_THREADS / LARFB_ROWS)

template <typename T>
__device__ __forceinline__ T larfb_warp_sum(T v) {
#pragma unroll
    for (int s = WARP / 2; s > 0; s >>= 1) v += __shfl_down_sync(0xffffffffu, v, s);
    return v;
}

template <typename T, int NC>
__device__ void larfb_dots(const T* __restrict__ v, long long ldv, long long m, int kb, const T* __restrict__ c,
                           long long ldc, int nc, T* __restrict__ w) {
    __shared__ T red[LARFB_WARPS][NC];
    const int j = blockIdx.x, tid = threadIdx.x;
    const T* vj = v + (long long)j * ldv;
    T acc[NC];
#pragma unroll
    for (int col = 0; col < NC; ++col) acc[col] = (tid == 0 && col < nc) ? c[j + col * ldc] : T(0);  // V(j, j) = 1
    long long i = j + 1 + tid;
    constexpr long long STEP = (long long)LARFB_BATCH * LARFB_THREADS;
    for (; i + STEP - LARFB_THREADS < m; i += STEP) {
        T x[LARFB_BATCH], y[LARFB_BATCH][NC];
#pragma unroll
        for (int u = 0; u < LARFB_BATCH; ++u) {
            const long long r = i + u * LARFB_THREADS;
            x[u] = vj[r];
#pragma unroll
            for (int col = 0; col < NC; ++col) y[u][col] = col < nc ? c[r + col * ldc] : T(0);
        }
#pragma unroll
        for (int u = 0; u < LARFB_BATCH; ++u)
#pragma unroll
            for (int col = 0; col < NC; ++col) acc[col] += x[u] * y[u][col];
    }
    for (; i < m; i += LARFB_THREADS) {
        const T x = vj[i];
#pragma unroll
        for (int col = 0; col < NC; ++col)
            if (col < nc) acc[col] += x * c[i + col * ldc];
    }
    const int warp = tid / WARP, lane = tid % WARP;
#pragma unroll
    for (int col = 0; col < NC; ++col) {
        const T s = larfb_warp_sum(acc[col]);
        if (lane == 0) red[warp][col] = s;
    }
    __syncthreads();
    if (tid < nc) {
        T s = T(0);
        for (int x = 0; x < LARFB_WARPS; ++x) s += red[x][tid];
        w[j + tid * kb] = s;
    }
}

// y = op(T) w for the block, both kb x NC with leading dimension
// LARFB_MAX_KB in shared memory: thread (r, h) sums half h of row r's terms,
// in batches of loads.
template <typename T, int NC>
__device__ void larfb_triangle(const T* __restrict__ t, long long ldt, int kb, bool trans, const T* ws, T* y,
                               T (*half)[LARFB_MAX_KB * NC]) {
    const int tid = threadIdx.x, r = tid % LARFB_MAX_KB, h = tid / LARFB_MAX_KB;
    T acc[NC];
#pragma unroll
    for (int col = 0; col < NC; ++col) acc[col] = T(0);
    if (r < kb) {
        // The terms i of row r: i >= r (T(r, i)) or i <= r (T(i, r)).
        const int lo = trans ? 0 : r, hi = trans ? r + 1 : kb, mid = (lo + hi) / 2;
        const int from = h == 0 ? lo : mid, to = h == 0 ? mid : hi;
        for (int i0 = from; i0 < to; i0 += LARFB_BATCH) {
            T x[LARFB_BATCH];
#pragma unroll
            for (int u = 0; u < LARFB_BATCH; ++u) {
                const int i = i0 + u;
                x[u] = i < to ? (trans ? t[i + (long long)r * ldt] : t[r + (long long)i * ldt]) : T(0);
            }
#pragma unroll
            for (int u = 0; u < LARFB_BATCH; ++u)
#pragma unroll
                for (int col = 0; col < NC; ++col)
                    if (i0 + u < to) acc[col] += x[u] * ws[i0 + u + col * LARFB_MAX_KB];
        }
    }
#pragma unroll
    for (int col = 0; col < NC; ++col) half[h][r + col * LARFB_MAX_KB] = acc[col];
    __syncthreads();
    for (int e = tid; e < LARFB_MAX_KB * NC; e += LARFB_THREADS) y[e] = half[0][e] + half[1][e];
}

template <typename T, int NC>
__device__ void larfb_update(const T* __restrict__ v, long long ldv, long long m, int kb, const T* __restrict__ t,
                             long long ldt, bool trans, const T* __restrict__ w, T* __restrict__ c, long long ldc,
                             int nc) {
    // W, then Y = op(T) W, both with leading dimension LARFB_MAX_KB; the
    // halves of Y's sums; the groups' sums of a chunk's rows.
    __shared__ T ws[LARFB_MAX_KB * NC], y[LARFB_MAX_KB * NC];
    __shared__ T half[2][LARFB_MAX_KB * NC];
    __shared__ T part[LARFB_GROUPS][LARFB_ROWS][NC];
    const int tid = threadIdx.x;
    for (int e = tid; e < LARFB_MAX_KB * NC; e += LARFB_THREADS) {
        const int j = e % LARFB_MAX_KB, col = e / LARFB_MAX_KB;
        ws[e] = (j < kb && col < nc) ? w[j + col * kb] : T(0);
    }
    __syncthreads();
    larfb_triangle<T, NC>(t, ldt, kb, trans, ws, y, half);
    __syncthreads();
    const int row = tid % LARFB_ROWS, g = tid / LARFB_ROWS;
    for (long long r0 = (long long)blockIdx.x * LARFB_ROWS; r0 < m; r0 += (long long)gridDim.x * LARFB_ROWS) {
        const long long i = r0 + row;
        T acc[NC];
#pragma unroll
        for (int col = 0; col < NC; ++col) acc[col] = T(0);
        if (i < m) {
            // V(i, j) for j < i, 1 for j = i, nothing above the diagonal.
            const int last = (int)(i < kb ? i : kb - 1);
            for (int j0 = g; j0 <= last; j0 += LARFB_BATCH * LARFB_GROUPS) {
                T x[LARFB_BATCH];
#pragma unroll
                for (int u = 0; u < LARFB_BATCH; ++u) {
                    const int j = j0 + u * LARFB_GROUPS;
                    x[u] = j > last ? T(0) : j < i ? v[i + (long long)j * ldv] : T(1);
                }
#pragma unroll
                for (int u = 0; u < LARFB_BATCH; ++u) {
                    const int j = j0 + u * LARFB_GROUPS;
#pragma unroll
                    for (int col = 0; col < NC; ++col)
                        if (j <= last) acc[col] += x[u] * y[j + col * LARFB_MAX_KB];
                }
            }
        }
#pragma unroll
        for (int col = 0; col < NC; ++col) part[g][row][col] = acc[col];
        __syncthreads();
        if (g == 0 && i < m)
            for (int col = 0; col < nc; ++col) {
                T s = T(0);
                for (int x = 0; x < LARFB_GROUPS; ++x) s += part[x][row][col];
                c[i + col * ldc] -= s;
            }
        __syncthreads();
    }
}

#define LARFB_ENTRIES(T, NAME, NC)                                                                                  \
    extern "C" __global__ void __launch_bounds__(LARFB_THREADS)                                                     \
        larfb_dots_##NAME##_##NC(const T* v, long long ldv, long long m, long long kb, const T* c, long long ldc,   \
                                 int nc, T* w) {                                                                    \
        larfb_dots<T, NC>(v, ldv, m, (int)kb, c, ldc, nc, w);                                                       \
    }                                                                                                               \
    extern "C" __global__ void __launch_bounds__(LARFB_THREADS)                                                     \
        larfb_update_##NAME##_##NC(const T* v, long long ldv, long long m, long long kb, const T* t, long long ldt, \
                                   int trans, const T* w, T* c, long long ldc, int nc) {                            \
        larfb_update<T, NC>(v, ldv, m, (int)kb, t, ldt, trans != 0, w, c, ldc, nc);                                 \
    }

#define LARFB_TYPE(T, NAME)                                                                                         \
    LARFB_ENTRIES(T, NAME, 1)                                                                                       \
    LARFB_ENTRIES(T, NAME, 2)                                                                                       \
    LARFB_ENTRIES(T, NAME, 4)

LARFB_TYPE(float, f32)
LARFB_TYPE(double, f64)
