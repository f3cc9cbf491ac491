//! The interior-point LP solver: the netlib problems against their listed
//! optima, small LPs whose optimum is worked out by hand (each bound type,
//! ranges, a free column, an objective constant, a maximization, dependent
//! rows), infeasible and unbounded problems ending with a certificate, random
//! LPs with an optimum known by construction, the storage and precision
//! options, and input that is not a linear program.

mod common;

use std::path::Path;

use gpumat::io::{MpsFormat, read_mps, read_mps_from};
use gpumat::optim::lp::random::{random_general_lp, random_lp};
use gpumat::optim::lp::{self, DenseLp, LpOptions, LpPrecision, LpSolution, LpStatus};
use gpumat::{Error, SymStorage};

fn solve_with(lp: DenseLp, options: &LpOptions) -> LpSolution {
    lp::solve(&common::device(), lp, options).expect("a linear program")
}

fn solve_mps(text: &str) -> LpSolution {
    let lp = read_mps_from(text.as_bytes(), Path::new("t.mps"), MpsFormat::Free).expect("valid MPS");
    solve_with(DenseLp::from_mps(&lp).unwrap(), &LpOptions::default())
}

fn relative(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1.0)
}

/// Optimal, with the objective within `1e−8` relative of `want`.
fn assert_optimum(s: &LpSolution, want: f64, what: &str) {
    assert_eq!(s.status, LpStatus::Optimal, "{what}: {}", s.detail);
    assert!(relative(s.objective, want) <= 1e-8, "{what}: objective {} vs {want}", s.objective);
    assert!(s.primal_residual <= 1e-8, "{what}: primal residual {:e}", s.primal_residual);
}

#[test]
fn the_netlib_problems_reach_their_listed_optima() {
    let listed = [("afiro", -4.6475314286e2), ("sc50a", -6.4575077059e1), ("adlittle", 2.2549496316e5)];
    for storage in [SymStorage::Full, SymStorage::Rfp] {
        for (file, optimum) in listed {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/lp/{file}.mps"));
            let lp = DenseLp::from_mps(&read_mps(&path, MpsFormat::Fixed).unwrap()).unwrap();
            let options = LpOptions { storage, ..LpOptions::default() };
            let s = solve_with(lp, &options);
            // The listing has 11 significant digits: 1e−8 relative is within them.
            assert_optimum(&s, optimum, &format!("{file} {storage:?}"));
            assert!(s.iterations < 40, "{file}: {} iterations", s.iterations);
        }
    }
}

#[test]
fn a_maximization_with_an_upper_bound_and_an_objective_constant() {
    // max 3x + 2y + 10  s.t.  x + y ≤ 4,  x + 3y ≤ 6,  0 ≤ x ≤ 3:  x = 3, y = 1.
    let s = solve_mps(
        "NAME T\nOBJSENSE\n    MAX\nROWS\n N obj\n L r1\n L r2\nCOLUMNS\n x obj 3 r1 1\n x r2 1\n y obj 2 r1 1\n y r2 3\n\
         RHS\n rhs obj -10 r1 4\n rhs r2 6\nBOUNDS\n UP bnd x 3\nENDATA\n",
    );
    assert_optimum(&s, 21.0, "max");
    assert!(relative(s.x[0], 3.0) < 1e-7 && relative(s.x[1], 1.0) < 1e-7, "x = {:?}", s.x);
    // Row activities are A·x: 4 and 6, both constraints active.
    assert!(relative(s.row_activity[0], 4.0) < 1e-7 && relative(s.row_activity[1], 6.0) < 1e-7);
}

