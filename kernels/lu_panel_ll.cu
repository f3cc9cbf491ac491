// LU with partial pivoting of a panel (dgetf2) whose rows stay in the
// shared memory of the blocks that own them, which exchange candidates
// through L2 (lu.cuh: conventions).
//
// getrf_panel_ll_{f32,f64}(a, ld, m, nb, ipiv, incp, info, offset, partial,
//                          tol, cells, epoch):
//   getrf_panel's factorization (lu_panel_block.cu) for nb <= GRID_MAX_NB,
//   with each block's rows [b*chunk, (b+1)*chunk) held in dynamic shared
//   memory (chunk*nb entries of T, column-major) from the first column to the
//   last, and no grid barrier: a column step costs one exchange through L2.
//   Each block publishes its pivot candidate, that candidate's row and (its
//   owner) row j as 16-byte cells {low word, flag, high word, flag} written by
//   one vector store (the LL protocol of NCCL): a reader polls the cells it
//   needs until both flags say column j of this launch, (epoch << 7) + j + 1,
//   so data and flag arrive together. Cells are double-buffered by the parity
//   of j (a block writes the cells of column j + 2 only after reading every
//   block's cells of column j + 1, which each block wrote after reading those
//   of column j). With one block nothing is published. cells:
//   2*gridDim.x*(2 + 2*nb) 16-byte cells, zeroed or left by launches of other
//   epochs (1 <= epoch < 2^25). Launch: blockDim.x a multiple of 32, at least
//   32 + nb; gridDim.x at most the number of SMs (all blocks resident
//   together); dynamic shared memory chunk*nb*sizeof(T), chunk =
//   ceil(m / gridDim.x).

#include "lu.cuh"

// The best candidate of the block, for every thread (two barriers);
// `best` is 32 entries of shared memory.
__device__ __noinline__ Candidate block_best_everywhere(Candidate c, Candidate* best, long long m) {
    c = block_best(c, best, m);
    if (threadIdx.x == 0) best[0] = c;
    __syncthreads();
    return best[0];
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
        c = block_best_everywhere(c, best, m);
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
