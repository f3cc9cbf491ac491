// LDLᵀ of a symmetric indefinite matrix, lower (LAPACK's dlasyf_rk and
// dsytrs): the panel with Bunch–Kaufman pivots (Bunch and Kaufman 1977) or
// none, and solves with the block diagonal D.
//
// The matrix is the lower triangle that Triangle (src/backend/triangle.rs)
// locates in a buffer: full storage, or the three pieces of RFP storage,
// some of them transposed; `locate` below is Triangle::locate. L and W are
// the panel's dense workspaces, row r being row k + r of the matrix. Sizes,
// leading dimensions and strides are `long long`; ipiv holds 1-based rows.
//
// The arithmetic is the CPU's (src/backend/cpu/ldlt.rs) operation for
// operation: sums in the same order, and products rounded on their own
// (mul_rn), never contracted into a fused multiply-add. Both backends then
// compute the same W and take the same pivots (tests/ldlt_primitives.rs
// compares them bit for bit).
//
// sytrf_panel_{f32,f64}(a, n, k, nb, split, joined, off11, ld11, tr11, off21,
//                       ld21, tr21, off22, ld22, tr22, l, ldl, w, ldw, ipiv,
//                       incp, d, incd, e, ince, info, incinfo, pivoted, tol,
//                       part_v, part_i, bar):
//   Backend::sytrf_panel: columns k..k+nb (or one more) of the n × n matrix
//   whose lower triangle lies at a (the buffer's start; the pieces at their
//   offsets, transposed when tr*), Bunch–Kaufman when `pivoted`, else
//   unpivoted with zero pivots |d| <= tol. One launch per panel, every block
//   resident (gridDim.x at most the number of SMs): block b owns rows
//   [k + b*chunk, k + (b+1)*chunk) of the panel, and row i is always thread
//   (i - lo) % blockDim.x's. A column step is
//     (1) every block brings column kk up to date on its rows, into W[:, j],
//         and publishes its largest |entry| below the diagonal; barrier;
//     (2) every block reads the candidates and takes the same decision;
//     (3) when the diagonal is small, the same for column imax into
//         W[:, j+1], the largest entry other than imax's; barrier;
//     (4) the same decision (kp, kstep) everywhere;
//     (5) when kp != kk + kstep - 1, the symmetric interchange, spread over
//         every thread of the grid; barrier;
//     (6) each block its rows of L, into the matrix and into L.
//   One barrier per column without interchanges, up to three with. Between
//   two barriers, blocks may be a phase apart (one deciding while another
//   interchanges, or one at (6) while another starts the next column at
//   (1)), so a block reads there only what no other block writes before the
//   next barrier; the one value that would not be, |W(imax, j+1)|, goes
//   through the scratch. Scratch: part_v 2*gridDim.x + 2 entries (each
//   block's |candidate|, then |W(imax, j+1)|) and part_i 2*gridDim.x (the
//   candidates' rows), double-buffered by the parity of the exchange; bar
//   two zeroed words. Launch: blockDim.x a multiple of 32 up to 1024 (the
//   backend uses 256).
//
// block_diagonal_solve_{f32,f64}(d, incd, e, ince, b, ldb, n, nrhs):
//   B := D⁻¹·B for the n × nrhs block b; e[i] != 0 marks the 2×2 block of
//   rows i, i+1, and e[i+1] is then 0, as the factorization leaves it. A
//   thread per row (x, grid-striding) and right-hand sides by blockIdx.y;
//   the second row of a 2×2 block is its first row's thread's.

#include "pivot.cuh"
#include "triangle.cuh"

// Bunch and Kaufman's alpha = (1 + sqrt(17))/8, the CPU's constant to the bit.
#define BK_ALPHA 0.6403882032022084

// Entries of a row of W that update_column stages in shared memory at a time.
#define Y_CHUNK 256

// Entries of a row of L that update_column has in flight at once.
#define LOADS 16

// A load of what another thread may have written since the last barrier:
// through L2 (__ldcg), since L1 is not coherent across SMs — unless the
// grid is one block, whose own writes __syncthreads makes visible to it,
// and L1 then serves the small panels (the leaves of the unpivoted
// factorization) at a fraction of L2's latency.
template <typename T>
__device__ __forceinline__ T fresh(const T* p) {
    return gridDim.x == 1 ? *p : __ldcg(p);
}

