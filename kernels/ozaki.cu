// FP64 products from exact INT8 products, the Ozaki scheme II (Ozaki,
// Uchino and Imamura 2025): the passes around cuBLAS's INT8 products. The
// host side, and the arithmetic that these kernels repeat, is
// src/backend/ozaki.rs: the same scaling exponents, residues and
// reconstruction (the Chinese remainder sum in 40-bit chunks), so that the
// CPU backend is this path's reference.
//
// A "vector" is a row of op(A) or a column of op(B): vector v of `len`
// entries has entry p at x[v*vs + p*es] (rows of a column-major A: vs = 1,
// es = lda; columns: vs = ldb, es = 1).
//
// Launch contract: blockDim = (256, 1, 1) for every kernel; grids are free
// (grid-stride loops, over rows in x and columns in y for ozaki_residues and
// ozaki_reconstruct), except ozaki_sample (one block per sampled vector).

#include "common.cuh"

#define BLOCK 256
#define MAX_MODULI 20

// 2^e for -1022 <= e <= 1023, exactly.
__device__ __forceinline__ double pow2(int e) { return __longlong_as_double((long long)(1023 + e) << 52); }

// x*2^e in steps of 2^±1000, as the host's ozaki::ldexp.
__device__ __forceinline__ double ldexp_steps(double x, int e) {
    while (e > 1000) {
        x *= pow2(1000);
        e -= 1000;
    }
    while (e < -1000) {
        x *= pow2(-1000);
        e += 1000;
    }
    return x * pow2(e);
}

// The s with norm*2^s <= radius < norm*2^(s+1), by significands; 0 for 0.
__device__ __forceinline__ int scale_exponent(double norm, double radius) {
    if (norm == 0.0) return 0;
    int en, er;
    const double fn = frexp(norm, &en);
    const double fr = frexp(radius, &er);
    return er - en - (fn > fr ? 1 : 0);
}

// rint(z) for |z| < 2^51 by two additions (round to nearest even, exact):
// the rounding instruction runs at a fraction of the FP64 rate.
__device__ __forceinline__ double round_small(double z) {
    const double magic = 6755399441055744.0;  // 1.5 * 2^52
    return __dsub_rn(__dadd_rn(z, magic), magic);
}

// The residue of the integer-valued y modulo m, near the balanced range: y -
// q*m for q = y/m rounded, exact in one fma. Integers of at most 2^51*m
// take one such step; larger ones (more than 15 moduli) a first step with
// rint that leaves an integer below 2^53.
__device__ __forceinline__ double reduce(double y, double m, double minv) {
    double z = y * minv;
    if (fabs(z) >= 0x1p51) {
        y = fma(-rint(z), m, y);
        z = y * minv;
    }
    return fma(-round_small(z), m, y);
}

// The balanced residue of the integer-valued y modulo m, in -(m/2) ..
// m-1-(m/2), as the host's ozaki::residue.
__device__ __forceinline__ int residue(double y, double m, double minv) {
    double r = reduce(y, m, minv);
    const double half = floor(0.5 * m);
    if (r > m - 1.0 - half) r -= m;
    else if (r < -half) r += m;
    return (int)r;
}

// s[v] for each of `count` vectors of `len` entries: the exponent that puts
// the vector's 2-norm at most `radius`. One warp per vector: the largest
// |entry| first, then the sum of squares of the entries scaled by the power
// of two that brings it near 1, so that no square overflows or underflows.
extern "C" __global__ void ozaki_exponents(const double* __restrict__ x, long long vs, long long es, long long count,
                                           long long len, double radius, int* __restrict__ s) {
    const int lane = threadIdx.x % WARP;
    const long long warps = (long long)gridDim.x * (BLOCK / WARP);
    for (long long v = (long long)blockIdx.x * (BLOCK / WARP) + threadIdx.x / WARP; v < count; v += warps) {
        const double* vec = x + v * vs;
        double top = 0.0;
        for (long long p = lane; p < len; p += WARP) top = fmax(top, fabs(vec[p * es]));
        top = warp_reduce(top, [](double a, double b) { return fmax(a, b); });
        top = __shfl_sync(0xffffffffu, top, 0);
        double sum = 0.0;
        if (top > 0.0) {
            const int e = scale_exponent(top, 1.0);
            for (long long p = lane; p < len; p += WARP) {
                const double y = ldexp_steps(vec[p * es], e);
                sum = fma(y, y, sum);
            }
            sum = warp_reduce(sum, [](double a, double b) { return a + b; });
            if (lane == 0) s[v] = scale_exponent(ldexp_steps(sqrt(sum), -e), radius);
        } else if (lane == 0) {
            s[v] = 0;
        }
    }
}

