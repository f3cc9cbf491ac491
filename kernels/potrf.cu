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
// Launch contract: exactly one block of any size (the host uses 256 threads),
// no dynamic shared memory. Right-looking: column j is scaled, then the
// trailing triangle updated, with a barrier between steps. Blocks of order
// up to LEAF (the blocked algorithm's leaves) are factored in shared memory:
// one read and one write of the triangle instead of n passes over it.

#define LEAF 64

template <typename T>
__device__ __forceinline__ T& entry(T* a, long long ld, int upper, long long i, long long j) {
    return upper ? a[j + i * ld] : a[i + j * ld];
}

// The same steps on a copy in shared memory: s[j][i] holds A(i, j), i >= j
// (column-major in s, so a warp's consecutive i hit consecutive banks).
template <typename T>
__device__ void potrf_leaf(T* a, long long ld, int n, int upper, int* info, long long offset) {
    __shared__ T s[LEAF][LEAF + 1];
    __shared__ int failed;
    for (int t = threadIdx.x; t < n * n; t += blockDim.x) {
        const int i = t % n, j = t / n;
        if (i >= j) s[j][i] = entry(a, ld, upper, i, j);
    }
    __syncthreads();
    for (int j = 0; j < n; ++j) {
        if (threadIdx.x == 0) {
            const T d = s[j][j];
            failed = !(d > T(0)) || !isfinite(d);
            if (failed) {
                atomicCAS(info, 0, (int)(offset + j + 1));
            } else {
                s[j][j] = sqrt(d);
            }
        }
        __syncthreads();
        if (failed) break;  // uniform; the partial factor is written back below
        const T d = s[j][j];
        for (int i = j + 1 + threadIdx.x; i < n; i += blockDim.x) s[j][i] /= d;
        __syncthreads();
        const int m = n - j - 1;
        for (int t = threadIdx.x; t < m * m; t += blockDim.x) {
            const int i = j + 1 + t % m, k = j + 1 + t / m;
            if (i >= k) s[k][i] -= s[j][i] * s[j][k];
        }
        __syncthreads();
    }
    for (int t = threadIdx.x; t < n * n; t += blockDim.x) {
        const int i = t % n, j = t / n;
        if (i >= j) entry(a, ld, upper, i, j) = s[j][i];
    }
}

template <typename T>
__device__ void potrf_impl(T* a, long long ld, long long n, int upper, int* info, long long offset) {
    if (n <= LEAF) {
        potrf_leaf(a, ld, (int)n, upper, info, offset);
        return;
    }
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

extern "C" __global__ void potrf_f32(float* a, long long ld, long long n, int upper, int* info, long long offset) {
    potrf_impl(a, ld, n, upper, info, offset);
}

extern "C" __global__ void potrf_f64(double* a, long long ld, long long n, int upper, int* info, long long offset) {
    potrf_impl(a, ld, n, upper, info, offset);
}
