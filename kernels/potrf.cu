// Unblocked Cholesky of a small square block in place: the panel step of the
// blocked factorizations, which do the bulk of their work in cuBLAS.
//
// potrf_{f32,f64}(a, ld, n, upper, info, offset):
//   upper = 0: A = L·Lᵀ on the lower triangle; upper = 1: A = Uᵀ·U on the
//   upper one, which is the lower triangle of Aᵀ (same code, indices swapped).
//   The other triangle is neither read nor written.
//   A pivot that is not positive and finite stops the block; then *info, if
//   still 0, becomes offset + j + 1 for the failing column j (LAPACK's INFO
//   in the whole matrix). The block is left partly factored.
//
// potrf_panel_{lower,upper}_{f32,f64}(a, ld, n, m, info, offset, arrivals),
// n <= LEAF: the same for the n x n block on top of an m x n panel (upper:
// left of an n x m one), whose other rows are solved with the factor (below).
// potrf_{f32,f64}, any n: one block of any size, no dynamic shared memory;
// right-looking in global memory with a barrier between steps, for direct
// calls on blocks larger than a leaf.

#define LEAF 64

template <typename T>
__device__ __forceinline__ T& entry(T* a, long long ld, int upper, long long i, long long j) {
    return upper ? a[j + i * ld] : a[i + j * ld];
}

__device__ __forceinline__ float inv_sqrt(float x) { return rsqrtf(x); }
__device__ __forceinline__ double inv_sqrt(double x) { return rsqrt(x); }

