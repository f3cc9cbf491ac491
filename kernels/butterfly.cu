// Random butterfly transformations of depth two (Parker 1995; Baboulin,
// Dongarra, Herrmann and Tomov 2013): A := op(U)·A·V with U and V random,
// nonsingular and cheap to apply, after which Gaussian elimination needs no
// pivoting with high probability.
//
// butterfly_{f32,f64}(a, ld, rows, cols, left_key, left, left_trans,
//                     right_key, right):
//   left != 0:  A := op(U)·A, U the butterfly of order `rows` of left_key
//               (op = transpose when left_trans != 0);
//   right != 0: A := A·V, V the butterfly of order `cols` of right_key.
//
// The butterfly W of order n is W = W2·W1 (W1 applied first). With m =
// ceil(n/4), index i = g + m·s belongs to quad g (s = 0..3; absent when
// i >= n). W1 mixes the pairs of quad members (0, 2) and (1, 3), W2 the
// pairs (0, 1) and (2, 3): a pair (p, q) of present members becomes
// y_p = (r_p x_p + r_q x_q)/√2, y_q = (r_p x_p − r_q x_q)/√2; a member
// whose partner is absent is only scaled, y_p = r_p x_p. The scales r are
// exp(u/20), u = random_uniform(key, level, i), level 0 for W1 and 1 for W2,
// the same on every backend (src/backend/butterfly.rs). Both levels act
// within quads, so W is block diagonal on them: a thread takes one quad of
// rows by one quad of columns (one index on a side not transformed),
// reads its 16 entries, and writes the 16 of op(Q_U)·X·Q_V.
//
// Launch: any 1-D grid; threads walk the (row group, column group) pairs
// in a grid-stride loop, consecutive threads taking consecutive row groups
// (consecutive rows of each quad member: coalesced).

#include "common.cuh"

// c = op(a)·b for 4 x 4 blocks, op(a) = a^T when ta.
__device__ __forceinline__ void product4(const double (&a)[4][4], bool ta, const double (&b)[4][4], double (&c)[4][4]) {
#pragma unroll
    for (int s = 0; s < 4; ++s)
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            double v = 0.0;
#pragma unroll
            for (int k = 0; k < 4; ++k) v += (ta ? a[k][s] : a[s][k]) * b[k][u];
            c[s][u] = v;
        }
}

__device__ __forceinline__ void copy4(const double (&a)[4][4], double (&b)[4][4]) {
#pragma unroll
    for (int s = 0; s < 4; ++s)
#pragma unroll
        for (int u = 0; u < 4; ++u) b[s][u] = a[s][u];
}

// Q(s, t) = W(g + m·s, g + m·t) for quad g of the butterfly of order n.
__device__ void butterfly_quad(unsigned long long key, long long n, long long g, double (&q)[4][4]) {
    const long long m = (n + 3) / 4;
    const double h = 0.70710678118654752440;
    bool present[4];
    double r[2][4];
#pragma unroll
    for (int s = 0; s < 4; ++s) {
        const long long i = g + m * s;
        present[s] = i < n;
#pragma unroll
        for (int level = 0; level < 2; ++level)
            r[level][s] = present[s] ? exp(random_uniform(key, level, i) / 20.0) : 0.0;
    }
    double w[2][4][4];
#pragma unroll
    for (int level = 0; level < 2; ++level)
#pragma unroll
        for (int s = 0; s < 4; ++s)
#pragma unroll
            for (int t = 0; t < 4; ++t) w[level][s][t] = 0.0;
    // Level 0 pairs members (0, 2), (1, 3); level 1 pairs (0, 1), (2, 3).
#pragma unroll
    for (int level = 0; level < 2; ++level)
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const int p = level == 0 ? k : 2 * k, o = level == 0 ? k + 2 : 2 * k + 1;
            const double* rl = r[level];
            if (!present[p]) continue;
            if (!present[o]) {
                w[level][p][p] = rl[p];
                continue;
            }
            w[level][p][p] = h * rl[p];
            w[level][p][o] = h * rl[o];
            w[level][o][p] = h * rl[p];
            w[level][o][o] = -h * rl[o];
        }
    product4(w[1], false, w[0], q);
}

template <typename T>
__device__ void butterfly_impl(T* a, long long ld, long long rows, long long cols, unsigned long long left_key,
                               int left, int left_trans, unsigned long long right_key, int right) {
    const long long mr = left ? (rows + 3) / 4 : rows, mc = right ? (cols + 3) / 4 : cols;
    const long long total = mr * mc;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += (long long)gridDim.x * blockDim.x) {
        const long long g = t % mr, c = t / mr;
        // The quad's rows and columns (-1: absent); one of each on a side
        // not transformed.
        long long ri[4], ci[4];
#pragma unroll
        for (int s = 0; s < 4; ++s) {
            const long long i = left ? g + mr * s : (s == 0 ? g : rows);
            const long long j = right ? c + mc * s : (s == 0 ? c : cols);
            ri[s] = i < rows ? i : -1;
            ci[s] = j < cols ? j : -1;
        }
        double x[4][4];
#pragma unroll
        for (int s = 0; s < 4; ++s)
#pragma unroll
            for (int u = 0; u < 4; ++u) x[s][u] = ri[s] >= 0 && ci[u] >= 0 ? (double)a[ri[s] + ci[u] * ld] : 0.0;
        double q[4][4], y[4][4];
        if (left) {
            butterfly_quad(left_key, rows, g, q);
            product4(q, left_trans, x, y);
            copy4(y, x);
        }
        if (right) {
            butterfly_quad(right_key, cols, c, q);
            product4(x, false, q, y);
            copy4(y, x);
        }
#pragma unroll
        for (int s = 0; s < 4; ++s)
#pragma unroll
            for (int u = 0; u < 4; ++u)
                if (ri[s] >= 0 && ci[u] >= 0) a[ri[s] + ci[u] * ld] = (T)x[s][u];
    }
}

#define GPUMAT_BUTTERFLY(T, SUFFIX)                                                                             \
    extern "C" __global__ void butterfly_##SUFFIX(T* a, long long ld, long long rows, long long cols,            \
                                                  unsigned long long left_key, int left, int left_trans,        \
                                                  unsigned long long right_key, int right) {                    \
        butterfly_impl<T>(a, ld, rows, cols, left_key, left, left_trans, right_key, right);                      \
    }

GPUMAT_BUTTERFLY(float, f32)
GPUMAT_BUTTERFLY(double, f64)
