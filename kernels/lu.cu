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
// getrf_panel_ll_{f32,f64}(a, ld, m, nb, ipiv, incp, info, offset, partial,
//                          tol, cells, epoch):
//   the same factorization (nb <= GRID_MAX_NB), with each block's rows
//   [b*chunk, (b+1)*chunk) held in dynamic shared memory (chunk*nb entries
//   of T, column-major) from the first column to the last, and no grid
//   barrier: a column step costs one exchange through L2. Each block
//   publishes its pivot candidate, that candidate's row and (its owner) row
//   j as 16-byte cells {low word, flag, high word, flag} written by one
//   vector store (the LL protocol of NCCL): a reader polls the cells it
//   needs until both flags say column j of this launch, (epoch << 7) + j + 1,
//   so data and flag arrive together. Cells are double-buffered by the
//   parity of j (a block writes the cells of column j + 2 only after reading
//   every block's cells of column j + 1, which each block wrote after reading
//   those of column j). With one block nothing is published. cells:
//   2*gridDim.x*(2 + 2*nb) 16-byte cells, zeroed or left by launches of
//   other epochs (1 <= epoch < 2^25). Launch: blockDim.x a multiple of 32, at
//   least 32 + nb; gridDim.x at most the number of SMs (all blocks resident
//   together); dynamic shared memory chunk*nb*sizeof(T), chunk = ceil(m /
//   gridDim.x).
//
// getrf_panel_reg_{f32,f64}(a, ld, m, nb, ipiv, incp, info, offset, partial,
//                           tol, cells, epoch, left, right):
//   the same for nb <= REG_NB with each thread holding one row in
//   registers, so that a column's update is register arithmetic against the
//   pivot row in shared memory, and the rows staying where they are until
//   the end (the interchanges are bookkeeping of positions; only the pivot
//   row travels). The interchanges are also applied to the `left` columns
//   before the panel and the `right` ones after it (getrf_leaf: the rest of
//   the block column), a share of them by each block. Cells:
//   2*gridDim.x*(2 + nb), as above.
//   Launch: blockDim.x >= chunk = ceil(m / gridDim.x), a multiple of 32,
//   from 64 to REG_MAX_THREADS; gridDim.x at most the number of SMs; dynamic
//   shared memory 8*(2*G + (G*(2 + nb) <= LL_BATCH*blockDim.x ? G : 1)*REG_NB)
//   bytes, G = gridDim.x.
//
// getrf_panel_cluster_{f32,f64}(a, ld, m, nb, ipiv, incp, info, offset,
//                               partial, tol, left, right):
//   the register kernel's factorization (nb <= REG_NB, a row per thread,
//   interchanges as bookkeeping, `left` and `right` columns as there) on
//   one thread-block cluster (sm_90 and later), whose blocks exchange
//   through each other's shared memory: a column step is one cluster
//   barrier instead of a round trip through L2. Launch: one cluster of
//   gridDim.x <= 16 blocks (more than 8 needs the non-portable cluster
//   size); blockDim.x >= ceil(m / gridDim.x), a multiple of 32, from 64
//   to CL_MAX_THREADS; no dynamic shared memory.
//
// laswp_{f32,f64}(a, ld, m, n, ipiv, incp, first, k, shift, reverse):
//   for i in 0..k (or k-1 down to 0 if reverse), rows first + i and
//   ipiv[i*incp] - 1 - shift of the m x n block are exchanged; a pivot
//   outside the block is skipped. k <= LASWP_MAX_K (longer sequences are
//   launched in pieces). Exchanged one after the other, as dlaswp does, the
//   rows of a column would be a chain of dependent loads; instead each
//   block first finds where each displaced row comes from (a thread per row
//   traces it back through the exchanges, on row numbers in shared memory),
//   and then moves each displaced row once: all of a batch of LASWP_COLS
//   columns' moved entries are loaded, then stored. Launch: 1-D, any grid
//   (a grid-stride loop over batches of columns), blockDim.x =
//   LASWP_THREADS.

