// Householder QR of a tall narrow panel (the leaf of the recursive panel of
// blocked QR), spread over the whole GPU with one exchange between blocks
// per column and no grid barrier.
//
// householder_{f32,f64}(a, lda, m, k, t, ldt, cells, epoch):
//   LAPACK's dgeqr2 then dlarft (forward, columnwise) on the m x k panel at
//   a (m >= k, k <= QR_LEAF): R in the upper triangle, the reflectors'
//   vectors below the diagonal (unit first entries implicit), and the k x k
//   upper triangular T of Q = I - V T V^T at t (strict lower triangle
//   zeroed). dlarfg's conventions: R(j,j) = -sign(a(j,j)) * norm, tau = 0
//   when the column is already zero below the diagonal.
//
//   The top k rows are held by every block in shared memory and updated
//   identically by each; rows k..m are split into gridDim.x chunks, block b
//   the only one to read or write chunk b. Column j is one pass over the
//   chunk and one exchange through L2 (ll.cuh): each block publishes the
//   dot products of a(:, j) below the diagonal with every column of the
//   panel (block 0 adds the top rows' share) (with
//   itself: the squared norm; with the earlier reflectors: what T needs;
//   with the later columns: what the reflector's update needs, since
//   v = x / (alpha - beta) is a multiple of that part x of the column);
//   then every block reads them all and sums them in the same order, so all
//   derive the same reflector and T column, and updates its own rows.
//   Entries are read scaled by a power of two that brings the panel's
//   largest magnitude near 1 (exact), so no square overflows and none that
//   matters underflows.
//
//   cells: 2 * gridDim.x * QR_LEAF cells, double-buffered by the parity of
//   the step (step 0 the scale, step j + 1 column j; a block writes the
//   cells of step s + 2 only after reading every block's cells of step
//   s + 1, which each wrote after reading those of step s), zeroed or left
//   by launches of other epochs; a step's flag is (epoch << 7) + step + 1
//   (1 <= epoch < 2^25). Launch: blockDim.x = QR_THREADS, gridDim.x at most
//   the number of SMs (all blocks resident together) and QR_MAX_BLOCKS.
//
// householder_shared_{f32,f64}(a, lda, m, k, t, ldt, cells, epoch, rows):
//   the same factorization with each block's rows in dynamic shared memory
//   (column-major, `rows` a column), read from global memory once and
//   written once, so that a column costs the exchange and two passes over
//   shared memory. Launch as householder_ with ceil((m - k) / gridDim.x) <=
//   rows and rows * k * sizeof(T) bytes of dynamic shared memory.

#include "ll.cuh"

#define QR_THREADS 256
#define QR_LEAF 32
#define QR_WARPS (QR_THREADS / 32)
// Cells a lane reads per exchange: enough for QR_MAX_BLOCKS blocks.
#define QR_POLLS 18
#define QR_MAX_BLOCKS (QR_POLLS * QR_WARPS)

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

// out[c] = the sum over warps of red[w][c], c < k, once every warp has
// written its row of red.
template <typename T>
__device__ void warp_sums_to_block(int k, T (*red)[QR_LEAF + 1], T* out) {
    __syncthreads();
    if (threadIdx.x < k) {
        T v = T(0);
        for (int w = 0; w < QR_WARPS; ++w) v += red[w][threadIdx.x];
        out[threadIdx.x] = v;
    }
    __syncthreads();
}

// The block's QR_LEAF values s[] summed over its threads, into out[0..k).
template <typename T>
__device__ void block_sums(T (&s)[QR_LEAF], int k, T (*red)[QR_LEAF + 1], T* out) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int c = 0; c < QR_LEAF; ++c) {
        const T v = warp_sum(s[c]);
        if (lane == 0) red[warp][c] = v;
    }
    warp_sums_to_block(k, red, out);
}

