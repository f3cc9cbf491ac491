// LU with partial pivoting: the unblocked panel (dgetf2) and row
// interchanges (dlaswp) on column-major blocks; entry (i, j) of a block at
// `a` with leading dimension `ld` is a[i + j*ld], the pointer already at the
// block's (0, 0). Sizes, leading dimensions and strides are `long long`.
//
// getrf_panel_{f32,f64}(a, ld, m, nb, ipiv, incp, info, offset, partial, tol):
//   P·A = L·U of the tall m x nb block (m >= nb), in place. Pivot j is stored
//   1-based in the whole matrix, ipiv[j*incp] = offset + p + 1. partial = 1:
//   p is the row of largest magnitude in column j at or below the diagonal
//   (first on ties, a NaN wins); partial = 0: no exchanges, and a pivot of
//   magnitude <= tol fails. A failing pivot (exactly zero with partial
//   pivoting) is not divided by; *info, if still 0, becomes offset + j + 1,
//   and the factorization goes on, as LAPACK's dgetrf.
//   Launch: one block of GETRF_THREADS threads (a multiple of 32, <= 1024).
//   The blocked factorization calls it only on narrow leaves of its
//   recursive panel; everything wider goes through cuBLAS trsm and gemm.
//
// getrf_panel_grid_{f32,f64}(a, ld, m, nb, ipiv, incp, info, offset, partial,
//                            tol, part_v, part_i, stage, bar):
//   the same factorization for tall panels (nb <= GRID_MAX_NB), spread over
//   the whole GPU: block b owns rows [b*chunk, (b+1)*chunk) and is the only
//   one to read or write them in the matrix. A column step is one grid
//   barrier: before it, each block publishes its pivot candidate (part_v,
//   part_i) and that candidate's row (and row j, by its owner) in `stage`;
//   after it, every block picks the same pivot from the candidates, reads
//   the two exchanged rows from `stage` (through L2: __ldcg, L1 is not
//   coherent across SMs), the rows' owners exchange them, and each block
//   updates its own rows. Scratch, double-buffered by column parity:
//   part_v and part_i 2*gridDim.x entries, stage 2*(gridDim.x+1)*GRID_MAX_NB
//   entries of T; bar: two zeroed unsigned words (arrival count,
//   generation). Launch: blockDim.x a multiple of 32 up to 1024 (the backend
//   uses 256, one row per thread), gridDim.x at most the number of SMs (all blocks must be resident together; work of other
//   streams finishes and frees its SMs).
//
// laswp_{f32,f64}(a, ld, m, n, ipiv, incp, k, shift, reverse):
//   for i in 0..k (or k-1 down to 0 if reverse), rows i and
//   ipiv[i*incp] - 1 - shift of the m x n block are exchanged; a pivot
//   outside the block is skipped. Launch: 1-D, any grid, blockDim.x =
//   LASWP_THREADS; thread t of the grid-stride loop owns column t, and the
//   block stages the pivots through shared memory.

#define GETRF_THREADS 512
#define LASWP_THREADS 128
#define GRID_MAX_NB 64

struct Candidate {
    double v;     // |a(i, j)|, or -1 for none
    long long i;  // row
};

__device__ __forceinline__ bool is_nan_d(double x) { return x != x; }

// Whether candidate a is a better pivot than b: NaN first, then larger, then
// the lower row.
__device__ __forceinline__ bool better(Candidate a, Candidate b) {
    const bool an = is_nan_d(a.v), bn = is_nan_d(b.v);
    if (an || bn) return an && (!bn || a.i < b.i);
    return a.v > b.v || (a.v == b.v && a.i < b.i);
}

__device__ __forceinline__ Candidate warp_best(Candidate c) {
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) {
        Candidate o;
        o.v = __shfl_down_sync(0xffffffffu, c.v, s);
        o.i = __shfl_down_sync(0xffffffffu, c.i, s);
        if (better(o, c)) c = o;
    }
    return c;
}

__device__ __forceinline__ double abs_d(float x) { return (double)fabsf(x); }
__device__ __forceinline__ double abs_d(double x) { return fabs(x); }