#define GETRF_THREADS 512
#define LASWP_THREADS 256
#define LASWP_MAX_K 512
#define LASWP_COLS 8
#define GRID_MAX_NB 64
#define REG_NB 32
#define REG_MAX_THREADS 384
#define LL_BATCH 5
#define CL_MAX_THREADS 512

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
        // Uniform across the grid: every block read the same pivot.
        if (pivot_fails(rowp[j], partial, tol, info, offset + j + 1)) continue;
        const T d = rowp[j];
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

// One 64-bit payload and its flag (twice), stored and loaded whole.
struct __align__(16) Cell {
    unsigned lo, f1, hi, f2;
};

__device__ __forceinline__ void ll_store(Cell* c, unsigned long long bits, unsigned flag) {
    asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(c), "r"((unsigned)bits), "r"(flag),
                 "r"((unsigned)(bits >> 32)), "r"(flag)
                 : "memory");
}

// Waits until the cell holds column `flag`'s payload, and returns it.
__device__ __forceinline__ unsigned long long ll_load(const Cell* c, unsigned flag) {
    unsigned lo, f1, hi, f2;
    do {
        asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(lo), "=r"(f1), "=r"(hi), "=r"(f2)
                     : "l"(c)
                     : "memory");
    } while (f1 != flag || f2 != flag);
    return ((unsigned long long)hi << 32) | lo;
}

__device__ __forceinline__ unsigned long long bits_of(double x) { return (unsigned long long)__double_as_longlong(x); }
__device__ __forceinline__ double double_of(unsigned long long b) { return __longlong_as_double((long long)b); }

// The best candidate of the block, for every thread (two barriers);
// `best` is 32 entries of shared memory.
__device__ __noinline__ Candidate block_best(Candidate c, Candidate* best, long long m) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    c = warp_best(c);
    if (lane == 0) best[warp] = c;
    __syncthreads();
    if (warp == 0) {
        c = lane < (int)(blockDim.x >> 5) ? best[lane] : Candidate{-1.0, m};
        c = warp_best(c);
        if (lane == 0) best[0] = c;
    }
    __syncthreads();
    return best[0];
}

// Waits until both cells hold column `flag`'s payloads: one poll, two loads.
__device__ __forceinline__ void ll_load2(const Cell* c, unsigned flag, unsigned long long* x, unsigned long long* y) {
    unsigned a0, a1, a2, a3, b0, b1, b2, b3;
    do {
        asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3)
                     : "l"(c)
                     : "memory");
        asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(b0), "=r"(b1), "=r"(b2), "=r"(b3)
                     : "l"(c + 1)
                     : "memory");
    } while (a1 != flag || a3 != flag || b1 != flag || b3 != flag);
    *x = ((unsigned long long)a2 << 32) | a0;
    *y = ((unsigned long long)b2 << 32) | b0;
}

// The exchange of column j, once every block has published its candidate
// (cells 0, 1), that candidate's row (cells 2..2+nb) and, its owner, row j
// (cells 2+nb..2+2nb) in `column`, the cells of column j's parity: every
// block picks the same pivot (into *pivot) and reads row j and the pivot
// row (into rowj, rowp). Called by all threads; blockDim.x >= 32 + nb.
template <typename T>
__device__ __noinline__ void ll_gather(const Cell* column, long long per_block, unsigned flag, long long j,
                                          long long chunk, long long m, int nb, int partial, long long* pivot,
                                          T* rowj, T* rowp) {
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    // Warp 0 finds the pivot among the candidates while the next warps
    // fetch row j from its owner.
    if (warp == 0) {
        Candidate b = {-1.0, m};
        for (unsigned q = lane; q < gridDim.x; q += 32) {
            unsigned long long v, i;
            ll_load2(column + q * per_block, flag, &v, &i);
            const Candidate x = {double_of(v), (long long)i};
            if (better(x, b)) b = x;
        }
        b = warp_best(b);
        if (lane == 0) *pivot = (partial && b.i < m) ? b.i : j;
    } else if (t - 32 < nb) {
        rowj[t - 32] = (T)double_of(ll_load(column + (j / chunk) * per_block + 2 + nb + (t - 32), flag));
    }
    __syncthreads();
    const long long p = *pivot;
    if (t < nb) rowp[t] = p == j ? rowj[t] : (T)double_of(ll_load(column + (p / chunk) * per_block + 2 + t, flag));
}

