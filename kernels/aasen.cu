// Aasen's factorization P·A·Pᵀ = L·T·Lᵀ (Aasen 1971), blocked as LAPACK's
// dsytrf_aa: the column recurrence of a panel, and the interchanges after
// it. The algorithm is the CPU's (src/backend/cpu/aasen.rs, whose header
// derives the recurrence); the pivots are the same up to rounding (largest
// magnitude, NaN first, the first row on ties).
//
// The matrix is the lower triangle that Triangle locates in a buffer
// (triangle.cuh). L and Y are the panel's dense workspaces, row r being row
// k + r of the matrix in its order at the panel's start; sizes, leading
// dimensions and strides are `long long`; ipiv holds 1-based rows.
//
// aasen_panel_{f32,f64}(a, n, k, nb, split, joined, off11, ld11, tr11, off21,
//                       ld21, tr21, off22, ld22, tr22, l, ldl, y, ldy, rows,
//                       incr, d, incd, e, ince, resident, cells, epoch):
//   Backend::aasen_panel. One launch, every block resident (gridDim.x at
//   most the number of SMs and at most 32*AASEN_POLLS): block b owns the
//   panel rows [b*chunk, (b+1)*chunk), chunk = ceil((n - k) / gridDim.x),
//   and row r is always thread (r - b*chunk) % blockDim.x's. With
//   `resident`, the block keeps its rows of L and Y in shared memory (and
//   writes them through to l and y); else each thread reads its own rows
//   back from l and y. Rows keep their places; a row chosen as pivot is
//   marked in shared memory. A step j is
//     (1) every block reads the candidates of step j - 1, takes the same
//         pivot p, and reads the row its block published with it (v, A(p,
//         p), Y(p, :), L(p, :)); its own rows of L(:, j) and of Y(:, j - 1)
//         = W(:, j - 1);
//     (2) T(j, j) from that row (every warp forms it, the same sums in the
//         same order);
//     (3) each block its rows of the next column; its largest |entry| and
//         that row published.
//   No barrier: a block publishes through 16-byte cells that carry their
//   step's flag (the LL protocol, ll.cuh), and a reader polls the cells it
//   needs until they hold its step. A block's cells: its candidate (|v|,
//   row) and that row, v, A(q, q), Y(q, 0..=s), L(q, 0..=s+1) (2nb + 7
//   cells), double-buffered by the step's parity: a block publishes step
//   j + 1 only once every block has published step j, so after every block
//   has read step j - 1. A step's flag is (epoch << 7) + (s mod 126) + 1:
//   the cells of the other steps of the launch that a reader may find in
//   the slot are those of step s - 2, and those of earlier launches have
//   smaller epochs (1 <= epoch < 2^25). cells: 2*gridDim.x*(2nb + 7).
//   Launch: blockDim.x a multiple of 32 up to 1024; dynamic shared memory
//   sizeof(T)*(2*chunk + 2*(nb + 2) + (resident ? chunk*(2*nb + 3) : 0)) +
//   chunk.
//
// aasen_placement(rows, incr, n, k, nb, ipiv, incp, at, cand, valid):
//   one block: ipiv at k + 1.. (and ipiv[0] = 1 when k = 0) from the rows
//   chosen, at[q] the panel row that the interchanges bring to position q,
//   cand[2s], cand[2s+1] the positions step s touched and valid[i] whether
//   cand[i] moved and is its first mention. Dynamic shared memory
//   sizeof(int)*(2*(top + 1) + 5*steps), top = steps = min(nb, n - k - 1).
//
// aasen_gather_{f32,f64} / aasen_scatter_{f32,f64}(a, n, k, nb, <tri>, at,
//   cand, valid, left, trailing): the rows of L left of the panel (columns
//   0..k) and the rows and columns of the trailing matrix (from k + nb) at
//   each valid position, read into `left` ((2nb) × k) and `trailing`
//   ((2nb) × (n - k)), then written back in their new places: everything
//   is read before anything is written. Grid: x over columns, y over
//   cand's entries.
//
// aasen_place_{f32,f64}(a, n, k, nb, <tri>, at, l, ldl, y, ldy, d, incd,
//   x, ldx, yx, ldyx): columns k..k+nb of L below the diagonal of a, T's
//   diagonal on it; rows k + nb.. of L(:, k-1..=k+nb) into x and of Y into
//   yx, in their new order. Grid: x strides over the rows, y over the nb + 2
//   columns.