// Panels of width n <= LEAF, the leaves of the blocked factorization, whose
// latency is on its critical path: the n x n diagonal block on top of an
// m x n panel is factored and the m - n rows below are solved with it,
// L21 = A21 L11^-T, in one pass. Thread t < LEAF holds row t of the diagonal
// block in registers (rows past n are the identity); thread LEAF + t holds
// row n + LEAF*blockIdx.x + t of the panel. A step factors two columns with
// one barrier: their entries in the diagonal block are published in shared
// memory one step ahead, and every thread factors the 2 x 2 pivot block
// itself and updates its row with both columns. Every block factors the diagonal
// block with the same arithmetic, so all see the same pivots. The loops are
// fully unrolled so that rows stay in registers. Launch: max(1, ceil((m - n)
// / LEAF)) blocks of 2 LEAF threads (LEAF when m = n). The diagonal block is
// written by the last block to finish, counted in `arrivals` (zero between
// launches; the last block resets it): until then others may still read it.
template <typename T, bool upper>
__device__ void potrf_panel(T* a, long long ld, int n, long long m, int* info, long long offset,
                            unsigned int* arrivals) {
    __shared__ __align__(16) T col[3][2][LEAF];
    __shared__ bool last;
    const int t = threadIdx.x;
    const bool diag = t < LEAF;
    const long long i = diag ? t : n + (long long)blockIdx.x * LEAF + (t - LEAF);
    const bool real = diag ? t < n : i < m;
    // Upper: row i is column i of the array, contiguous. A warp's rows are
    // consecutive, so it reads them through shared memory, a slice of STAGE
    // columns at a time, one load covering STAGE entries of 32 / STAGE rows
    // (coalesced), and each lane takes its own row from there; read
    // directly, each load of the warp would touch 32 cache lines. The slice
    // is small because the less shared memory a leaf takes, the sooner it
    // finds room on SMs that the side queue's gemm blocks hold: lower
    // leaves, which need none, made the factorization 3 % faster at 8192.
    constexpr int STAGE = 8, PER = 32 / STAGE;
    __shared__ T stage[upper ? 2 * LEAF / 32 : 1][32][upper ? STAGE + 1 : 1];
    const int lane = t & 31, warp = t >> 5;
    const int sr = lane / STAGE, sc = lane % STAGE;  // this lane's place in a slice
    // Whether the warp's row rr holds entry k (lane rr's `real`, and in the
    // diagonal block only the lower triangle).
    const auto holds = [&](int rr, int k, int columns) {
        const int tr = t - lane + rr;
        return (diag ? tr < n : i - lane + rr < m) && k < columns && (!diag || k <= tr);
    };
    T r[LEAF];
    if constexpr (upper) {
#pragma unroll
        for (int h = 0; h < LEAF; h += STAGE) {
#pragma unroll
            for (int r0 = 0; r0 < 32; r0 += PER) {
                const int rr = r0 + sr;
                stage[warp][rr][sc] = holds(rr, h + sc, n) ? a[h + sc + (i - lane + rr) * ld] : T(0);
            }
            __syncwarp();
#pragma unroll
            for (int k = 0; k < STAGE; ++k) r[h + k] = stage[warp][lane][k];
            __syncwarp();
        }
#pragma unroll
        for (int k = 0; k < LEAF; ++k)
            if (diag && k == t && !(real && k < n)) r[k] = T(1);
    } else {
#pragma unroll
        for (int k = 0; k < LEAF; ++k)
            r[k] = (real && k < n && (!diag || k <= t)) ? entry(a, ld, upper, i, k) : T(diag && t == k);
    }
    if (diag) {
        col[0][0][t] = r[0];
        col[0][1][t] = r[1];
    }
    __syncthreads();
    // Step j factors columns j and j + 1 (blocked pivots: one barrier for
    // two columns). Every thread forms the 2 x 2 pivot block's factor itself
    // from the published entries: s0 = 1/L(j,j), l10 = L(j+1,j), s1 =
    // 1/L(j+1,j+1); then its row's L(i,j), L(i,j+1), and updates the rest of
    // the row by both columns as r(k) -= u0 a(k,j) + u1 a(k,j+1), the a's as
    // published (unscaled), u0 and u1 the row's coefficients of L(i,j) L(k,j)
    // + L(i,j+1) L(k,j+1) in them. Columns j + 2 and j + 3 are updated and
    // published before the barrier, the rest of the row after it, while the
    // next pivots are formed. With three pairs of column buffers, the rows
    // still reading pair c after the barrier are not overwritten before the
    // next barrier. No step branches on a failure: a pivot that is not
    // positive and finite only marks `done`, the steps go on (on garbage past
    // it, never written back). Past n, the identity rows give pivots of 1 and
    // the real rows have zeros: those steps change nothing.
    static_assert(LEAF % 2 == 0, "the leaf steps two columns at a time");
    int done = n;  // columns factored
    struct Pivots {
        T s0, l10, s1;
    };
    // The pivot block of step j from the published pair (p0, p1).
    const auto pivots = [&](const T* p0, const T* p1, int j) {
        const T a00 = p0[j], a10 = p0[j + 1], a11 = p1[j + 1];
        const T s0 = inv_sqrt(a00);
        const T l10 = a10 * s0;
        const T d1 = a11 - l10 * l10;  // the Schur complement, the second pivot
        int failed = n;
        if (j + 1 < n && !(d1 > T(0) && isfinite(d1))) failed = j + 1;
        if (j < n && !(a00 > T(0) && isfinite(a00))) failed = j;
        if (done == n) done = failed;
        return Pivots{s0, l10, inv_sqrt(d1)};
    };
    Pivots p = pivots(col[0][0], col[0][1], 0);
#pragma unroll
    for (int j = 0; j < LEAF; j += 2) {
        const T* c0 = col[(j / 2) % 3][0];
        const T* c1 = col[(j / 2) % 3][1];
        const T li0 = r[j] * p.s0;                      // L(i, j)
        const T li1 = (r[j + 1] - li0 * p.l10) * p.s1;  // L(i, j + 1)
        r[j] = li0;
        r[j + 1] = li1;
        const T u1 = li1 * p.s1;
        const T u0 = (li0 - u1 * p.l10) * p.s0;
        if (j + 2 < LEAF) {
            T* n0 = col[(j / 2 + 1) % 3][0];
            T* n1 = col[(j / 2 + 1) % 3][1];
            r[j + 2] = fma(-u1, c1[j + 2], fma(-u0, c0[j + 2], r[j + 2]));
            r[j + 3] = fma(-u1, c1[j + 3], fma(-u0, c0[j + 3], r[j + 3]));
            if (diag) {
                n0[t] = r[j + 2];
                n1[t] = r[j + 3];
            }
            __syncthreads();
            const Pivots next = pivots(n0, n1, j + 2);
#pragma unroll
            for (int k = j + 4; k < LEAF; ++k) r[k] = fma(-u1, c1[k], fma(-u0, c0[k], r[k]));
            p = next;
        }
    }
    if (done < n && t == 0 && blockIdx.x == 0) atomicCAS(info, 0, (int)(offset + done + 1));
    // This block's reads of the diagonal block are done (their values are
    // used above); the last block to get here may overwrite it.
    __syncthreads();
    if (t == 0) {
        __threadfence();
        last = atomicAdd(arrivals, 1u) == gridDim.x - 1;
        if (last) atomicExch(arrivals, 0u);
    }
    __syncthreads();
    // Entries past a failing column were not finished: leave them.
    if constexpr (upper) {
#pragma unroll
        for (int h = 0; h < LEAF; h += STAGE) {
#pragma unroll
            for (int k = 0; k < STAGE; ++k) stage[warp][lane][k] = r[h + k];
            __syncwarp();
#pragma unroll
            for (int r0 = 0; r0 < 32; r0 += PER) {
                const int rr = r0 + sr;
                if (holds(rr, h + sc, done) && (!diag || last))
                    a[h + sc + (i - lane + rr) * ld] = stage[warp][rr][sc];
            }
            __syncwarp();
        }
    } else if (real && (!diag || last)) {
#pragma unroll
        for (int k = 0; k < LEAF; ++k)
            if (k < done && (!diag || k <= t)) entry(a, ld, upper, i, k) = r[k];
    }
}