template <typename T>
__device__ void getrf_panel_ll_impl(T* a, long long ld, long long m, long long nb, int* ipiv, long long incp,
                                    int* info, long long offset, int partial, double tol, Cell* cells,
                                    unsigned epoch) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* s = reinterpret_cast<T*>(smem_raw);  // this block's rows, s[r + k*chunk]
    __shared__ Candidate best[32];
    __shared__ long long pivot;
    __shared__ T rowj[GRID_MAX_NB], rowp[GRID_MAX_NB];
    const int t = threadIdx.x;
    const unsigned G = gridDim.x;
    const long long chunk = (m + G - 1) / G;
    const long long lo = (long long)blockIdx.x * chunk;
    const long long hi = lo + chunk < m ? lo + chunk : m;
    const int rows = hi > lo ? (int)(hi - lo) : 0;
    const int w = (int)nb;
    const long long cells_per_block = 2 + 2 * nb;
    for (int e = t; e < rows * w; e += blockDim.x) s[e % rows + (e / rows) * chunk] = a[lo + e % rows + (e / rows) * ld];
    __syncthreads();
    for (long long j = 0; j < nb; ++j) {
        const unsigned flag = (epoch << 7) + (unsigned)j + 1;
        Cell* column = cells + (j & 1) * G * cells_per_block;  // this column's cells of every block
        const T* sj = s + j * chunk;
        // This block's candidate.
        Candidate c = {-1.0, m};
        if (partial)
            for (long long i = (lo > j ? lo : j) + t; i < hi; i += blockDim.x) {
                const Candidate o = {abs_d(sj[i - lo]), i};
                if (better(o, c)) c = o;
            }
        c = block_best(c, best, m);
        const bool own_j = lo <= j && j < hi;
        if (G == 1) {
            if (t == 0) pivot = (partial && c.i < m) ? c.i : j;
            __syncthreads();
            for (int k = t; k < w; k += blockDim.x) {
                rowj[k] = s[j - lo + k * chunk];
                rowp[k] = s[pivot - lo + k * chunk];
            }
        } else {
            Cell* mine = column + blockIdx.x * cells_per_block;
            if (t == 0) {
                ll_store(mine, bits_of(c.v), flag);
                ll_store(mine + 1, (unsigned long long)c.i, flag);
            }
            if (c.i < m)
                for (int k = t; k < w; k += blockDim.x) ll_store(mine + 2 + k, bits_of((double)s[c.i - lo + k * chunk]), flag);
            if (own_j)
                for (int k = t; k < w; k += blockDim.x) ll_store(mine + 2 + nb + k, bits_of((double)s[j - lo + k * chunk]), flag);
            ll_gather(column, cells_per_block, flag, j, chunk, m, w, partial, &pivot, rowj, rowp);
        }
        __syncthreads();
        const long long p = pivot;
        if (blockIdx.x == 0 && t == 0) ipiv[j * incp] = (int)(offset + p + 1);
        if (p != j) {
            if (lo <= p && p < hi)
                for (int k = t; k < w; k += blockDim.x) s[p - lo + k * chunk] = rowj[k];
            if (own_j)
                for (int k = t; k < w; k += blockDim.x) s[j - lo + k * chunk] = rowp[k];
        }
        __syncthreads();
        // Uniform across the grid: every block read the same pivot.
        if (pivot_fails(rowp[j], partial, tol, info, offset + j + 1)) continue;
        const T d = rowp[j];
        const T r = T(1) / d;
        const bool by_reciprocal = isfinite(r);
        // Multipliers of this block's rows below j, then the update of the
        // columns right of j.
        const int r0 = (int)((lo > j + 1 ? lo : j + 1) - lo);
        const int below = rows > r0 ? rows - r0 : 0;
        T* cw = s + j * chunk;
        for (int i = r0 + t; i < rows; i += blockDim.x) cw[i] = by_reciprocal ? cw[i] * r : cw[i] / d;
        __syncthreads();
        const int right = w - (int)j - 1;
        for (int e = t; e < below * right; e += blockDim.x) {
            const int i = r0 + e % below, k = (int)j + 1 + e / below;
            s[i + k * chunk] -= cw[i] * rowp[k];
        }
        __syncthreads();
    }
    for (int e = t; e < rows * w; e += blockDim.x) a[lo + e % rows + (e / rows) * ld] = s[e % rows + (e / rows) * chunk];
}