#include "ll.cuh"
#include "pivot.cuh"
#include "triangle.cuh"

// The most blocks of a panel, in units of a warp's lanes: each lane of the
// first warp polls the candidates of up to AASEN_POLLS blocks at once.
#define AASEN_POLLS 5

// The panel's view of the trailing matrix, rows and columns counted from k.
template <typename T>
struct Trailing {
    const T* a;
    Tri tri;
    long long k;
    // Entry (k + i, k + j) of the symmetric matrix, through L2: another
    // block's writes are not in this SM's L1.
    __device__ __forceinline__ T operator()(long long i, long long j) const {
        const long long r = k + (i > j ? i : j), c = k + (i > j ? j : i);
        return __ldcg(a + locate(tri, r, c));
    }
};

// The sum of x over the warp, in lane 0: the same tree everywhere.
template <typename T>
__device__ __forceinline__ T warp_sum(T x) {
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) x += __shfl_down_sync(0xffffffffu, x, s);
    return x;
}

template <typename T>
__device__ void aasen_panel_impl(const Trailing<T> A, long long n, long long nb, T* l, long long ldl, T* y,
                                 long long ldy, int* rows, long long incr, T* d, long long incd, T* e,
                                 long long ince, int resident, Cell* cells, unsigned epoch) {
    extern __shared__ __align__(16) unsigned char smem[];
    const long long k = A.k, m = n - k, G = gridDim.x;
    const long long chunk = (m + G - 1) / G;
    const long long lo = blockIdx.x * chunk, hi = lo + chunk < m ? lo + chunk : m;
    const long long width = 2 * nb + 7;  // a block's cells: |v|, q, then v, A(q, q), Y(q, 0..nb], L(q, 0..=nb+1]
    const int tid = threadIdx.x, B = blockDim.x;
    T* v = (T*)smem;        // this block's rows of the step's column
    T* diag = v + chunk;    // their diagonal entries A(r, r), fixed during the panel
    T* lp = diag + chunk;   // row p of L, columns 0..=s+1
    T* yp = lp + nb + 2;    // row p of Y, columns 0..s
    // This block's rows of Y and L: in shared memory when they fit, else
    // read back from global memory (each thread its own rows).
    T* ys = resident ? yp + nb + 2 - lo : y;
    T* ls = resident ? ys + lo + chunk * (nb + 1) - lo : l;
    const long long ldys = resident ? chunk : ldy, ldls = resident ? chunk : ldl;
    char* chosen = (char*)(resident ? ls + lo + chunk * (nb + 2) : yp + nb + 2);
    __shared__ Candidate best[32];
    __shared__ long long pivot_row, own_row;
    __shared__ T scalars[2];  // T(j, j - 1), A(p, p)
    const bool first_thread = blockIdx.x == 0 && tid == 0;

    T e1 = k > 0 ? e[(k - 1) * ince] : T(0), e2 = T(0), dprev = T(0), dj = T(0);
    for (long long r = lo + tid; r < hi; r += B) {
        chosen[r - lo] = r == 0;
        diag[r - lo] = A(r, r);
        for (long long t = 0; t < 2; ++t) ls[r + t * ldls] = l[r + t * ldl];
        const T y0 = e1 * ls[r + ldls];
        y[r] = y0;
        ys[r] = y0;
    }
    // Step k's pivot row is the panel's first: row 0 of L and Y given.
    if (tid < 2) lp[tid] = __ldcg(l + tid * ldl);
    if (tid == 0) scalars[1] = A(0, 0);
    T e_last = e1, d_last = T(0);
    const long long r0 = lo + tid;
    __syncthreads();

    for (long long s = 0; s <= nb; ++s) {
        const long long j = k + s;
        if (s > 0) {
            if (j > n - 1) break;  // the last panel: no T(n, n - 1)
            // (1) The pivot of step j - 1, the same in every block, and the
            // row its block published with it.
            const unsigned flag = (epoch << 7) + (unsigned)((s - 1) % 126) + 1;
            const Cell* slot = cells + ((s - 1) & 1) * G * width;
            if (tid < 32) {
                // Each block's candidate: a round looks at every cell this
                // lane still waits for, all loads in flight together.
                Candidate c = {-1.0, m};
                unsigned waiting = 0;
#pragma unroll
                for (int u = 0; u < AASEN_POLLS; ++u)
                    if (tid + 32 * u < G) waiting |= 1u << u;
                while (waiting) {
                    Cell cv[AASEN_POLLS], ci[AASEN_POLLS];
#pragma unroll
                    for (int u = 0; u < AASEN_POLLS; ++u) {
                        const Cell* at = slot + (tid + 32 * u) * width;
                        if (waiting >> u & 1) cv[u] = ll_peek(at), ci[u] = ll_peek(at + 1);
                    }
#pragma unroll
                    for (int u = 0; u < AASEN_POLLS; ++u) {
                        if (!(waiting >> u & 1) || cv[u].f1 != flag || cv[u].f2 != flag || ci[u].f1 != flag ||
                            ci[u].f2 != flag)
                            continue;
                        const unsigned long long bv = ((unsigned long long)cv[u].hi << 32) | cv[u].lo;
                        const Candidate o = {double_of(bv), (long long)ci[u].lo};
                        if (better(o, c)) c = o;
                        waiting &= ~(1u << u);
                    }
                }
                c = warp_best(c);
                if (tid == 0) pivot_row = c.i;
            }
            __syncthreads();
            const long long q = pivot_row;
            const Cell* row = slot + (q / chunk) * width + 2;
            for (long long t = tid; t < 2 * nb + 5; t += B) {
                if (t < 2) {
                    scalars[t] = (T)double_of(ll_load(row + t, flag));
                } else if (t < nb + 3) {
                    if (t - 2 < s) yp[t - 2] = (T)double_of(ll_load(row + t, flag));
                } else if (t - nb - 3 <= s) {
                    lp[t - nb - 3] = (T)double_of(ll_load(row + t, flag));
                }
            }
            if (tid == 0 && q >= lo && q < hi) chosen[q - lo] = 1;
            __syncthreads();
            const T ej = scalars[0];
            if (first_thread) {
                e[(j - 1) * ince] = ej;
                rows[(s - 1) * incr] = (int)(k + q);
            }
            // L(:, j) = v / T(j, j - 1): as dgetf2, by the reciprocal unless
            // it overflows; a zero column stays zero.
            const T inv = T(1) / ej;
            for (long long r = lo + tid; r < hi; r += B) {
                T x;
                if (r == q) {
                    x = T(1);
                } else if (chosen[r - lo] || ej == T(0)) {
                    x = T(0);
                } else {
                    x = is_finite(inv) ? v[r - lo] * inv : v[r - lo] / ej;
                }
                l[r + (s + 1) * ldl] = x;
                ls[r + (s + 1) * ldls] = x;
            }
            e2 = e1, e1 = ej, dprev = dj;
            if (s == nb) break;
            // W(:, j - 1) = T(j-2, j-1)·L(:, j-2) + T(j-1, j-1)·L(:, j-1) + T(j, j-1)·L(:, j).
            for (long long r = lo + tid; r < hi; r += B) {
                const T w = e2 * ls[r + (s - 1) * ldls] + dprev * ls[r + s * ldls] + e1 * ls[r + (s + 1) * ldls];
                y[r + s * ldy] = w;
                ys[r + s * ldys] = w;
            }
        }
        // (2) T(j, j) = A(p, p) − Σ_t Y(p, t)·L(p, t) − T(j−1, j)·L(p, j−1),
        // Y(p, s) from scalars: its owner forms it only now. Every warp
        // forms the same sums in the same order, so no barrier is needed.
        {
            const int lane = tid & 31;
            T acc = T(0);
            for (long long t = lane; t < s; t += 32) acc += yp[t] * lp[t];
            acc = __shfl_sync(0xffffffffu, warp_sum(acc), 0);
            const T yps = s > 0 ? e2 * lp[s - 1] + dprev * lp[s] + e1 : e1 * lp[1];
            dj = scalars[1] - (acc + yps * lp[s]) - e1 * lp[s];
        }
        const long long p = s > 0 ? pivot_row : 0;
        if (first_thread) d[j * incd] = dj;
        e_last = e1, d_last = dj;
        if (j + 1 == n) break;
        // (3) v = A(:, p) − Σ_t Y(:, t)·L(p, t) − T(j−1, j)·L(:, j−1) − T(j, j)·L(:, j)
        // on this block's rows not yet pivots, and its largest |v|.
        Candidate mine = {-1.0, m};
        for (long long r = r0; r < hi; r += B) {
            if (chosen[r - lo]) continue;
            const T apr = A(r, p);
            T acc = T(0);
            for (long long t = 0; t <= s; ++t) acc += ys[r + t * ldys] * lp[t];
            const T x = apr - acc - e1 * ls[r + s * ldls] - dj * ls[r + (s + 1) * ldls];
            v[r - lo] = x;
            const Candidate o = {abs_d(x), r};
            if (better(o, mine)) mine = o;
        }
        mine = block_best(mine, best, m);
        if (tid == 0) own_row = mine.i;
        __syncthreads();
        // Publish the candidate and its row: v, A(q, q), Y(q, 0..=s), L(q, 0..=s+1).
        const unsigned flag = (epoch << 7) + (unsigned)(s % 126) + 1;
        Cell* slot = cells + (s & 1) * G * width + blockIdx.x * width;
        const long long qb = own_row;
        if (qb < m) {
            for (long long t = tid; t < 2 * nb + 5; t += B) {
                double x;
                if (t == 0) {
                    x = (double)v[qb - lo];
                } else if (t == 1) {
                    x = (double)diag[qb - lo];
                } else if (t < nb + 3) {
                    if (t - 2 > s) continue;
                    x = (double)ys[qb + (t - 2) * ldys];
                } else {
                    if (t - nb - 3 > s + 1) continue;
                    x = (double)ls[qb + (t - nb - 3) * ldls];
                }
                ll_store(slot + 2 + t, bits_of(x), flag);
            }
        }
        // The candidate after its row, so that a reader seldom waits for
        // the row it asks for (it may: nothing orders the stores).
        __syncthreads();
        if (tid == 0) {
            ll_store(slot, bits_of(mine.v), flag);
            ll_store(slot + 1, (unsigned long long)mine.i, flag);
        }
    }
    // Y's last column leaves out T(k + nb, k + nb − 1): the next panel's.
    for (long long r = lo + tid; r < hi; r += B)
        y[r + nb * ldy] = e_last * ls[r + (nb - 1) * ldls] + d_last * ls[r + nb * ldls];
}

