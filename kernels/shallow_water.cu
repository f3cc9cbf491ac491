// The per-step passes of the semi-implicit shallow-water scheme of Casulli
// (1990) on a staggered grid, in the coordinates of a sweep: `a` along the
// lines made implicit (na cells, na + 1 normal faces), `c` across them (nc
// lines). Entry (a, c) of a grid with leading dimension `ld` lies at
// p[a + c*ld], or at p[c + a*ld] when `transposed` (the sweep along y).
// The arithmetic is that of src/backend/cpu/shallow_water.rs, operation for
// operation (the compiler may fuse a product and a sum into one FMA).
//
// Kernels: eulerian_lagrangian (the convected normal velocity f on the
// normal faces), adi_assemble (the tridiagonal systems of a half step, one
// per line, and the friction factors r), adi_velocity (the new normal
// velocity from the new surface).
//
// Launch contract: any 1-D launch. Each thread walks a grid-stride loop
// over the entries it writes in memory order, so consecutive threads touch
// consecutive addresses in either sweep.

#include "common.cuh"

struct Grid {
    const double* p;
    long long ld;
    int transposed;
    __device__ __forceinline__ double operator()(long long a, long long c) const {
        return transposed ? p[c + a * ld] : p[a + c * ld];
    }
};

struct GridMut {
    double* p;
    long long ld;
    int transposed;
    __device__ __forceinline__ double& operator()(long long a, long long c) const {
        return transposed ? p[c + a * ld] : p[a + c * ld];
    }
};

// Calls body(a, c) for every entry of a grid of `along` x `across` entries
// that belongs to this thread, in memory order. Grids of fewer than 2^31
// entries split the index with 32-bit division: the 64-bit one is a
// software routine on the GPU.
template <typename Body>
__device__ __forceinline__ void for_each_point(long long along, long long across, int transposed, Body body) {
    const long long total = along * across;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long inner = transposed ? across : along;
    if (total <= 0x7fffffffLL) {
        const unsigned n = (unsigned)inner, end = (unsigned)total, step = (unsigned)stride;
        for (unsigned k = (unsigned)first; k < end; k += step) {
            const unsigned outer = k / n, rest = k - outer * n;
            if (transposed) {
                body((long long)outer, (long long)rest);
            } else {
                body((long long)rest, (long long)outer);
            }
        }
        return;
    }
    for (long long k = first; k < total; k += stride) {
        const long long outer = k / inner, rest = k - outer * inner;
        if (transposed) {
            body(outer, rest);
        } else {
            body(rest, outer);
        }
    }
}

// The mean of the four tangential velocities around normal face (a, c),
// 0 < a < na.
__device__ __forceinline__ double tangential_mean(Grid t, long long a, long long c) {
    return 0.25 * ((t(a - 1, c) + t(a, c)) + (t(a - 1, c + 1) + t(a, c + 1)));
}

// w at the point (fa, fc) of its grid, 0 <= fa <= na, 0 <= fc <= nc - 1,
// interpolated bilinearly.
__device__ __forceinline__ double bilinear(Grid w, long long na, long long nc, double fa, double fc) {
    long long a0 = (long long)floor(fa);
    if (a0 > na - 1) a0 = na - 1;
    long long c0 = (long long)floor(fc);
    const long long cmax = nc >= 2 ? nc - 2 : 0;
    if (c0 > cmax) c0 = cmax;
    const long long c1 = c0 + 1 < nc - 1 ? c0 + 1 : nc - 1;
    const double sa = fa - (double)a0, sc = fc - (double)c0;
    const double low = (1.0 - sa) * w(a0, c0) + sa * w(a0 + 1, c0);
    const double high = (1.0 - sa) * w(a0, c1) + sa * w(a0 + 1, c1);
    return (1.0 - sc) * low + sc * high;
}

__device__ __forceinline__ double clamp_to(double x, double hi) { return x < 0.0 ? 0.0 : (x > hi ? hi : x); }

// f := w at the foot of the streamline through each interior normal face,
// traced back one step with the velocity there held constant (ca = dt/da,
// cc = dt/dc); 0 on the walls.
extern "C" __global__ void eulerian_lagrangian(const double* normal, long long ldw, const double* tangential,
                                               long long ldt, double* f, long long ldf, long long na, long long nc,
                                               int transposed, double ca, double cc) {
    const Grid w{normal, ldw, transposed}, t{tangential, ldt, transposed};
    const GridMut out{f, ldf, transposed};
    for_each_point(na + 1, nc, transposed, [&](long long a, long long c) {
        if (a == 0 || a == na) {
            out(a, c) = 0.0;
            return;
        }
        const double foot_a = clamp_to((double)a - w(a, c) * ca, (double)na);
        const double foot_c = clamp_to((double)c - tangential_mean(t, a, c) * cc, (double)(nc - 1));
        out(a, c) = bilinear(w, na, nc, foot_a, foot_c);
    });
}