// ozaki_exponents for vectors whose entries lie apart while neighbouring
// vectors are adjacent (the rows of a column-major operand): a block takes
// EXP_V vectors, a lane each, so that every load of a warp reads EXP_V
// adjacent entries. The sums of squares are formed in exactly the order of
// ozaki_exponents (partial sums over the positions p = r (mod 32), then
// warp_reduce's tree), so both give the same exponents bit for bit.
#define EXP_V WARP
extern "C" __global__ void ozaki_exponents_rows(const double* __restrict__ x, long long es, long long count,
                                                long long len, double radius, int* __restrict__ s) {
    constexpr int WARPS = BLOCK / WARP, PER = WARP / WARPS;
    __shared__ double part[WARP][EXP_V + 1];
    const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
    for (long long v0 = (long long)blockIdx.x * EXP_V; v0 < count; v0 += (long long)gridDim.x * EXP_V) {
        const long long v = v0 + lane;
        const bool in = v < count;
        // Warp w takes the residues r = w, w + WARPS, ... of the positions.
        double top = 0.0;
        if (in)
            for (long long p0 = 0; p0 < len; p0 += WARP)
#pragma unroll
                for (int j = 0; j < PER; ++j) {
                    const long long p = p0 + warp + j * WARPS;
                    if (p < len) top = fmax(top, fabs(x[v + p * es]));
                }
        part[warp][lane] = top;
        __syncthreads();
        top = 0.0;
        for (int w = 0; w < WARPS; ++w) top = fmax(top, part[w][lane]);
        __syncthreads();
        const int e = top > 0.0 ? scale_exponent(top, 1.0) : 0;
        double sum[PER];
#pragma unroll
        for (int j = 0; j < PER; ++j) sum[j] = 0.0;
        if (in && top > 0.0)
            for (long long p0 = 0; p0 < len; p0 += WARP)
#pragma unroll
                for (int j = 0; j < PER; ++j) {
                    const long long p = p0 + warp + j * WARPS;
                    if (p < len) {
                        const double y = ldexp_steps(x[v + p * es], e);
                        sum[j] = fma(y, y, sum[j]);
                    }
                }
#pragma unroll
        for (int j = 0; j < PER; ++j) part[warp + j * WARPS][lane] = sum[j];
        __syncthreads();
        if (warp == 0 && in) {
            // warp_reduce's tree, on the column of this lane's vector.
            for (int h = WARP / 2; h > 0; h >>= 1)
                for (int r = 0; r < h; ++r) part[r][lane] += part[r + h][lane];
            s[v] = top > 0.0 ? scale_exponent(ldexp_steps(sqrt(part[0][lane]), -e), radius) : 0;
        }
        __syncthreads();
    }
}

// The INT8 residues of the scaled, rounded vectors, K-major for cuBLAS's
// "TN" INT8 product: w[t*plane + p + v*ldw] = residue(rint(x_v[p]*2^s[v]),
// m[t]) for p < len, and 0 for len <= p < ldw (ldw, the depth padded to 16,
// and plane are multiples of 4). By tiles of SLICE_V vectors and SLICE_P
// positions through shared memory: read along whichever of v and p is
// contiguous in x, written four bytes to a word along p.
#define SLICE_V 32
#define SLICE_P 32
extern "C" __global__ void ozaki_slice(const double* __restrict__ x, long long vs, long long es, long long count,
                                       long long len, const int* __restrict__ s, int moduli,
                                       const unsigned* __restrict__ m, signed char* __restrict__ w, long long ldw,
                                       long long plane) {
    __shared__ double y[SLICE_V][SLICE_P + 1];
    __shared__ double mod[MAX_MODULI], inv[MAX_MODULI];
    if (threadIdx.x < moduli) {
        mod[threadIdx.x] = (double)m[threadIdx.x];
        inv[threadIdx.x] = 1.0 / (double)m[threadIdx.x];
    }
    const long long tiles_v = (count + SLICE_V - 1) / SLICE_V, tiles_p = (ldw + SLICE_P - 1) / SLICE_P;
    // Along v when the vectors' entries are apart and the vectors are not.
    const bool along_v = vs == 1 && es != 1;
    for (long long tile = blockIdx.x; tile < tiles_v * tiles_p; tile += gridDim.x) {
        const long long v0 = tile / tiles_p * SLICE_V, p0 = tile % tiles_p * SLICE_P;
        __syncthreads();
        for (int e = threadIdx.x; e < SLICE_V * SLICE_P; e += BLOCK) {
            const int a = e % 32, b = e / 32;
            const int vl = along_v ? a : b, pl = along_v ? b : a;
            const long long v = v0 + vl, p = p0 + pl;
            double val = 0.0;
            if (v < count && p < len) val = rint(ldexp_steps(x[v * vs + p * es], s[v]));
            y[vl][pl] = val;
        }
        __syncthreads();
        for (int e = threadIdx.x; e < SLICE_V * SLICE_P / 4; e += BLOCK) {
            const int vl = e / (SLICE_P / 4), pl = e % (SLICE_P / 4) * 4;
            const long long v = v0 + vl, p = p0 + pl;
            if (v >= count || p >= ldw) continue;
            unsigned* out = (unsigned*)(w + p + v * ldw);
            for (int t = 0; t < moduli; ++t) {
                unsigned word = 0;
#pragma unroll
                for (int q = 0; q < 4; ++q) word |= (unsigned)(residue(y[vl][pl + q], mod[t], inv[t]) & 0xff) << (8 * q);
                out[t * plane / 4] = word;
            }
        }
    }
}