#[test]
fn ranges_on_each_row_type() {
    // E row x − y = 1 with R = 2: 1 ≤ x − y ≤ 3; G row x + y ≥ 2.
    // min x + 3y: y = 0 forces x ≥ 2 (from the G row): objective 2.
    let e_positive = "NAME T\nROWS\n N obj\n E e\n G g\nCOLUMNS\n x obj 1 e 1\n x g 1\n y obj 3 e -1\n y g 1\n\
                      RHS\n rhs e 1 g 2\nRANGES\n rng e 2\nENDATA\n";
    assert_optimum(&solve_mps(e_positive), 2.0, "E, R > 0");
    // E row x − y = 1 with R = −2: −1 ≤ x − y ≤ 1; y ≤ 2.  min −x: x = 3.
    let e_negative = "NAME T\nROWS\n N obj\n E e\nCOLUMNS\n x obj -1 e 1\n y e -1\nRHS\n rhs e 1\n\
                      RANGES\n rng e -2\nBOUNDS\n UP bnd y 2\nENDATA\n";
    assert_optimum(&solve_mps(e_negative), -3.0, "E, R < 0");
    // L row x + y ≤ 4 with R = 1: 3 ≤ x + y ≤ 4.  min x + 2y: x = 3.
    let l_row = "NAME T\nROWS\n N obj\n L l\nCOLUMNS\n x obj 1 l 1\n y obj 2 l 1\nRHS\n rhs l 4\n\
                 RANGES\n rng l 1\nENDATA\n";
    assert_optimum(&solve_mps(l_row), 3.0, "L");
    // G row x + y ≥ 2 with R = −3 (|R| counts): 2 ≤ x + y ≤ 5.  min −x − y: −5.
    let g_row = "NAME T\nROWS\n N obj\n G g\nCOLUMNS\n x obj -1 g 1\n y obj -1 g 1\nRHS\n rhs g 2\n\
                 RANGES\n rng g -3\nENDATA\n";
    assert_optimum(&solve_mps(g_row), -5.0, "G");
}

#[test]
fn each_bound_type() {
    let with = |bounds: &str, cost: &str, rows: &str, entries: &str, rhs: &str| {
        solve_mps(&format!(
            "NAME T\nROWS\n N obj\n{rows}COLUMNS\n x obj {cost}{entries}\n y obj 1\nRHS\n{rhs}BOUNDS\n{bounds}ENDATA\n"
        ))
    };
    // LO and UP: min −x over 1.5 ≤ x ≤ 2.5 → −2.5.
    assert_optimum(&with(" LO b x 1.5\n UP b x 2.5\n", "-1", "", "", ""), -2.5, "LO UP");
    // LO: min x over x ≥ 1.5 → 1.5.
    assert_optimum(&with(" LO b x 1.5\n", "1", "", "", ""), 1.5, "LO");
    // FX: x = 2.5 and x + y ≥ 4: min x + y → 4 with y = 1.5.
    let s = solve_mps(
        "NAME T\nROWS\n N obj\n G g\nCOLUMNS\n x obj 1 g 1\n y obj 1 g 1\nRHS\n rhs g 4\nBOUNDS\n FX b x 2.5\nENDATA\n",
    );
    assert_optimum(&s, 4.0, "FX");
    assert_eq!(s.x[0], 2.5);
    assert!(relative(s.x[1], 1.5) < 1e-7);
    // A row left with fixed columns only is checked, not solved: 2.5 ≥ 4 fails.
    let s = with(" FX b x 2.5\n", "1", " G g\n", " g 1", " rhs g 4\n");
    assert_eq!(s.status, LpStatus::Infeasible);
    assert!(s.detail.contains("row 1"), "{}", s.detail);
    // FR: a free column; min x s.t. x ≥ −5 (a G row) → −5.
    assert_optimum(&with(" FR b x\n", "1", " G g\n", " g 1", " rhs g -5\n"), -5.0, "FR");
    // MI: lower −∞; min x s.t. x ≥ −7 → −7.
    assert_optimum(&with(" MI b x\n", "1", " G g\n", " g 1", " rhs g -7\n"), -7.0, "MI");
    // PL: upper +∞ (the default); min −x s.t. x ≤ 8 (an L row) → −8.
    assert_optimum(&with(" PL b x\n", "-1", " L l\n", " l 1", " rhs l 8\n"), -8.0, "PL");
    // BV: the relaxation 0 ≤ x ≤ 1; min −x → −1.
    assert_optimum(&with(" BV b x\n", "-1", "", "", ""), -1.0, "BV");
    // UP < 0 with no LO: −∞ < x ≤ −2; min −x → 2.
    assert_optimum(&with(" UP b x -2\n", "-1", "", "", ""), 2.0, "UP < 0");
    // UP < 0 with no LO, min x s.t. x ≥ −10 → −10.
    assert_optimum(&with(" UP b x -2\n", "1", " G g\n", " g 1", " rhs g -10\n"), -10.0, "UP < 0, below");
}

#[test]
fn dependent_rows_are_regularized() {
    // x + y = 2 twice (once doubled), and x − y = 0: x = y = 1.
    let s = solve_mps(
        "NAME T\nROWS\n N obj\n E a\n E b\n E c\nCOLUMNS\n x obj 1 a 1\n x b 2 c 1\n y obj 2 a 1\n y b 2 c -1\n\
         RHS\n rhs a 2 b 4\nENDATA\n",
    );
    assert_optimum(&s, 3.0, "dependent rows");
}

