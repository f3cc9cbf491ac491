// Thread-block clusters (sm_90 and later): addresses in another block's
// shared memory, loads from it, and the cluster-wide barrier. Registered
// with NVRTC as a header (`#include "cluster.cuh"`); empty before sm_90.

#ifndef GPUMAT_CLUSTER_CUH
#define GPUMAT_CLUSTER_CUH

#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned shared_address(const void* p) {
    unsigned a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

// The address in block `rank`'s shared memory of what is at `local` in ours.
__device__ __forceinline__ unsigned in_block(unsigned local, unsigned rank) {
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(local), "r"(rank));
    return r;
}

// What block `rank` holds at the place of `*p` in ours.
__device__ __forceinline__ double cluster_load(const double* p, unsigned rank) {
    unsigned long long v;
    asm volatile("ld.shared::cluster.u64 %0, [%1];" : "=l"(v) : "r"(in_block(shared_address(p), rank)) : "memory");
    return __longlong_as_double((long long)v);
}
__device__ __forceinline__ float cluster_load(const float* p, unsigned rank) {
    unsigned v;
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(in_block(shared_address(p), rank)) : "memory");
    return __uint_as_float(v);
}
__device__ __forceinline__ long long cluster_load(const long long* p, unsigned rank) {
    unsigned long long v;
    asm volatile("ld.shared::cluster.u64 %0, [%1];" : "=l"(v) : "r"(in_block(shared_address(p), rank)) : "memory");
    return (long long)v;
}

// Every thread of every block of the cluster arrives before any goes on;
// what each wrote to shared memory before it is visible to all after.
__device__ __forceinline__ void cluster_barrier() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// This block's rank in its cluster.
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
#endif

#endif
