//! The CUDA kernels compile with NVRTC, without a GPU: every file of
//! `kernels/` for `sm_90` with no warning, every entry point the CUDA backend
//! launches is there with the parameter types it passes, every header is
//! used and resolves to the embedded one, a broken file gives an error naming
//! it with NVRTC's log, and the caches work.
//!
//! Without libnvrtc these tests print "skipped: libnvrtc not found" and pass,
//! unless `GPUMAT_REQUIRE_NVRTC=1` (as in CI), where they fail.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use gpumat::backend::cuda::kernels::{self, HEADERS, SOURCES, Source};

/// Whether to run; panics when NVRTC is required but missing.
fn nvrtc() -> bool {
    if kernels::nvrtc_available() {
        return true;
    }
    if std::env::var("GPUMAT_REQUIRE_NVRTC").is_ok_and(|v| v == "1") {
        panic!(
            "GPUMAT_REQUIRE_NVRTC=1 but libnvrtc could not be loaded (put the folder of libnvrtc.so.13 on LD_LIBRARY_PATH)"
        );
    }
    println!("skipped: libnvrtc not found");
    false
}

const ARCH: &str = "sm_90";

// PTX parameter types: pointers and `long long` are .u64, `int` .u32.
const P: &str = "u64";
const I64: &str = "u64";
const I32: &str = "u32";