// The barrier between dependent steps: the grid's, or the block's when the
// grid is one block.
__device__ __forceinline__ void step_barrier(unsigned* bar) {
    if (gridDim.x == 1) {
        __syncthreads();
    } else {
        grid_barrier(bar);
    }
}

// A product rounded on its own: `x - mul_rn(a, b)` is never fused.
__device__ __forceinline__ float mul_rn(float x, float y) { return __fmul_rn(x, y); }
__device__ __forceinline__ double mul_rn(double x, double y) { return __dmul_rn(x, y); }

// The panel: the matrix, its workspaces, and this block's rows [lo, hi).
// Every load of the matrix, L or W goes through `fresh`: L1 is not
// coherent across SMs, and after a barrier any of them may hold entries
// that another block wrote.
template <typename T>
struct Panel {
    T* a;
    Tri tri;
    long long n, k;
    T* l;
    long long ldl;
    T* w;
    long long ldw;
    long long lo, hi;

    // Entry (i, j) of the symmetric matrix, and its address (i >= j).
    __device__ __forceinline__ T sym(long long i, long long j) const {
        return fresh(a + (i >= j ? locate(tri, i, j) : locate(tri, j, i)));
    }
    __device__ __forceinline__ T* at(long long i, long long j) const { return a + locate(tri, i, j); }
    // Entry (row i of the matrix, column t) of L and of W.
    __device__ __forceinline__ T* lp(long long i, long long t) const { return l + (i - k) + t * ldl; }
    __device__ __forceinline__ T* wp(long long i, long long t) const { return w + (i - k) + t * ldw; }
    __device__ __forceinline__ T wget(long long i, long long t) const { return fresh(wp(i, t)); }
};

// Column c of the matrix on this block's rows from `from` down, as the
// panel's first j columns have updated it — A(i, c) − Σ_t L(i, t)·W(c, t),
// t in order, skipping W(c, t) = 0, as the CPU — into column `into` of W.
// Returns this thread's best candidate |W(i, into)| among its rows i >=
// first other than `skip`. Called by whole blocks.
template <typename T>
__device__ Candidate update_column(const Panel<T>& p, long long c, long long from, long long j, long long into,
                                   long long first, long long skip, T* ys) {
    const int t = threadIdx.x, B = blockDim.x;
    for (long long i = p.lo + t; i < p.hi; i += B)
        if (i >= from) *p.wp(i, into) = p.sym(i, c);
    for (long long t0 = 0; t0 < j; t0 += Y_CHUNK) {
        const int len = (int)(j - t0 < Y_CHUNK ? j - t0 : Y_CHUNK);
        __syncthreads();  // the last chunk is used up
        for (int u = t; u < len; u += B) ys[u] = p.wget(c, t0 + u);
        __syncthreads();
        for (long long i = p.lo + t; i < p.hi; i += B) {
            if (i < from) continue;
            T x = p.wget(i, into);
            const T* li = p.lp(i, t0);
            // The row's entries of L are loaded LOADS at a time before they
            // are used: independent loads in flight instead of a chain of
            // L2 latencies. The subtractions keep their order.
            for (int u0 = 0; u0 < len; u0 += LOADS) {
                T lv[LOADS];
#pragma unroll
                for (int q = 0; q < LOADS; ++q) lv[q] = u0 + q < len ? fresh(li + (u0 + q) * p.ldl) : T(0);
#pragma unroll
                for (int q = 0; q < LOADS; ++q) {
                    const T y = u0 + q < len ? ys[u0 + q] : T(0);
                    if (y != T(0)) x = x - mul_rn(lv[q], y);
                }
            }
            *p.wp(i, into) = x;
        }
    }
    Candidate best = {-1.0, p.n};
    for (long long i = p.lo + t; i < p.hi; i += B) {
        if (i < first || i == skip) continue;
        const Candidate o = {abs_d(p.wget(i, into)), i};
        if (better(o, best)) best = o;
    }
    return best;
}

// The best of the candidates the grid's blocks published, in lane 0 of the
// calling warp (after the barrier: through L2).
__device__ Candidate grid_best(const double* pv, const long long* pi, long long none) {
    Candidate c = {-1.0, none};
    for (unsigned b = threadIdx.x & 31; b < gridDim.x; b += 32) {
        const Candidate o = {fresh(pv + b), fresh(pi + b)};
        if (better(o, c)) c = o;
    }
    return warp_best(c);
}