// r[i + j*ldr] = c(i, j) mod m in 0..m-1, added to the residue already
// there when `accumulate` (the segments of a deep product). Four rows per
// thread (c, r and ldc, ldr 16- and 4-byte aligned), by blockIdx.x, columns
// by blockIdx.y: no division of a flat index.
__device__ __forceinline__ unsigned char residue_of(int c, unsigned char old, double m, double minv, int accumulate) {
    double v = reduce((double)c, m, minv);
    if (v < 0.0) v += m;
    if (accumulate) {
        v += (double)old;
        if (v >= m) v -= m;
    }
    return (unsigned char)(int)v;
}

extern "C" __global__ void ozaki_residues(const int* __restrict__ c, long long ldc, long long rows, long long cols,
                                          unsigned m, unsigned char* __restrict__ r, long long ldr, int accumulate) {
    const double md = (double)m, minv = 1.0 / md;
    for (long long j = blockIdx.y; j < cols; j += gridDim.y) {
        for (long long i = 4 * ((long long)blockIdx.x * BLOCK + threadIdx.x); i < rows;
             i += 4 * (long long)gridDim.x * BLOCK) {
            const int* in = c + i + j * ldc;
            unsigned char* out = r + i + j * ldr;
            if (i + 4 <= rows) {
                const int4 x = *(const int4*)in;
                const uchar4 o = accumulate ? *(const uchar4*)out : make_uchar4(0, 0, 0, 0);
                *(uchar4*)out = make_uchar4(residue_of(x.x, o.x, md, minv, accumulate),
                                            residue_of(x.y, o.y, md, minv, accumulate),
                                            residue_of(x.z, o.z, md, minv, accumulate),
                                            residue_of(x.w, o.w, md, minv, accumulate));
            } else {
                for (long long e = 0; e < rows - i; ++e)
                    out[e] = residue_of(in[e], accumulate ? out[e] : 0, md, minv, accumulate);
            }
        }
    }
}

// Knuth's error-free sum: s = fl(a + b), s + e = a + b exactly.
__device__ __forceinline__ void two_sum(double a, double b, double& s, double& e) {
    s = a + b;
    const double bb = s - a;
    e = (a - (s - bb)) + (b - bb);
}

// The constants of a launch in shared memory: the chunks of each Z_t, of P,
// and 1/P (the host's Ozaki::constants).
#define MAX_CHUNKS 4
#define CHUNK_RADIX 1099511627776.0  // 2^40

// The integer in (-P/2, P/2) with residues r[t*plane] (each 0..m_t-1)
// modulo the first N moduli, rounded to FP64, in C chunks of 40 bits: the
// host's Ozaki::reconstruct operation for operation (fma where it takes
// mul_add, intrinsics elsewhere so that NVRTC contracts nothing).
template <int N, int C>
__device__ __forceinline__ double crt(const unsigned char* r, long long plane, const double* k) {
    double x[C];
#pragma unroll
    for (int j = 0; j < C; ++j) x[j] = 0.0;
#pragma unroll
    for (int t = 0; t < N; ++t) {
        // The byte as a double without the conversion unit: 2^52 + r - 2^52.
        const double rt = __dsub_rn(__hiloint2double(0x43300000, r[t * plane]), 4503599627370496.0);
#pragma unroll
        for (int j = 0; j < C; ++j) x[j] = fma(rt, k[t * C + j], x[j]);
    }
    const double* p = k + N * C;
    double approx = x[C - 1];
#pragma unroll
    for (int j = C - 2; j >= 0; --j) approx = __dadd_rn(__dmul_rn(approx, CHUNK_RADIX), x[j]);
    const double q = round_small(__dmul_rn(approx, p[C]));
#pragma unroll
    for (int j = 0; j < C; ++j) x[j] = fma(-q, p[j], x[j]);
#pragma unroll
    for (int j = 0; j < C - 1; ++j) {
        const double carry = round_small(__dmul_rn(x[j], 1.0 / CHUNK_RADIX));
        x[j] = fma(-carry, CHUNK_RADIX, x[j]);
        x[j + 1] = __dadd_rn(x[j + 1], carry);
    }
    double hi = __dmul_rn(x[C - 1], pow2(40 * (C - 1))), lo = 0.0;
#pragma unroll
    for (int j = C - 2; j >= 0; --j) {
        double sum, err;
        two_sum(hi, __dmul_rn(x[j], pow2(40 * j)), sum, err);
        two_sum(sum, __dadd_rn(lo, err), hi, lo);
    }
    return __dadd_rn(hi, lo);
}