/// Every entry point of every file, with the PTX types of its parameters:
/// the contract with `src/backend/cuda/mod.rs`.
fn expected() -> BTreeMap<&'static str, BTreeMap<String, Vec<&'static str>>> {
    let mut files: BTreeMap<&str, BTreeMap<String, Vec<&str>>> = BTreeMap::new();
    let mut add = |file, name: String, params: Vec<&'static str>| {
        files.entry(file).or_default().insert(name, params);
    };
    for (t, e) in [("f32", "f32"), ("f64", "f64"), ("i32", "u32")] {
        // fill(a, ld, rows, cols, value)
        add("elementwise.cu", format!("fill_{t}"), vec![P, I64, I64, I64, e]);
        // copy_block(src, lds, dst, ldd, rows, cols, transpose, tri)
        add("copy.cu", format!("copy_block_{t}"), vec![P, I64, P, I64, I64, I64, I32, I32]);
    }
    // eulerian_lagrangian(w, ldw, t, ldt, f, ldf, na, nc, transposed, ca, cc)
    add("shallow_water.cu", "eulerian_lagrangian".into(), vec![P, I64, P, I64, P, I64, I64, I64, I32, "f64", "f64"]);
    // adi_assemble(h, z, w, t, f, dl, d, du, rhs, r each with its ld, na, nc, transposed, mu, sa, sc, dt, friction, dry)
    let mut assemble = [P, I64].repeat(10);
    assemble.extend([I64, I64, I32, "f64", "f64", "f64", "f64", "f64", "f64"]);
    add("shallow_water.cu", "adi_assemble".into(), assemble);
    // adi_velocity(z, ldz, f, ldf, r, ldr, w, ldw, na, nc, transposed, ga)
    add("shallow_water.cu", "adi_velocity".into(), vec![P, I64, P, I64, P, I64, P, I64, I64, I64, I32, "f64"]);
    for t in ["f32", "f64"] {
        let e = t;
        // scale(a, ld, rows, cols, alpha)
        add("elementwise.cu", format!("scale_{t}"), vec![P, I64, I64, I64, e]);
        // axpy(alpha, x, ldx, y, ldy, rows, cols)
        add("elementwise.cu", format!("axpy_{t}"), vec![e, P, I64, P, I64, I64, I64]);
        // scale_rows / scale_cols(a, lda, rows, cols, d, incd)
        add("elementwise.cu", format!("scale_rows_{t}"), vec![P, I64, I64, I64, P, I64]);
        add("elementwise.cu", format!("scale_cols_{t}"), vec![P, I64, I64, I64, P, I64]);
        // symmetrize(a, ld, n, from_lower)
        add("elementwise.cu", format!("symmetrize_{t}"), vec![P, I64, I64, I32]);
        // fill_strict_triangle(a, ld, rows, cols, upper, value)
        add("elementwise.cu", format!("fill_strict_triangle_{t}"), vec![P, I64, I64, I64, I32, e]);
        // fill_random(a, ld, rows, cols, i0, j0, key, symmetric)
        add("elementwise.cu", format!("fill_random_{t}"), vec![P, I64, I64, I64, I64, I64, I64, I32]);
        // max_abs(a, ld, rows, cols, partial)
        add("reduce.cu", format!("max_abs_{t}"), vec![P, I64, I64, I64, P]);
        // sum_sq_scaled(a, ld, rows, cols, scale, partial)
        add("reduce.cu", format!("sum_sq_scaled_{t}"), vec![P, I64, I64, I64, "f64", P]);
        // col_abs_sums / row_abs_sums(a, ld, rows, cols, out)
        add("reduce.cu", format!("col_abs_sums_{t}"), vec![P, I64, I64, I64, P]);
        add("reduce.cu", format!("row_abs_sums_{t}"), vec![P, I64, I64, I64, P]);
        add("reduce.cu", format!("col_abs_max_{t}"), vec![P, I64, I64, I64, P]);
        add("reduce.cu", format!("row_abs_max_{t}"), vec![P, I64, I64, I64, P]);
        // iamax(x, inc, n, best_idx, best_val)
        add("reduce.cu", format!("iamax_{t}"), vec![P, I64, I64, P, P]);
        // first_non_finite(a, ld, rows, cols, first)
        add("reduce.cu", format!("first_non_finite_{t}"), vec![P, I64, I64, I64, P]);
        // potrf(a, ld, n, upper, info, offset)
        add("potrf.cu", format!("potrf_{t}"), vec![P, I64, I64, I32, P, I64]);
        // potrf_panel_{lower,upper}(a, ld, n, m, info, offset, arrivals)
        for triangle in ["lower", "upper"] {
            add("potrf.cu", format!("potrf_panel_{triangle}_{t}"), vec![P, I64, I64, I64, P, I64, P]);
            // ldlt_panel_{lower,upper}(the same, w, ldw, d, tol)
            let ldlt = vec![P, I64, I64, I64, P, I64, P, P, I64, P, "f64"];
            add("potrf.cu", format!("ldlt_panel_{triangle}_{t}"), ldlt);
        }
        // tridiagonal(dl, ldl, d, ldd, du, ldu, b, ldb, m, count, rows, pivoting, info)
        add("tridiagonal.cu", format!("tridiagonal_{t}"), vec![P, I64, P, I64, P, I64, P, I64, I64, I64, I32, I32, P]);
        // tridiagonal_partition(dl, ldl, d, ldd, du, ldu, b, ldb, m, count, rows, L, S, G, info)
        add(
            "tridiagonal.cu",
            format!("tridiagonal_partition_{t}"),
            vec![P, I64, P, I64, P, I64, P, I64, I64, I64, I32, I32, I32, I32, P],
        );
        // batch_getrf_panel(a, ld, stride, m, nb, ipiv, ipiv_inc, ipiv_stride, info, info_stride, offset)
        add("batch_lu.cu", format!("batch_getrf_panel_{t}"), vec![P, I64, I64, I32, I32, P, I64, I64, P, I64, I32]);
        for nb in [8, 16, 32] {
            for lanes in [16, 32].into_iter().filter(|&l| l >= nb) {
                // batch_getrf_warp{nb}x{lanes}(batch_getrf_panel's arguments, count)
                let args = vec![P, I64, I64, I32, I32, P, I64, I64, P, I64, I32, I64];
                add("batch_lu.cu", format!("batch_getrf_warp{nb}x{lanes}_{t}"), args);
                // batch_getrs_warp{nb}x{lanes}(lu, ld, stride, n, ipiv, ipiv_inc, ipiv_stride, b, ldb, bstride, nrhs, count)
                let args = vec![P, I64, I64, I32, P, I64, I64, P, I64, I64, I32, I64];
                add("batch_lu.cu", format!("batch_getrs_warp{nb}x{lanes}_{t}"), args);
            }
            // batch_potrf_warp{nb}(batch_potrf_panel's arguments, count)
            add(
                "batch_cholesky.cu",
                format!("batch_potrf_warp{nb}_{t}"),
                vec![P, I64, I64, I32, I32, P, I64, I32, I64],
            );
        }
        // batch_get{rf,rs}_rows64(the warp kernels' arguments)
        let getrf = vec![P, I64, I64, I32, I32, P, I64, I64, P, I64, I32, I64];
        add("batch_lu.cu", format!("batch_getrf_rows64_{t}"), getrf);
        let getrs = vec![P, I64, I64, I32, P, I64, I64, P, I64, I64, I32, I64];
        add("batch_lu.cu", format!("batch_getrs_rows64_{t}"), getrs);
        // batch_laswp(a, ld, stride, rows, cols, pairs, ipiv, ipiv_inc, ipiv_stride, k, shift, reverse)
        add("batch_lu.cu", format!("batch_laswp_{t}"), vec![P, I64, I64, I32, I32, I64, P, I64, I64, I32, I32, I32]);
        // batch_laswp_perm(a, ld, stride, rows, cols, ipiv, ipiv_inc, ipiv_stride, k, shift, reverse)
        add("batch_lu.cu", format!("batch_laswp_perm_{t}"), vec![P, I64, I64, I32, I32, P, I64, I64, I32, I32, I32]);
        // batch_potrf_panel(a, ld, stride, n, nb, info, info_stride, offset)
        add("batch_cholesky.cu", format!("batch_potrf_panel_{t}"), vec![P, I64, I64, I32, I32, P, I64, I32]);
        // batch_trsm(a, lda, astride, b, ldb, bstride, m, cols, pairs, lower, trans, unit)
        add("batch_trsm.cu", format!("batch_trsm_{t}"), vec![P, I64, I64, P, I64, I64, I32, I32, I64, I32, I32, I32]);
        // householder(a, lda, m, k, t, ldt, cells, epoch)
        add("qr.cu", format!("householder_{t}"), vec![P, I64, I64, I64, P, I64, P, I32]);
        add("qr.cu", format!("householder_shared_{t}"), vec![P, I64, I64, I64, P, I64, P, I32, I64]);
        // larfb_dots(v, ldv, m, kb, c, ldc, nc, w), larfb_update(v, ldv, m, kb, t, ldt, trans, w, c, ldc, nc)
        for nc in [1, 2, 4] {
            add("larfb.cu", format!("larfb_dots_{t}_{nc}"), vec![P, I64, I64, I64, P, I64, I32, P]);
            add("larfb.cu", format!("larfb_update_{t}_{nc}"), vec![P, I64, I64, I64, P, I64, I32, P, P, I64, I32]);
        }
        // trsv_wide(a, lda, n, lower, unit, x, incx, ticket, cells, epoch)
        for op in ["n", "t"] {
            add("trsv.cu", format!("trsv_wide_{t}_{op}"), vec![P, I64, I64, I32, I32, P, I64, P, P, I32]);
        }
    }
    // The Ozaki scheme II: exponents(x, vs, es, count, len, radius, s),
    // slice(x, vs, es, count, len, s, moduli, m, w, ldw, plane),
    // residues(c, ldc, rows, cols, m, r, ldr, accumulate), reconstruct(r, plane,
    // moduli, chunks, constants, s, t, rows, cols, ldr, alpha, beta, c, ldc, part),
    // sample(x, vs, es, count, len, samples, w, ldw, col0).
    add("ozaki.cu", "ozaki_exponents".into(), vec![P, I64, I64, I64, I64, "f64", P]);
    add("ozaki.cu", "ozaki_exponents_rows".into(), vec![P, I64, I64, I64, "f64", P]);
    add("ozaki.cu", "ozaki_slice".into(), vec![P, I64, I64, I64, I64, P, I32, P, P, I64, I64]);
    add("ozaki.cu", "ozaki_residues".into(), vec![P, I64, I64, I64, I32, P, I64, I32]);
    add(
        "ozaki.cu",
        "ozaki_reconstruct".into(),
        vec![P, I64, I32, I32, P, P, P, I64, I64, I64, "f64", "f64", P, I64, I32],
    );
    add("ozaki.cu", "ozaki_sample".into(), vec![P, I64, I64, I64, I64, I64, P, I64, I64]);
    // cast(src, lds, dst, ldd, rows, cols)
    add("elementwise.cu", "cast_f64_f32".into(), vec![P, I64, P, I64, I64, I64]);
    add("elementwise.cu", "cast_f32_f64".into(), vec![P, I64, P, I64, I64, I64]);
    // Operands of tensor-core products: cast(src, lds, dst, ldd, rows, cols),
    // split(src, lds, hi, lo, rows, cols).
    add("elementwise.cu", "cast_f32_f16".into(), vec![P, I64, P, I64, I64, I64]);
    add("elementwise.cu", "cast_f32_bf16".into(), vec![P, I64, P, I64, I64, I64]);
    add("elementwise.cu", "split_f32_f16x2".into(), vec![P, I64, P, P, I64, I64]);
    // add_triangle(c, ldc, p, ldp, n, upper, alpha, beta)
    add("elementwise.cu", "add_triangle_f32".into(), vec![P, I64, P, I64, I64, I32, "f32", "f32"]);
    // LU.
    for t in ["f32", "f64"] {
        // getrf_panel(a, ld, m, nb, ipiv, incp, info, offset, partial, tol)
        add("lu_panel_block.cu", format!("getrf_panel_{t}"), vec![P, I64, I64, I64, P, I64, P, I64, I32, "f64"]);
        // laswp(a, ld, m, n, ipiv, incp, first, k, shift, reverse)
        add("lu.cu", format!("laswp_{t}"), vec![P, I64, I64, I64, P, I64, I64, I64, I64, I32]);
        // permute_rows(src, lds, dst, ldd, rows, cols, perm, incp, inverse)
        add("lu.cu", format!("permute_rows_{t}"), vec![P, I64, P, I64, I64, I64, P, I64, I32]);
        // getrf_panel_nopiv(a, ld, m, nb, ipiv, incp, info, offset, tol, arrivals)
        add("lu_panel_nopiv.cu", format!("getrf_panel_nopiv_{t}"), vec![P, I64, I64, I64, P, I64, P, I64, "f64", P]);
        // butterfly(a, ld, rows, cols, left_key, left, left_trans, right_key, right)
        add("butterfly.cu", format!("butterfly_{t}"), vec![P, I64, I64, I64, I64, I32, I32, I64, I32]);
        // The panel kernels of many blocks: getrf_panel's arguments, then
        // grid: part_v, part_i, stage, bar; ll: cells, epoch; reg: cells,
        // epoch, left, right; cluster: left, right.
        let panel = [P, I64, I64, I64, P, I64, P, I64, I32, "f64"];
        for (file, kind, extra) in [
            ("lu_panel_grid.cu", "grid", &[P, P, P, P][..]),
            ("lu_panel_ll.cu", "ll", &[P, I32][..]),
            ("lu_panel_reg.cu", "reg", &[P, I32, I64, I64][..]),
            ("lu_panel_cluster.cu", "cluster", &[I64, I64][..]),
        ] {
            add(file, format!("getrf_panel_{kind}_{t}"), [&panel[..], extra].concat());
        }
    }
    // LDLᵀ.
    for t in ["f32", "f64"] {
        // sytrf_panel(a, n, k, nb, split, joined, then (offset, ld, transposed)
        // of l11, l21 and l22, l, ldl, w, ldw, ipiv, incp, d, incd, e, ince,
        // info, incinfo, pivoted, tol, part_v, part_i, bar)
        let piece = [I64, I64, I32];
        let head = [P, I64, I64, I64, I64, I32];
        let tail = [P, I64, P, I64, P, I64, P, I64, P, I64, P, I64, I32, "f64", P, P, P];
        add("ldlt.cu", format!("sytrf_panel_{t}"), [&head[..], &piece, &piece, &piece, &tail].concat());
        // block_diagonal_solve(d, incd, e, ince, b, ldb, n, nrhs)
        add("ldlt.cu", format!("block_diagonal_solve_{t}"), vec![P, I64, P, I64, P, I64, I64, I64]);
        // Aasen: every kernel but the placement starts with the matrix.
        let matrix = [&head[..], &piece, &piece, &piece].concat();
        // aasen_panel(<matrix>, l, ldl, y, ldy, rows, incr, d, incd, e, ince, resident, cells, epoch)
        let tail = [P, I64, P, I64, P, I64, P, I64, P, I64, I32, P, I32];
        add("aasen.cu", format!("aasen_panel_{t}"), [&matrix[..], &tail].concat());
        // aasen_gather / aasen_scatter(<matrix>, at, cand, valid, left, trailing)
        for name in ["aasen_gather", "aasen_scatter"] {
            add("aasen.cu", format!("{name}_{t}"), [&matrix[..], &[P, P, P, P, P]].concat());
        }
        // aasen_place(<matrix>, at, l, ldl, y, ldy, d, incd, x, ldx, yx, ldyx)
        let tail = [P, P, I64, P, I64, P, I64, P, I64, P, I64];
        add("aasen.cu", format!("aasen_place_{t}"), [&matrix[..], &tail].concat());
    }
    // aasen_placement(rows, incr, n, k, nb, ipiv, incp, at, cand, valid)
    add("aasen.cu", "aasen_placement".into(), vec![P, I64, I64, I64, I64, P, I64, P, P, P]);
    for (t, e) in [("f32", "f32"), ("f64", "f64")] {
        for tiles in [1, 2, 4, 8] {
            // trsm_lower_<t>_<tiles>(a, lda, b, ldb, m, n, alpha, unit, trans, prefetch)
            add("trsm.cu", format!("trsm_lower_{t}_{tiles}"), vec![P, I64, P, I64, I64, I64, e, I32, I32, I32]);
        }
    }
    // split_tf32_f64(a, lda, d, incd, rows, cols, w, ldw)
    add("split.cu", "split_tf32_f64".into(), vec![P, I64, P, I64, I64, I64, P, I64]);
    // row_max_f64(a, lda, d, incd, rows, n, cols, part)
    add("split.cu", "row_max_f64".into(), vec![P, I64, P, I64, I64, I64, I64, P]);
    // row_scale_f64(part, rows, chunks, scale)
    add("split.cu", "row_scale_f64".into(), vec![P, I64, I64, P]);
    // split_f16_f64(a, lda, d, incd, scale, rows, cols, w, ldw)
    add("split.cu", "split_f16_f64".into(), vec![P, I64, P, I64, P, I64, I64, P, I64]);
    // unscale_symmetrize_f32(c, ldc, n, scale)
    add("split.cu", "unscale_symmetrize_f32".into(), vec![P, I64, I64, P]);
    // weighted_misfit_f64(a, lda, m, n, x, incx, b, incb, d, incd, w_hi, w_lo)
    add("residual.cu", "weighted_misfit_f64".into(), vec![P, I64, I64, I64, P, I64, P, I64, P, I64, P, P]);
    // weighted_partials_f64(a, lda, m, n, w_hi, w_lo, cols, part)
    add("residual.cu", "weighted_partials_f64".into(), vec![P, I64, I64, I64, P, P, I64, P]);
    // weighted_combine_f64(part, m, chunks, r, incr)
    add("residual.cu", "weighted_combine_f64".into(), vec![P, I64, I64, P, I64]);
    files
}