#define AASEN_PANEL(NAME, T)                                                                                          \
    extern "C" __global__ void NAME(const T* a, long long n, long long k, long long nb, long long split, int joined,  \
                                    long long off11, long long ld11, int tr11, long long off21, long long ld21,       \
                                    int tr21, long long off22, long long ld22, int tr22, T* l, long long ldl, T* y,   \
                                    long long ldy, int* rows, long long incr, T* d, long long incd, T* e,             \
                                    long long ince, int resident, Cell* cells, unsigned epoch) {                      \
        const Tri tri = {split, joined, off11, ld11, off21, ld21, off22, ld22, tr11, tr21, tr22};                     \
        const Trailing<T> A = {a, tri, k};                                                                            \
        aasen_panel_impl(A, n, nb, l, ldl, y, ldy, rows, incr, d, incd, e, ince, resident, cells, epoch);             \
    }

AASEN_PANEL(aasen_panel_f32, float)
AASEN_PANEL(aasen_panel_f64, double)

extern "C" __global__ void aasen_placement(const int* rows, long long incr, long long n, long long k, long long nb,
                                           int* ipiv, long long incp, int* at, int* cand, int* valid) {
    // Only rows that start at positions 0..=nb are ever displaced (a step
    // moves the row at position s + 1 <= nb to where its pivot was), and a
    // row that starts below nb moves only when chosen: the interchanges are
    // followed in shared memory through the first nb + 1 positions and rows,
    // and a list of the positions below nb that received a displaced row
    // (the last entry for a position wins).
    extern __shared__ int placement_smem[];
    const long long m = n - k;
    const int steps = (int)(nb < m - 1 ? nb : m - 1);  // the steps that chose a row
    const int top = (int)(nb < m - 1 ? nb : m - 1);      // positions and rows 0..=top followed
    int* at_s = placement_smem;         // at_s[q]: the row at position q <= top
    int* pos_s = at_s + top + 1;        // pos_s[r]: the position of row r <= top
    int* far_pos = pos_s + top + 1;     // positions > top that received a row, in order
    int* far_row = far_pos + steps;     // and that row
    int* cand_s = far_row + steps;      // 2 * steps
    int* chosen = cand_s + 2 * steps;   // steps: the rows chosen, panel-relative
    __shared__ int nfar;
    for (int q = threadIdx.x; q <= top; q += blockDim.x) at_s[q] = pos_s[q] = q;
    for (int s = threadIdx.x; s < steps; s += blockDim.x) chosen[s] = rows[s * incr] - (int)k;
    __syncthreads();
    if (threadIdx.x == 0) {
        if (k == 0) ipiv[0] = 1;
        int f = 0;
        for (int s = 0; s < steps; ++s) {
            const int q = s + 1, r = chosen[s], from = r <= top ? pos_s[r] : r;
            ipiv[(k + q) * incp] = (int)k + from + 1;
            const int displaced = at_s[q];
            at_s[q] = r;
            if (from <= top) {
                at_s[from] = displaced;
            } else {
                far_pos[f] = from, far_row[f] = displaced, ++f;
            }
            pos_s[displaced] = from;
            if (r <= top) pos_s[r] = q;
            cand_s[2 * s] = q, cand_s[2 * s + 1] = from;
        }
        nfar = f;
    }
    __syncthreads();
    // The row that ends at position c.
    auto final_at = [&](int c) {
        if (c <= top) return at_s[c];
        for (int i = nfar - 1; i >= 0; --i)
            if (far_pos[i] == c) return far_row[i];
        return c;
    };
    for (long long q = threadIdx.x; q < m; q += blockDim.x) at[q] = q <= top ? at_s[q] : (int)q;
    __syncthreads();
    for (int i = threadIdx.x; i < nfar; i += blockDim.x) {
        bool last = true;
        for (int h = i + 1; h < nfar && last; ++h) last = far_pos[h] != far_pos[i];
        if (last) at[far_pos[i]] = far_row[i];
    }
    for (int i = threadIdx.x; i < 2 * steps; i += blockDim.x) {
        const int c = cand_s[i];
        bool first = final_at(c) != c;
        for (int h = 0; h < i && first; ++h) first = cand_s[h] != c;
        cand[i] = c;
        valid[i] = first;
    }
}