// Publishes this block's values mine[0..k) of step `step` and returns,
// into sums[0..k), every block's summed (their maximum when `max`) in the
// same order in every block. Payloads are doubles (floats widened exactly).
template <typename T>
__device__ void exchange(const T* mine, int k, Cell* cells, unsigned epoch, int step, bool max,
                         T (*red)[QR_LEAF + 1], T* sums) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned flag = (epoch << 7) + (unsigned)step + 1u;
    Cell* column = cells + (long long)(step & 1) * gridDim.x * QR_LEAF;
    if (threadIdx.x < k) ll_store(column + (long long)blockIdx.x * QR_LEAF + threadIdx.x, bits_of((double)mine[threadIdx.x]), flag);
    // Lane c of warp w reads cell c of blocks w, w + QR_WARPS, ...: all
    // loads issued before any flag is checked, so the round trips overlap.
    double v = 0.0;
    if (lane < k) {
        Cell got[QR_POLLS];
#pragma unroll
        for (int r = 0; r < QR_POLLS; ++r) {
            const unsigned g = warp + r * QR_WARPS;
            if (g < gridDim.x) got[r] = ll_peek(column + (long long)g * QR_LEAF + lane);
        }
#pragma unroll
        for (int r = 0; r < QR_POLLS; ++r) {
            const unsigned g = warp + r * QR_WARPS;
            if (g < gridDim.x) {
                if (got[r].f1 != flag || got[r].f2 != flag) {
                    const unsigned long long b = ll_load(column + (long long)g * QR_LEAF + lane, flag);
                    got[r].lo = (unsigned)b;
                    got[r].hi = (unsigned)(b >> 32);
                }
                const double x = double_of(((unsigned long long)got[r].hi << 32) | got[r].lo);
                v = max ? fmax(v, x) : v + x;
            }
        }
    }
    red[warp][lane] = (T)v;
    __syncthreads();
    if (threadIdx.x < k) {
        T s = T(0);
        for (int w = 0; w < QR_WARPS; ++w) s = max ? fmax(s, red[w][threadIdx.x]) : s + red[w][threadIdx.x];
        sums[threadIdx.x] = s;
    }
    __syncthreads();
}

// What every block of a leaf holds in shared memory: the top k rows (every
// block updates its own copy identically), T, and the scratch of the
// reductions and of a column's reflector.
template <typename T>
struct Leaf {
    T top[QR_LEAF][QR_LEAF + 1];  // top[i][c] = a(i, c), i < k
    T tt[QR_LEAF][QR_LEAF + 1];   // T
    T red[QR_WARPS][QR_LEAF + 1];
    T mine[QR_LEAF], sums[QR_LEAF], w[QR_LEAF];
    T coef[3];  // tau, 1 / d (d = alpha - beta, scaled), beta; first sigma and 1 / sigma
};

template <typename T>
__device__ void leaf_load(Leaf<T>& L, const T* a, long long lda, int k) {
    for (int e = threadIdx.x; e < k * k; e += blockDim.x) {
        const int i = e % k, c = e / k;
        L.top[i][c] = a[i + c * lda];
        L.tt[i][c] = T(0);
    }
}

// The scale from each thread's largest magnitude mx: 2^-e, with 2^e just
// above the panel's largest magnitude, into coef[0] (and 2^e into coef[1]).
template <typename T>
__device__ void leaf_scale(Leaf<T>& L, T mx, int k, Cell* cells, unsigned epoch) {
    const int tid = threadIdx.x;
    __syncthreads();
    for (int e = tid; e < k * k; e += blockDim.x) mx = fmax(mx, fabs(L.top[e % k][e / k]));
    for (int off = 16; off > 0; off >>= 1) mx = fmax(mx, __shfl_down_sync(0xffffffffu, mx, off));
    if ((tid & 31) == 0) L.red[tid >> 5][0] = mx;
    __syncthreads();
    if (tid == 0) {
        for (int wp = 1; wp < QR_WARPS; ++wp) mx = fmax(mx, L.red[wp][0]);
        L.mine[0] = mx;
    }
    __syncthreads();
    exchange(L.mine, 1, cells, epoch, 0, true, L.red, L.sums);
    if (tid == 0) {
        int ex = 0;
        if (L.sums[0] > T(0)) frexp(L.sums[0], &ex);
        // Capped so that sigma (for subnormal panels) and 1 / sigma (for
        // panels near overflow) stay finite; both are exact.
        ex = max(min(ex, sizeof(T) == 8 ? 1023 : 127), sizeof(T) == 8 ? -1000 : -120);
        L.coef[0] = ldexp(T(1), -ex);
        L.coef[1] = ldexp(T(1), ex);
    }
    __syncthreads();
}