extern "C" __global__ void getrf_panel_ll_f32(float* a, long long ld, long long m, long long nb, int* ipiv,
                                              long long incp, int* info, long long offset, int partial, double tol,
                                              Cell* cells, unsigned epoch) {
    getrf_panel_ll_impl(a, ld, m, nb, ipiv, incp, info, offset, partial, tol, cells, epoch);
}

extern "C" __global__ void getrf_panel_ll_f64(double* a, long long ld, long long m, long long nb, int* ipiv,
                                              long long incp, int* info, long long offset, int partial, double tol,
                                              Cell* cells, unsigned epoch) {
    getrf_panel_ll_impl(a, ld, m, nb, ipiv, incp, info, offset, partial, tol, cells, epoch);
}

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
    return is_nan_d(a) ? 0x7ff8000000000000ull : bits_of(a);
}

__device__ __forceinline__ bool key_better(Key a, Key b) { return a.v > b.v || (a.v == b.v && a.pos < b.pos); }

__device__ __forceinline__ unsigned warp_max(unsigned x) {
#if __CUDA_ARCH__ >= 800
    return __reduce_max_sync(0xffffffffu, x);
#else
    for (int s = 16; s > 0; s >>= 1) x = max(x, __shfl_xor_sync(0xffffffffu, x, s));
    return x;
#endif
}

__device__ __forceinline__ unsigned warp_min(unsigned x) { return ~warp_max(~x); }

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

