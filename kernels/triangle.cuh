// Where the lower triangle of a symmetric matrix lies (Triangle,
// src/backend/triangle.rs): full storage, or the three pieces of RFP
// storage, some of them transposed.

#ifndef GPUMAT_TRIANGLE_CUH
#define GPUMAT_TRIANGLE_CUH

// Where the lower triangle lies (Triangle): rows and columns split at
// `split` into pieces L11, L21, L22, each at an offset with a leading
// dimension, stored as it is or transposed; `joined`: L21 continues L11.
struct Tri {
    long long split;
    int joined;
    long long off11, ld11, off21, ld21, off22, ld22;
    int tr11, tr21, tr22;
};

// Triangle::locate: the position in the buffer of entry (i, j), i >= j.
__device__ __forceinline__ long long locate(const Tri& t, long long i, long long j) {
    const long long s = t.split;
    long long off, ld, r, c;
    int tr;
    if (j >= s) {
        off = t.off22, ld = t.ld22, tr = t.tr22, r = i - s, c = j - s;
    } else if (i < s || t.joined) {
        off = t.off11, ld = t.ld11, tr = t.tr11, r = i, c = j;
    } else {
        off = t.off21, ld = t.ld21, tr = t.tr21, r = i - s, c = j;
    }
    return tr ? off + c + r * ld : off + r + c * ld;
}

#endif  // GPUMAT_TRIANGLE_CUH
