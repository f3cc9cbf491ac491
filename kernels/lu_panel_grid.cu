// LU with partial pivoting of a tall panel (dgetf2), spread over the whole
// GPU with a grid barrier per column (lu.cuh: conventions).
//
// getrf_panel_grid_{f32,f64}(a, ld, m, nb, ipiv, incp, info, offset, partial,
//                            tol, part_v, part_i, stage, bar):
//   getrf_panel's factorization (lu_panel_block.cu) for tall panels
//   (nb <= GRID_MAX_NB), spread over the whole GPU: block b owns rows
//   [b*chunk, (b+1)*chunk) and is the only one to read or write them in the
//   matrix. A column step is one grid barrier: before it, each block publishes
//   its pivot candidate (part_v, part_i) and that candidate's row (and row j,
//   by its owner) in `stage`; after it, every block picks the same pivot from
//   the candidates, reads the two exchanged rows from `stage` (through L2:
//   __ldcg, L1 is not coherent across SMs), the rows' owners exchange them,
//   and each block updates its own rows. Scratch, double-buffered by column
//   parity: part_v and part_i 2*gridDim.x entries, stage
//   2*(gridDim.x+1)*GRID_MAX_NB entries of T; bar: two zeroed unsigned words
//   (arrival count, generation). Launch: blockDim.x a multiple of 32 up to
//   1024 (the backend uses 256, one row per thread), gridDim.x at most the
//   number of SMs (all blocks must be resident together; work of other streams
//   finishes and frees its SMs).

#include "lu.cuh"

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