// The register kernel. Rows never move while the panel is factored: each
// thread keeps its row and the row's position after the interchanges so
// far (`pos`), so an interchange is bookkeeping (the winner takes position
// j, the row at j takes the winner's) and only the pivot row travels. At
// the end each row is stored at its final position. Column j: a block
// reduction finds the block's candidate; its owner publishes it and columns
// j.. of its row as cells (key, position, row by column: 2 + nb per block).
// When all of them fit in LL_BATCH loads per thread, every block reads
// every block's cells in one round trip through L2 ("speculatively": only
// the winner's row is used); otherwise the keys first, then the winner's
// row. Shared memory holds the gathered cells as 64-bit words: 2 per block
// for the keys, then REG_NB per row (as doubles).
template <typename T>
__device__ void getrf_panel_reg_impl(T* a, long long ld, long long m, long long nb, int* ipiv, long long incp,
                                     int* info, long long offset, int partial, double tol, Cell* cells,
                                     unsigned epoch, long long left, long long right) {
    extern __shared__ __align__(16) unsigned long long slots[];
    // Each warp's candidate and its row, double-buffered by column parity
    // (with one block, the only barrier of a column is the one after them).
    __shared__ unsigned long long warp_keys[2][2 * (REG_MAX_THREADS / 32)];
    __shared__ __align__(16) double warp_rows[2][REG_MAX_THREADS / 32][REG_NB];
    __shared__ int pivots[REG_NB];  // p of each column, for the other columns' interchanges
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const int G = (int)gridDim.x, w = (int)nb, per_block = 2 + w;
    const bool spec = G * per_block <= LL_BATCH * (int)blockDim.x;
    double* rows = reinterpret_cast<double*>(slots + 2 * G);
    const long long chunk = (m + G - 1) / G;
    const long long i = (long long)blockIdx.x * chunk + t;
    const bool mine = t < chunk && i < m;
    bool active = mine;  // not yet a pivot row
    unsigned pos = mine ? (unsigned)i : NO_POS;
    // This thread's share of the speculative gather: cell e_r (of a column's
    // cells), where it goes in `slots`, and its column (INT_MAX for a key,
    // -1 for none), so that a column reads only the cells it needs.
    int cell_e[LL_BATCH], cell_slot[LL_BATCH], cell_col[LL_BATCH];
#pragma unroll
    for (int r = 0; r < LL_BATCH; ++r) {
        const int e = t + r * (int)blockDim.x, q = e / per_block, c = e % per_block;
        cell_e[r] = e;
        cell_slot[r] = c < 2 ? 2 * q + c : 2 * G + q * REG_NB + c - 2;
        cell_col[r] = !spec || e >= G * per_block ? -1 : c < 2 ? 0x7fffffff : c - 2;
    }
    T x[REG_NB];
#pragma unroll
    for (int k = 0; k < REG_NB; ++k) x[k] = mine && k < w ? a[i + k * ld] : T(0);
#pragma unroll 1
    for (int j = 0; j < w; ++j) {
        const unsigned flag = (epoch << 7) + (unsigned)j + 1;
        // The block's candidate: with partial pivoting every row that is not
        // yet a pivot row, without it the row at position j. Each warp's
        // candidate stages its row.
        Key k = {0, NO_POS};
        if (active && (partial || pos == (unsigned)j)) k = Key{key_of(reg_get(x, j)), pos};
        k = warp_best_key(k);
        double(*staged)[REG_NB] = warp_rows[j & 1];
        if (active && pos == k.pos)
#pragma unroll
            for (int c = 0; c < REG_NB; c += 2)
                *reinterpret_cast<double2*>(&staged[warp][c]) = make_double2((double)x[c], (double)x[c + 1]);
        unsigned long long* keys = warp_keys[j & 1];
        if (lane == 0) keys[2 * warp] = k.v, keys[2 * warp + 1] = k.pos;
        __syncthreads();
        unsigned q;
        k = best_key(keys, blockDim.x >> 5, &q);
        const double* rowp = staged[k.pos == NO_POS ? 0 : q];
        if (G > 1) {
            // Publish the block's candidate, a cell per thread.
            Cell* column = cells + (j & 1) * G * per_block;
            Cell* own = column + blockIdx.x * per_block;
            if (t < 2 + w - j)
                ll_store(own + (t < 2 ? t : j + t),
                         t == 0 ? k.v : t == 1 ? (unsigned long long)k.pos : bits_of(k.pos == NO_POS ? 0.0 : rowp[j + t - 2]),
                         flag);
            if (spec) {
                unsigned pending = 0;
#pragma unroll
                for (int r = 0; r < LL_BATCH; ++r)
                    if (cell_col[r] >= j) pending |= 1u << r;
                while (pending) {
                    unsigned lo[LL_BATCH], f1[LL_BATCH], hi[LL_BATCH], f2[LL_BATCH];
#pragma unroll
                    for (int r = 0; r < LL_BATCH; ++r)
                        if (pending >> r & 1)
                            asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                                         : "=r"(lo[r]), "=r"(f1[r]), "=r"(hi[r]), "=r"(f2[r])
                                         : "l"(column + cell_e[r])
                                         : "memory");
#pragma unroll
                    for (int r = 0; r < LL_BATCH; ++r)
                        if ((pending >> r & 1) && f1[r] == flag && f2[r] == flag) {
                            slots[cell_slot[r]] = ((unsigned long long)hi[r] << 32) | lo[r];
                            pending &= ~(1u << r);
                        }
                }
                __syncthreads();
                k = best_key(slots, G, &q);
                rowp = rows + q * REG_NB;
            } else {
                for (int b = t; b < G; b += blockDim.x)
                    ll_load2(column + b * per_block, flag, &slots[2 * b], &slots[2 * b + 1]);
                __syncthreads();
                k = best_key(slots, G, &q);
                if (t >= j && t < w) slots[2 * G + t] = ll_load(column + q * per_block + 2 + t, flag);
                __syncthreads();
                rowp = rows;
            }
        }
        reg_eliminate(x, j, k.pos, rowp, active, pos, ipiv, incp, pivots, info, offset, partial, tol);
    }
    reg_store(a, ld, x, mine, pos, w, left, right, pivots);
}

