#!/usr/bin/env bash
# Builds gpumat, gpumat-bench and the GPU test binaries here (no CUDA
# needed: cudarc loads the libraries at run time), packs them into .gpu/
# (git-ignored), and writes .gpu/run.sh, the one command to run on the GPU
# machine from the repository root. That command runs the test suite with
# the CUDA backend, compute-sanitizer on the kernel tests and the
# side-by-side benchmarks (gpumat-bench), writing logs and results into
# $OUT, and prints a short summary last.
#
#   scripts/gpu-run.sh            # then, on the GPU machine (carry .gpz):
#                                 # tar -xJf .gpz/gpu.tar.xz && bash .gpu/run.sh
#
# The binaries are also packed into .gpz/gpu.tar.xz (about an eighth of
# their size), which is what travels: the whole suite is larger than a
# device call carries.
#
# run.sh reads: SKIP_TESTS=1 (no test suites), SANITIZE="suites" (default
# primitives cholesky lu ldlt_primitives qr scaled_gram tridiagonal batch_dense; empty for none; each run cut at
# SANITIZE_TIMEOUT seconds, default 300), SKIP_BENCH=1, BENCH_SUITES, BENCH_SIZES,
# BENCH_ARGS (more flags of gpumat-bench, e.g. --reps 3 --highs-threads 16),
# PROFILE=suite (an nsys timeline of that bench at PROFILE_SIZES), NCU=regex
# (Nsight Compute on launch NCU_SKIPS, default 0, of the kernels of that name
# in bench NCU_SUITE, default lu-trace, at NCU_SIZES: details and
# per-instruction samples in $OUT).
set -euo pipefail
cd "$(dirname "$0")/.."

# Test suites that exercise the device; the others are host-only. SUITES
# in the environment builds only those (a quicker round trip).
ALL="api primitives kernels cholesky lu"
# Symmetric indefinite LDLᵀ, and its GPU primitives against the CPU's bit for bit.
ALL="$ALL ldlt ldlt_primitives"
# Householder QR and least squares.
ALL="$ALL qr lstsq"
# Scaled Gram matrices A·D²·Aᵀ and mixed-precision weighted least squares.
ALL="$ALL scaled_gram wls"
# Matrix::solve on every route, and results at the ends of the range of f64.
ALL="$ALL solve range"
# Batched solvers.
ALL="$ALL tridiagonal batch batch_dense split"
# The nonblocking API: enqueue times, deferred errors, dropped results.
ALL="$ALL nonblocking"
# The shallow-water model (its CPU/GPU agreement and analytic checks).
ALL="$ALL swe"
# Mixed-precision solves: tensor-core factors refined by GMRES-IR.
ALL="$ALL mixed"
# Interior-point linear programming on the normal equations.
ALL="$ALL lp"
# One factorization over several GPUs (NCCL ranks on every grid they allow).
ALL="$ALL dist"
# FP64 products from INT8 products (the Ozaki scheme II).
ALL="$ALL ozaki"
SUITES=${SUITES:-$ALL}

rm -rf .gpu && mkdir -p .gpu/bin
cargo build --release --bin gpumat --bin gpumat-bench
cp "${CARGO_TARGET_DIR:-target}"/release/{gpumat,gpumat-bench} .gpu/bin/
for suite in $SUITES; do
    exe=$(cargo test --release --no-run --test "$suite" --message-format=json 2>/dev/null |
        python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["executable"])')
    cp "$exe" ".gpu/bin/test-$suite"