#[test]
fn an_infeasible_problem_ends_with_a_certificate() {
    // x + y ≤ 1 and x + y ≥ 2.
    let s = solve_mps(
        "NAME T\nROWS\n N obj\n L l\n G g\nCOLUMNS\n x obj 1 l 1\n x g 1\n y obj 1 l 1\n y g 1\nRHS\n rhs l 1 g 2\nENDATA\n",
    );
    assert_eq!(s.status, LpStatus::Infeasible, "{}", s.detail);
    assert!(s.detail.contains("Farkas"), "{}", s.detail);
    // Through the bounds: x ≤ 1 (UP) and x ≥ 3 (a G row).
    let s = solve_mps("NAME T\nROWS\n N obj\n G g\nCOLUMNS\n x obj 1 g 1\nRHS\n rhs g 3\nBOUNDS\n UP b x 1\nENDATA\n");
    assert_eq!(s.status, LpStatus::Infeasible, "{}", s.detail);
    // Bounds that cross (which the MPS reader refuses) are decided before
    // any iteration, naming the column or row.
    let mut crossed = random_lp(3, 6, 14).unwrap().lp;
    crossed.lower[4] = 3.0;
    crossed.upper[4] = 2.0;
    let s = solve_with(crossed.clone(), &LpOptions::default());
    assert_eq!(s.status, LpStatus::Infeasible);
    assert!(s.detail.contains("column 5"), "{}", s.detail);
    crossed.lower[4] = 0.0;
    crossed.row_lower[2] = crossed.row_upper[2] + 1.0;
    let s = solve_with(crossed, &LpOptions::default());
    assert_eq!(s.status, LpStatus::Infeasible);
    assert!(s.detail.contains("row 3"), "{}", s.detail);
}

#[test]
fn an_unbounded_problem_ends_with_a_ray() {
    // max x + y s.t. x − y ≤ 1.
    let s = solve_mps(
        "NAME T\nOBJSENSE\n    MAX\nROWS\n N obj\n L l\nCOLUMNS\n x obj 1 l 1\n y obj 1 l -1\nRHS\n rhs l 1\nENDATA\n",
    );
    assert_eq!(s.status, LpStatus::Unbounded, "{}", s.detail);
    assert!(s.detail.contains("ray"), "{}", s.detail);
    // A free column with a cost and no row.
    let s =
        solve_mps("NAME T\nROWS\n N obj\n L l\nCOLUMNS\n x obj 1\n y l 1\nRHS\n rhs l 1\nBOUNDS\n FR b x\nENDATA\n");
    assert_eq!(s.status, LpStatus::Unbounded, "{}", s.detail);
}

#[test]
fn random_lps_reach_their_constructed_optimum() {
    for (m, n, seed) in [(1, 1, 1), (5, 20, 2), (40, 40, 3), (100, 400, 4), (150, 600, 5)] {
        let known = random_lp(m, n, seed).unwrap();
        let s = solve_with(known.lp, &LpOptions::default());
        assert_optimum(&s, known.objective, &format!("{m}×{n}"));
        // The optimum is unique, primal and dual: x, y and the reduced costs
        // match x*, y* and z* as well as the measures allow.
        let err = |a: &[f64], b: &[f64]| a.iter().zip(b).fold(0.0f64, |e, (a, b)| e.max((a - b).abs()));
        assert!(err(&s.x, &known.x) <= 1e-6, "{m}×{n}: ‖x − x*‖∞ = {:e}", err(&s.x, &known.x));
        assert!(err(&s.y, &known.y) <= 1e-6, "{m}×{n}: ‖y − y*‖∞ = {:e}", err(&s.y, &known.y));
        let dz = err(&s.reduced_costs, &known.z);
        assert!(dz <= 1e-6, "{m}×{n}: ‖(c − Aᵀy) − z*‖∞ = {dz:e}");
    }
}

#[test]
fn random_lps_with_every_bound_and_row_type_reach_their_optimum() {
    for seed in 0..24 {
        let (m, n) = (3 + seed as usize % 20, 10 + 3 * seed as usize);
        let known = random_general_lp(m, n, seed).unwrap();
        // At the default tolerance the infeasibilities and the gap are below
        // 1e−8 and the objective within them times ‖y‖ and ‖x‖: 1e−7 here.
        let s = solve_with(known.lp.clone(), &LpOptions::default());
        assert_eq!(s.status, LpStatus::Optimal, "seed {seed}: {}", s.detail);
        assert!(relative(s.objective, known.objective) <= 1e-7, "seed {seed}: {} vs {}", s.objective, known.objective);
        // A tighter tolerance buys the digits.
        let tight = LpOptions { tolerance: 1e-10, ..LpOptions::default() };
        let s = solve_with(known.lp, &tight);
        assert_optimum(&s, known.objective, &format!("seed {seed}, {m}×{n}, tolerance 1e−10"));
    }
}

