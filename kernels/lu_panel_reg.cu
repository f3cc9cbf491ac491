// LU with partial pivoting of a narrow panel (dgetf2) with a row per
// thread in registers, the blocks exchanging candidates through L2
// (lu.cuh: conventions; lu_reg.cuh: the register rows).
//
// getrf_panel_reg_{f32,f64}(a, ld, m, nb, ipiv, incp, info, offset, partial,
//                           tol, cells, epoch, left, right):
//   getrf_panel's factorization (lu_panel_block.cu) for nb <= REG_NB with each
//   thread holding one row in registers, so that a column's update is register
//   arithmetic against the pivot row in shared memory, and the rows staying
//   where they are until the end (the interchanges are bookkeeping of
//   positions; only the pivot row travels). The interchanges are also applied
//   to the `left` columns before the panel and the `right` ones after it
//   (getrf_leaf: the rest of the block column), a share of them by each block.
//   Cells: 2*gridDim.x*(2 + nb), as in getrf_panel_ll (lu_panel_ll.cu).
//   Launch: blockDim.x >= chunk = ceil(m / gridDim.x), a multiple of 32, from
//   64 to REG_MAX_THREADS; gridDim.x at most the number of SMs; dynamic shared
//   memory 8*(2*G + (G*(2 + nb) <= LL_BATCH*blockDim.x ? G : 1)*REG_NB) bytes,
//   G = gridDim.x.

#include "lu_reg.cuh"

// Most threads of a block, a row each.
#define REG_MAX_THREADS 384
// Cells each thread reads at once when every block's cells fit.
#define LL_BATCH 5

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