/// The `.entry` points of a PTX module with the types of their parameters.
fn entries(ptx: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry ") {
        rest = &rest[at + ".entry ".len()..];
        let open = rest.find('(').expect("an entry has a parameter list");
        let close = rest.find(')').expect("an entry's parameter list ends");
        let name = rest[..open].trim().to_string();
        let params = rest[open + 1..close]
            .split(',')
            .filter_map(|p| p.split_whitespace().nth(1))
            .map(|ty| ty.trim_start_matches('.').to_string())
            .collect();
        out.insert(name, params);
        rest = &rest[close..];
    }
    out
}

fn source(name: &str) -> &'static Source {
    SOURCES.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no source {name}"))
}

/// A test-local source that no other test (or earlier run) has compiled.
fn fresh(tag: &str, body: &str) -> Source {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let code = format!("// {tag} {} {nanos}\n{body}\n", std::process::id());
    Source { name: "probe.cu", code: Box::leak(code.into_boxed_str()) }
}

const PROBE: &str = "extern \"C\" __global__ void probe(float* a) { a[threadIdx.x] = 1.0f; }";

fn temp_dir(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    std::env::temp_dir().join(format!("gpumat-kernels-{tag}-{}-{nanos}", std::process::id()))
}

/// The names of the files of `kernels/` that end in `ending`, sorted.
fn files_ending_in(ending: &str) -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(ending))
        .collect();
    names.sort();
    names
}