template <typename T>
__device__ void getrf_panel_impl(T* a, long long ld, long long m, long long nb, int* ipiv, long long incp, int* info,
                                 long long offset, int partial, double tol) {
    __shared__ Candidate best[32];
    __shared__ long long pivot;
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5, warps = blockDim.x >> 5;
    int failed = 0;  // uniform
    for (long long j = 0; j < nb; ++j) {
        T* cj = a + j * ld;
        if (partial) {
            Candidate c = {-1.0, m};
            for (long long i = j + t; i < m; i += blockDim.x) {
                const Candidate o = {abs_d(cj[i]), i};
                if (better(o, c)) c = o;
            }
            c = warp_best(c);
            if (lane == 0) best[warp] = c;
            __syncthreads();
            if (warp == 0) {
                c = lane < warps ? best[lane] : Candidate{-1.0, m};
                c = warp_best(c);
                if (lane == 0) pivot = c.i < m ? c.i : j;
            }
            __syncthreads();
        } else if (t == 0) {
            pivot = j;
        }
        if (!partial) __syncthreads();
        const long long p = pivot;
        if (t == 0) ipiv[j * incp] = (int)(offset + p + 1);
        if (p != j) {
            for (long long k = t; k < nb; k += blockDim.x) {
                const T x = a[j + k * ld];
                a[j + k * ld] = a[p + k * ld];
                a[p + k * ld] = x;
            }
        }
        __syncthreads();
        const T d = cj[j];
        const bool bad = partial ? (d == T(0)) : !(abs_d(d) > tol);
        if (bad) {  // uniform: every thread read the same pivot
            if (t == 0 && !failed) atomicCAS(info, 0, (int)(offset + j + 1));
            failed = 1;
            __syncthreads();  // the pivot search of the next column reads `best`
            continue;
        }
        const T r = T(1) / d;
        const bool by_reciprocal = isfinite(r);
        // Each thread scales its rows of column j and updates the same rows
        // of the columns to the right: no barrier between the two.
        for (long long i = j + 1 + t; i < m; i += blockDim.x) {
            const T l = by_reciprocal ? cj[i] * r : cj[i] / d;
            cj[i] = l;
            for (long long k = j + 1; k < nb; ++k) a[i + k * ld] -= l * a[j + k * ld];
        }
        __syncthreads();
    }
}

extern "C" __global__ void getrf_panel_f32(float* a, long long ld, long long m, long long nb, int* ipiv,
                                           long long incp, int* info, long long offset, int partial, double tol) {
    getrf_panel_impl(a, ld, m, nb, ipiv, incp, info, offset, partial, tol);
}

extern "C" __global__ void getrf_panel_f64(double* a, long long ld, long long m, long long nb, int* ipiv,
                                           long long incp, int* info, long long offset, int partial, double tol) {
    getrf_panel_impl(a, ld, m, nb, ipiv, incp, info, offset, partial, tol);
}

// A barrier across the whole grid (every block resident): arrive on
// bar[0]; the last block resets it and bumps the generation bar[1], which
// the others wait for. The fences make each block's writes before the
// barrier visible to every block after it.
__device__ __forceinline__ void grid_barrier(unsigned* bar) {
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile unsigned* gen = bar + 1;
        const unsigned g = *gen;
        __threadfence();
        if (atomicAdd(bar, 1u) == gridDim.x - 1) {
            atomicExch(bar, 0u);
            __threadfence();
            atomicAdd(bar + 1, 1u);
        } else {
            while (*gen == g) {
            }
        }
        __threadfence();
    }
    __syncthreads();
}

template <typename T>
__device__ void getrf_panel_grid_impl(T* a, long long ld, long long m, long long nb, int* ipiv, long long incp,
                                      int* info, long long offset, int partial, double tol, double* part_v,
                                      long long* part_i, T* stage, unsigned* bar) {
    __shared__ Candidate best[32];
    __shared__ long long mine, pivot;
    __shared__ T rowj[GRID_MAX_NB], rowp[GRID_MAX_NB];
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5, warps = blockDim.x >> 5;
    const unsigned G = gridDim.x;
    const long long chunk = (m + G - 1) / G;
    const long long lo = (long long)blockIdx.x * chunk;
    const long long hi = lo + chunk < m ? lo + chunk : m;
    for (long long j = 0; j < nb; ++j) {
        // Double-buffered by the parity of j: a block writes buffer j % 2
        // only after every block has passed the barrier of step j - 1, that
        // is, has finished reading buffer j % 2 of step j - 2.
        const int par = (int)(j & 1);
        T* rows = stage + (long long)par * (G + 1) * GRID_MAX_NB;  // G candidate rows, then row j
        double* pv = part_v + par * G;
        long long* pi = part_i + par * G;
        const T* cj = a + j * ld;
        // This block's candidate: its own rows only, so plain loads are fresh.
        Candidate c = {-1.0, m};
        if (partial) {
            for (long long i = (lo > j ? lo : j) + t; i < hi; i += blockDim.x) {
                const Candidate o = {abs_d(cj[i]), i};
                if (better(o, c)) c = o;
            }
        }
        c = warp_best(c);
        if (lane == 0) best[warp] = c;
        __syncthreads();
        if (warp == 0) {
            c = lane < warps ? best[lane] : Candidate{-1.0, m};
            c = warp_best(c);
            if (lane == 0) {
                pv[blockIdx.x] = c.v;
                pi[blockIdx.x] = c.i;
                mine = c.i;
            }
        }
        __syncthreads();
        // Publish the candidate row, and row j if it is ours, for the others.
        if (mine < m)
            for (long long k = t; k < nb; k += blockDim.x) rows[blockIdx.x * GRID_MAX_NB + k] = a[mine + k * ld];
        if (lo <= j && j < hi)
            for (long long k = t; k < nb; k += blockDim.x) rows[G * GRID_MAX_NB + k] = a[j + k * ld];
        grid_barrier(bar);
        if (warp == 0) {
            c = Candidate{-1.0, m};
            for (unsigned b = lane; b < G; b += 32) {
                const Candidate o = {__ldcg(pv + b), __ldcg(pi + b)};
                if (better(o, c)) c = o;
            }
            c = warp_best(c);
            if (lane == 0) pivot = (partial && c.i < m) ? c.i : j;
        }
        __syncthreads();
        const long long p = pivot;
        const T* from_p = p == j && !partial ? rows + G * GRID_MAX_NB : rows + (p / chunk) * GRID_MAX_NB;
        for (long long k = t; k < nb; k += blockDim.x) {
            rowj[k] = __ldcg(rows + G * GRID_MAX_NB + k);
            rowp[k] = __ldcg(from_p + k);
        }
        __syncthreads();
        // Only the owners write rows j and p; nobody else reads them.
        if (p != j) {
            if (lo <= p && p < hi)
                for (long long k = t; k < nb; k += blockDim.x) a[p + k * ld] = rowj[k];
            if (lo <= j && j < hi)
                for (long long k = t; k < nb; k += blockDim.x) a[j + k * ld] = rowp[k];
        }
        if (blockIdx.x == 0 && t == 0) ipiv[j * incp] = (int)(offset + p + 1);
        __syncthreads();
        const T d = rowp[j];
        const bool bad = partial ? (d == T(0)) : !(abs_d(d) > tol);
        if (bad) {  // uniform across the grid: every block read the same pivot
            if (blockIdx.x == 0 && t == 0) atomicCAS(info, 0, (int)(offset + j + 1));
            continue;
        }
        const T r = T(1) / d;
        const bool by_reciprocal = isfinite(r);
        T* cw = a + j * ld;
        for (long long i = (lo > j + 1 ? lo : j + 1) + t; i < hi; i += blockDim.x) {
            const T l = by_reciprocal ? cw[i] * r : cw[i] / d;
            cw[i] = l;
            for (long long k = j + 1; k < nb; ++k) a[i + k * ld] -= l * rowp[k];
        }
        __syncthreads();
    }
}