// Interchange rows and columns kkk and kp (kkk < kp) as the CPU does: the
// trailing matrix gets column kkk's entries at kp ((kkk, kkk) to (kp, kp),
// (i, kkk) to (kp, i) above kp and to (i, kp) below it; kkk's own become the
// factored column), rows kkk and kp are exchanged in every column left of
// kk, in L (columns 0..j) and in W (columns 0..j+kstep). With `copy` (a 1×1
// pivot at imax) column j+1 of W first replaces column j, rows kk..n. Each
// item is one thread's, over the whole grid; it loads all it moves before
// storing, and no item stores what another loads.
template <typename T>
__device__ void interchange(const Panel<T>& p, long long kk, long long j, long long kkk, long long kp, int kstep,
                            bool copy) {
    const long long trailing = p.n - kkk, left = kk, lrow = j, wrow = j + kstep, wcol = copy ? p.n - kk : 0;
    const long long total = trailing + left + lrow + wrow + wcol;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q < total; q += stride) {
        long long r = q;
        if (r < trailing) {
            const long long i = kkk + r;
            if (i == kp) continue;
            const T x = fresh(p.at(i, kkk));
            *(i == kkk ? p.at(kp, kp) : i < kp ? p.at(kp, i) : p.at(i, kp)) = x;
            continue;
        }
        r -= trailing;
        if (r < left) {
            T *x = p.at(kkk, r), *y = p.at(kp, r);
            const T vx = fresh(x), vy = fresh(y);
            *x = vy;
            *y = vx;
            continue;
        }
        r -= left;
        if (r < lrow) {
            T *x = p.lp(kkk, r), *y = p.lp(kp, r);
            const T vx = fresh(x), vy = fresh(y);
            *x = vy;
            *y = vx;
            continue;
        }
        r -= lrow;
        if (r < wrow) {
            // Column j of rows kk and kp, with `copy`, as column j+1 left it.
            const long long from = copy && r == j ? j + 1 : r;
            const T vx = p.wget(kkk, from), vy = p.wget(kp, from);
            *p.wp(kkk, r) = vy;
            *p.wp(kp, r) = vx;
            continue;
        }
        r -= wrow;
        const long long i = kk + r;
        if (i != kk && i != kp) *p.wp(i, j) = p.wget(i, j + 1);
    }
}