template <typename T>
__device__ void potrf_impl(T* a, long long ld, long long n, int upper, int* info, long long offset) {
    __shared__ int failed;
    for (long long j = 0; j < n; ++j) {
        if (threadIdx.x == 0) {
            const T d = entry(a, ld, upper, j, j);
            failed = !(d > T(0)) || !isfinite(d);
            if (failed) {
                atomicCAS(info, 0, (int)(offset + j + 1));
            } else {
                entry(a, ld, upper, j, j) = sqrt(d);
            }
        }
        __syncthreads();
        if (failed) return;  // uniform: every thread read the same flag
        const T d = entry(a, ld, upper, j, j);
        for (long long i = j + 1 + threadIdx.x; i < n; i += blockDim.x) entry(a, ld, upper, i, j) /= d;
        __syncthreads();
        // Trailing lower triangle: a(i, k) -= a(i, j)·a(k, j) for j < k <= i.
        const long long m = n - j - 1;
        for (long long t = threadIdx.x; t < m * m; t += blockDim.x) {
            const long long i = j + 1 + t % m, k = j + 1 + t / m;
            if (i >= k) entry(a, ld, upper, i, k) -= entry(a, ld, upper, i, j) * entry(a, ld, upper, k, j);
        }
        __syncthreads();
    }
}

#define PANEL_ENTRY(name, T, upper)                                                                          \
    extern "C" __global__ void name(T* a, long long ld, long long n, long long m, int* info, long long offset, \
                                    unsigned int* arrivals) {                                                  \
        potrf_panel<T, upper>(a, ld, (int)n, m, info, offset, arrivals);                                      \
    }
PANEL_ENTRY(potrf_panel_lower_f32, float, false)
PANEL_ENTRY(potrf_panel_upper_f32, float, true)
PANEL_ENTRY(potrf_panel_lower_f64, double, false)
PANEL_ENTRY(potrf_panel_upper_f64, double, true)

extern "C" __global__ void potrf_f32(float* a, long long ld, long long n, int upper, int* info, long long offset) {
    potrf_impl(a, ld, n, upper, info, offset);
}

extern "C" __global__ void potrf_f64(double* a, long long ld, long long n, int upper, int* info, long long offset) {
    potrf_impl(a, ld, n, upper, info, offset);
}
