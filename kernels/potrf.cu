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
//
// ldlt_panel_{lower,upper}_{f32,f64}(a, ld, n, m, info, offset, arrivals,
// w, ldw, d, tol): the same leaf for A = L·D·Lᵀ without pivoting: L
// (unit, not stored) strictly below the diagonal, D on it and in d (n
// entries), and W = L·D for the m - n rows below the diagonal block in w,
// oriented as the panel (upper: W transposed). A pivot of magnitude <= tol
// (or not finite) is not divided by: its column of L is zero, *info marks
// the first, and the factorization goes on.

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
// L21 = A21 L11^-T, in one pass. Row slots q < LEAF are the rows of the
// diagonal block (past n, the identity); slot LEAF + q is row n +
// LEAF*blockIdx.x + q of the panel. Two threads hold a slot's row in
// registers, the halves h = 0, 1 taking alternate column pairs: pair P
// (columns 2P, 2P + 1) is held by half P % 2, as its entries 2l, 2l + 1 for
// l = P / 2. Two threads per row halve the code each runs and give every
// SM sub-partition two warps to interleave, where one thread per row left
// the leaf waiting on instruction fetch and on its own latencies.
//
// A step factors a column pair with one barrier: the pair's entries in the
// diagonal block are published in shared memory one step ahead, every
// thread factors the 2 x 2 pivot block itself, forms its row's L(i,2P) and
// L(i,2P+1) (the half that does not hold the pair has been sent its values),
// and updates its entries with both columns. Every block factors the
// diagonal block with the same arithmetic, so all see the same pivots. The
// loops are fully unrolled so that rows stay in registers. Launch: max(1,
// ceil((m - n) / LEAF)) blocks of 4 LEAF threads (2 LEAF when m = n). The
// diagonal block is written by the last block to finish, counted in
// `arrivals` (zero between launches; the last block resets it): until then
// others may still read it.
//
// With ldlt, the same steps give A = L·D·Lᵀ: a pivot d is inverted rather
// than square-rooted, the rows' multipliers are those of W = L·D, and the
// diagonal keeps D. D is collected in shared memory for W's write-back.
template <typename T, bool upper, bool ldlt>
__device__ void potrf_panel(T* a, long long ld, int n, long long m, int* info, long long offset,
                            unsigned int* arrivals, T* w, long long ldw, T* dvec, T tol) {
    constexpr int HALF = LEAF / 2, PAIRS = LEAF / 2;
    static_assert(LEAF % 8 == 0, "the leaf's halves take alternate column pairs, staged 8 columns at a time");
    __shared__ __align__(16) T col[3][2][LEAF];
    __shared__ T dval[ldlt ? LEAF : 1];
    __shared__ bool last;
    const int t = threadIdx.x, q = t >> 1, h = t & 1;
    const bool diag = q < LEAF;
    const long long i = diag ? q : n + (long long)blockIdx.x * LEAF + (q - LEAF);
    const bool real = diag ? q < n : i < m;
    // The column of this thread's entry e.
    const auto column = [&](int e) { return 2 * (e & ~1) + 2 * h + (e & 1); };
    // Upper: row i is column i of the array, contiguous. A warp's 16 rows
    // are consecutive, so it reads them through shared memory, a slice of
    // STAGE columns at a time, one load covering STAGE entries of 32 / STAGE
    // rows (coalesced), and each thread takes its entries from there. The
    // slice is small because the less shared memory a leaf takes, the
    // sooner it finds room on SMs that the side queue's gemm blocks hold.
    constexpr int STAGE = 8, ROWS = 16;
    __shared__ T stage[upper ? 4 * LEAF / 32 : 1][ROWS][upper ? STAGE + 1 : 1];
    const int lane = t & 31, warp = t >> 5;
    const int sr = lane / STAGE, sc = lane % STAGE;  // this lane's place in a slice
    // Whether the warp's row slot rr (of 16) holds column k: a real row,
    // and in the diagonal block only the lower triangle.
    const auto holds = [&](int rr, int k, int columns) {
        const int slot = ROWS * warp + rr;
        return (diag ? slot < n : i - (lane >> 1) + rr < m) && k < columns && (!diag || k <= slot);
    };
    T r[HALF];
    if constexpr (upper) {
#pragma unroll
        for (int c0 = 0; c0 < LEAF; c0 += STAGE) {
#pragma unroll
            for (int r0 = 0; r0 < ROWS; r0 += 32 / STAGE) {
                const int rr = r0 + sr;
                stage[warp][rr][sc] = holds(rr, c0 + sc, n) ? a[c0 + sc + (i - (lane >> 1) + rr) * ld] : T(0);
            }
            __syncwarp();
#pragma unroll
            for (int s = 0; s < 2; ++s) {
                r[c0 / 2 + s] = stage[warp][lane >> 1][2 * h + s];
                r[c0 / 2 + 2 + s] = stage[warp][lane >> 1][4 + 2 * h + s];
            }
            __syncwarp();
        }
#pragma unroll
        for (int e = 0; e < HALF; ++e)
            if (diag && column(e) == q && !real) r[e] = T(1);
    } else {
#pragma unroll
        for (int e = 0; e < HALF; ++e) {
            const int k = column(e);
            r[e] = (real && k < n && (!diag || k <= q)) ? entry(a, ld, upper, i, k) : T(diag && q == k);
        }
    }
    // The other half's first pair, and the first pair published.
    T x0 = __shfl_xor_sync(0xffffffffu, r[0], 1), x1 = __shfl_xor_sync(0xffffffffu, r[1], 1);
    if (diag && h == 0) {
        col[0][0][q] = r[0];
        col[0][1][q] = r[1];
    }
    __syncthreads();
    // Step P factors columns j = 2P and j + 1 from the pivot block: s0 =
    // 1/L(j,j), l10 = L(j+1,j), s1 = 1/L(j+1,j+1). The row's L(i,j), L(i,j+1)
    // give u0, u1 with L(i,j) L(k,j) + L(i,j+1) L(k,j+1) = u0 a(k,j) + u1
    // a(k,j+1), the a's as published (unscaled), and each entry k past the
    // pair gets r(k) -= u0 a(k,j) + u1 a(k,j+1). The next pair is updated,
    // published and sent to the other half before the barrier, the rest of
    // the row after it, while the next pivots are formed. With three pairs
    // of column buffers, the rows still reading pair c after the barrier are
    // not overwritten before the next barrier. No step branches on a
    // failure: a pivot that is not positive and finite only marks `done`,
    // the steps go on (on garbage past it, never written back). Past n, the
    // identity rows give pivots of 1 and the real rows have zeros: those
    // steps change nothing.
    int done = n;  // columns factored
    // s0, s1 scale the pair's columns (1/L(j,j), 1/L(j+1,j+1); LDLᵀ: 1/D),
    // l10 = L(j+1,j), c10 is what a row's column j + 1 loses to column j
    // per unit of L(i,j) (LDLᵀ: W(j+1,j)), d0, d1 the pivots.
    struct Pivots {
        T s0, l10, s1, c10, d0, d1;
    };
    // The pivot block of columns j, j + 1 from the published pair (p0, p1).
    const auto pivots = [&](const T* p0, const T* p1, int j) {
        const T a00 = p0[j], a10 = p0[j + 1], a11 = p1[j + 1];
        int failed = n;
        Pivots v;
        if constexpr (ldlt) {
            const auto invert = [&](T x) { return fabs(x) > tol && isfinite(x) ? T(1) / x : T(0); };
            const T s0 = invert(a00);
            const T l10 = a10 * s0;
            const T d1 = a11 - l10 * a10;
            const T s1 = invert(d1);
            if (j + 1 < n && s1 == T(0)) failed = j + 1;
            if (j < n && s0 == T(0)) failed = j;
            v = Pivots{s0, l10, s1, a10, a00, d1};
        } else {
            const T s0 = inv_sqrt(a00);
            const T l10 = a10 * s0;
            const T d1 = a11 - l10 * l10;  // the Schur complement, the second pivot
            if (j + 1 < n && !(d1 > T(0) && isfinite(d1))) failed = j + 1;
            if (j < n && !(a00 > T(0) && isfinite(a00))) failed = j;
            v = Pivots{s0, l10, inv_sqrt(d1), l10, a00, d1};
        }
        if (done == n) done = failed;
        return v;
    };
    Pivots p = pivots(col[0][0], col[0][1], 0);
#pragma unroll
    for (int P = 0; P < PAIRS; ++P) {
        const int j = 2 * P, e = 2 * (P / 2);  // the pair's entries in the half that holds it
        const bool mine = h == P % 2;
        const T* c0 = col[P % 3][0];
        const T* c1 = col[P % 3][1];
        if (mine) {
            x0 = r[e];
            x1 = r[e + 1];
        }
        const T li0 = x0 * p.s0;                  // L(i, j)
        const T li1 = (x1 - li0 * p.c10) * p.s1;  // L(i, j + 1)
        if (mine) {
            // LDLᵀ keeps D on the diagonal, where L has its unit.
            r[e] = ldlt && diag && q == j ? p.d0 : li0;
            r[e + 1] = ldlt && diag && q == j + 1 ? p.d1 : li1;
        }
        if (ldlt && t == 0) {
            dval[j] = p.d0;
            dval[j + 1] = p.d1;
        }
        // The row's multipliers of the published (unscaled) pair.
        const T u1 = ldlt ? li1 : li1 * p.s1;
        const T u0 = ldlt ? li0 - u1 * p.l10 : (li0 - u1 * p.l10) * p.s0;
        if (P + 1 < PAIRS) {
            T* n0 = col[(P + 1) % 3][0];
            T* n1 = col[(P + 1) % 3][1];
            // This thread's entries of the next pair (the other half's), or
            // of the one after it (this half's; P even: the pair just done).
            const int en = 2 * ((P + 1) / 2), k = column(en);
            if (P % 2 == 1 || h == 1) {
                r[en] = fma(-u1, c1[k], fma(-u0, c0[k], r[en]));
                r[en + 1] = fma(-u1, c1[k + 1], fma(-u0, c0[k + 1], r[en + 1]));
            }
            if (diag && h != P % 2) {
                n0[q] = r[en];
                n1[q] = r[en + 1];
            }
            x0 = __shfl_xor_sync(0xffffffffu, r[en], 1);
            x1 = __shfl_xor_sync(0xffffffffu, r[en + 1], 1);
            __syncthreads();
            const Pivots next = pivots(n0, n1, j + 2);
#pragma unroll
            for (int f = en + 2; f < HALF; f += 2) {
                const int kf = column(f);
                r[f] = fma(-u1, c1[kf], fma(-u0, c0[kf], r[f]));
                r[f + 1] = fma(-u1, c1[kf + 1], fma(-u0, c0[kf + 1], r[f + 1]));
            }
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
    // Cholesky leaves the entries past a failing column unfinished, not
    // written; LDLᵀ finishes them.
    if constexpr (ldlt) done = n;
    // W(i, k) = L(i, k)·D(k) for the rows below the diagonal block, as the
    // panel is oriented; diagonal-block slots and rows past m write none.
    const auto store = [&](T* dst, long long ldd, long long row, int k, T x) {
        if (upper) dst[k + row * ldd] = x; else dst[row + k * ldd] = x;
    };
    if constexpr (upper) {
#pragma unroll
        for (int c0 = 0; c0 < LEAF; c0 += STAGE) {
#pragma unroll
            for (int s = 0; s < 2; ++s) {
                stage[warp][lane >> 1][2 * h + s] = r[c0 / 2 + s];
                stage[warp][lane >> 1][4 + 2 * h + s] = r[c0 / 2 + 2 + s];
            }
            __syncwarp();
#pragma unroll
            for (int r0 = 0; r0 < ROWS; r0 += 32 / STAGE) {
                const int rr = r0 + sr, k = c0 + sc;
                if (holds(rr, k, done) && (!diag || last)) {
                    const long long row = i - (lane >> 1) + rr;
                    a[k + row * ld] = stage[warp][rr][sc];
                    if (ldlt && !diag) store(w, ldw, row - n, k, stage[warp][rr][sc] * dval[k]);
                }
            }
            __syncwarp();
        }
    } else if (real && (!diag || last)) {
#pragma unroll
        for (int e = 0; e < HALF; ++e) {
            const int k = column(e);
            if (k < done && (!diag || k <= q)) {
                entry(a, ld, upper, i, k) = r[e];
                if (ldlt && !diag) store(w, ldw, i - n, k, r[e] * dval[k]);
            }
        }
    }
    if (ldlt && blockIdx.x == 0 && t < n) dvec[t] = dval[t];
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
        potrf_panel<T, upper, false>(a, ld, (int)n, m, info, offset, arrivals, nullptr, 0, nullptr, T(0));    \
    }
PANEL_ENTRY(potrf_panel_lower_f32, float, false)
PANEL_ENTRY(potrf_panel_upper_f32, float, true)
PANEL_ENTRY(potrf_panel_lower_f64, double, false)
PANEL_ENTRY(potrf_panel_upper_f64, double, true)

#define LDLT_ENTRY(name, T, upper)                                                                           \
    extern "C" __global__ void name(T* a, long long ld, long long n, long long m, int* info, long long offset, \
                                    unsigned int* arrivals, T* w, long long ldw, T* d, double tol) {           \
        potrf_panel<T, upper, true>(a, ld, (int)n, m, info, offset, arrivals, w, ldw, d, (T)tol);             \
    }
LDLT_ENTRY(ldlt_panel_lower_f32, float, false)
LDLT_ENTRY(ldlt_panel_upper_f32, float, true)
LDLT_ENTRY(ldlt_panel_lower_f64, double, false)
LDLT_ENTRY(ldlt_panel_upper_f64, double, true)

extern "C" __global__ void potrf_f32(float* a, long long ld, long long n, int upper, int* info, long long offset) {
    potrf_impl(a, ld, n, upper, info, offset);
}

extern "C" __global__ void potrf_f64(double* a, long long ld, long long n, int upper, int* info, long long offset) {
    potrf_impl(a, ld, n, upper, info, offset);
}