template <typename T>
__device__ void sytrf_panel_impl(Panel<T> p, long long nb, int* ipiv, long long incp, T* d, long long incd, T* e,
                                 long long ince, int* info, long long incinfo, int pivoted, double tol,
                                 double* part_v, long long* part_i, unsigned* bar) {
    __shared__ Candidate best[32];
    __shared__ T ys[Y_CHUNK];
    // The step's decision, by thread 0 for its block.
    __shared__ long long s_imax, s_kp;
    __shared__ double s_absakk, s_colmax;
    __shared__ int s_kstep, s_zero, s_more, s_copy;
    const int t = threadIdx.x, B = blockDim.x;
    const unsigned G = gridDim.x;
    const long long n = p.n, k = p.k;
    const long long chunk = (n - k + G - 1) / G;
    p.lo = k + (long long)blockIdx.x * chunk;
    p.hi = p.lo + chunk < n ? p.lo + chunk : n;
    const bool first_thread = blockIdx.x == 0 && t == 0;
    long long zero = -1;  // the first zero pivot's column
    // Candidate exchanges so far: exchange x uses buffer x % 2. A block
    // writes it only after the barrier of exchange x - 1, which every block
    // reaches after reading exchange x - 2.
    unsigned exchange = 0;
    long long j = 0;
    while (j < nb) {
        const long long kk = k + j;
        // (1) Column kk, and its largest entry below the diagonal.
        Candidate c = update_column(p, kk, kk, j, j, pivoted ? kk + 1 : n, -1, ys);
        double* pv = part_v + (exchange & 1) * G;
        long long* pi = part_i + (exchange & 1) * G;
        if (pivoted) {
            c = block_best(c, best, n);
            if (t == 0) {
                pv[blockIdx.x] = c.v;
                pi[blockIdx.x] = c.i;
            }
        }
        step_barrier(bar);
        // (2) The same decision in every block, from the same values.
        if (t < 32) {
            const Candidate g = pivoted ? grid_best(pv, pi, n) : Candidate{-1.0, n};
            if (t == 0) {
                const double absakk = abs_d(p.wget(kk, j));
                const double colmax = g.v < 0 ? 0.0 : g.v;  // none below the diagonal: 0
                int is_zero = 0, more = 0;
                if (!pivoted) {
                    is_zero = !(absakk > tol);
                } else if (is_nan(absakk) || is_nan(colmax)) {
                    // Overflow upstream: the NaN goes on into D.
                } else if (absakk == 0.0 && colmax == 0.0) {
                    is_zero = 1;
                } else if (!(absakk >= BK_ALPHA * colmax)) {
                    more = 1;
                }
                s_imax = g.i;
                s_absakk = absakk;
                s_colmax = colmax;
                s_kp = kk;
                s_kstep = 1;
                s_zero = is_zero;
                s_more = more;
                s_copy = 0;
            }
        }
        if (pivoted) ++exchange;
        __syncthreads();
        if (s_more) {
            // (3) Column imax into W[:, j+1], and its largest entry off row
            // imax (rows kk..n).
            const long long imax = s_imax;
            c = update_column(p, imax, kk, j, j + 1, kk, imax, ys);
            pv = part_v + (exchange & 1) * G;
            pi = part_i + (exchange & 1) * G;
            c = block_best(c, best, n);
            if (t == 0) {
                pv[blockIdx.x] = c.v;
                pi[blockIdx.x] = c.i;
                // |W(imax, j+1)| by its owner: W itself may change under the
                // other blocks' reads once the fastest has decided.
                if (p.lo <= imax && imax < p.hi) part_v[2 * G + (exchange & 1)] = abs_d(p.wget(imax, j + 1));
            }
            step_barrier(bar);
            // (4)
            if (t < 32) {
                const Candidate g = grid_best(pv, pi, n);
                if (t == 0) {
                    const double rowmax = g.v < 0 ? 0.0 : g.v;
                    const double absakk = s_absakk, colmax = s_colmax;
                    if (absakk * rowmax >= BK_ALPHA * colmax * colmax) {
                        // 1×1 at kk after all.
                    } else if (fresh(part_v + 2 * G + (exchange & 1)) >= BK_ALPHA * rowmax) {
                        s_kp = imax;
                        s_copy = 1;
                    } else {
                        s_kp = imax;
                        s_kstep = 2;
                    }
                }
            }
            ++exchange;
            __syncthreads();
        }
        const long long kp = s_kp;
        const int kstep = s_kstep;
        const bool is_zero = s_zero != 0, copy = s_copy != 0;
        const long long kkk = kk + kstep - 1;
        if (is_zero && zero < 0) zero = kk;
        // (5)
        if (kp != kkk) {
            interchange(p, kk, j, kkk, kp, kstep, copy);
            step_barrier(bar);
        }
        // (6) L of this block's rows, in the matrix and in L.
        if (kstep == 1) {
            const T dk = p.wget(kk, j);
            // As dgetf2: multiply by the reciprocal unless it overflows.
            const T r = T(1) / dk;
            const bool by_reciprocal = is_finite(r);
            for (long long i = p.lo + t; i < p.hi; i += B) {
                if (i <= kk) continue;
                const T x = p.wget(i, j);
                const T li = is_zero ? T(0) : by_reciprocal ? x * r : x / dk;
                *p.at(i, kk) = li;
                *p.lp(i, j) = li;
            }
            if (first_thread) {
                *p.at(kk, kk) = dk;
                d[kk * incd] = dk;
                e[kk * ince] = T(0);
                *p.lp(kk, j) = T(1);
                ipiv[kk * incp] = (int)(kp + 1);
            }
        } else {
            // The 2×2 block [[d11, d21], [d21, d22]], and L = W·D⁻¹ in
            // LAPACK's scaled form (the determinant is negative: no
            // cancellation in it).
            const T d11 = p.wget(kk, j), d21 = p.wget(kk + 1, j), d22 = p.wget(kk + 1, j + 1);
            const T a11 = d22 / d21, a22 = d11 / d21;
            const T scale = (T(1) / (mul_rn(a11, a22) - T(1))) / d21;
            for (long long i = p.lo + t; i < p.hi; i += B) {
                if (i < kk + 2) continue;
                const T w1 = p.wget(i, j), w2 = p.wget(i, j + 1);
                const T l1 = scale * (mul_rn(a11, w1) - w2), l2 = scale * (mul_rn(a22, w2) - w1);
                *p.at(i, kk) = l1;
                *p.at(i, kk + 1) = l2;
                *p.lp(i, j) = l1;
                *p.lp(i, j + 1) = l2;
            }
            if (first_thread) {
                *p.at(kk, kk) = d11;
                *p.at(kk + 1, kk) = T(0);
                *p.at(kk + 1, kk + 1) = d22;
                d[kk * incd] = d11;
                d[(kk + 1) * incd] = d22;
                e[kk * ince] = d21;
                e[(kk + 1) * ince] = T(0);
                ipiv[kk * incp] = (int)(kk + 1);
                ipiv[(kk + 1) * incp] = (int)(kp + 1);
                *p.lp(kk, j) = T(1);
                *p.lp(kk + 1, j) = T(0);
                *p.lp(kk, j + 1) = T(0);
                *p.lp(kk + 1, j + 1) = T(1);
            }
        }
        j += kstep;
    }
    if (first_thread) {
        info[incinfo] = (int)j;
        if (zero >= 0 && info[0] == 0) info[0] = (int)(zero + 1);
    }
}