// C := alpha*2^-(s_i+t_j)*X + beta*C on all of C (part 0), its lower (1) or
// upper (2) triangle, X(i, j) the integer whose residues are r[t*plane + i +
// j*ldr]. beta = 0 does not read C. Columns by blockIdx.y.
template <int N, int C>
__device__ void reconstruct(const unsigned char* r, long long plane, const double* k, const int* s, const int* t,
                            long long rows, long long cols, long long ldr, double alpha, double beta, double* c,
                            long long ldc, int part) {
    for (long long j = blockIdx.y; j < cols; j += gridDim.y) {
        for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < rows; i += (long long)gridDim.x * BLOCK) {
            if ((part == 1 && i < j) || (part == 2 && i > j)) continue;
            const double x = crt<N, C>(r + i + j * ldr, plane, k);
            const double v = __dmul_rn(alpha, ldexp_steps(x, -(s[i] + t[j])));
            double* out = c + i + j * ldc;
            *out = beta == 0.0 ? v : __dadd_rn(v, __dmul_rn(beta, *out));
        }
    }
}

extern "C" __global__ void ozaki_reconstruct(const unsigned char* __restrict__ r, long long plane, int moduli,
                                             int chunks, const double* __restrict__ constants,
                                             const int* __restrict__ s, const int* __restrict__ t, long long rows,
                                             long long cols, long long ldr, double alpha, double beta,
                                             double* __restrict__ c, long long ldc, int part) {
    __shared__ double k[(MAX_MODULI + 1) * MAX_CHUNKS + 1];
    for (int q = threadIdx.x; q < (moduli + 1) * chunks + 1; q += BLOCK) k[q] = constants[q];
    __syncthreads();
#define CASE(n, cc)                                                                   \
    if (moduli == n && chunks == cc) {                                                \
        reconstruct<n, cc>(r, plane, k, s, t, rows, cols, ldr, alpha, beta, c, ldc, part); \
        return;                                                                       \
    }
    // The host's chunk counts, ceil(log2(P)/40), for 2 to 20 moduli.
    CASE(2, 1) CASE(3, 1) CASE(4, 1) CASE(5, 1)
    CASE(6, 2) CASE(7, 2) CASE(8, 2) CASE(9, 2) CASE(10, 2)
    CASE(11, 3) CASE(12, 3) CASE(13, 3) CASE(14, 3) CASE(15, 3)
    CASE(16, 4) CASE(17, 4) CASE(18, 4) CASE(19, 4) CASE(20, 4)
#undef CASE
    __trap();  // a count the host does not make: fail the launch, write nothing
}

// Column col0 + b of w (leading dimension ldw, len rows) := |x_v|/max|x_v|
// for the b-th sampled vector v (the host's ozaki::sample: every vector if
// count <= samples, else (2b+1)*count/(2*samples)); zero for a zero vector.
// Grid = (samples, 1, 1).
extern "C" __global__ void ozaki_sample(const double* __restrict__ x, long long vs, long long es, long long count,
                                        long long len, long long samples, double* __restrict__ w, long long ldw,
                                        long long col0) {
    __shared__ double part[BLOCK / WARP];
    const long long b = blockIdx.x;
    const long long v = count <= samples ? b : (2 * b + 1) * count / (2 * samples);
    const double* vec = x + v * vs;
    double top = 0.0;
    for (long long p = threadIdx.x; p < len; p += BLOCK) top = fmax(top, fabs(vec[p * es]));
    top = warp_reduce(top, [](double a, double o) { return fmax(a, o); });
    if (threadIdx.x % WARP == 0) part[threadIdx.x / WARP] = top;
    __syncthreads();
    top = 0.0;
    for (int q = 0; q < BLOCK / WARP; ++q) top = fmax(top, part[q]);
    double* out = w + (col0 + b) * ldw;
    for (long long p = threadIdx.x; p < len; p += BLOCK) out[p] = top > 0.0 ? fabs(vec[p * es]) / top : 0.0;
}
