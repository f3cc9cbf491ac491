// Triangular solves with a small lower triangle, X := alpha · L⁻¹ · X, for
// the narrow L of the LU's and the Cholesky's panels and block columns.
// cuBLAS's trsm goes through L in steps that each wait for the one before,
// and takes 26 µs for a 128 × 128 L on 128 columns on an H100 (185 µs for
// 256 × 256 on 7936 columns); here each warp holds whole columns of X in
// registers, so the only serial chain is the 32 steps of each diagonal tile.
// Column-major blocks: entry (i, j) is a[i + j*lda], the pointer already at
// the block's (0, 0); sizes and leading dimensions are `long long`.
//
// trsm_lower_{f32,f64}_{1,2,4,8}(a, lda, b, ldb, m, n, alpha, unit, trans,
//                                 prefetch):
//   X (m × n) := alpha · L⁻¹ · X, L the lower triangle of the m × m block a
//   (with ones on its diagonal if `unit`), X the block b (trans = 0) or its
//   transpose (trans = 1: b is n × m and b := alpha · b · L⁻ᵀ, the solve of
//   the Cholesky's panels). A non-unit diagonal is inverted once and its
//   reciprocal multiplies, as in MAGMA's and cuBLAS's blocked solves. L's strict upper triangle (and its diagonal if
//   `unit`) is copied to shared memory with the rest but never used, so NaN
//   there does no harm. The suffix TILES is ceil(m / 32)
//   rounded up to a power of two, at most 8 (m <= 256). A zero on the
//   diagonal gives Inf or NaN, as BLAS. Launch: blockDim.x a multiple of 32
//   up to TRSM_THREADS; gridDim.x = ceil(n / columns per block), TRSM_COLS
//   columns per warp; dynamic shared memory 32 * 32 * TILES * sizeof(T)
//   bytes (a tile column of L), twice that with `prefetch` (the next tile
//   column loads while one is used: for few blocks, whose time is latency;
//   without, more blocks fit on an SM).
//
// Lane l of a warp holds row 32*t + l of tile t of each of its columns of X.
// For each tile column of L (staged in shared memory, column-major, so that
// lanes read consecutive rows, while the next one is copied into the other
// of two buffers with `prefetch`), a warp first solves its diagonal tile
// (step j: lane j's entry is final, is broadcast by a shuffle, and the lanes
// below subtract their multiple of it), then subtracts the tile's
// contribution from the tiles below, which is independent work.

#define TRSM_THREADS 256
#define TRSM_COLS 4

// An entry of L from src into shared memory at d, or zero (`inside` false):
// from sm_80 an asynchronous copy (cp.async, zero-filled when nothing is to
// be read), so that a whole tile column is in flight at once and the next
// one loads while the current one is used.
template <typename T>
__device__ __forceinline__ void stage(T* d, const T* src, bool inside) {
#if __CUDA_ARCH__ >= 800
    const unsigned dst = (unsigned)__cvta_generic_to_shared(d);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(dst), "l"(src), "n"(sizeof(T)),
                 "r"(inside ? (int)sizeof(T) : 0));
#else
    *d = inside ? *src : T(0);
#endif
}

__device__ __forceinline__ void staged() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
#endif
}

// Tile column tt of L: rows 32*tt.. of columns 32*tt..32*tt+31, column-major
// with 32*(TILES - tt) rows; zero outside the block. Its strict upper
// triangle (and its diagonal when it is a unit one) is copied as it is but
// never used. A warp per column.
template <typename T, int TILES>
__device__ __forceinline__ void stage_tile_column(T* ls, const T* a, long long lda, long long m, int tt) {
    constexpr int rows_max = 32 * TILES;
    const int rows = 32 * (TILES - tt), lane = threadIdx.x & 31;
    const long long top = 32LL * tt;
    for (int j = threadIdx.x >> 5; j < 32; j += blockDim.x >> 5) {
        const bool column = top + j < m;
        const T* col = a + top + (top + j) * lda;
#pragma unroll
        for (int r = lane; r < rows_max; r += 32) {
            if (r >= rows) break;
            const bool inside = column && top + r < m;
            stage(ls + j * rows + r, inside ? col + r : a, inside);
        }
    }
}