// Block 0 adds to s[] the dots of the top block's rows below the diagonal.
template <typename T>
__device__ void leaf_top_dots(const Leaf<T>& L, T (&s)[QR_LEAF], int j, int k, T sigma) {
    if (blockIdx.x == 0 && (int)threadIdx.x < k - j - 1) {
        const int i = j + 1 + threadIdx.x;
        const T x = sigma * L.top[i][j];
#pragma unroll
        for (int c = 0; c < QR_LEAF; ++c)
            if (c < k) s[c] += x * (c < j ? L.top[i][c] : sigma * L.top[i][c]);
    }
}

// Column j's reflector from the summed dots in sums[]: tau and rd into
// coef, w, T's column j, and the top block's rows updated (its column j
// waits for leaf_top_column, after the blocks' own rows).
template <typename T>
__device__ void leaf_reflector(Leaf<T>& L, int j, int k, T sigma, T inv_sigma) {
    const int tid = threadIdx.x;
    if (tid == 0) {
        const T alpha = sigma * L.top[j][j], xx = L.sums[j];
        T tau = T(0), rd = T(0);
        if (xx > T(0)) {
            const T h = sqrt(alpha * alpha + xx);
            const T beta = alpha >= T(0) ? -h : h;
            tau = (beta - alpha) / beta;
            rd = T(1) / (alpha - beta);
            L.coef[2] = beta * inv_sigma;
        } else {
            L.coef[2] = L.top[j][j];
        }
        L.coef[0] = tau;
        L.coef[1] = rd;
    }
    __syncthreads();
    // v = (sigma a(:, j)) rd below the diagonal. w_c = tau v^T a(:, c)
    // for c > j (scaled back by sigma last: it has a's magnitude), and
    // v_c^T v for c < j.
    const T tau = L.coef[0], rd = L.coef[1];
    if (tid < k && tau != T(0)) {
        L.w[tid] = tid < j ? L.sums[tid] * rd + L.top[j][tid]
                           : (L.sums[tid] * (tau * rd)) * inv_sigma + tau * L.top[j][tid];
    }
    __syncthreads();
    // Column j of T: T(0:j, j) = -tau T(0:j, 0:j) (V(:, 0:j)^T v), row i
    // by warp i mod QR_WARPS, lane q taking T(i, q) w_q.
    if (tau != T(0)) {
        const int lane = tid & 31, warp = tid >> 5;
        T acc[QR_LEAF / QR_WARPS];
#pragma unroll
        for (int p = 0; p < QR_LEAF / QR_WARPS; ++p) {
            const int i = warp + p * QR_WARPS;
            acc[p] = i <= lane && lane < j ? L.tt[i][lane] * L.w[lane] : T(0);
        }
#pragma unroll
        for (int p = 0; p < QR_LEAF / QR_WARPS; ++p) acc[p] = warp_sum(acc[p]);
#pragma unroll
        for (int p = 0; p < QR_LEAF / QR_WARPS; ++p)
            if (lane == 0 && warp + p * QR_WARPS < j) L.tt[warp + p * QR_WARPS][j] = -tau * acc[p];
    }
    if (tid == 0) L.tt[j][j] = tau;
    if (tau != T(0)) {
        // The top block: row j, then the rows below the diagonal.
        for (int c = j + 1 + tid; c < k; c += blockDim.x) L.top[j][c] -= L.w[c];
        for (int e = tid; e < (k - j - 1) * (k - j - 1); e += blockDim.x) {
            const int i = j + 1 + e % (k - j - 1), c = j + 1 + e / (k - j - 1);
            L.top[i][c] -= L.w[c] * ((sigma * L.top[i][j]) * rd);
        }
    }
}

// Once every block's rows have column j's update (and a barrier): the top
// block's column j becomes v (R(j, j) = beta on the diagonal).
template <typename T>
__device__ void leaf_top_column(Leaf<T>& L, int j, int k, T sigma) {
    const T tau = L.coef[0], rd = L.coef[1];
    if (tau != T(0)) {
        for (int i = j + 1 + threadIdx.x; i < k; i += blockDim.x) L.top[i][j] = (sigma * L.top[i][j]) * rd;
        if (threadIdx.x == 0) L.top[j][j] = L.coef[2];
    }
}