/// The names that `code` includes with `#include "name"`.
fn includes(code: &str) -> Vec<&str> {
    code.lines().filter_map(|l| l.trim_start().strip_prefix("#include")?.split('"').nth(1)).collect()
}

#[test]
fn sources_are_the_files_of_the_kernels_folder() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let mut embedded: Vec<String> = SOURCES.iter().map(|s| s.name.to_string()).collect();
    embedded.sort();
    assert_eq!(embedded, files_ending_in(".cu"), "SOURCES must embed every kernels/*.cu");
    let expected: Vec<String> = expected().keys().map(|k| k.to_string()).collect();
    assert_eq!(embedded, expected, "the test must list the entries of every file");
    let mut headers: Vec<String> = HEADERS.iter().map(|h| h.name.to_string()).collect();
    headers.sort();
    assert_eq!(headers, files_ending_in(".cuh"), "HEADERS must embed every kernels/*.cuh");
    for s in SOURCES.iter().chain(HEADERS) {
        assert_eq!(s.code, std::fs::read_to_string(dir.join(s.name)).unwrap(), "{} is embedded as is", s.name);
    }
}

#[test]
fn every_header_is_used_and_every_include_is_a_header() {
    // The headers each source reaches, through the headers it includes.
    let header = |name: &str| HEADERS.iter().find(|h| h.name == name);
    let mut used = BTreeSet::new();
    for s in SOURCES.iter().chain(HEADERS) {
        for name in includes(s.code) {
            assert!(header(name).is_some(), "{} includes {name}, which is not in HEADERS", s.name);
        }
    }
    for s in SOURCES {
        let mut todo = includes(s.code);
        while let Some(name) = todo.pop() {
            if used.insert(name) {
                todo.extend(includes(header(name).unwrap().code));
            }
        }
    }
    let unused: Vec<_> = HEADERS.iter().map(|h| h.name).filter(|n| !used.contains(n)).collect();
    assert!(unused.is_empty(), "headers no source includes: {unused:?}");
}