#[test]
fn a_maximization_negates_the_duals() {
    // max (−c)ᵀx over the same set: optimum −cᵀx*, duals −y* and −z*.
    let known = random_lp(30, 80, 6).unwrap();
    let mut lp = known.lp.clone();
    lp.sense = gpumat::io::Sense::Maximize;
    lp.c.iter_mut().for_each(|c| *c = -*c);
    let s = solve_with(lp, &LpOptions::default());
    assert_optimum(&s, -known.objective, "max");
    let err = |a: &[f64], b: &[f64]| a.iter().zip(b).fold(0.0f64, |e, (a, b)| e.max((a + b).abs()));
    assert!(err(&s.y, &known.y) <= 1e-6 && err(&s.reduced_costs, &known.z) <= 1e-6);
}

#[test]
fn storage_and_precision_give_the_same_optimum() {
    let known = random_lp(120, 480, 9).unwrap();
    for (storage, precision) in [
        (SymStorage::Rfp, LpPrecision::F64),
        (SymStorage::Full, LpPrecision::Mixed),
        (SymStorage::Rfp, LpPrecision::Mixed),
    ] {
        let options = LpOptions { storage, precision, ..LpOptions::default() };
        let s = solve_with(known.lp.clone(), &options);
        assert_optimum(&s, known.objective, &format!("{storage:?} {precision:?}"));
        if precision == LpPrecision::Mixed {
            assert!(s.mixed_iterations > 0, "FP32 never served");
            assert!(s.refinement_steps > 0, "an FP32 factor needs refinement");
        }
    }
}

#[test]
fn the_log_has_one_line_per_iteration_and_the_timings_add_up() {
    let known = random_lp(30, 90, 11).unwrap();
    let mut lines = Vec::new();
    let s =
        lp::solve_logged(&common::device(), known.lp, &LpOptions::default(), &mut |it| lines.push(it.clone())).unwrap();
    assert_eq!(lines.len(), s.iterations + 1);
    assert!(lines.windows(2).all(|w| w[1].iteration == w[0].iteration + 1 && w[1].seconds >= w[0].seconds));
    let last = lines.last().unwrap();
    assert!(last.primal_infeasibility <= 1e-8 && last.dual_infeasibility <= 1e-8 && last.gap <= 1e-8);
    let t = &s.timings;
    assert!(t.setup + t.form + t.factor + t.solve <= t.total * (1.0 + 1e-9) + 1e-9);
}

#[test]
fn the_iteration_limit_is_a_status() {
    let known = random_lp(20, 60, 12).unwrap();
    let s = solve_with(known.lp, &LpOptions { max_iterations: 2, ..LpOptions::default() });
    assert_eq!(s.status, LpStatus::IterationLimit);
    assert_eq!(s.iterations, 2);
}

#[test]
fn input_that_is_not_a_linear_program_is_refused() {
    let known = random_lp(3, 6, 13).unwrap();
    let dev = common::device();
    let mut nan = known.lp.clone();
    nan.a[4] = f64::NAN;
    match lp::solve(&dev, nan, &LpOptions::default()) {
        Err(Error::NonFinite { what, row, col, .. }) => assert_eq!((what.as_str(), row, col), ("A", 2, 2)),
        other => panic!("expected NonFinite, got {other:?}"),
    }
    let mut short = known.lp.clone();
    short.c.pop();
    assert!(matches!(lp::solve(&dev, short, &LpOptions::default()), Err(Error::DimensionMismatch { .. })));
    let mut wrong_bound = known.lp.clone();
    wrong_bound.lower[1] = f64::INFINITY;
    assert!(matches!(lp::solve(&dev, wrong_bound, &LpOptions::default()), Err(Error::NonFinite { .. })));
    for tolerance in [0.0, -1.0, 1.0, f64::NAN] {
        let options = LpOptions { tolerance, ..LpOptions::default() };
        assert!(matches!(lp::solve(&dev, known.lp.clone(), &options), Err(Error::InvalidArgument(_))), "{tolerance}");
    }
    assert!(random_lp(4, 3, 1).is_err() && random_lp(0, 3, 1).is_err());
}