// The total depth on a face between cells (h_l, z_l) and (h_r, z_r) for
// the flow w through it (Stepping::face_depth): with dry = 0 the mean of
// the cells' depths; with dry > 0 the higher bottom under the upwind
// surface, 0 (a dry face) unless above dry.
__device__ __forceinline__ double face_depth(double dry, double h_l, double z_l, double h_r, double z_r, double w) {
    if (dry > 0.0) {
        const double z = w > 0.0 ? z_l : (w < 0.0 ? z_r : fmax(z_l, z_r));
        const double depth = fmin(h_l, h_r) + z;
        return depth > dry ? depth : 0.0;
    }
    return 0.5 * ((h_l + z_l) + (h_r + z_r));
}

// (alpha, r) on normal face a of line c: r = 1/(1 + dt*gamma), alpha = H*r,
// gamma Chezy's friction; both 0 on the walls and on dry faces.
__device__ __forceinline__ void face(Grid h, Grid z, Grid w, Grid t, long long na, long long a, long long c, double dt,
                                     double friction, double dry, double* alpha, double* r) {
    *alpha = 0.0;
    *r = 0.0;
    if (a == 0 || a == na) return;
    const double wn = w(a, c);
    const double H = face_depth(dry, h(a - 1, c), z(a - 1, c), h(a, c), z(a, c), wn);
    if (H == 0.0) return;
    const double wt = tangential_mean(t, a, c);
    const double gamma = friction * sqrt(wn * wn + wt * wt) / H;
    *r = 1.0 / (1.0 + dt * gamma);
    *alpha = H * *r;
}

// The tridiagonal system of line c, row a: dl, d, du and rhs, and r on
// normal face a (and on face na from the line's last cell).
extern "C" __global__ void adi_assemble(const double* hp, long long ldh, const double* zp, long long ldz,
                                        const double* wp, long long ldw, const double* tp, long long ldt,
                                        const double* fp, long long ldf, double* dlp, long long lddl, double* dp,
                                        long long ldd, double* dup, long long lddu, double* rhsp, long long ldrhs,
                                        double* rp, long long ldr, long long na, long long nc, int transposed,
                                        double mu, double sa, double sc, double dt, double friction, double dry) {
    const Grid h{hp, ldh, transposed}, z{zp, ldz, transposed}, w{wp, ldw, transposed}, t{tp, ldt, transposed},
        f{fp, ldf, transposed};
    const GridMut dl{dlp, lddl, transposed}, d{dp, ldd, transposed}, du{dup, lddu, transposed},
        rhs{rhsp, ldrhs, transposed}, r{rp, ldr, transposed};
    for_each_point(na, nc, transposed, [&](long long a, long long c) {
        double alpha_lo, r_lo, alpha_hi, r_hi;
        face(h, z, w, t, na, a, c, dt, friction, dry, &alpha_lo, &r_lo);
        face(h, z, w, t, na, a + 1, c, dt, friction, dry, &alpha_hi, &r_hi);
        dl(a, c) = -mu * alpha_lo;
        du(a, c) = -mu * alpha_hi;
        d(a, c) = 1.0 + mu * (alpha_lo + alpha_hi);
        const double beta_lo =
            c == 0 ? 0.0 : face_depth(dry, h(a, c - 1), z(a, c - 1), h(a, c), z(a, c), t(a, c));
        const double beta_hi =
            c + 1 == nc ? 0.0 : face_depth(dry, h(a, c), z(a, c), h(a, c + 1), z(a, c + 1), t(a, c + 1));
        const double along = alpha_hi * f(a + 1, c) - alpha_lo * f(a, c);
        const double across = beta_hi * t(a, c + 1) - beta_lo * t(a, c);
        rhs(a, c) = z(a, c) - sa * along - sc * across;
        r(a, c) = r_lo;
        if (a + 1 == na) r(na, c) = r_hi;
    });
}

// w := r*(f - ga*(z(a) - z(a-1))) on the interior normal faces (ga =
// g*dt/da), 0 on the walls.
extern "C" __global__ void adi_velocity(const double* zp, long long ldz, const double* fp, long long ldf,
                                        const double* rp, long long ldr, double* wp, long long ldw, long long na,
                                        long long nc, int transposed, double ga) {
    const Grid z{zp, ldz, transposed}, f{fp, ldf, transposed}, r{rp, ldr, transposed};
    const GridMut w{wp, ldw, transposed};
    for_each_point(na + 1, nc, transposed, [&](long long a, long long c) {
        w(a, c) = (a == 0 || a == na) ? 0.0 : r(a, c) * (f(a, c) - ga * (z(a, c) - z(a - 1, c)));
    });
}
