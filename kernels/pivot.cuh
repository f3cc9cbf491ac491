// What the pivoting panel kernels share: the pivot candidate (the entry of
// largest magnitude, NaN first, then the lower row) with its warp reduction,
// and the barrier across a grid whose blocks are all resident, by which the
// grid-wide panels (LU, LDLᵀ) agree on each column's pivot.

#ifndef GPUMAT_PIVOT_CUH
#define GPUMAT_PIVOT_CUH

#include "common.cuh"

struct Candidate {
    double v;     // |a(i, j)|, or -1 for none
    long long i;  // row
};

// Whether candidate a is a better pivot than b: NaN first, then larger, then
// the lower row.
__device__ __forceinline__ bool better(Candidate a, Candidate b) {
    const bool an = is_nan(a.v), bn = is_nan(b.v);
    if (an || bn) return an && (!bn || a.i < b.i);
    return a.v > b.v || (a.v == b.v && a.i < b.i);
}

// The best candidate of the warp, in lane 0.
__device__ __forceinline__ Candidate warp_best(Candidate c) {
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) {
        Candidate o;
        o.v = __shfl_down_sync(0xffffffffu, c.v, s);
        o.i = __shfl_down_sync(0xffffffffu, c.i, s);
        if (better(o, c)) c = o;
    }
    return c;
}

// The best of the block's candidates, in thread 0. Called by whole blocks.
__device__ Candidate block_best(Candidate c, Candidate* best, long long none) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    c = warp_best(c);
    if (lane == 0) best[warp] = c;
    __syncthreads();
    if (warp == 0) {
        c = lane < (int)(blockDim.x >> 5) ? best[lane] : Candidate{-1.0, none};
        c = warp_best(c);
    }
    return c;
}

// A barrier across the whole grid (every block resident): arrive on
// bar[0]; the last block resets it and bumps the generation bar[1], which
// the others wait for. The fences make each block's writes before the
// barrier visible to every block after it.
__device__ __forceinline__ void grid_barrier(unsigned* bar) {
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile unsigned* gen = bar + 1;
        const unsigned g = *gen;
        __threadfence();
        if (atomicAdd(bar, 1u) == gridDim.x - 1) {
            atomicExch(bar, 0u);
            __threadfence();
            atomicAdd(bar + 1, 1u);
        } else {
            while (*gen == g) {
            }
        }
        __threadfence();
    }
    __syncthreads();
}

#endif  // GPUMAT_PIVOT_CUH
