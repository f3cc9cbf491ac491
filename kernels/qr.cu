// Householder QR of a tall narrow panel: the panel step of blocked QR, whose
// trailing updates go to cuBLAS. Simple and correct rather than fast: one
// block walks the columns, with a block-wide reduction for every norm and
// dot product.
//
// householder_{f32,f64}(a, lda, m, k, t, ldt):
//   LAPACK's dgeqr2 then dlarft (forward, columnwise) on the m x k panel at
//   a (m >= k): R in the upper triangle, the reflectors' vectors below the
//   diagonal (unit first entries implicit), and the k x k upper triangular T
//   of Q = I - V T V^T at t (strict lower triangle zeroed).
//   dlarfg's conventions: R(j,j) = -sign(a(j,j)) * norm, tau = 0 when the
//   column is already zero below the diagonal. Norms are scaled by the
//   largest magnitude so that no square overflows.
//   Launch: one block of QR_THREADS threads (a power of two).

#define QR_THREADS 256

// Sum (op = 0) or max (op = 1) of v over the block; every thread gets it.
template <typename T>
__device__ T block_reduce(T v, int op, T* red) {
    const int tid = threadIdx.x;
    red[tid] = v;
    __syncthreads();
    for (int s = QR_THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] = op ? fmax(red[tid], red[tid + s]) : red[tid] + red[tid + s];
        __syncthreads();
    }
    const T out = red[0];
    __syncthreads();
    return out;
}

// Norm of x[0..n) (stride 1), scaled as dnrm2.
template <typename T>
__device__ T block_norm(const T* x, long long n, T* red) {
    T mx = T(0);
    for (long long i = threadIdx.x; i < n; i += QR_THREADS) mx = fmax(mx, fabs(x[i]));
    const T scale = block_reduce(mx, 1, red);
    if (scale == T(0) || !isfinite(scale)) return scale;
    T s = T(0);
    for (long long i = threadIdx.x; i < n; i += QR_THREADS) {
        const T r = x[i] / scale;
        s += r * r;
    }
    return scale * sqrt(block_reduce(s, 0, red));
}

template <typename T>
__device__ void householder_impl(T* a, long long lda, long long m, long long k, T* t, long long ldt, T* red) {
    __shared__ T coef[2];  // tau, and the divisor alpha - beta
    for (long long j = 0; j < k; ++j) {
        T* col = a + j + j * lda;  // a(j, j)
        const T xnorm = block_norm(col + 1, m - j - 1, red);
        if (threadIdx.x == 0) {
            const T alpha = col[0];
            T tau = T(0), d = T(1);
            if (xnorm != T(0)) {
                const T big = fmax(fabs(alpha), xnorm);
                const T h = big * sqrt((alpha / big) * (alpha / big) + (xnorm / big) * (xnorm / big));
                const T beta = alpha >= T(0) ? -h : h;
                d = alpha - beta;
                tau = (beta - alpha) / beta;
                col[0] = beta;
            }
            coef[0] = tau;
            coef[1] = d;
        }
        __syncthreads();
        const T tau = coef[0], d = coef[1];
        if (tau != T(0)) {
            for (long long i = j + 1 + threadIdx.x; i < m; i += QR_THREADS) a[i + j * lda] /= d;
        }
        __syncthreads();
        // Apply H_j to the rest of the panel, one column at a time.
        if (tau != T(0)) {
            for (long long c = j + 1; c < k; ++c) {
                T s = T(0);
                for (long long i = j + 1 + threadIdx.x; i < m; i += QR_THREADS) s += a[i + j * lda] * a[i + c * lda];
                const T top = a[j + c * lda];  // read before thread 0 writes it, past the barrier
                const T w = block_reduce(s, 0, red) + top;
                const T tw = tau * w;
                for (long long i = j + 1 + threadIdx.x; i < m; i += QR_THREADS) a[i + c * lda] -= tw * a[i + j * lda];
                if (threadIdx.x == 0) a[j + c * lda] -= tw;
                __syncthreads();
            }
        }
        // Column j of T: T(0..j, j) = -tau T(0..j, 0..j) V(:, 0..j)^T v_j.
        // w_p goes to T(p, j) first, then thread 0 multiplies by T in place
        // (top down: row p only reads rows >= p of column j).
        for (long long i = threadIdx.x; i < k; i += QR_THREADS)
            if (i > j) t[i + j * ldt] = T(0);
        for (long long p = 0; p < j; ++p) {
            T s = T(0);
            if (tau != T(0))
                for (long long i = j + 1 + threadIdx.x; i < m; i += QR_THREADS) s += a[i + p * lda] * a[i + j * lda];
            const T w = block_reduce(s, 0, red);
            if (threadIdx.x == 0) t[p + j * ldt] = tau != T(0) ? w + a[j + p * lda] : T(0);
        }
        if (threadIdx.x == 0) {
            for (long long p = 0; p < j; ++p) {
                T s = T(0);
                for (long long q = p; q < j; ++q) s += t[p + q * ldt] * t[q + j * ldt];
                t[p + j * ldt] = -tau * s;
            }
            t[j + j * ldt] = tau;
        }
        __syncthreads();
    }
}

extern "C" __global__ void householder_f32(float* a, long long lda, long long m, long long k, float* t, long long ldt) {
    __shared__ float red[QR_THREADS];
    householder_impl(a, lda, m, k, t, ldt, red);
}

extern "C" __global__ void householder_f64(double* a, long long lda, long long m, long long k, double* t,
                                           long long ldt) {
    __shared__ double red[QR_THREADS];
    householder_impl(a, lda, m, k, t, ldt, red);
}