// The entries a moved row takes with it: of L left of the panel (c < k),
// and of the trailing matrix (c >= k + nb, q >= nb).
template <typename T>
__device__ void aasen_move(T* a, const Tri& tri, long long n, long long k, long long nb, const int* at,
                           const int* cand, const int* valid, T* left, T* trailing, bool gather) {
    const long long i = blockIdx.y;
    if (!valid[i]) return;
    const long long q = cand[i], m = n - k, row = k + at[q];
    for (long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x; c < n; c += (long long)gridDim.x * blockDim.x) {
        if (c < k) {
            T* to = a + locate(tri, k + q, c);
            if (gather) {
                left[i * k + c] = a[locate(tri, row, c)];
            } else {
                *to = left[i * k + c];
            }
        } else if (q >= nb && c - k >= nb) {
            const long long cc = c - k;
            if (gather) {
                const long long col = k + at[cc];
                trailing[i * m + cc] = a[row >= col ? locate(tri, row, col) : locate(tri, col, row)];
            } else {
                const long long r2 = k + q;
                a[r2 >= c ? locate(tri, r2, c) : locate(tri, c, r2)] = trailing[i * m + cc];
            }
        }
    }
}

#define AASEN_MOVE(NAME, T, GATHER)                                                                                   \
    extern "C" __global__ void NAME(T* a, long long n, long long k, long long nb, long long split, int joined,        \
                                    long long off11, long long ld11, int tr11, long long off21, long long ld21,       \
                                    int tr21, long long off22, long long ld22, int tr22, const int* at,              \
                                    const int* cand, const int* valid, T* left, T* trailing) {                       \
        const Tri tri = {split, joined, off11, ld11, off21, ld21, off22, ld22, tr11, tr21, tr22};                     \
        aasen_move(a, tri, n, k, nb, at, cand, valid, left, trailing, GATHER);                                       \
    }

