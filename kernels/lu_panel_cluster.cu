// LU with partial pivoting of a narrow panel (dgetf2) with a row per
// thread in registers, on one thread-block cluster whose blocks exchange
// candidates through each other's shared memory (lu.cuh: conventions;
// lu_reg.cuh: the register rows).
//
// getrf_panel_cluster_{f32,f64}(a, ld, m, nb, ipiv, incp, info, offset,
//                               partial, tol, left, right):
//   getrf_panel_reg's factorization (lu_panel_reg.cu: nb <= REG_NB, a row per
//   thread, interchanges as bookkeeping, `left` and `right` columns as there)
//   on one thread-block cluster (sm_90 and later), whose blocks exchange
//   through each other's shared memory: a column step is one cluster barrier
//   instead of a round trip through L2. Launch: one cluster of gridDim.x <= 16
//   blocks (more than 8 needs the non-portable cluster size);
//   blockDim.x >= ceil(m / gridDim.x), a multiple of 32, from 64 to
//   CL_MAX_THREADS; no dynamic shared memory.

#include "cluster.cuh"
#include "lu_reg.cuh"

// Most threads of a block, a row each.
#define CL_MAX_THREADS 512

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
    // Unrolled whole: every column index below is then a constant, so
    // reg_get, reg_set and reg_update fold to register moves and a
    // straight chain of updates instead of jumps.
#pragma unroll
    for (int j = 0; j < REG_NB; ++j) {
        if (j >= w) break;
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
