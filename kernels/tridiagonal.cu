#include "cluster.cuh"

// Batched tridiagonal solves: one thread per system (with or without
// pivoting), and without pivoting the partition kernel below, whose threads
// share each system.
//
// One thread per system: each system is a sequence of m dependent steps,
// and a large batch fills the device with independent ones (Thomas 1949;
// with partial pivoting, LAPACK's dgtsv).
//
// tridiagonal_{f32,f64}(dl, ldl, d, ldd, du, ldu, b, ldb, m, count, rows,
// pivoting, info): system s has entry i at [i + s*ld] (rows = 0: one
// system per column) or at [s + i*ld] (rows = 1: one per row, the layout in
// which a warp's loads are contiguous), each array with its own ld.
// dl[0] and du[m-1] are not read. dl, d, du are overwritten by the
// elimination, b by the solution. info[s]: 0; k > 0 when the pivot of row
// k - 1 is zero or not finite (the system's b is then NaN); -k when the
// elimination went through but x(k - 1) is not finite.

template <typename T>
__device__ void tridiagonal(T* dl, long long ldl, T* d, long long ldd, T* du, long long ldu, T* b, long long ldb,
                            long long m, long long count, int rows, int pivoting, int* info) {
    const long long s = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= count || m <= 0) return;
    const auto at = [&](T* p, long long ld, long long i) -> T& { return rows ? p[s + i * ld] : p[i + s * ld]; };
    const auto bad = [](T x) { return x == T(0) || !isfinite(x); };
    long long fail = 0;
    for (long long i = 0; i + 1 < m; ++i) {
        const T sub = at(dl, ldl, i + 1);
        if (pivoting && fabs(sub) > fabs(at(d, ldd, i))) {
            // Rows i and i + 1 exchange: the pivot is the subdiagonal entry,
            // and U gains a second superdiagonal entry, kept in dl[i + 1].
            if (bad(sub)) {
                fail = i + 1;
                break;
            }
            const T f = at(d, ldd, i) / sub;
            const T di1 = at(d, ldd, i + 1), dui = at(du, ldu, i);
            at(d, ldd, i) = sub;
            at(du, ldu, i) = di1;
            at(d, ldd, i + 1) = dui - f * di1;
            if (i + 2 < m) {
                const T dui1 = at(du, ldu, i + 1);
                at(dl, ldl, i + 1) = dui1;
                at(du, ldu, i + 1) = -f * dui1;
            } else {
                at(dl, ldl, i + 1) = T(0);
            }
            const T bi = at(b, ldb, i);
            at(b, ldb, i) = at(b, ldb, i + 1);
            at(b, ldb, i + 1) = bi - f * at(b, ldb, i + 1);
        } else {
            const T piv = at(d, ldd, i);
            if (bad(piv)) {
                fail = i + 1;
                break;
            }
            const T f = sub / piv;
            at(dl, ldl, i + 1) = T(0);
            at(d, ldd, i + 1) -= f * at(du, ldu, i);
            at(b, ldb, i + 1) -= f * at(b, ldb, i);
        }
    }
    if (fail == 0 && bad(at(d, ldd, m - 1))) fail = m;
    if (fail != 0) {
        for (long long i = 0; i < m; ++i) at(b, ldb, i) = T(__longlong_as_double(0x7ff8000000000000LL));
        info[s] = (int)fail;
        return;
    }
    // Back substitution with U: d on its diagonal, du above, the second
    // superdiagonal in dl shifted by one (zero where rows kept their place).
    long long nonfinite = 0;
    for (long long i = m - 1; i >= 0; --i) {
        T x = at(b, ldb, i);
        if (i + 1 < m) x -= at(du, ldu, i) * at(b, ldb, i + 1);
        if (i + 2 < m) x -= at(dl, ldl, i + 1) * at(b, ldb, i + 2);
        x /= at(d, ldd, i);
        at(b, ldb, i) = x;
        if (!isfinite(x)) nonfinite = i + 1;
    }
    info[s] = nonfinite != 0 ? -(int)nonfinite : 0;
}