extern "C" __global__ void __launch_bounds__(REG_MAX_THREADS)
    getrf_panel_reg_f32(float* a, long long ld, long long m, long long nb, int* ipiv, long long incp, int* info,
                        long long offset, int partial, double tol, Cell* cells, unsigned epoch, long long left,
                        long long right) {
    getrf_panel_reg_impl(a, ld, m, nb, ipiv, incp, info, offset, partial, tol, cells, epoch, left, right);
}

extern "C" __global__ void __launch_bounds__(REG_MAX_THREADS)
    getrf_panel_reg_f64(double* a, long long ld, long long m, long long nb, int* ipiv, long long incp, int* info,
                        long long offset, int partial, double tol, Cell* cells, unsigned epoch, long long left,
                        long long right) {
    getrf_panel_reg_impl(a, ld, m, nb, ipiv, incp, info, offset, partial, tol, cells, epoch, left, right);
}

// The cluster kernel (sm_90). Column j: each warp's candidate stages its row
// in shared memory, and the block's best (key, position and row: CL_PIECES
// 16-byte pieces) goes to every block of the cluster by remote stores
// (st.async) that count their bytes on the receiver's mbarrier. Each block
// then waits on its own mbarrier, with no barrier across the cluster and no
// fence, and every warp picks the same pivot from the C candidates. Receive
// buffers and mbarriers are double-buffered by column parity: a block sends
// its candidate of column j + 1 only after its own update of column j, so a
// peer that has that candidate (and so may send column j + 2's) can no
// longer overwrite what that block still reads. With one block nothing is
// sent.
#define CL_MAX_BLOCKS 16
#define CL_PIECES (1 + REG_NB / 2)
#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned shared_address(const void* p) {
    unsigned a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

// The address in block `rank`'s shared memory of what is at `local` in ours.
__device__ __forceinline__ unsigned in_block(unsigned local, unsigned rank) {
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(local), "r"(rank));
    return r;
}

__device__ __forceinline__ void cluster_barrier() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

__device__ __forceinline__ void mbarrier_wait(unsigned bar, unsigned parity) {
    unsigned done = 0;
    while (!done)
        asm volatile(
            "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, "
            "p; }"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
}
#endif

template <typename T>
__device__ void getrf_panel_cluster_impl(T* a, long long ld, long long m, long long nb, int* ipiv, long long incp,
                                         int* info, long long offset, int partial, double tol, long long left,
                                         long long right) {
#if __CUDA_ARCH__ >= 900
    __shared__ unsigned long long warp_keys[2][2 * (CL_MAX_THREADS / 32)];
    __shared__ __align__(16) double warp_rows[2][CL_MAX_THREADS / 32][REG_NB];
    // Each block's candidate as received: key, position, then its row.
    __shared__ __align__(16) unsigned long long received[2][CL_MAX_BLOCKS][2 * CL_PIECES];
    __shared__ __align__(8) unsigned long long arrived[2];  // the mbarriers
    __shared__ int pivots[REG_NB];
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const int C = (int)gridDim.x, w = (int)nb;
    const unsigned rank = blockIdx.x;  // the grid is one cluster
    const long long chunk = (m + C - 1) / C;
    const long long i = (long long)blockIdx.x * chunk + t;
    const bool mine = t < chunk && i < m;
    bool active = mine;  // not yet a pivot row
    unsigned pos = mine ? (unsigned)i : NO_POS;
    if (C > 1) {
        if (t == 0) {
            for (int b = 0; b < 2; ++b)
                asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(&arrived[b])));
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        }
        // No block sends before every block's mbarriers are ready.
        cluster_barrier();
    }
    T x[REG_NB];
#pragma unroll
    for (int k = 0; k < REG_NB; ++k) x[k] = mine && k < w ? a[i + k * ld] : T(0);