AASEN_MOVE(aasen_gather_f32, float, true)
AASEN_MOVE(aasen_gather_f64, double, true)
AASEN_MOVE(aasen_scatter_f32, float, false)
AASEN_MOVE(aasen_scatter_f64, double, false)

template <typename T>
__device__ void aasen_place_impl(T* a, const Tri& tri, long long n, long long k, long long nb, const int* at,
                                 const T* l, long long ldl, const T* y, long long ldy, const T* d, long long incd,
                                 T* x, long long ldx, T* yx, long long ldyx) {
    const long long m = n - k;
    for (long long t = blockIdx.y; t < nb + 2; t += gridDim.y)
        for (long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x; q < m;
             q += (long long)gridDim.x * blockDim.x) {
            const long long from = at[q];
            if (t < nb && t < q) a[locate(tri, k + q, k + t)] = l[from + (t + 1) * ldl];
            if (t == 0 && q < nb) a[locate(tri, k + q, k + q)] = d[(k + q) * incd];
            if (q >= nb) {
                x[(q - nb) + t * ldx] = l[from + t * ldl];
                if (t < nb + 1) yx[(q - nb) + t * ldyx] = y[from + t * ldy];
            }
        }
}

#define AASEN_PLACE(NAME, T)                                                                                          \
    extern "C" __global__ void NAME(T* a, long long n, long long k, long long nb, long long split, int joined,        \
                                    long long off11, long long ld11, int tr11, long long off21, long long ld21,       \
                                    int tr21, long long off22, long long ld22, int tr22, const int* at, const T* l,  \
                                    long long ldl, const T* y, long long ldy, const T* d, long long incd, T* x,       \
                                    long long ldx, T* yx, long long ldyx) {                                           \
        const Tri tri = {split, joined, off11, ld11, off21, ld21, off22, ld22, tr11, tr21, tr22};                     \
        aasen_place_impl(a, tri, n, k, nb, at, l, ldl, y, ldy, d, incd, x, ldx, yx, ldyx);                           \
    }

AASEN_PLACE(aasen_place_f32, float)
AASEN_PLACE(aasen_place_f64, double)