#define ENTRY(name, T)                                                                                         \
    extern "C" __global__ void name(T* dl, long long ldl, T* d, long long ldd, T* du, long long ldu, T* b,   \
                                    long long ldb, long long m, long long count, int rows, int pivoting,     \
                                    int* info) {                                                             \
        tridiagonal(dl, ldl, d, ldd, du, ldu, b, ldb, m, count, rows, pivoting, info);                       \
    }
ENTRY(tridiagonal_f32, float)
ENTRY(tridiagonal_f64, double)

// tridiagonal_partition_{f32,f64}(dl, ldl, d, ldd, du, ldu, b, ldb, m, count,
//                                 rows, L, S, G, info):
// the solve without pivoting by the partition method (Wang 1981; on GPUs,
// the Thomas/PCR hybrid of László, Giles and Appleyard 2016) with every
// entry read once from memory and written once: a system's rows are staged
// in shared memory, split into chunks of L >= 2 rows, a thread each, and
// the chunks' last unknowns y solved for by two levels of reduction.
//
// Launch: blockDim.x = S·K threads, K >= 2 a chunk each of one of S
// systems (S, K and L powers of two); a system spans the G blocks of one
// cluster (gridDim.x = ceil(count/S)·G; G = 1 without a cluster launch),
// block g holding its rows [g·K·L, (g+1)·K·L); dynamic shared memory:
// (4·(K·L + K) + 6·K)·S values. Rows past m are identity rows (their x is
// zero), which leave the system as it was. Only b is written.
//
// Chunk: rows 0 .. L-2 in terms of the unknowns around them, the previous
// chunk's last x (xl) and its own last (xr): x(i) = P(i) + Q(i) xl + R(i) xr,
// by Thomas with three right-hand sides. Its last row, with its
// neighbours replaced by those expressions, is one equation in y(k-1),
// y(k), y(k+1): K equations per block. Block: the same split one level up,
// equations 0 .. K-2 in terms of the previous block's last y (z(g-1)) and
// its own (z(g)), by cyclic reduction with three right-hand sides (Hockney
// 1965); the last gives one equation per block in z, G in all, solved by
// Thomas in every block of the cluster. Without pivoting this is stable for
// diagonally dominant and for symmetric positive definite matrices, whose
// reduced systems (Schur complements) are again so.
//
// info[s]: 0; k > 0 when a pivot of row k - 1 (or of a reduced equation no
// later than row k - 1) is zero or not finite (x is then NaN); -k when x(k -
// 1) is not finite.

#define PARTITION_MAX_SYSTEMS 32
#define PARTITION_MAX_BLOCKS 8
#define PARTITION_LOADS 4

// What block `rank` of the cluster holds where `p` points in block `self`'s
// shared memory.
template <typename V>
__device__ __forceinline__ V cluster_peek(const V* p, int rank, int self) {
#if __CUDA_ARCH__ >= 900
    if (rank != self) return cluster_load(p, (unsigned)rank);
#endif
    return *p;
}

// What a block's threads of one system share besides its rows: its
// equation in z, read by the other blocks of the cluster; the z around it;
// the first failing row and the first row whose x is not finite (m + 1 for
// none) as the block found them, and as the cluster did.
template <typename T>
struct PartitionSystem {
    T za, zb, zc, zf;
    T z_prev, z_own;
    long long fail, nonfinite, failed;
};