#pragma unroll 1
    for (int j = 0; j < w; ++j) {
        const int par = j & 1;
        Key k = {0, NO_POS};
        if (active && (partial || pos == (unsigned)j)) k = Key{key_of(reg_get(x, j)), pos};
        k = warp_best_key(k);
        if (active && pos == k.pos)
#pragma unroll
            for (int c = 0; c < REG_NB; c += 2)
                *reinterpret_cast<double2*>(&warp_rows[par][warp][c]) = make_double2((double)x[c], (double)x[c + 1]);
        if (lane == 0) warp_keys[par][2 * warp] = k.v, warp_keys[par][2 * warp + 1] = k.pos;
        __syncthreads();
        unsigned q;
        k = best_key(warp_keys[par], blockDim.x >> 5, &q);
        const double* rowp = warp_rows[par][k.pos == NO_POS ? 0 : q];
        if (C > 1) {
            const unsigned bar = shared_address(&arrived[par]);
            if (t == 0)
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                             "r"((unsigned)(16 * CL_PIECES * C))
                             : "memory");
            // The block's candidate to every block: a 16-byte piece per thread.
            for (int e = t; e < CL_PIECES * C; e += blockDim.x) {
                const unsigned to = (unsigned)(e / CL_PIECES), piece = (unsigned)(e % CL_PIECES);
                const unsigned long long lo = piece ? bits_of(rowp[2 * piece - 2]) : k.v;
                const unsigned long long hi = piece ? bits_of(rowp[2 * piece - 1]) : k.pos;
                asm volatile(
                    "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b64 [%0], {%1, %2}, [%3];" ::"r"(
                        in_block(shared_address(&received[par][rank][2 * piece]), to)),
                    "l"(lo), "l"(hi), "r"(in_block(bar, to))
                    : "memory");
            }
            mbarrier_wait(bar, (unsigned)(j >> 1) & 1);
            // The cluster's best, in every warp: lane b looks at block b's.
            Key o = {0, NO_POS};
            if (lane < C) o = Key{received[par][lane][0], (unsigned)received[par][lane][1]};
            k = warp_best_key(o);
            const unsigned src = warp_min(o.v == k.v && o.pos == k.pos ? (unsigned)lane : NO_POS);
            rowp = reinterpret_cast<const double*>(&received[par][src & 31][2]);
        }
        reg_eliminate(x, j, k.pos, rowp, active, pos, ipiv, incp, pivots, info, offset, partial, tol);
    }
    reg_store(a, ld, x, mine, pos, w, left, right, pivots);
    // No block leaves while a remote store to it may be under way.
    if (C > 1) asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
#else
    __trap();  // the backend launches it on sm_90 and later only
#endif
}

extern "C" __global__ void __launch_bounds__(CL_MAX_THREADS, 1)
    getrf_panel_cluster_f32(float* a, long long ld, long long m, long long nb, int* ipiv, long long incp, int* info,
                            long long offset, int partial, double tol, long long left, long long right) {
    getrf_panel_cluster_impl(a, ld, m, nb, ipiv, incp, info, offset, partial, tol, left, right);
}

extern "C" __global__ void __launch_bounds__(CL_MAX_THREADS, 1)
    getrf_panel_cluster_f64(double* a, long long ld, long long m, long long nb, int* ipiv, long long incp, int* info,
                            long long offset, int partial, double tol, long long left, long long right) {
    getrf_panel_cluster_impl(a, ld, m, nb, ipiv, incp, info, offset, partial, tol, left, right);
}

template <typename T>
__device__ void laswp_impl(T* a, long long ld, long long m, long long n, const int* ipiv, long long incp,
                           long long first, long long k, long long shift, int reverse) {
    laswp_apply<LASWP_MAX_K, 2 * LASWP_MAX_K / LASWP_THREADS>(
        a, ld, n, first, (int)k, reverse,
        [&](int i) {
            const long long r = (long long)ipiv[i * incp] - 1 - shift;
            return r >= 0 && r < m ? (int)r : -1;
        },
        [](long long j) { return j; });
}

extern "C" __global__ void laswp_f32(float* a, long long ld, long long m, long long n, const int* ipiv, long long incp,
                                     long long first, long long k, long long shift, int reverse) {
    laswp_impl(a, ld, m, n, ipiv, incp, first, k, shift, reverse);
}

extern "C" __global__ void laswp_f64(double* a, long long ld, long long m, long long n, const int* ipiv,
                                     long long incp, long long first, long long k, long long shift, int reverse) {
    laswp_impl(a, ld, m, n, ipiv, incp, first, k, shift, reverse);
}
