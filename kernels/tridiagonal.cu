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
