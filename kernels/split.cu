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
