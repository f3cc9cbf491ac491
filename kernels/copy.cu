// Tiled copy of a column-major block, optionally transposed and restricted to
// a triangle: the workhorse of strided copies, transposes, symmetrization and
// RFP pack/unpack (one call per piece of the rectangle).
//
// copy_block_{f32,f64,i32}(src, lds, dst, ldd, rows, cols, transpose, tri):
// for every (i, j), i < rows, j < cols, of the SOURCE block that lies in the
// mask `tri` (0: all; 1: lower, i >= j; 2: upper, i <= j):
//   transpose = 0: dst[i + j*ldd] = src[i + j*lds]
//   transpose = 1: dst[j + i*ldd] = src[i + j*lds]
// Entries outside the mask are neither read nor written.
//
// Launch contract: blockDim = (32, 8, 1) exactly; gridDim.x tiles the source
// columns and gridDim.y the source rows, one 32 x 32 tile per block:
// gridDim = (ceil(cols/32), ceil(rows/32)), each capped at 65535 — the blocks
// stride over the tiles in both directions, so a capped grid still covers
// everything. No dynamic shared memory.
//
// Why this shape: threadIdx.x runs down a column (consecutive addresses), so
// the reads are coalesced; each thread moves 4 entries per tile. For a
// transpose, the tile goes through shared memory, padded to 33 columns so that
// both the row-wise stores and the column-wise loads of the tile hit distinct
// banks, and the writes are coalesced too. Tiles that lie wholly outside the
// mask are skipped without touching memory.
//
// src and dst may be the same array: copy_block(a, ld, a, ld, n, n, 1, 1)
// makes a symmetric from its lower triangle without a race (a tile's reads
// finish before its writes, and no other tile writes what it reads). So no
// __restrict__ and no read-only-cache loads here.

#define TILE 32
#define TILE_ROWS 8

// Whether source entry (i, j) is in the block and in the mask.
__device__ __forceinline__ bool in_mask(long long i, long long j, long long rows, long long cols, int tri) {
    return i < rows && j < cols && (tri == 0 || (tri == 1 ? i >= j : i <= j));
}

template <typename T>
__device__ __forceinline__ void copy_block_impl(const T* src, long long lds, T* dst, long long ldd, long long rows,
                                                long long cols, int transpose, int tri) {
    __shared__ T tile[TILE][TILE + 1];
    const long long row_tiles = (rows + TILE - 1) / TILE;
    const long long col_tiles = (cols + TILE - 1) / TILE;
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    for (long long bi = blockIdx.y; bi < row_tiles; bi += gridDim.y) {
        for (long long bj = blockIdx.x; bj < col_tiles; bj += gridDim.x) {
            const long long i0 = bi * TILE;  // first source row of the tile
            const long long j0 = bj * TILE;  // first source column of the tile
            // Skip tiles with no entry in the mask (uniform over the block, so
            // the __syncthreads below stay uniform too).
            if (tri == 1 && i0 + TILE - 1 < j0) continue;  // wholly strictly upper
            if (tri == 2 && i0 > j0 + TILE - 1) continue;  // wholly strictly lower
            const long long i = i0 + tx;
            if (!transpose) {
                // All loads first, then all stores: src and dst may alias, so
                // the compiler may not move a load above an earlier store,
                // and one load in flight per thread is far from bandwidth.
                T v[TILE / TILE_ROWS];
#pragma unroll
                for (int r = 0; r < TILE / TILE_ROWS; ++r) {
                    const long long j = j0 + ty + r * TILE_ROWS;
                    if (in_mask(i, j, rows, cols, tri)) v[r] = src[i + j * lds];
                }
#pragma unroll
                for (int r = 0; r < TILE / TILE_ROWS; ++r) {
                    const long long j = j0 + ty + r * TILE_ROWS;
                    if (in_mask(i, j, rows, cols, tri)) dst[i + j * ldd] = v[r];
                }
            } else {
                // Load: tile[local column][local row] = src(i, j).
#pragma unroll
                for (int r = 0; r < TILE; r += TILE_ROWS) {
                    const long long j = j0 + ty + r;
                    if (in_mask(i, j, rows, cols, tri)) tile[ty + r][tx] = src[i + j * lds];
                }
                __syncthreads();
                // Store: thread x now runs along a source row (a destination
                // column): dst(j, i) = src(i, j), consecutive j per warp.
                const long long j = j0 + tx;
#pragma unroll
                for (int r = 0; r < TILE; r += TILE_ROWS) {
                    const long long ii = i0 + ty + r;
                    if (in_mask(ii, j, rows, cols, tri)) dst[j + ii * ldd] = tile[tx][ty + r];
                }
                // The next tile reuses the shared array.
                __syncthreads();
            }
        }
    }
}

extern "C" __global__ void copy_block_f32(const float* src, long long lds, float* dst, long long ldd, long long rows,
                                          long long cols, int transpose, int tri) {
    copy_block_impl<float>(src, lds, dst, ldd, rows, cols, transpose, tri);
}

extern "C" __global__ void copy_block_f64(const double* src, long long lds, double* dst, long long ldd, long long rows,
                                          long long cols, int transpose, int tri) {
    copy_block_impl<double>(src, lds, dst, ldd, rows, cols, transpose, tri);
}

extern "C" __global__ void copy_block_i32(const int* src, long long lds, int* dst, long long ldd, long long rows,
                                          long long cols, int transpose, int tri) {
    copy_block_impl<int>(src, lds, dst, ldd, rows, cols, transpose, tri);
}
