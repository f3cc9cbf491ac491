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
// Launch contract: blockDim = (32, 8, 1) exactly, no dynamic shared memory,
// ANY 2-D grid: the blocks stride over a 2-D space of 32 x 32 source tiles in
// both directions, so a small or capped grid still covers everything. The
// grid that gives one tile per block is
//   tri = 0:      (C, R)
//   tri = 1 or 2: (ceil(M/2), M >= 2 ? 2L - M + 1 : L)
// with R = ceil(rows/32), C = ceil(cols/32), M = min(R, C), L = R for the
// lower mask and C for the upper one, each dimension capped at 65535
// (`copy_block_grid` in src/backend/cuda/kernels.rs computes it). The grid
// (C, R) is also correct, only slower for a triangle.
//
// Why this shape: threadIdx.x runs down a column (consecutive addresses), so
// the reads are coalesced; each thread moves 4 entries per tile, all loads
// issued before any store. For a transpose, the tile goes through shared
// memory, padded to 33 columns so that both the row-wise stores and the
// column-wise loads of the tile hit distinct banks, and the writes are
// coalesced too. For a triangle, the tile space is folded (column q of tiles
// shares a grid column with column M-1-q, as in RFP storage) so that no block
// is launched for a tile outside the mask: on an H100 the empty blocks of a
// square grid cost 10-15% of a triangular copy. __launch_bounds__ keeps the
// 4-byte kernels at 32 registers, so 8 blocks (2048 threads) fit on an SM:
// more loads in flight, which 4-byte types need to approach the bandwidth.
//
// src and dst may be the same array: copy_block(a, ld, a, ld, n, n, 1, 1)
// makes a symmetric from its lower triangle without a race (a tile's reads
// finish before its writes, and no other tile writes what it reads); tri = 2
// does it from the upper one. So no __restrict__ and no read-only-cache loads.

#define TILE 32
#define TILE_ROWS 8
// Blocks per SM that __launch_bounds__ asks room for. Where an SM holds 2048
// threads (A100, H100, B200): 8 (32 registers) for 4-byte types; 8-byte ones
// would spill at 32, so 6 (40 registers). Elsewhere (1024 or 1536 threads per
// SM) 4, which constrains nothing; a larger value is an error there.
#if __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030
#define COPY_BLOCKS_PER_SM 8
#else
#define COPY_BLOCKS_PER_SM 4
#endif
#ifndef COPY_MIN_BLOCKS_4
#define COPY_MIN_BLOCKS_4 COPY_BLOCKS_PER_SM
#endif
#ifndef COPY_MIN_BLOCKS_8
#define COPY_MIN_BLOCKS_8 (COPY_BLOCKS_PER_SM * 3 / 4)
#endif

// Whether entry (li, lj) of a tile is in the block and in the mask, with the
// limits of the tile in 32-bit: entries li < nr, lj < nc are in the block; d
// is i0 - j0 of the tile, clamped to [-32, 32] (enough, as |li - lj| < 32).
__device__ __forceinline__ bool in_mask(int li, int lj, int nr, int nc, int d, int tri) {
    return li < nr && lj < nc && (tri == 0 || (tri == 1 ? li - lj >= -d : li - lj <= -d));
}

// Size of the folded tile space of a triangle: `m` short lines of tiles (tile
// columns of the lower mask, tile rows of the upper one), line q holding the
// tiles q .. l-1 of the long direction; lines q and m-1-q share a grid column.
__device__ __forceinline__ long long fold_height(long long l, long long m) { return m >= 2 ? 2 * l - m + 1 : l; }

// Tile (p, q), p >= q, of grid position (x, y) in the folded space; false for
// a position with no tile.
__device__ __forceinline__ bool unfold(long long x, long long y, long long l, long long m, long long& p,
                                       long long& q) {
    if (y < l - x) {
        q = x;
        p = x + y;
        return true;
    }
    q = m - 1 - x;
    if (q <= x) return false;  // the middle line of an odd m is done above
    p = q + (y - (l - x));
    return p < l;
}

