// Batched tridiagonal solves, one thread per system: each system is a
// sequence of m dependent steps, and a large batch fills the device with
// independent ones (Thomas 1949; with partial pivoting, LAPACK's dgtsv).
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

// tridiagonal_hybrid_{f32,f64}(dl, ldl, d, ldd, du, ldu, b, ldb, m, info):
// the same solve without pivoting for one system per column, a block per
// system, for long systems (m >= 2 * blockDim.x): Thomas on each thread's
// chunk of rows and parallel cyclic reduction on the chunks' ends (the
// hybrid of László, Giles and Appleyard 2016). Thread t owns rows [s, e),
// balanced, at least two. Its forward sweep leaves every row i > s as
// x(i) + C(i) x(i+1) + A(i) x(s) = D(i); the backward sweep then writes
// each interior row as x(i) = P(i) - Q(i) x(e-1) - R(i) x(s). That leaves
// two equations per chunk, in its first and last unknowns and its
// neighbours' ends: a tridiagonal system of 2 blockDim.x unknowns, solved by
// cyclic reduction in shared memory (4 * 2 blockDim.x entries of dynamic
// shared memory). dl, du and b hold the sweeps' coefficients in between;
// d is only read. info[s]: 0; k > 0 when a pivot at or before row k - 1
// (of the chunk or of the reduced system) is zero or not finite (x is NaN);
// -k when x(k - 1) is not finite.
template <typename T>
__device__ void tridiagonal_hybrid(T* dl, long long ldl, const T* d, long long ldd, T* du, long long ldu, T* b,
                                   long long ldb, long long m, int* info) {
    extern __shared__ __align__(16) unsigned char smem[];
    const int nt = blockDim.x, t = threadIdx.x, n = 2 * nt;
    T* ra = reinterpret_cast<T*>(smem);
    T* rb = ra + n;
    T* rc = rb + n;
    T* rd = rc + n;
    __shared__ long long failed, nonfinite;
    const long long sys = blockIdx.x;
    dl += sys * ldl;
    d += sys * ldd;
    du += sys * ldu;
    b += sys * ldb;
    if (t == 0) failed = nonfinite = m + 1;
    __syncthreads();
    const long long s = t * m / nt, e = (t + 1) * m / nt;
    const auto bad = [](T x) { return x == T(0) || !isfinite(x); };
    const auto sup = [&](long long i) { return i + 1 < m ? du[i] : T(0); };
    // Forward: rows s + 1 .. e - 1 in terms of x(s).
    T a_prev = T(0), c_prev = T(0), d_prev = T(0);
    long long fail = m + 1;
    for (long long i = s + 1; i < e; ++i) {
        const T ai = dl[i], ci = sup(i);
        T den, a_new;
        if (i == s + 1) {
            den = d[i];
            a_new = ai;
        } else {
            den = d[i] - ai * c_prev;
            a_new = -ai * a_prev;
        }
        if (bad(den) && fail > m) fail = i + 1;
        const T inv = T(1) / den;
        const T dn = (i == s + 1 ? b[i] : b[i] - ai * d_prev) * inv;
        a_prev = a_new * inv;
        c_prev = ci * inv;
        d_prev = dn;
        dl[i] = a_prev;
        du[i] = c_prev;
        b[i] = d_prev;
    }
    // The last row's equation, A x(s) + x(e-1) + C x(e) = D, kept for the
    // reduced system; backward: rows e - 2 .. s + 1 in terms of x(s), x(e-1).
    const T g_a = a_prev, g_c = c_prev, g_d = d_prev;
    T p = T(0), q = T(-1), r = T(0);  // x(e-1) = 0 - (-1) x(e-1) - 0 x(s)
    for (long long i = e - 2; i > s; --i) {
        const T ci = du[i];
        p = b[i] - ci * p;
        q = -ci * q;
        r = dl[i] - ci * r;
        b[i] = p;
        du[i] = q;
        dl[i] = r;
    }
    // Row s through x(s+1) = p - q x(e-1) - r x(s): the first equation.
    const T cs = sup(s);
    ra[2 * t] = s > 0 ? dl[s] : T(0);
    rb[2 * t] = d[s] - cs * r;
    rc[2 * t] = -cs * q;
    rd[2 * t] = b[s] - cs * p;
    ra[2 * t + 1] = g_a;
    rb[2 * t + 1] = T(1);
    rc[2 * t + 1] = g_c;
    rd[2 * t + 1] = g_d;
    if (fail <= m) atomicMin(&failed, fail);
    __syncthreads();
    // Cyclic reduction: each step couples every equation to those 2·stride away.
    for (int stride = 1; stride < n; stride *= 2) {
        T na[2], nb[2], nc[2], nd[2];
        for (int h = 0; h < 2; ++h) {
            const int i = 2 * t + h, lo = i - stride, hi = i + stride;
            T ai = ra[i], bi = rb[i], ci = rc[i], di = rd[i];
            T k1 = T(0), k2 = T(0);
            if (lo >= 0) k1 = ai / rb[lo];
            if (hi < n) k2 = ci / rb[hi];
            na[h] = lo >= 0 ? -ra[lo] * k1 : T(0);
            nc[h] = hi < n ? -rc[hi] * k2 : T(0);
            nb[h] = bi - (lo >= 0 ? rc[lo] * k1 : T(0)) - (hi < n ? ra[hi] * k2 : T(0));
            nd[h] = di - (lo >= 0 ? rd[lo] * k1 : T(0)) - (hi < n ? rd[hi] * k2 : T(0));
        }
        __syncthreads();
        for (int h = 0; h < 2; ++h) {
            const int i = 2 * t + h;
            ra[i] = na[h];
            rb[i] = nb[h];
            rc[i] = nc[h];
            rd[i] = nd[h];
        }
        __syncthreads();
    }
    if (bad(rb[2 * t]) || bad(rb[2 * t + 1])) atomicMin(&failed, s + 1);
    const T xs = rd[2 * t] / rb[2 * t], xe = rd[2 * t + 1] / rb[2 * t + 1];
    __syncthreads();
    if (failed <= m) {
        for (long long i = s; i < e; ++i) b[i] = T(__longlong_as_double(0x7ff8000000000000LL));
        if (t == 0) info[sys] = (int)failed;
        return;
    }
    long long worst = m + 1;
    for (long long i = s; i < e; ++i) {
        const T x = i == s ? xs : i == e - 1 ? xe : b[i] - du[i] * xe - dl[i] * xs;
        b[i] = x;
        if (!isfinite(x) && worst > m) worst = i + 1;
    }
    if (worst <= m) atomicMin(&nonfinite, worst);
    __syncthreads();
    if (t == 0) info[sys] = nonfinite <= m ? -(int)nonfinite : 0;
}

#define HYBRID(name, T)                                                                                     \
    extern "C" __global__ void name(T* dl, long long ldl, const T* d, long long ldd, T* du, long long ldu, \
                                    T* b, long long ldb, long long m, int* info) {                          \
        tridiagonal_hybrid(dl, ldl, d, ldd, du, ldu, b, ldb, m, info);                                      \
    }
HYBRID(tridiagonal_hybrid_f32, float)
HYBRID(tridiagonal_hybrid_f64, double)
