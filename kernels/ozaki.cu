// FP64 products from exact INT8 products, the Ozaki scheme II (Ozaki,
// Uchino and Imamura 2025): the passes around cuBLAS's INT8 products. The
// host side, and the arithmetic that these kernels repeat, is
// src/backend/ozaki.rs: the same scaling exponents, residues and Garner
// reconstruction, so that the CPU backend is this path's reference.
//
// A "vector" is a row of op(A) or a column of op(B): vector v of `len`
// entries has entry p at x[v*vs + p*es] (rows of a column-major A: vs = 1,
// es = lda; columns: vs = ldb, es = 1).
//
// Launch contract: blockDim = (256, 1, 1) for every kernel; grids are free
// (grid-stride loops), except ozaki_sample (one block per sampled vector).

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

// The balanced residue of the integer-valued x modulo m (fmod is exact).
__device__ __forceinline__ signed char residue(double x, unsigned m) {
    double r = fmod(x, (double)m);
    const double half = (double)(m / 2);
    if (r > (double)m - 1.0 - half) r -= (double)m;
    else if (r < -half) r += (double)m;
    return (signed char)(int)r;
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

// The INT8 residues of the scaled, rounded vectors, K-major for cuBLAS's
// "TN" INT8 product: w[t*plane + p + v*ldw] = residue(rint(x_v[p]*2^s[v]),
// m[t]) for p < len, and 0 for len <= p < ldw (the depth padded to 16).
extern "C" __global__ void ozaki_slice(const double* __restrict__ x, long long vs, long long es, long long count,
                                       long long len, const int* __restrict__ s, int moduli,
                                       const unsigned* __restrict__ m, signed char* __restrict__ w, long long ldw,
                                       long long plane) {
    const long long total = ldw * count;
    for (long long idx = (long long)blockIdx.x * BLOCK + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * BLOCK) {
        const long long p = idx % ldw, v = idx / ldw;
        const double y = p < len ? rint(ldexp_steps(x[v * vs + p * es], s[v])) : 0.0;
        for (int t = 0; t < moduli; ++t) w[t * plane + idx] = residue(y, m[t]);
    }
}

// r[i + j*ldr] = c(i, j) mod m in 0..m-1, added to the residue already
// there when `accumulate` (the chunks of a deep product).
extern "C" __global__ void ozaki_residues(const int* __restrict__ c, long long ldc, long long rows, long long cols,
                                          unsigned m, unsigned char* __restrict__ r, long long ldr, int accumulate) {
    const long long total = rows * cols;
    for (long long idx = (long long)blockIdx.x * BLOCK + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * BLOCK) {
        const long long i = idx % rows, j = idx / rows;
        const int mm = (int)m;
        int v = c[i + j * ldc] % mm;
        if (v < 0) v += mm;
        unsigned char* out = r + i + j * ldr;
        if (accumulate) v = (v + (int)*out) % mm;
        *out = (unsigned char)v;
    }
}

// Error-free transformations for the double-double Horner sum.
__device__ __forceinline__ void two_sum(double a, double b, double& s, double& e) {
    s = a + b;
    const double bb = s - a;
    e = (a - (s - bb)) + (b - bb);
}

// C := alpha*2^-(s_i+t_j)*X + beta*C on all of C (part 0), its lower (1) or
// upper (2) triangle, X(i, j) the integer in (-P/2, P/2) whose residues are
// r[t*plane + i + j*rows]: Garner's mixed-radix digits (inverses[t(t-1)/2 +
// s] = m_s^-1 mod m_t), made balanced, summed by Horner in double-double.
// beta = 0 does not read C.
extern "C" __global__ void ozaki_reconstruct(const unsigned char* __restrict__ r, long long plane, int moduli,
                                             const unsigned* __restrict__ m, const unsigned* __restrict__ inverses,
                                             const int* __restrict__ s, const int* __restrict__ t, long long rows,
                                             long long cols, double alpha, double beta, double* __restrict__ c,
                                             long long ldc, int part) {
    const long long total = rows * cols;
    for (long long idx = (long long)blockIdx.x * BLOCK + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * BLOCK) {
        const long long i = idx % rows, j = idx / rows;
        if ((part == 1 && i < j) || (part == 2 && i > j)) continue;
        unsigned digit[MAX_MODULI];
        for (int q = 0; q < moduli; ++q) {
            const unsigned mq = m[q];
            unsigned x = r[q * plane + idx];
            const unsigned* inv = inverses + q * (q - 1) / 2;
            for (int p = 0; p < q; ++p) x = (x + mq - digit[p] % mq) % mq * inv[p] % mq;
            digit[q] = x;
        }
        int balanced[MAX_MODULI];
        unsigned carry = 0;
        for (int q = 0; q < moduli; ++q) {
            const int d = (int)(digit[q] + carry);
            const int mq = (int)m[q];
            if (d > (mq - 1) / 2) {
                balanced[q] = d - mq;
                carry = 1;
            } else {
                balanced[q] = d;
                carry = 0;
            }
        }
        // (hi, lo) := (hi, lo)*m_q + d_q, as the host's Dd::mul_f64 then
        // Dd::add_f64.
        double hi = (double)balanced[moduli - 1], lo = 0.0;
        for (int q = moduli - 2; q >= 0; --q) {
            const double mq = (double)m[q];
            const double p = hi * mq;
            const double pe = fma(hi, mq, -p);
            // Intrinsics: NVRTC contracts a*b + c into an FMA otherwise,
            // which the host's arithmetic does not.
            two_sum(p, __dadd_rn(pe, __dmul_rn(lo, mq)), hi, lo);
            double sum, err;
            two_sum(hi, (double)balanced[q], sum, err);
            two_sum(sum, err + lo, hi, lo);
        }
        const double v = __dmul_rn(alpha, ldexp_steps(hi + lo, -(s[i] + t[j])));
        double* out = c + i + j * ldc;
        *out = beta == 0.0 ? v : __dadd_rn(v, __dmul_rn(beta, *out));
    }
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