// Copies the tile whose first source entry is (i0, j0). Offsets inside the
// tile are 32-bit and the pointers are moved to the tile first: fewer 64-bit
// registers, so the 4-byte kernels fit in 32 registers without spilling.
template <typename T>
__device__ __forceinline__ void copy_tile(T (&tile)[TILE][TILE + 1], const T* src, long long lds, T* dst,
                                          long long ldd, long long rows, long long cols, int transpose, int tri,
                                          long long i0, long long j0) {
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int nr = rows - i0 < TILE ? (int)(rows - i0) : TILE;
    const int nc = cols - j0 < TILE ? (int)(cols - j0) : TILE;
    const long long dd = i0 - j0;
    const int d = dd < -TILE ? -TILE : (dd > TILE ? TILE : (int)dd);
    const T* s = src + i0 + j0 * lds;
    if (!transpose) {
        // All loads first, then all stores: src and dst may alias, so the
        // compiler may not move a load above an earlier store, and one load
        // in flight per thread is far from the bandwidth.
        T* t = dst + i0 + j0 * ldd;
        T v[TILE / TILE_ROWS];
#pragma unroll
        for (int r = 0; r < TILE / TILE_ROWS; ++r) {
            const int lj = ty + r * TILE_ROWS;
            if (in_mask(tx, lj, nr, nc, d, tri)) v[r] = s[tx + lj * lds];
        }
#pragma unroll
        for (int r = 0; r < TILE / TILE_ROWS; ++r) {
            const int lj = ty + r * TILE_ROWS;
            if (in_mask(tx, lj, nr, nc, d, tri)) t[tx + lj * ldd] = v[r];
        }
    } else {
        // Load: tile[local column][local row] = src(i, j).
#pragma unroll
        for (int r = 0; r < TILE; r += TILE_ROWS) {
            if (in_mask(tx, ty + r, nr, nc, d, tri)) tile[ty + r][tx] = s[tx + (ty + r) * lds];
        }
        __syncthreads();
        // Store: thread x now runs along a source row (a destination column):
        // dst(j, i) = src(i, j) with local j = tx, consecutive in a warp.
        T* t = dst + j0 + i0 * ldd;
#pragma unroll
        for (int r = 0; r < TILE; r += TILE_ROWS) {
            if (in_mask(ty + r, tx, nr, nc, d, tri)) t[tx + (ty + r) * ldd] = tile[tx][ty + r];
        }
        // The next tile reuses the shared array.
        __syncthreads();
    }
}

template <typename T>
__device__ __forceinline__ void copy_block_impl(const T* src, long long lds, T* dst, long long ldd, long long rows,
                                                long long cols, int transpose, int tri) {
    __shared__ T tile[TILE][TILE + 1];
    if (rows <= 0 || cols <= 0) return;
    const long long r_tiles = (rows + TILE - 1) / TILE;
    const long long c_tiles = (cols + TILE - 1) / TILE;
    const long long m = r_tiles < c_tiles ? r_tiles : c_tiles;
    const long long l = tri == 1 ? r_tiles : c_tiles;  // tri: 0 all, 1 lower, else upper
    const long long width = tri == 0 ? c_tiles : (m + 1) / 2;
    const long long height = tri == 0 ? r_tiles : fold_height(l, m);
    // Every branch below depends on the block's position only, so the
    // __syncthreads in copy_tile are reached by all of its threads or none.
    for (long long y = blockIdx.y; y < height; y += gridDim.y) {
        for (long long x = blockIdx.x; x < width; x += gridDim.x) {
            long long bi, bj;
            if (tri == 0) {
                bi = y;
                bj = x;
            } else {
                long long p, q;
                if (!unfold(x, y, l, m, p, q)) continue;
                // Lower: tile row p >= tile column q; upper: the other way.
                bi = tri == 1 ? p : q;
                bj = tri == 1 ? q : p;
            }
            copy_tile(tile, src, lds, dst, ldd, rows, cols, transpose, tri, bi * TILE, bj * TILE);
        }
    }
}

#define GPUMAT_COPY_BLOCK(T, SUFFIX, MIN_BLOCKS)                                                                  \
    extern "C" __global__ void __launch_bounds__(TILE * TILE_ROWS, MIN_BLOCKS)                                    \
        copy_block_##SUFFIX(const T* src, long long lds, T* dst, long long ldd, long long rows, long long cols,    \
                            int transpose, int tri) {                                                             \
        copy_block_impl<T>(src, lds, dst, ldd, rows, cols, transpose, tri);                                       \
    }

GPUMAT_COPY_BLOCK(float, f32, COPY_MIN_BLOCKS_4)
GPUMAT_COPY_BLOCK(double, f64, COPY_MIN_BLOCKS_8)
GPUMAT_COPY_BLOCK(int, i32, COPY_MIN_BLOCKS_4)