// The diagonal tile of a warp's columns, in place: step j makes lane j's
// entries final (scaled by its reciprocal diagonal `dinv` unless UNIT),
// broadcasts them, and the lanes below subtract their multiple of them. The
// columns' chains are independent, so their shuffles go together. Unrolled,
// so that j is a constant: a division in the chain would put its slow path
// in every step (1.1 µs per row of L on an H100, against 0.1 µs).
template <bool UNIT, typename T>
__device__ __forceinline__ void solve_diagonal_tile(T (&x)[TRSM_COLS], const T* ls, int rows, int lane, T dinv) {
#pragma unroll
    for (int j = 0; j < 32; ++j) {
        const T l = ls[j * rows + lane];
        if (!UNIT && lane == j) {
#pragma unroll
            for (int c = 0; c < TRSM_COLS; ++c) x[c] *= dinv;
        }
        T xj[TRSM_COLS];
#pragma unroll
        for (int c = 0; c < TRSM_COLS; ++c) xj[c] = __shfl_sync(0xffffffffu, x[c], j);
        if (lane > j) {
#pragma unroll
            for (int c = 0; c < TRSM_COLS; ++c) x[c] -= l * xj[c];
        }
    }
}

template <typename T, int TILES>
__device__ void trsm_lower_impl(const T* a, long long lda, T* b, long long ldb, long long m, long long n, T alpha,
                                int unit, int trans, int prefetch) {
    extern __shared__ __align__(16) unsigned char trsm_smem[];
    // Tile columns of even and odd index; one buffer for both without
    // prefetch.
    T* const buffers[2] = {reinterpret_cast<T*>(trsm_smem),
                           reinterpret_cast<T*>(trsm_smem) + (prefetch ? 32 * 32 * TILES : 0)};
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long c0 = ((long long)blockIdx.x * (blockDim.x >> 5) + warp) * TRSM_COLS;
    stage_tile_column<T, TILES>(buffers[0], a, lda, m, 0);
    T x[TILES][TRSM_COLS];
#pragma unroll
    for (int t = 0; t < TILES; ++t)
#pragma unroll
        for (int c = 0; c < TRSM_COLS; ++c) {
            const long long i = 32 * t + lane, j = c0 + c;
            x[t][c] = i < m && j < n ? alpha * b[trans ? j + i * ldb : i + j * ldb] : T(0);
        }
#pragma unroll
    for (int tt = 0; tt < TILES; ++tt) {
        const int rows = 32 * (TILES - tt);
        const T* ls = buffers[tt & 1];
        // Tile column tt is in place; with prefetch, every warp is done with
        // tt - 1, whose buffer takes tt + 1 now.
        staged();
        __syncthreads();
        if (prefetch && tt + 1 < TILES) stage_tile_column<T, TILES>(buffers[(tt + 1) & 1], a, lda, m, tt + 1);
        if (unit) {
            solve_diagonal_tile<true>(x[tt], ls, rows, lane, T(1));
        } else {
            // Rows past the block are zero and stay so: their diagonal is
            // taken as one.
            const T dinv = 32 * tt + lane < m ? T(1) / ls[lane * rows + lane] : T(1);
            solve_diagonal_tile<false>(x[tt], ls, rows, lane, dinv);
        }
        // Its contribution to the tiles below.
        if (tt + 1 < TILES) {
#pragma unroll 2
            for (int j = 0; j < 32; ++j) {
                T xj[TRSM_COLS];
#pragma unroll
                for (int c = 0; c < TRSM_COLS; ++c) xj[c] = __shfl_sync(0xffffffffu, x[tt][c], j);
#pragma unroll
                for (int u = tt + 1; u < TILES; ++u) {
                    const T l = ls[j * rows + 32 * (u - tt) + lane];
#pragma unroll
                    for (int c = 0; c < TRSM_COLS; ++c) x[u][c] -= l * xj[c];
                }
            }
            if (!prefetch) {
                __syncthreads();
                stage_tile_column<T, TILES>(buffers[0], a, lda, m, tt + 1);
            }
        }
    }
#pragma unroll
    for (int t = 0; t < TILES; ++t)
#pragma unroll
        for (int c = 0; c < TRSM_COLS; ++c) {
            const long long i = 32 * t + lane, j = c0 + c;
            if (i < m && j < n) b[trans ? j + i * ldb : i + j * ldb] = x[t][c];
        }
}

#define TRSM_LOWER(T, NAME, TILES)                                                                                  \
    extern "C" __global__ void __launch_bounds__(TRSM_THREADS)                                                    \
        trsm_lower_##NAME##_##TILES(const T* a, long long lda, T* b, long long ldb, long long m, long long n,     \
                                    T alpha, int unit, int trans, int prefetch) {                                 \
        trsm_lower_impl<T, TILES>(a, lda, b, ldb, m, n, alpha, unit, trans, prefetch);                            \
    }
#define TRSM_LOWER_ALL(T, NAME)                                                                                     \
    TRSM_LOWER(T, NAME, 1)                                                                                          \
    TRSM_LOWER(T, NAME, 2)                                                                                          \
    TRSM_LOWER(T, NAME, 4)                                                                                          \
    TRSM_LOWER(T, NAME, 8)
TRSM_LOWER_ALL(float, f32)
TRSM_LOWER_ALL(double, f64)
