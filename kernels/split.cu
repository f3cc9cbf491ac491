// Splitting FP64 data into TF32 pairs for single-precision products on
// tensor cores ("3xTF32"): v ≈ hi + lo with hi and lo TF32 numbers (10
// stored mantissa bits, kept in f32 with the low 13 bits zero, which the
// tensor cores then take exactly). |v − hi − lo| ≤ 2⁻²²·|v|, and
// x·y ≈ hi_x·hi_y + hi_x·lo_y + lo_x·hi_y drops only lo_x·lo_y (≤ 2⁻²²·|xy|):
// three TF32 products with FP32 accumulation give about single precision.
//
// Launch contract: blockDim = (256, 1, 1); grid = (any, cols): block column
// blockIdx.y is panel column j, threads stride over the rows.

#define BLOCK 256

// Nearest TF32, ties away from zero (as cvt.rna.tf32.f32), for finite v.
__device__ __forceinline__ float to_tf32(float v) {
    return __uint_as_float((__float_as_uint(v) + 0x1000u) & 0xffffe000u);
}

// For v = a(i, j)·d_j of the rows x cols panel a (leading dimension lda) and
// d (stride incd), writes the four sections of w (leading dimension ldw,
// cols columns each): [lo | hi | hi | lo]. Then w[:, cols:4cols]·w[:, 0:3cols]ᵀ
// = hi·loᵀ + hi·hiᵀ + lo·hiᵀ is one GEMM of depth 3·cols.
extern "C" __global__ void split_tf32_f64(const double* __restrict__ a, long long lda, const double* __restrict__ d,
                                          long long incd, long long rows, long long cols, float* __restrict__ w,
                                          long long ldw) {
    const long long j = blockIdx.y;
    const double dj = d[j * incd];
    const double* col = a + j * lda;
    for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < rows; i += (long long)gridDim.x * BLOCK) {
        const double v = col[i] * dj;
        const float hi = to_tf32((float)v);
        const float lo = to_tf32((float)(v - (double)hi));
        w[i + j * ldw] = lo;
        w[i + (cols + j) * ldw] = hi;
        w[i + (2 * cols + j) * ldw] = hi;
        w[i + (3 * cols + j) * ldw] = lo;
    }
}

// The same in IEEE half precision ("3xFP16", twice the tensor-core rate of
// TF32 on an H100), which has the same 10 stored mantissa bits but a range
// of only 2⁻²⁴ … 65504: each row i of A·D is first scaled by a power of two
// s_i that puts its largest entry in [2¹⁴, 2¹⁵), so that hi never
// overflows and lo (2⁻¹¹ below) stays normal for entries within 2⁻¹⁴ of the
// row's largest. G is then s_i·s_j·(A·D²·Aᵀ)_ij, accumulated in FP32 (at
// most k·2³⁰), and unscale_symmetrize takes the scales out exactly.

// Round to nearest in half precision, as bits (no header needed).
__device__ __forceinline__ unsigned short to_half(float v) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    return h;
}

__device__ __forceinline__ float from_half(unsigned short h) {
    float v;
    asm("cvt.f32.f16 %0, %1;" : "=f"(v) : "h"(h));
    return v;
}

// part[c·rows + i] = max over chunk c's columns j of |a(i, j)·d_j|.
// Grid = (ceil(rows / 256), chunks); chunk c takes columns [c·cols, (c+1)·cols).
extern "C" __global__ void row_max_f64(const double* __restrict__ a, long long lda, const double* __restrict__ d,
                                       long long incd, long long rows, long long n, long long cols,
                                       double* __restrict__ part) {
    const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
    if (i >= rows) return;
    const long long j0 = (long long)blockIdx.y * cols, j1 = min(n, j0 + cols);
    double m = 0.0;
    for (long long j = j0; j < j1; ++j) m = fmax(m, fabs(a[i + j * lda] * d[j * incd]));
    part[blockIdx.y * rows + i] = m;
}

// scale[i] = 2^(14 − e) for the largest |a(i, j)·d_j| = 2^e·f, 1 ≤ f < 2
// (1 for a zero row). Grid = ceil(rows / 256).
extern "C" __global__ void row_scale_f64(const double* __restrict__ part, long long rows, long long chunks,
                                         double* __restrict__ scale) {
    const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
    if (i >= rows) return;
    double m = 0.0;
    for (long long c = 0; c < chunks; ++c) m = fmax(m, part[c * rows + i]);
    scale[i] = m > 0.0 ? ldexp(1.0, 14 - ilogb(m)) : 1.0;
}

// As split_tf32_f64, in half precision, of s_i·a(i, j)·d_j.
extern "C" __global__ void split_f16_f64(const double* __restrict__ a, long long lda, const double* __restrict__ d,
                                         long long incd, const double* __restrict__ scale, long long rows,
                                         long long cols, unsigned short* __restrict__ w, long long ldw) {
    const long long j = blockIdx.y;
    const double dj = d[j * incd];
    const double* col = a + j * lda;
    for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < rows; i += (long long)gridDim.x * BLOCK) {
        const double v = col[i] * dj * scale[i];
        const unsigned short hi = to_half((float)v);
        const unsigned short lo = to_half((float)(v - (double)from_half(hi)));
        w[i + j * ldw] = lo;
        w[i + (cols + j) * ldw] = hi;
        w[i + (2 * cols + j) * ldw] = hi;
        w[i + (3 * cols + j) * ldw] = lo;
    }
}

// c(i, j) := c(i, j) / (s_i·s_j) on the lower triangle (exact: powers of
// two), mirrored onto the upper one. Grid = (any, any): blocks stride over
// the rows, blockIdx.y over the columns.
extern "C" __global__ void unscale_symmetrize_f32(float* __restrict__ c, long long ldc, long long n,
                                                  const double* __restrict__ scale) {
    for (long long j = blockIdx.y; j < n; j += gridDim.y) {
        const double sj = scale[j];
        for (long long i = j + (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += (long long)gridDim.x * BLOCK) {
            const float v = (float)((double)c[i + j * ldc] / (scale[i] * sj));
            c[i + j * ldc] = v;
            c[j + i * ldc] = v;
        }
    }
}
