// Row interchanges (dlaswp) of the LU with partial pivoting, on a
// column-major block (lu.cuh: conventions). The panel factorizations are
// the files lu_panel_*.cu.
//
// laswp_{f32,f64}(a, ld, m, n, ipiv, incp, first, k, shift, reverse):
//   for i in 0..k (or k-1 down to 0 if reverse), rows first + i and
//   ipiv[i*incp] - 1 - shift of the m x n block are exchanged; a pivot
//   outside the block is skipped. k <= LASWP_MAX_K (longer sequences are
//   launched in pieces). Exchanged one after the other, as dlaswp does, the
//   rows of a column would be a chain of dependent loads; instead each
//   block first finds where each displaced row comes from (a thread per row
//   traces it back through the exchanges, on row numbers in shared memory),
//   and then moves each displaced row once: all of a batch of LASWP_COLS
//   columns' moved entries are loaded, then stored. Launch: 1-D, any grid
//   (a grid-stride loop over batches of columns), blockDim.x =
//   LASWP_THREADS.
//
// permute_rows_{f32,f64}(src, lds, dst, ldd, rows, cols, perm, incp, inverse):
//   dst(i, :) = src(perm[i], :), or with inverse != 0 dst(perm[i], :) =
//   src(i, :), perm 0-based at stride incp; an entry outside 0..rows leaves
//   NaN (gather) or nothing (scatter). src and dst must not overlap. Any 1-D
//   grid (common.cuh: for_each_entry).

#include "lu.cuh"

#define LASWP_THREADS 256
#define LASWP_MAX_K 512

template <typename T>
__device__ void laswp_impl(T* a, long long ld, long long m, long long n, const int* ipiv, long long incp,
                           long long first, long long k, long long shift, int reverse) {
    laswp_apply<LASWP_MAX_K, 2 * LASWP_MAX_K / LASWP_THREADS>(
        a, ld, n, first, (int)k, reverse,
        [&](int i) {
            const long long r = (long long)ipiv[i * incp] - 1 - shift;
            return r >= 0 && r < m ? (int)r : -1;
        },
        [](long long j) { return j; });
}

extern "C" __global__ void laswp_f32(float* a, long long ld, long long m, long long n, const int* ipiv, long long incp,
                                     long long first, long long k, long long shift, int reverse) {
    laswp_impl(a, ld, m, n, ipiv, incp, first, k, shift, reverse);
}

extern "C" __global__ void laswp_f64(double* a, long long ld, long long m, long long n, const int* ipiv,
                                     long long incp, long long first, long long k, long long shift, int reverse) {
    laswp_impl(a, ld, m, n, ipiv, incp, first, k, shift, reverse);
}

template <typename T>
__device__ void permute_rows_impl(const T* src, long long lds, T* dst, long long ldd, long long rows, long long cols,
                                  const int* perm, long long incp, int inverse) {
    const auto row = [&](long long i) {
        const long long p = perm[i * incp];
        return p >= 0 && p < rows ? p : -1;
    };
    if (inverse) {
        for_each_entry<4>(rows, cols, [&](long long i, long long j) { return src[i + j * lds]; },
                          [&](long long i, long long j, T v) {
                              const long long p = row(i);
                              if (p >= 0) dst[p + j * ldd] = v;
                              return true;
                          });
    } else {
        for_each_entry<4>(rows, cols,
                          [&](long long i, long long j) {
                              const long long p = row(i);
                              return p >= 0 ? src[p + j * lds] : T(__longlong_as_double(0x7ff8000000000000LL));
                          },
                          [&](long long i, long long j, T v) {
                              dst[i + j * ldd] = v;
                              return true;
                          });
    }
}

extern "C" __global__ void permute_rows_f32(const float* src, long long lds, float* dst, long long ldd, long long rows,
                                            long long cols, const int* perm, long long incp, int inverse) {
    permute_rows_impl(src, lds, dst, ldd, rows, cols, perm, incp, inverse);
}

extern "C" __global__ void permute_rows_f64(const double* src, long long lds, double* dst, long long ldd,
                                            long long rows, long long cols, const int* perm, long long incp,
                                            int inverse) {
    permute_rows_impl(src, lds, dst, ldd, rows, cols, perm, incp, inverse);
}
