// Exchanges between the blocks of one grid through L2 without a barrier:
// the LL protocol of NCCL. A 64-bit payload and a flag naming the step it
// belongs to travel together in one 16-byte cell, written by one vector
// store; a reader polls the cell until both copies of the flag name the
// step it waits for, so the payload it then holds is that step's.

#ifndef GPUMAT_LL_CUH
#define GPUMAT_LL_CUH

// An exchange cell: one 64-bit payload and its flag (twice), stored and
// loaded whole.
struct __align__(16) Cell {
    unsigned lo, f1, hi, f2;
};

__device__ __forceinline__ void ll_store(Cell* c, unsigned long long bits, unsigned flag) {
    asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(c), "r"((unsigned)bits), "r"(flag),
                 "r"((unsigned)(bits >> 32)), "r"(flag)
                 : "memory");
}

// Waits until the cell holds column `flag`'s payload, and returns it.
__device__ __forceinline__ unsigned long long ll_load(const Cell* c, unsigned flag) {
    unsigned lo, f1, hi, f2;
    do {
        asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(lo), "=r"(f1), "=r"(hi), "=r"(f2)
                     : "l"(c)
                     : "memory");
    } while (f1 != flag || f2 != flag);
    return ((unsigned long long)hi << 32) | lo;
}

// The cell as it is now, whatever step it holds: a first look that does
// not wait, so that several can be in flight at once.
__device__ __forceinline__ Cell ll_peek(const Cell* c) {
    Cell x;
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(x.lo), "=r"(x.f1), "=r"(x.hi), "=r"(x.f2)
                 : "l"(c)
                 : "memory");
    return x;
}

// A payload is a double's bits.
__device__ __forceinline__ unsigned long long bits_of(double x) { return (unsigned long long)__double_as_longlong(x); }
__device__ __forceinline__ double double_of(unsigned long long b) { return __longlong_as_double((long long)b); }

// Waits until both cells hold column `flag`'s payloads: one poll, two loads.
__device__ __forceinline__ void ll_load2(const Cell* c, unsigned flag, unsigned long long* x, unsigned long long* y) {
    unsigned a0, a1, a2, a3, b0, b1, b2, b3;
    do {
        asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3)
                     : "l"(c)
                     : "memory");
        asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(b0), "=r"(b1), "=r"(b2), "=r"(b3)
                     : "l"(c + 1)
                     : "memory");
    } while (a1 != flag || a3 != flag || b1 != flag || b3 != flag);
    *x = ((unsigned long long)a2 << 32) | a0;
    *y = ((unsigned long long)b2 << 32) | b0;
}

#endif  // GPUMAT_LL_CUH