// Block 0 writes the top block and T.
template <typename T>
__device__ void leaf_store(const Leaf<T>& L, T* a, long long lda, T* t, long long ldt, int k) {
    if (blockIdx.x != 0) return;
    for (int e = threadIdx.x; e < k * k; e += blockDim.x) {
        const int i = e % k, c = e / k;
        a[i + c * lda] = L.top[i][c];
        t[i + c * ldt] = i <= c ? L.tt[i][c] : T(0);
    }
}

template <typename T>
__device__ void householder_impl(T* a, long long lda, long long m, int k, T* t, long long ldt, Cell* cells,
                                 unsigned epoch) {
    __shared__ Leaf<T> L;
    const int tid = threadIdx.x;
    const unsigned G = gridDim.x;
    const long long chunk = (m - k + G - 1) / G;
    const long long lo = k + (long long)blockIdx.x * chunk;
    const long long hi = lo + chunk < m ? lo + chunk : m;

    leaf_load(L, a, lda, k);
    T mx = T(0);
    for (long long i = lo + tid; i < hi; i += blockDim.x)
        for (int c = 0; c < k; ++c) mx = fmax(mx, fabs(a[i + c * lda]));
    leaf_scale(L, mx, k, cells, epoch);
    const T sigma = L.coef[0], inv_sigma = L.coef[1];
    __syncthreads();

    T s[QR_LEAF];
    for (int j = 0; j < k; ++j) {
        // Dots of x = sigma a(j+1:m, j) with sigma a(:, c) for c >= j and
        // with the reflector v_c = a(:, c) for c < j, over this chunk.
#pragma unroll
        for (int c = 0; c < QR_LEAF; ++c) s[c] = T(0);
        for (long long i = lo + tid; i < hi; i += blockDim.x) {
            const T x = sigma * a[i + j * lda];
#pragma unroll
            for (int c = 0; c < QR_LEAF; ++c)
                if (c < k) s[c] += x * (c < j ? a[i + c * lda] : sigma * a[i + c * lda]);
        }
        leaf_top_dots(L, s, j, k, sigma);
        block_sums(s, k, L.red, L.mine);
        exchange(L.mine, k, cells, epoch, j + 1, false, L.red, L.sums);
        leaf_reflector(L, j, k, sigma, inv_sigma);
        const T tau = L.coef[0], rd = L.coef[1];
        if (tau != T(0)) {
            // This block's rows: a(i, j) = v_i, a(i, c) -= w_c v_i. The row is
            // loaded whole before any store: a load after a store to the
            // same array would wait for it, one round trip per column.
            for (long long i = lo + tid; i < hi; i += blockDim.x) {
                T row[QR_LEAF];
                const T aj = a[i + j * lda];
#pragma unroll
                for (int c = 0; c < QR_LEAF; ++c)
                    if (c > j && c < k) row[c] = a[i + c * lda];
                const T v = (sigma * aj) * rd;
#pragma unroll
                for (int c = 0; c < QR_LEAF; ++c)
                    if (c > j && c < k) a[i + c * lda] = row[c] - L.w[c] * v;
                a[i + j * lda] = v;
            }
        }
        __syncthreads();
        leaf_top_column(L, j, k, sigma);
        __syncthreads();
    }
    leaf_store(L, a, lda, t, ldt, k);
}

extern "C" __global__ void householder_f32(float* a, long long lda, long long m, long long k, float* t, long long ldt,
                                           Cell* cells, unsigned epoch) {
    householder_impl(a, lda, m, (int)k, t, ldt, cells, epoch);
}

extern "C" __global__ void householder_f64(double* a, long long lda, long long m, long long k, double* t,
                                           long long ldt, Cell* cells, unsigned epoch) {
    householder_impl(a, lda, m, (int)k, t, ldt, cells, epoch);
}