#define SYTRF_PANEL(NAME, T)                                                                                         \
    extern "C" __global__ void NAME(T* a, long long n, long long k, long long nb, long long split, int joined,        \
                                    long long off11, long long ld11, int tr11, long long off21, long long ld21,      \
                                    int tr21, long long off22, long long ld22, int tr22, T* l, long long ldl, T* w,  \
                                    long long ldw, int* ipiv, long long incp, T* d, long long incd, T* e,            \
                                    long long ince, int* info, long long incinfo, int pivoted, double tol,           \
                                    double* part_v, long long* part_i, unsigned* bar) {                              \
        const Tri tri = {split, joined, off11, ld11, off21, ld21, off22, ld22, tr11, tr21, tr22};                    \
        const Panel<T> p = {a, tri, n, k, l, ldl, w, ldw, 0, 0};                                                     \
        sytrf_panel_impl(p, nb, ipiv, incp, d, incd, e, ince, info, incinfo, pivoted, tol, part_v, part_i, bar);     \
    }

SYTRF_PANEL(sytrf_panel_f32, float)
SYTRF_PANEL(sytrf_panel_f64, double)

template <typename T>
__device__ void block_diagonal_solve_impl(const T* d, long long incd, const T* e, long long ince, T* b,
                                          long long ldb, long long n, long long nrhs) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (i > 0 && e[(i - 1) * ince] != T(0)) continue;  // the second row of a 2×2 block
        const T di = d[i * incd], ei = e[i * ince];
        if (ei == T(0) || i + 1 == n) {
            const T r = T(1) / di;
            for (long long c = blockIdx.y; c < nrhs; c += gridDim.y) b[i + c * ldb] = b[i + c * ldb] * r;
        } else {
            // dsytrs: [x1, x2] = [[d1, e], [e, d2]]⁻¹·[b1, b2], scaled by e.
            const T a1 = di / ei, a2 = d[(i + 1) * incd] / ei;
            const T denom = mul_rn(a1, a2) - T(1);
            for (long long c = blockIdx.y; c < nrhs; c += gridDim.y) {
                T* x = b + i + c * ldb;
                const T b1 = x[0] / ei, b2 = x[1] / ei;
                x[0] = (mul_rn(a2, b1) - b2) / denom;
                x[1] = (mul_rn(a1, b2) - b1) / denom;
            }
        }
    }
}

extern "C" __global__ void block_diagonal_solve_f32(const float* d, long long incd, const float* e, long long ince,
                                                    float* b, long long ldb, long long n, long long nrhs) {
    block_diagonal_solve_impl(d, incd, e, ince, b, ldb, n, nrhs);
}

extern "C" __global__ void block_diagonal_solve_f64(const double* d, long long incd, const double* e, long long ince,
                                                    double* b, long long ldb, long long n, long long nrhs) {
    block_diagonal_solve_impl(d, incd, e, ince, b, ldb, n, nrhs);
}