#[test]
fn an_include_resolves_to_the_embedded_header() {
    if !nvrtc() {
        return;
    }
    // The working directory (the crate's root) has no common.cuh: what
    // NVRTC finds is the embedded text.
    let uses = fresh(
        "include",
        "#include \"common.cuh\"\nextern \"C\" __global__ void probe(double* a) { a[0] = nan_max(a[0], a[1]); }",
    );
    let ptx = kernels::compile_uncached(&uses, ARCH).unwrap_or_else(|e| panic!("{e}")).ptx;
    assert!(ptx.contains(".entry probe"));
    let missing = fresh("missing", "#include \"no_such_header.cuh\"\n");
    let err = kernels::compile_uncached(&missing, ARCH).expect_err("an unknown header must not compile").to_string();
    assert!(err.contains("no_such_header.cuh"), "names the header: {err}");
}

#[test]
fn every_source_compiles_without_warnings_and_has_its_entries() {
    if !nvrtc() {
        return;
    }
    // The backend finds a loaded kernel by its entry name alone.
    let mut owner: BTreeMap<String, &str> = BTreeMap::new();
    for (file, want) in expected() {
        let out = kernels::compile_uncached(source(file), ARCH).unwrap_or_else(|e| panic!("{e}"));
        assert!(out.log.trim().is_empty(), "NVRTC warned on {file}:\n{}", out.log);
        assert!(out.ptx.contains(&format!(".target {ARCH}")), "{file}: PTX for {ARCH}");
        let got = entries(&out.ptx);
        for (name, params) in &want {
            let have = got.get(name).unwrap_or_else(|| panic!("{file}: no entry {name}; have {:?}", got.keys()));
            assert_eq!(have, params, "{file}: parameter types of {name}");
        }
        let extra: Vec<_> = got.keys().filter(|k| !want.contains_key(k.as_str())).collect();
        assert!(extra.is_empty(), "{file}: entries not listed in this test: {extra:?}");
        for name in got.into_keys() {
            if let Some(other) = owner.insert(name.clone(), file) {
                panic!("entry {name} is in both {other} and {file}");
            }
        }
    }
}