template <typename T>
__device__ void tridiagonal_partition(T* dl, long long ldl, T* d, long long ldd, T* du, long long ldu, T* b,
                                      long long ldb, long long m, long long count, int rows, int L, int S, int G,
                                      int* info) {
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ PartitionSystem<T> sys[PARTITION_MAX_SYSTEMS];
    const int K = blockDim.x / S, t = threadIdx.x, j = t / K, k = t & (K - 1), n = K - 1, me = t;
    const int g = (int)(blockIdx.x % G);
    const long long s0 = (long long)(blockIdx.x / G) * S;
    const int R = K * L, P = R + K;  // rows per system and block; a gap after each chunk
    const long long r0 = (long long)g * R;
    T* sa = reinterpret_cast<T*>(smem);  // dl, then Q
    T* sb = sa + S * P;                  // d
    T* sc = sb + S * P;                  // du, then R
    T* sf = sc + S * P;                  // b, then P, then x
    T* ra = sf + S * P;                  // the chunks' equations, one per thread
    T* rb = ra + S * K;
    T* rc = rb + S * K;
    T* rp = rc + S * K;  // right-hand sides: b, then P2 ...
    T* rq = rp + S * K;  // ... the coupling to z(g-1), then Q2 ...
    T* rr = rq + S * K;  // ... the coupling to z(g), then R2
    T* ys = ra;          // y, once cyclic reduction is done with ra
    PartitionSystem<T>& my = sys[j];
    const auto bad = [](T x) { return x == T(0) || !isfinite(x); };
    const auto at = [&](long long sy, long long i, long long ld) { return rows ? sy + i * ld : i + sy * ld; };
    // S, K and L are powers of two: entry e of the staged rows is row
    // e % R of system e / R (columns) or row e / S of system e % S (rows).
    const int lg_l = __ffs(L) - 1, lg_r = __ffs(R) - 1, lg_s = __ffs(S) - 1;
    const auto system_of = [&](int e) { return rows ? e & (S - 1) : e >> lg_r; };
    const auto row_of = [&](int e) { return rows ? e >> lg_s : e & (R - 1); };
    const auto place = [&](int jj, int r) { return jj * P + r + (r >> lg_l); };
    const auto barrier = [&]() {  // across the cluster
#if __CUDA_ARCH__ >= 900
        if (G > 1) {
            cluster_barrier();
            return;
        }
#endif
        __syncthreads();
    };
    if (k == 0) my.fail = my.nonfinite = m + 1;
    // Stage the rows, consecutive threads on consecutive addresses, with
    // PARTITION_LOADS rows' loads of a thread in flight at once.
    for (int e0 = t; e0 < S * R; e0 += PARTITION_LOADS * blockDim.x) {
        T va[PARTITION_LOADS], vb[PARTITION_LOADS], vc[PARTITION_LOADS], vf[PARTITION_LOADS];
#pragma unroll
        for (int u = 0; u < PARTITION_LOADS; ++u) {
            const int e = e0 + u * blockDim.x;
            const int jj = system_of(e), r = row_of(e);
            const long long sy = s0 + jj, i = r0 + r;
            const bool live = e < S * R && sy < count && i < m;
            va[u] = live && i > 0 ? dl[at(sy, i, ldl)] : T(0);
            vb[u] = live ? d[at(sy, i, ldd)] : T(1);
            vc[u] = live && i + 1 < m ? du[at(sy, i, ldu)] : T(0);
            vf[u] = live ? b[at(sy, i, ldb)] : T(0);
        }
#pragma unroll
        for (int u = 0; u < PARTITION_LOADS; ++u) {
            const int e = e0 + u * blockDim.x;
            if (e >= S * R) break;
            const int w = place(system_of(e), row_of(e));
            sa[w] = va[u], sb[w] = vb[u], sc[w] = vc[u], sf[w] = vf[u];
        }
    }
    __syncthreads();
    // Chunk k: rows 0 .. L-2 eliminated forward with three right-hand sides
    // (b; -a(0) e(0) for xl; -c(L-2) e(L-2) for xr), then substituted back,
    // leaving x(i) = P(i) + Q(i) xl + R(i) xr: P in sf, Q in sa, R in sc.
    const int c0 = place(j, k * L);
    const long long row0 = r0 + (long long)k * L;  // the chunk's first row
    long long fail = m + 1;
    T cp = T(0), pp = T(0), qq = T(1);
    for (int i = 0; i + 1 < L; ++i) {
        const T a = sa[c0 + i], den = sb[c0 + i] - a * cp;
        if (bad(den) && fail > m) fail = row0 + i + 1;
        const T inv = T(1) / den;
        cp = sc[c0 + i] * inv;
        pp = (sf[c0 + i] - a * pp) * inv;
        qq = -a * qq * inv;
        sc[c0 + i] = cp;
        sf[c0 + i] = pp;
        sa[c0 + i] = qq;
    }
    const T pl = pp, ql = qq, rl = -cp;  // row L - 2's
    T rx = rl;
    sc[c0 + L - 2] = rl;
    for (int i = L - 3; i >= 0; --i) {
        const T ci = sc[c0 + i];
        pp = sf[c0 + i] - ci * pp;
        qq = sa[c0 + i] - ci * qq;
        rx = -ci * rx;
        sf[c0 + i] = pp;
        sa[c0 + i] = qq;
        sc[c0 + i] = rx;
    }
    const T la = sa[c0 + L - 1], lb = sb[c0 + L - 1], lc = sc[c0 + L - 1], lf = sf[c0 + L - 1];
    if (fail <= m) atomicMin(&my.fail, fail);
    barrier();
    // The chunk's last row, x(L-2) and the next chunk's first x replaced:
    // one equation in y(k-1), y(k), y(k+1).
    T np = T(0), nq = T(0), nr = T(0);
    if (k + 1 < K || g + 1 < G) {
        const int n0 = k + 1 < K ? c0 + L + 1 : place(j, 0), h = k + 1 < K ? g : g + 1;
        np = cluster_peek(&sf[n0], h, g), nq = cluster_peek(&sa[n0], h, g), nr = cluster_peek(&sc[n0], h, g);
    }
    const T ea = la * ql, eb = lb + la * rl + lc * nq, ec = lc * nr, ef = lf - la * pl - lc * np;
    // Equations 0 .. n-1 by cyclic reduction, y(-1) = z(g-1) and y(n) = z(g)
    // moved to the right.
    ra[me] = k < n && k > 0 ? ea : T(0);
    rb[me] = k < n ? eb : T(1);
    rc[me] = k + 1 < n ? ec : T(0);
    rp[me] = k < n ? ef : T(0);
    rq[me] = k == 0 ? -ea : T(0);
    rr[me] = k + 1 == n ? -ec : T(0);
    __syncthreads();
    for (int stride = 1; stride < n; stride *= 2) {
        T na = T(0), nb = T(1), nc = T(0), n1 = T(0), n2 = T(0), n3 = T(0);
        if (k < n) {
            const bool up = k >= stride, down = k + stride < n;
            const int lo = up ? me - stride : me, hi = down ? me + stride : me;
            const T k1 = up ? ra[me] / rb[lo] : T(0), k2 = down ? rc[me] / rb[hi] : T(0);
            na = up ? -ra[lo] * k1 : T(0);
            nc = down ? -rc[hi] * k2 : T(0);
            nb = rb[me] - k1 * rc[lo] - k2 * ra[hi];
            n1 = rp[me] - k1 * rp[lo] - k2 * rp[hi];
            n2 = rq[me] - k1 * rq[lo] - k2 * rq[hi];
            n3 = rr[me] - k1 * rr[lo] - k2 * rr[hi];
        }
        __syncthreads();
        ra[me] = na, rb[me] = nb, rc[me] = nc, rp[me] = n1, rq[me] = n2, rr[me] = n3;
        __syncthreads();
    }
    if (k < n) {
        const T piv = rb[me];
        if (bad(piv)) atomicMin(&my.fail, min(row0 + L, m));
        rp[me] /= piv, rq[me] /= piv, rr[me] /= piv;  // y(k) = P2 + Q2 z(g-1) + R2 z(g)
    }
    barrier();
    // Block g's last equation, y(n-1) and the next block's y(0) replaced:
    // one equation in z(g-1), z(g), z(g+1).
    if (k == n) {
        const T p2 = rp[me - 1], q2 = rq[me - 1], r2 = rr[me - 1];
        T p3 = T(0), q3 = T(0), r3 = T(0);
        if (g + 1 < G) {
            const int n0 = j * K;
            p3 = cluster_peek(&rp[n0], g + 1, g), q3 = cluster_peek(&rq[n0], g + 1, g);
            r3 = cluster_peek(&rr[n0], g + 1, g);
        }
        my.za = ea * q2;
        my.zb = eb + ea * r2 + ec * q3;
        my.zc = ec * r3;
        my.zf = ef - ea * p2 - ec * p3;
    }
    barrier();
    // Every block solves the cluster's G equations in z by Thomas, and
    // learns the first failure in any block.
    if (k == 0) {
        long long first = m + 1;
        T cs[PARTITION_MAX_BLOCKS], fs[PARTITION_MAX_BLOCKS];
        T cprev = T(0), fprev = T(0);
        for (int h = 0; h < G; ++h) {
            const T za = cluster_peek(&my.za, h, g), zb = cluster_peek(&my.zb, h, g);
            const T zc = cluster_peek(&my.zc, h, g), zf = cluster_peek(&my.zf, h, g);
            first = min(first, cluster_peek(&my.fail, h, g));
            const T den = zb - za * cprev;
            if (bad(den)) first = min(first, min((long long)(h + 1) * R, m));
            cprev = zc / den;
            fprev = (zf - za * fprev) / den;
            cs[h] = cprev, fs[h] = fprev;
        }
        T z = fs[G - 1], z_own = T(0), z_prev = T(0);
        for (int h = G - 1; h >= 0; --h) {
            if (h < G - 1) z = fs[h] - cs[h] * z;
            if (h == g) z_own = z;
            if (h == g - 1) z_prev = z;
        }
        my.z_own = z_own, my.z_prev = z_prev, my.failed = first;
    }
    __syncthreads();
    const bool failed = my.failed <= m;
    const T y = k < n ? rp[me] + rq[me] * my.z_prev + rr[me] * my.z_own : my.z_own;
    ys[me] = y;
    __syncthreads();
    const T yl = k > 0 ? ys[me - 1] : my.z_prev;
    long long nonfinite = m + 1;
    for (int i = 0; i < L; ++i) {
        T x = i + 1 < L ? sf[c0 + i] + sa[c0 + i] * yl + sc[c0 + i] * y : y;
        if (failed) x = T(__longlong_as_double(0x7ff8000000000000LL));
        sf[c0 + i] = x;
        if (!isfinite(x) && row0 + i < m && nonfinite > m) nonfinite = row0 + i + 1;
    }
    if (nonfinite <= m) atomicMin(&my.nonfinite, nonfinite);
    __syncthreads();
    for (int e = t; e < S * R; e += blockDim.x) {
        const int jj = system_of(e), r = row_of(e);
        const long long sy = s0 + jj, i = r0 + r;
        if (sy < count && i < m) b[at(sy, i, ldb)] = sf[place(jj, r)];
    }
    // The cluster's first non-finite x, gathered by block 0; no block
    // leaves while another may still read its shared memory.
    barrier();
    if (g == 0 && k == 0 && s0 + j < count) {
        long long nf = m + 1;
        for (int h = 0; h < G; ++h) nf = min(nf, cluster_peek(&my.nonfinite, h, g));
        info[s0 + j] = failed ? (int)my.failed : nf <= m ? -(int)nf : 0;
    }
    if (G > 1) barrier();
}

#define PARTITION(name, T)                                                                                    \
    extern "C" __global__ void name(T* dl, long long ldl, T* d, long long ldd, T* du, long long ldu, T* b,  \
                                    long long ldb, long long m, long long count, int rows, int L, int S,     \
                                    int G, int* info) {                                                      \
        tridiagonal_partition(dl, ldl, d, ldd, du, ldu, b, ldb, m, count, rows, L, S, G, info);              \
    }
PARTITION(tridiagonal_partition_f32, float)
PARTITION(tridiagonal_partition_f64, double)
