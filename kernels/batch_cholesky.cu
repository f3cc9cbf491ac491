// The panel step of the blocked Cholesky on every member of a batch of
// small matrices at once: one thread block per member (blockIdx.x), its
// panel in shared memory. Members are `stride` entries apart.

#include "common.cuh"

// `a` is a block column of member blockIdx.x: n rows from the member's row
// 0, nb columns, leading dimension ld. Its rows offset.. are the panel,
// factored right-looking (dpotf2 on the top nb x nb block, the rows below
// solved with it): L11·L11ᵀ = A11, L21 = A21·L11⁻ᵀ. Rows 0..offset and the
// strict upper triangle of the diagonal block are set to zero. A pivot that
// is not positive and finite records offset + j + 1 in the member's info
// (if still 0); the rest of that member's panel is then garbage.
template <typename T>
__device__ void batch_potrf_panel(T* a, long long ld, long long stride, int n, int nb, int* info,
                                  long long info_stride, int offset) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* p = reinterpret_cast<T*>(smem);  // the panel, m x nb, leading dimension m
    const long long s = blockIdx.x;
    a += s * stride;
    const int t = threadIdx.x, nt = blockDim.x, m = n - offset;
    for (int k = t; k < offset * nb; k += nt) a[(long long)(k / offset) * ld + k % offset] = T(0);
    for (int k = t; k < m * nb; k += nt) p[k] = a[(long long)(k / m) * ld + offset + k % m];
    __syncthreads();
    // For the update, threads as rows x column groups (as the LU panel).
    int rows_per = WARP;
    while (rows_per < m && rows_per < nt) rows_per *= 2;
    const int groups = nt / rows_per, r0 = t % rows_per, g = t / rows_per;
    int failed = 0;
    for (int j = 0; j < nb; ++j) {
        T* col = p + (long long)j * m;
        const T d = col[j];
        if (!(d > T(0) && is_finite(d)) && failed == 0) failed = j + 1;
        const T ljj = sqrt(d);
        __syncthreads();  // every thread has read the pivot before it is overwritten
        for (int i = j + t; i < m; i += nt) col[i] = i == j ? ljj : col[i] / ljj;
        __syncthreads();
        for (int i = j + 1 + r0; i < m; i += rows_per) {
            const T lij = col[i];
            const int last = i < nb ? i : nb - 1;
            for (int c = j + 1 + g; c <= last; c += groups) p[i + (long long)c * m] -= lij * col[c];
        }
        __syncthreads();
    }
    for (int k = t; k < m * nb; k += nt) {
        const int i = k % m, j = k / m;
        a[(long long)j * ld + offset + i] = i < j ? T(0) : p[k];
    }
    if (t == 0 && failed != 0 && info[s * info_stride] == 0) info[s * info_stride] = offset + failed;
}

// batch_potrf_panel for panels of at most 32 rows and NB ≥ nb columns: a
// warp per member (blockIdx.x·warps + warp < count), lane i holding row
// offset + i of the block column in registers; loops over columns unrolled
// to NB with a guard, so that `row` stays in registers.
template <typename T, int NB>
__device__ void batch_potrf_warp(T* a, long long ld, long long stride, int n, int nb, int* info, long long info_stride,
                                 int offset, long long count) {
    const int lane = threadIdx.x % WARP, m = n - offset;
    const long long s = (long long)blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
    if (s >= count) return;  // the whole warp
    a += s * stride;
    for (int k = lane; k < offset * nb; k += WARP) a[(long long)(k / offset) * ld + k % offset] = T(0);
    T row[NB];
#pragma unroll
    for (int c = 0; c < NB; ++c) row[c] = c < nb && lane < m ? a[offset + lane + c * ld] : T(0);
    int failed = 0;
#pragma unroll
    for (int j = 0; j < NB; ++j) {
        if (j < nb) {
            const T d = __shfl_sync(0xffffffffu, row[j], j);
            if (!(d > T(0) && is_finite(d)) && failed == 0) failed = j + 1;
            const T ljj = sqrt(d);
            if (lane == j) row[j] = ljj;
            if (lane > j) row[j] /= ljj;
#pragma unroll
            for (int c = j + 1; c < NB; ++c) {
                const T lcj = __shfl_sync(0xffffffffu, row[j], c);
                if (lane >= c) row[c] -= row[j] * lcj;
            }
        }
    }
#pragma unroll
    for (int c = 0; c < NB; ++c)
        if (c < nb && lane < m) a[offset + lane + c * ld] = lane < c ? T(0) : row[c];
    if (lane == 0 && failed != 0 && info[s * info_stride] == 0) info[s * info_stride] = offset + failed;
}

#define WARP_ENTRY(T, NB)                                                                                \
    extern "C" __global__ void batch_potrf_warp##NB##_##T(T* a, long long ld, long long stride, int n,    \
                                                          int nb, int* info, long long info_stride,      \
                                                          int offset, long long count) {                 \
        batch_potrf_warp<T, NB>(a, ld, stride, n, nb, info, info_stride, offset, count);                 \
    }
#define ENTRY(T)                                                                                         \
    extern "C" __global__ void batch_potrf_panel_##T(T* a, long long ld, long long stride, int n, int nb, \
                                                     int* info, long long info_stride, int offset) {     \
        batch_potrf_panel(a, ld, stride, n, nb, info, info_stride, offset);                              \
    }                                                                                                    \
    WARP_ENTRY(T, 8)                                                                                     \
    WARP_ENTRY(T, 16)                                                                                    \
    WARP_ENTRY(T, 32)
typedef float f32;
typedef double f64;
ENTRY(f32)
ENTRY(f64)
