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
// potrf_leaf_{f32,f64}, same arguments, for n <= LEAF: one block of exactly
// LEAF threads (below). potrf_{f32,f64}, any n: one block of any size, no
// dynamic shared memory; right-looking in global memory with a barrier
// between steps, for direct calls on blocks larger than a leaf.

#define LEAF 64

template <typename T>
__device__ __forceinline__ T& entry(T* a, long long ld, int upper, long long i, long long j) {
    return upper ? a[j + i * ld] : a[i + j * ld];
}

__device__ __forceinline__ float inv_sqrt(float x) { return rsqrtf(x); }
__device__ __forceinline__ double inv_sqrt(double x) { return rsqrt(x); }

// Blocks of order n <= LEAF, the leaves of the blocked factorization, whose
// latency is on its critical path. Thread i holds row i of the triangle in
// registers (rows past n are the identity), and column j's raw entries are
// published in shared memory one step ahead, so a step is one barrier: every
// thread forms 1/sqrt(pivot) itself and scales on the fly, using
// L(i,j)·L(k,j) = a(i,j)·a(k,j)/d. Launch: one block of exactly LEAF threads.
template <typename T>
__device__ void potrf_leaf(T* a, long long ld, int n, int upper, int* info, long long offset) {
    __shared__ T col[2][LEAF];
    const int i = threadIdx.x;
    T r[LEAF];
#pragma unroll
    for (int k = 0; k < LEAF; ++k) r[k] = (i < n && k <= i) ? entry(a, ld, upper, i, k) : T(i == k);
    col[0][i] = r[0];
    __syncthreads();
    int done = n;  // columns factored
#pragma unroll
    for (int j = 0; j < LEAF; ++j) {
        if (j >= n) break;  // uniform
        const T* c = col[j & 1];
        const T d = c[j];
        if (!(d > T(0)) || !isfinite(d)) {  // uniform: every thread read the same pivot
            if (i == 0) atomicCAS(info, 0, (int)(offset + j + 1));
            done = j;
            break;
        }
        const T s = inv_sqrt(d);
        const T lij = r[j] * s;  // L(i, j); sqrt(d) on the diagonal
        const T t = lij * s;
        r[j] = lij;
        if (j + 1 < LEAF) {
            r[j + 1] -= t * c[j + 1];
            col[(j + 1) & 1][i] = r[j + 1];
        }
#pragma unroll
        for (int k = j + 2; k < LEAF; ++k) r[k] -= t * c[k];
        __syncthreads();
    }
    // Row i's entries past the failing column were not finished: leave them.
#pragma unroll
    for (int k = 0; k < LEAF; ++k)
        if (i < n && k <= i && k < done) entry(a, ld, upper, i, k) = r[k];
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

extern "C" __global__ void potrf_leaf_f32(float* a, long long ld, long long n, int upper, int* info, long long offset) {
    potrf_leaf(a, ld, (int)n, upper, info, offset);
}

extern "C" __global__ void potrf_leaf_f64(double* a, long long ld, long long n, int upper, int* info, long long offset) {
    potrf_leaf(a, ld, (int)n, upper, info, offset);
}

extern "C" __global__ void potrf_f32(float* a, long long ld, long long n, int upper, int* info, long long offset) {
    potrf_impl(a, ld, n, upper, info, offset);
}

extern "C" __global__ void potrf_f64(double* a, long long ld, long long n, int upper, int* info, long long offset) {
    potrf_impl(a, ld, n, upper, info, offset);
}