extern "C" __global__ void getrf_panel_grid_f32(float* a, long long ld, long long m, long long nb, int* ipiv,
                                                long long incp, int* info, long long offset, int partial, double tol,
                                                double* part_v, long long* part_i, float* stage, unsigned* bar) {
    getrf_panel_grid_impl(a, ld, m, nb, ipiv, incp, info, offset, partial, tol, part_v, part_i, stage, bar);
}

extern "C" __global__ void getrf_panel_grid_f64(double* a, long long ld, long long m, long long nb, int* ipiv,
                                                long long incp, int* info, long long offset, int partial, double tol,
                                                double* part_v, long long* part_i, double* stage, unsigned* bar) {
    getrf_panel_grid_impl(a, ld, m, nb, ipiv, incp, info, offset, partial, tol, part_v, part_i, stage, bar);
}

template <typename T>
__device__ void laswp_impl(T* a, long long ld, long long m, long long n, const int* ipiv, long long incp, long long k,
                           long long shift, int reverse) {
    __shared__ long long rows[LASWP_THREADS];
    const long long stride = (long long)gridDim.x * blockDim.x;
    // Every thread of the block walks the same columns' rounds, so the
    // barriers below are reached by all of them.
    const long long rounds = (n + stride - 1) / stride;
    for (long long round = 0; round < rounds; ++round) {
        const long long j = round * stride + (long long)blockIdx.x * blockDim.x + threadIdx.x;
        T* c = a + (j < n ? j : 0) * ld;
        for (long long c0 = 0; c0 < k; c0 += blockDim.x) {
            const long long len = (k - c0 < (long long)blockDim.x) ? k - c0 : (long long)blockDim.x;
            __syncthreads();
            if (threadIdx.x < len) {
                const long long s = c0 + threadIdx.x;
                const long long i = reverse ? k - 1 - s : s;
                rows[threadIdx.x] = (long long)ipiv[i * incp] - 1 - shift;
            }
            __syncthreads();
            if (j < n) {
                for (long long u = 0; u < len; ++u) {
                    const long long s = c0 + u;
                    const long long i = reverse ? k - 1 - s : s;
                    const long long p = rows[u];
                    if (p != i && p >= 0 && p < m) {
                        const T x = c[i];
                        c[i] = c[p];
                        c[p] = x;
                    }
                }
            }
        }
    }
}

extern "C" __global__ void laswp_f32(float* a, long long ld, long long m, long long n, const int* ipiv, long long incp,
                                     long long k, long long shift, int reverse) {
    laswp_impl(a, ld, m, n, ipiv, incp, k, shift, reverse);
}

extern "C" __global__ void laswp_f64(double* a, long long ld, long long m, long long n, const int* ipiv,
                                     long long incp, long long k, long long shift, int reverse) {
    laswp_impl(a, ld, m, n, ipiv, incp, k, shift, reverse);
}