#[test]
fn every_source_compiles_for_other_architectures() {
    if !nvrtc() {
        return;
    }
    // The oldest architecture CUDA 13 supports, Ampere, Ada and Blackwell,
    // an architecture a thread: NVRTC compiles separate programs at once,
    // and this is the longest test of the suite.
    std::thread::scope(|scope| {
        for arch in ["sm_75", "sm_80", "sm_86", "sm_89", "sm_100", "sm_103", "sm_120"] {
            scope.spawn(move || {
                for s in SOURCES {
                    let out = kernels::compile_uncached(s, arch).unwrap_or_else(|e| panic!("{e}"));
                    assert!(out.log.trim().is_empty(), "NVRTC warned on {} for {arch}:\n{}", s.name, out.log);
                }
            });
        }
    });
}

#[test]
fn a_broken_source_names_the_file_and_gives_the_log() {
    if !nvrtc() {
        return;
    }
    let broken = Source {
        name: "broken_probe.cu",
        code: "extern \"C\" __global__ void broken(float* a) { a[0] = undeclared_thing; }\n",
    };
    let err = kernels::compile(&broken, ARCH).expect_err("a broken source must not compile").to_string();
    assert!(err.contains("broken_probe.cu"), "names the file: {err}");
    assert!(err.contains("undeclared_thing"), "has NVRTC's log: {err}");
    assert!(err.contains("error"), "has NVRTC's log: {err}");
    assert!(err.contains(ARCH), "names the architecture: {err}");
}

