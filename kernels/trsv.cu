// Triangular solves with one right-hand side, x := L⁻¹·x or x := L⁻ᵀ·x, L
// the lower triangle of an n x n column-major block (leading dimension
// lda), x contiguous. cuBLAS's trsv walks the diagonal with a chain of
// dependent steps, each waiting for the whole device (0.5 ms at n = 8192 in
// f32 on an H100, for 134 MB of L that a pass at memory speed reads in
// 0.05 ms). Here every block of ROWS rows of x is one thread block, and the
// blocks run together: each streams its part of L as soon as the parts of x
// it needs are published, and the only chain is the publication of one
// block of x after the other, a flag in global memory per block.
//
// Ordering without co-residency: a block takes its position from an atomic
// ticket, so block k only ever waits for blocks that took earlier tickets,
// which are already running; no grid-wide residency is needed. Forward
// (x := L⁻¹x) solves row blocks 0, 1, …; transposed (x := L⁻ᵀx) from the
// last one back.
//
// Publication: the block that solves rows [r0, r0 + ROWS) writes them,
// __threadfence(), then sets ready[block] with an atomic; readers spin on a
// volatile load of the flag, __threadfence(), and read x through L2
// (__ldcg), so they see the values and not a stale cached line.
//
// Launch contract: blockDim = (128, 1, 1), grid = (ceil(n / 32), 1, 1);
// sync = ceil(n / 32) + 1 zeroed ints (the ticket, then the flags).

#define ROWS 32
#define WARPS 4
#define FULL 0xffffffffu

__device__ __forceinline__ void wait_ready(const int* ready, long long b) {
    if ((threadIdx.x & 31) == 0) {
        while (*(volatile const int*)(ready + b) == 0) {
        }
    }
    __syncwarp();
    __threadfence();
}

// The diagonal block (rows and columns [r0, r0 + rb)) into tile[c][r] (+1
// padding against bank conflicts), a column per warp step: coalesced.
template <typename T>
__device__ __forceinline__ void load_diagonal(const T* a, long long lda, long long r0, int rb,
                                              T (*tile)[ROWS + 1]) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int c = warp; c < rb; c += WARPS) tile[c][lane] = lane < rb ? a[(r0 + lane) + (r0 + c) * lda] : T(0);
}

template <typename T>
__device__ void forward(const T* __restrict__ a, long long lda, long long n, T* x, int unit, int* ticket, int* ready) {
    __shared__ long long block_s;
    __shared__ T part[WARPS][ROWS];
    __shared__ T tile[ROWS][ROWS + 1];
    if (threadIdx.x == 0) block_s = atomicAdd(ticket, 1);
    __syncthreads();
    const long long blk = block_s, r0 = blk * ROWS;
    const int rb = (int)min((long long)ROWS, n - r0);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    load_diagonal(a, lda, r0, rb, tile);
    // Σ_{j < r0} L(r0 + lane, j)·x_j, column blocks split among the warps.
    T acc = T(0);
    const bool row_in = lane < rb;
    for (long long cb = warp; cb < blk; cb += WARPS) {
        wait_ready(ready, cb);
        const T xv = __ldcg(x + cb * ROWS + lane);
        const T* col = a + (r0 + lane) + cb * ROWS * lda;
#pragma unroll 8
        for (int c = 0; c < ROWS; ++c) {
            const T xc = __shfl_sync(FULL, xv, c);
            if (row_in) acc = fma(col[c * lda], xc, acc);
        }
    }
    part[warp][lane] = acc;
    __syncthreads();
    if (warp == 0) {
        T v = row_in ? x[r0 + lane] - (part[0][lane] + part[1][lane] + part[2][lane] + part[3][lane]) : T(0);
        for (int c = 0; c < rb; ++c) {
            if (lane == c && !unit) v = v / tile[c][c];
            const T xc = __shfl_sync(FULL, v, c);
            if (lane > c) v = fma(-tile[c][lane], xc, v);
        }
        if (row_in) x[r0 + lane] = v;
        __threadfence();
        __syncwarp();
        if (lane == 0) atomicExch(ready + blk, 1);
    }
}

template <typename T>
__device__ void backward(const T* __restrict__ a, long long lda, long long n, T* x, int unit, int* ticket,
                         int* ready) {
    __shared__ long long block_s;
    __shared__ T part[WARPS][ROWS];
    __shared__ T tile[ROWS][ROWS + 1];
    const long long blocks = (n + ROWS - 1) / ROWS;
    if (threadIdx.x == 0) block_s = blocks - 1 - atomicAdd(ticket, 1);
    __syncthreads();
    const long long blk = block_s, r0 = blk * ROWS;
    const int rb = (int)min((long long)ROWS, n - r0);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    load_diagonal(a, lda, r0, rb, tile);
    // Σ_{j ≥ r0 + ROWS} L(j, r0 + c)·x_j for each column c of the block:
    // lane ℓ takes rows j = cb·ROWS + ℓ (contiguous down each column), and
    // keeps one partial sum per column, summed over the lanes at the end.
    T acc[ROWS];
#pragma unroll
    for (int c = 0; c < ROWS; ++c) acc[c] = T(0);
    for (long long cb = blk + 1 + warp; cb < blocks; cb += WARPS) {
        wait_ready(ready, cb);
        const long long j = cb * ROWS + lane;
        const bool in = j < n;
        const T xv = in ? __ldcg(x + j) : T(0);
        const T* row = a + j + r0 * lda;
#pragma unroll
        for (int c = 0; c < ROWS; ++c) {
            if (in && c < rb) acc[c] = fma(row[c * lda], xv, acc[c]);
        }
    }
#pragma unroll
    for (int c = 0; c < ROWS; ++c) {
        T s = acc[c];
        for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(FULL, s, o);
        if (lane == 0) part[warp][c] = s;
    }
    __syncthreads();
    if (warp == 0) {
        const bool row_in = lane < rb;
        T v = row_in ? x[r0 + lane] - (part[0][lane] + part[1][lane] + part[2][lane] + part[3][lane]) : T(0);
        // Lᵀ's diagonal block is upper triangular: x_c from the last row up.
        for (int c = rb - 1; c >= 0; --c) {
            if (lane == c && !unit) v = v / tile[c][c];
            const T xc = __shfl_sync(FULL, v, c);
            if (lane < c) v = fma(-tile[lane][c], xc, v);
        }
        if (row_in) x[r0 + lane] = v;
        __threadfence();
        __syncwarp();
        if (lane == 0) atomicExch(ready + blk, 1);
    }
}

#define TRSV(T, SUFFIX)                                                                                       \
    extern "C" __global__ void __launch_bounds__(128) trsv_lower_##SUFFIX(const T* a, long long lda, long long n, \
                                                                          T* x, int trans, int unit, int* sync) { \
        if (trans)                                                                                            \
            backward<T>(a, lda, n, x, unit, sync, sync + 1);                                                  \
        else                                                                                                  \
            forward<T>(a, lda, n, x, unit, sync, sync + 1);                                                   \
    }

TRSV(float, f32)
TRSV(double, f64)