// The shared-memory kernel: householder_impl's steps with the block's rows
// in x (x[c * rows + r] = a(lo + r, c)). The dots of a column go a warp to
// every QR_WARPS-th column, each lane over every 32nd row.
template <typename T>
__device__ void householder_shared_impl(T* a, long long lda, long long m, int k, T* t, long long ldt, Cell* cells,
                                        unsigned epoch, int rows) {
    __shared__ Leaf<T> L;
    extern __shared__ __align__(16) unsigned char dynamic[];
    T* x = reinterpret_cast<T*>(dynamic);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const unsigned G = gridDim.x;
    const long long chunk = (m - k + G - 1) / G;
    const long long lo = k + (long long)blockIdx.x * chunk;
    const int own = (int)(lo < m ? (chunk < m - lo ? chunk : m - lo) : 0);

    leaf_load(L, a, lda, k);
    T mx = T(0);
    for (int e = tid; e < k * rows; e += blockDim.x) {
        const int r = e % rows, c = e / rows;
        const T v = r < own ? a[lo + r + c * lda] : T(0);
        x[e] = v;
        mx = fmax(mx, fabs(v));
    }
    leaf_scale(L, mx, k, cells, epoch);
    const T sigma = L.coef[0], inv_sigma = L.coef[1];
    __syncthreads();

    constexpr int P = QR_LEAF / QR_WARPS;
    for (int j = 0; j < k; ++j) {
        T* xj = x + (long long)j * rows;
        // Dots of sigma a(j+1:m, j) with sigma a(:, c) for c >= j and with
        // the reflector v_c (already in x) for c < j.
        T acc[P];
#pragma unroll
        for (int p = 0; p < P; ++p) acc[p] = T(0);
        for (int r = lane; r < rows; r += 32) {
            const T xr = sigma * xj[r];
#pragma unroll
            for (int p = 0; p < P; ++p) {
                const int c = warp + p * QR_WARPS;
                if (c < k) acc[p] += xr * (c < j ? x[c * rows + r] : sigma * x[c * rows + r]);
            }
        }
        if (blockIdx.x == 0 && lane < k - j - 1) {
            const int i = j + 1 + lane;
            const T xt = sigma * L.top[i][j];
#pragma unroll
            for (int p = 0; p < P; ++p) {
                const int c = warp + p * QR_WARPS;
                if (c < k) acc[p] += xt * (c < j ? L.top[i][c] : sigma * L.top[i][c]);
            }
        }
#pragma unroll
        for (int p = 0; p < P; ++p) acc[p] = warp_sum(acc[p]);
#pragma unroll
        for (int p = 0; p < P; ++p)
            if (lane == 0 && warp + p * QR_WARPS < k) L.mine[warp + p * QR_WARPS] = acc[p];
        __syncthreads();
        exchange(L.mine, k, cells, epoch, j + 1, false, L.red, L.sums);
        leaf_reflector(L, j, k, sigma, inv_sigma);
        const T tau = L.coef[0], rd = L.coef[1];
        if (tau != T(0)) {
            // a(i, c) -= w_c v_i for c > j, by the warp that forms column
            // c's dots, then (once all have read it) a(i, j) = v_i.
#pragma unroll
            for (int p = 0; p < P; ++p) {
                const int c = warp + p * QR_WARPS;
                if (c > j && c < k) {
                    T* xc = x + (long long)c * rows;
                    const T wc = L.w[c];
                    for (int r = lane; r < rows; r += 32) xc[r] -= wc * ((sigma * xj[r]) * rd);
                }
            }
        }
        __syncthreads();
        if (tau != T(0))
            for (int r = tid; r < rows; r += blockDim.x) xj[r] = (sigma * xj[r]) * rd;
        leaf_top_column(L, j, k, sigma);
        __syncthreads();
    }
    for (int e = tid; e < k * rows; e += blockDim.x) {
        const int r = e % rows, c = e / rows;
        if (r < own) a[lo + r + c * lda] = x[e];
    }
    leaf_store(L, a, lda, t, ldt, k);
}

extern "C" __global__ void __launch_bounds__(QR_THREADS)
    householder_shared_f32(float* a, long long lda, long long m, long long k, float* t, long long ldt, Cell* cells,
                           unsigned epoch, long long rows) {
    householder_shared_impl(a, lda, m, (int)k, t, ldt, cells, epoch, (int)rows);
}

extern "C" __global__ void __launch_bounds__(QR_THREADS)
    householder_shared_f64(double* a, long long lda, long long m, long long k, double* t, long long ldt,
                           Cell* cells, unsigned epoch, long long rows) {
    householder_shared_impl(a, lda, m, (int)k, t, ldt, cells, epoch, (int)rows);
}