done
strip .gpu/bin/*

cat > .gpu/run.sh <<'RUN'
#!/usr/bin/env bash
# Runs on the GPU machine from the repository root. Results go to $OUT.
set -u
OUT=${OUT:-.gpu/out}
mkdir -p "$OUT"
export GPUMAT_DEVICE=cuda
summary=()
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/nvidia-smi.csv" 2>&1
.gpu/bin/gpumat info > "$OUT/info.txt" 2>&1
summary+=("info: $(grep device: "$OUT/info.txt")")
.gpu/bin/gpumat demo --m 4000 --n 8000 > "$OUT/demo.log" 2>&1
summary+=("demo (rc $?): $(tail -1 "$OUT/demo.log")")
for t in .gpu/bin/test-*; do
    [ -n "${SKIP_TESTS:-}" ] && break
    name=$(basename "$t")
    # The long cases too: some GPU paths (more blocks than SMs, panels longer
    # than the GPU holds) are reached only by them. Several GPUs in one
    # process load their kernels eagerly (gpumat::dist::load_kernels_eagerly).
    loading=${CUDA_MODULE_LOADING:-}
    [ "$name" = test-dist ] && loading=${loading:-EAGER}
    env ${loading:+CUDA_MODULE_LOADING=$loading} "$t" --test-threads=1 --include-ignored > "$OUT/$name.log" 2>&1
    summary+=("$name (rc $?): $(grep -E '^test result' "$OUT/$name.log" | tail -1)")
done
# Suites whose work is recorded for replay, again on several threads sharing
# the device, as a program that factors from several threads does.
for name in test-cholesky test-ldlt test-swe; do
    [ -n "${SKIP_TESTS:-}" ] || [ ! -x ".gpu/bin/$name" ] && continue
    ".gpu/bin/$name" --include-ignored > "$OUT/$name-threads.log" 2>&1
    summary+=("$name on several threads (rc $?): $(grep -E '^test result' "$OUT/$name-threads.log" | tail -1)")
done
# scaled_gram again with narrow block columns and short chunks of depth, so
# that small tests take every path (several panels and chunks, both queues).
if [ -z "${SKIP_TESTS:-}" ] && [ -x .gpu/bin/test-scaled_gram ]; then
    GPUMAT_SCALED_GRAM_NB=48 GPUMAT_SCALED_GRAM_KC=100 .gpu/bin/test-scaled_gram --test-threads=1 \
        > "$OUT/test-scaled_gram-small-panels.log" 2>&1
    summary+=("test-scaled_gram NB=48 KC=100 (rc $?): $(grep -E '^test result' "$OUT/test-scaled_gram-small-panels.log" | tail -1)")
    # scaled_syrk_f32 split into TF32 instead of half precision.
    GPUMAT_SPLIT=tf32 .gpu/bin/test-scaled_gram --test-threads=1 scaled_syrk_f32 > "$OUT/test-scaled_gram-tf32.log" 2>&1
    summary+=("test-scaled_gram GPUMAT_SPLIT=tf32 (rc $?): $(grep -E '^test result' "$OUT/test-scaled_gram-tf32.log" | tail -1)")
fi
# LU again with each panel kernel forced: the cluster, register and
# shared-memory ones with 32 rows per block (their exchanges on small
# panels), the grid-wide and the one-block.
for panel in cluster reg ll grid block; do
    [ -n "${SKIP_TESTS:-}" ] || [ ! -x .gpu/bin/test-lu ] && break
    GPUMAT_LU_PANEL=$panel .gpu/bin/test-lu --test-threads=1 > "$OUT/test-lu-panel-$panel.log" 2>&1
    summary+=("test-lu GPUMAT_LU_PANEL=$panel (rc $?): $(grep -E '^test result' "$OUT/test-lu-panel-$panel.log" | tail -1)")
done
# QR again with each Householder panel kernel forced, the shared-memory one also
# under memcheck.
for panel in shared global; do
    [ -n "${SKIP_TESTS:-}" ] || [ ! -x .gpu/bin/test-qr ] && break
    GPUMAT_QR_PANEL=$panel .gpu/bin/test-qr --test-threads=1 > "$OUT/test-qr-panel-$panel.log" 2>&1
    summary+=("test-qr GPUMAT_QR_PANEL=$panel (rc $?): $(grep -E '^test result' "$OUT/test-qr-panel-$panel.log" | tail -1)")
done
if [ -z "${SKIP_TESTS:-}" ] && [ -x .gpu/bin/test-qr ] && [ -n "${SANITIZE-x}" ]; then
    log="$OUT/sanitizer-memcheck-qr-shared.log"
    GPUMAT_QR_PANEL=shared timeout "${SANITIZE_TIMEOUT:-300}" compute-sanitizer --tool memcheck --error-exitcode 9 \
        .gpu/bin/test-qr --test-threads=1 > "$log" 2>&1
    summary+=("compute-sanitizer memcheck qr GPUMAT_QR_PANEL=shared (rc $?): $(grep -E 'ERROR SUMMARY' "$log" | tail -1)")
fi
# Jung and O'Leary's Tables 1 and 2 on the GPU (weighted least squares).
for table in "" --ill-conditioned; do
    [ -n "${SKIP_TESTS:-}" ] || [ ! -x .gpu/bin/test-wls ] && break
    sizes=512,1024,1536,2048
    [ -z "$table" ] && sizes=$sizes,4096,8192
    .gpu/bin/gpumat wls-table $table --sizes $sizes > "$OUT/wls-table$table.log" 2>&1
    summary+=("wls-table $table (rc $?)")
    cat "$OUT/wls-table$table.log"
done
# The suites that launch kernels, under both tools.
for suite in ${SANITIZE-primitives cholesky lu ldlt_primitives qr scaled_gram tridiagonal batch_dense}; do
    for tool in memcheck racecheck; do
        log="$OUT/sanitizer-$tool-$suite.log"
        timeout "${SANITIZE_TIMEOUT:-300}" compute-sanitizer --tool "$tool" --error-exitcode 9 ".gpu/bin/test-$suite" --test-threads=1 > "$log" 2>&1
        summary+=("compute-sanitizer $tool $suite (rc $?): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)")
    done
done
if [ -z "${SKIP_BENCH:-}" ] && .gpu/bin/gpumat-bench --help > /dev/null 2>&1; then
    for suite in ${BENCH_SUITES:-primitives cholesky lu qr gram wls}; do
        .gpu/bin/gpumat-bench --suite "$suite" --sizes ${BENCH_SIZES:-4096,8192,16384} ${BENCH_ARGS:-} --out "$OUT" \
            > "$OUT/bench-$suite.log" 2>&1
        summary+=("bench $suite (rc $?)")
        tail -25 "$OUT/bench-$suite.log"
    done
fi
# A timeline of one factorization per bench size, when Nsight Systems is there.
if [ -n "${PROFILE:-}" ] && command -v nsys > /dev/null; then
    nsys profile --stats=true --force-overwrite true -o "$OUT/profile" .gpu/bin/gpumat-bench --suite "$PROFILE" \
        --sizes ${PROFILE_SIZES:-4096} --reps 1 --out "$OUT/profile-results" > "$OUT/profile.log" 2>&1
    summary+=("nsys $PROFILE (rc $?)")
fi
if [ -n "${NCU:-}" ] && command -v ncu > /dev/null; then
    for skip in ${NCU_SKIPS:-0}; do
        rep="$OUT/ncu-$skip"
        ncu --kernel-name "regex:$NCU" --launch-skip "$skip" --launch-count 1 --set full --clock-control none \
            -f -o "$rep" .gpu/bin/gpumat-bench --suite "${NCU_SUITE:-lu-trace}" --sizes ${NCU_SIZES:-4096} \
            --reps 1 --out "$OUT/ncu-results" > "$rep.log" 2>&1
        summary+=("ncu $NCU launch $skip (rc $?)")
        ncu -i "$rep.ncu-rep" --page details > "$rep-details.txt" 2>&1
        ncu -i "$rep.ncu-rep" --page source --print-source sass --csv > "$rep-sass.csv" 2>&1
    done
fi
for t in .gpu/bin/test-*; do grep -E "FAILED|panicked" "$OUT/$(basename "$t").log" | head -20; done
printf '%s\n' "${summary[@]}"
RUN
chmod +x .gpu/run.sh
mkdir -p .gpz
tar -cf - .gpu | xz -T0 -6 > .gpz/gpu.tar.xz
du -sh .gpu .gpz
echo "On the GPU machine, from the repository root (carry .gpz): tar -xJf .gpz/gpu.tar.xz && bash .gpu/run.sh"