#[test]
fn compiling_twice_gives_the_same_ptx() {
    if !nvrtc() {
        return;
    }
    // NVRTC writes the working directory into the line-info `.file`
    // directives, so a disk cache filled from another checkout differs there.
    let code = |ptx: &str| ptx.lines().filter(|l| !l.trim_start().starts_with(".file")).collect::<Vec<_>>().join("\n");
    for s in SOURCES {
        let a = kernels::compile(s, ARCH).unwrap().to_src();
        let b = kernels::compile(s, ARCH).unwrap().to_src();
        assert_eq!(a, b, "{}", s.name);
        assert_eq!(code(&a), code(&kernels::compile_uncached(s, ARCH).unwrap().ptx), "{}: cached = fresh", s.name);
    }
}

#[test]
fn the_disk_cache_is_keyed_by_the_source() {
    if !nvrtc() {
        return;
    }
    let dir = temp_dir("cache");
    let version = kernels::nvrtc_version().unwrap();
    let file = |s: &Source| dir.join(format!("{:016x}.ptx", kernels::cache_key(s.code, HEADERS, ARCH, version)));

    // A compilation leaves its PTX on disk under the key.
    let one = fresh("one", PROBE);
    let ptx = kernels::compile_in(&one, ARCH, Some(&dir)).unwrap().to_src();
    assert_eq!(std::fs::read_to_string(file(&one)).unwrap(), ptx);

    // Another source (a comment changed) has another key and another file.
    let two = fresh("two", PROBE);
    assert_ne!(file(&one), file(&two));
    kernels::compile_in(&two, ARCH, Some(&dir)).unwrap();
    assert!(file(&two).exists());
    assert!(file(&one).exists());

    // A file already on disk is used as is ...
    let three = fresh("three", PROBE);
    let planted = format!("// planted\n{ptx}");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(file(&three), &planted).unwrap();
    assert_eq!(kernels::compile_in(&three, ARCH, Some(&dir)).unwrap().to_src(), planted);

    // ... unless it does not look like PTX for the architecture: then the
    // source is compiled again and the file replaced.
    let four = fresh("four", PROBE);
    std::fs::write(file(&four), "garbage").unwrap();
    let ptx = kernels::compile_in(&four, ARCH, Some(&dir)).unwrap().to_src();
    assert!(ptx.contains(".entry probe"));
    assert_eq!(std::fs::read_to_string(file(&four)).unwrap(), ptx);

    // An unusable directory only skips the disk cache.
    let blocked = dir.join("not-a-dir");
    std::fs::write(&blocked, "").unwrap();
    let five = fresh("five", PROBE);
    assert!(kernels::compile_in(&five, ARCH, Some(&blocked)).unwrap().to_src().contains(".entry probe"));

    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_cache_key_is_stable_and_sees_every_input() {
    // FNV-1a 64 does not change with the Rust version: a key computed today
    // must be the same tomorrow, or every user recompiles (harmless, but a
    // sign that the key changed by accident).
    let key = kernels::cache_key("code", HEADERS, "sm_90", (13, 0));
    assert_eq!(key, kernels::cache_key("code", HEADERS, "sm_90", (13, 0)));
    assert_ne!(key, kernels::cache_key("code ", HEADERS, "sm_90", (13, 0)));
    assert_ne!(key, kernels::cache_key("code", HEADERS, "sm_80", (13, 0)));
    assert_ne!(key, kernels::cache_key("code", HEADERS, "sm_90", (13, 1)));
    assert_ne!(key, kernels::cache_key("code", HEADERS, "sm_90", (12, 0)));
    // A header's text or name changed: compiled again.
    let edited: Vec<Source> = HEADERS
        .iter()
        .enumerate()
        .map(|(k, h)| if k == 0 { Source { name: h.name, code: "// edited" } } else { *h })
        .collect();
    assert_ne!(key, kernels::cache_key("code", &edited, "sm_90", (13, 0)));
    let renamed = [Source { name: "other.cuh", code: HEADERS[0].code }];
    assert_ne!(
        kernels::cache_key("code", &HEADERS[..1], "sm_90", (13, 0)),
        kernels::cache_key("code", &renamed, "sm_90", (13, 0))
    );
    // Field boundaries matter: ("ab", "c") is not ("a", "bc").
    let none: &[Source] = &[];
    assert_ne!(kernels::cache_key("ab", none, "c", (13, 0)), kernels::cache_key("a", none, "bc", (13, 0)));
    let split = |name, code| [Source { name, code }];
    assert_ne!(
        kernels::cache_key("", &split("a.cuh", "xy"), "sm_90", (13, 0)),
        kernels::cache_key("", &split("a.cuhx", "y"), "sm_90", (13, 0))
    );
}

#[test]
fn without_nvrtc_compiling_is_an_error_not_a_panic() {
    if kernels::nvrtc_available() {
        return;
    }
    let err = kernels::compile(&SOURCES[0], ARCH).unwrap_err().to_string();
    assert!(err.contains("libnvrtc"), "{err}");
}

/// The tile of grid position `(x, y)` in `copy.cu`'s folded space, `(row,
/// column)` in tiles, or `None`: a transcription of the kernel's `unfold`.
fn unfold(x: usize, y: usize, r: usize, c: usize, tri: i32) -> Option<(usize, usize)> {
    let m = r.min(c);
    let l = if tri == 1 { r } else { c };
    let (p, q) = if y < l - x {
        (x + y, x)
    } else {
        let q = (m - 1).checked_sub(x)?;
        if q <= x {
            return None;
        }
        (q + (y - (l - x)), q)
    };
    if p >= l {
        return None;
    }
    Some(if tri == 1 { (p, q) } else { (q, p) })
}

#[test]
fn the_copy_grid_folds_a_triangle_onto_its_tiles() {
    // Every tile that meets the mask is visited exactly once by the grid of
    // copy_block_grid, and hardly any block is idle.
    for rows in [1, 31, 32, 33, 64, 100, 257, 1000, 1025] {
        for cols in [1, 32, 33, 65, 100, 257, 1000] {
            for tri in [1, 2] {
                let (gx, gy, gz) = kernels::copy_block_grid(rows, cols, tri);
                assert_eq!(gz, 1);
                let (r, c) = (rows.div_ceil(32), cols.div_ceil(32));
                let mut seen = vec![0u32; r * c];
                let mut idle = 0;
                for y in 0..gy as usize {
                    for x in 0..gx as usize {
                        match unfold(x, y, r, c, tri) {
                            Some((bi, bj)) => seen[bi + bj * r] += 1,
                            None => idle += 1,
                        }
                    }
                }
                for bj in 0..c {
                    for bi in 0..r {
                        let meets = if tri == 1 { bi >= bj } else { bi <= bj };
                        assert_eq!(seen[bi + bj * r], meets as u32, "{rows}×{cols} tri {tri}: tile ({bi}, {bj})");
                    }
                }
                assert!(idle <= r.max(c), "{rows}×{cols} tri {tri}: {idle} idle blocks");
            }
        }
    }
    // The full copy: one block per tile; every dimension capped.
    assert_eq!(kernels::copy_block_grid(100, 257, 0), (9, 4, 1));
    assert_eq!(kernels::copy_block_grid(0, 0, 0), (1, 1, 1));
    assert_eq!(kernels::copy_block_grid(40_000_000, 1, 0), (1, 65_535, 1));
    assert_eq!(kernels::COPY_BLOCK_DIM, (32, 8, 1));
}

#[test]
fn the_abs_sum_grids_split_only_what_is_too_narrow() {
    // Many columns: one block per column, no split.
    assert_eq!(kernels::col_abs_sums_grid(5000, 5000), (5000, 1, 1));
    // Few tall columns: the rows are split, each chunk at least 2048 rows.
    let (x, y, _) = kernels::col_abs_sums_grid(4_000_000, 64);
    assert_eq!(x, 64);
    assert!(y > 1 && 4_000_000 / y as usize >= 2048, "{y}");
    // Few short columns: nothing to split.
    assert_eq!(kernels::col_abs_sums_grid(100, 3), (3, 1, 1));
    // Many rows: one block per 32 rows, no split.
    assert_eq!(kernels::row_abs_sums_grid(100_000, 100), (3125, 1, 1));
    // Few wide rows: the columns are split, each chunk at least 64 columns.
    let (x, y, _) = kernels::row_abs_sums_grid(64, 4_000_000);
    assert_eq!(x, 2);
    assert!(y > 1 && 4_000_000 / y as usize >= 64, "{y}");
    assert_eq!(kernels::row_abs_sums_grid(0, 0), (1, 1, 1));
}
