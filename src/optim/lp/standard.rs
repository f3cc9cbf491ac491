//! The standard form the interior-point method solves:
//!
//! `min cᵀx` subject to `A·x = b`, `x_j ≥ 0` for bounded columns,
//! `x_j ≤ u_j` for those with an upper bound, `x_j` free otherwise,
//!
//! reached from a [`DenseLp`] without splitting any column: a column with a
//! lower bound `l` becomes `x = l + x'`; one with only an upper bound `u`
//! becomes `x = u − x'` (reflected); a fixed column is moved into `b`; a row
//! with `row_lower < row_upper` gets one slack column `s`, `aᵢᵀx − s = 0`
//! with `s` bounded as the row was; a row without bounds is no constraint
//! and is set aside; a row that no remaining column touches is either
//! satisfied (and removed) or shows that the problem is infeasible.

use super::DenseLp;
use crate::io::mps::Sense;

/// A column of the standard form: `value = shift ± x'`.
#[derive(Clone, Copy, Debug)]
struct Origin {
    /// The original column, or `None` for a row's slack.
    column: Option<usize>,
    shift: f64,
    reflect: bool,
}

pub(super) struct Standard {
    pub m: usize,
    pub n: usize,
    /// `m × n`, column-major.
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    /// Of the minimization.
    pub c: Vec<f64>,
    /// Each column's upper bound (`∞` for none); its lower bound is 0
    /// unless it is free.
    pub upper: Vec<f64>,
    pub free: Vec<bool>,
    /// `+1` to minimize, `−1` to maximize: the given objective is
    /// `sign·(cᵀx + constant)`.
    pub sign: f64,
    /// The minimization's constant.
    pub constant: f64,
    origin: Vec<Origin>,
    /// The original row of each row.
    rows: Vec<usize>,
    /// Each original row's activity from the fixed columns.
    fixed_activity: Vec<f64>,
    /// Rows without bounds, set aside with their coefficients.
    unbounded_rows: Vec<(usize, Vec<f64>)>,
    /// Original columns at fixed values, with their coefficients.
    fixed: Vec<(usize, f64, Vec<f64>)>,
    /// The original problem's shape and bounds, for the report.
    pub original: Bounds,
}

/// The bounds of the problem as given.
pub(super) struct Bounds {
    pub m: usize,
    pub n: usize,
    pub row_lower: Vec<f64>,
    pub row_upper: Vec<f64>,
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
    pub c: Vec<f64>,
    pub constant: f64,
}

/// What the reduction found.
pub(super) enum Reduced {
    Standard(Box<Standard>, Vec<String>),
    /// Infeasible before any iteration, and why.
    Infeasible(String),
}

pub(super) fn reduce(lp: DenseLp) -> Reduced {
    let DenseLp { sense, m, n, mut a, c, constant, row_lower, row_upper, lower, upper } = lp;
    let sign = if sense == Sense::Maximize { -1.0 } else { 1.0 };
    let mut notes = Vec::new();
    if let Some(j) = (0..n).find(|&j| lower[j] > upper[j]) {
        return Reduced::Infeasible(format!(
            "column {} has lower bound {} > upper bound {}",
            j + 1,
            lower[j],
            upper[j]
        ));
    }
    if let Some(i) = (0..m).find(|&i| row_lower[i] > row_upper[i]) {
        return Reduced::Infeasible(format!(
            "row {} has lower bound {} > upper bound {}",
            i + 1,
            row_lower[i],
            row_upper[i]
        ));
    }
    let fixed: Vec<(usize, f64, Vec<f64>)> =
        (0..n).filter(|&j| lower[j] == upper[j]).map(|j| (j, lower[j], a[j * m..(j + 1) * m].to_vec())).collect();
    let kept: Vec<usize> = (0..n).filter(|&j| lower[j] != upper[j]).collect();
    let mut fixed_activity = vec![0.0; m];
    for (_, v, column) in &fixed {
        fixed_activity.iter_mut().zip(column).for_each(|(act, a)| *act += a * v);
    }
    let touched: Vec<bool> = (0..m).map(|i| kept.iter().any(|&j| a[i + j * m] != 0.0)).collect();
    let mut rows = Vec::new();
    let mut unbounded_rows = Vec::new();
    for i in 0..m {
        let (lo, hi, act) = (row_lower[i], row_upper[i], fixed_activity[i]);
        if lo == f64::NEG_INFINITY && hi == f64::INFINITY {
            unbounded_rows.push((i, (0..n).map(|j| a[i + j * m]).collect()));
        } else if touched[i] {
            rows.push(i);
        } else {
            // 0 = b up to the rounding of the fixed columns' sum.
            let slack = 1e-9 * (1.0 + act.abs().max(lo.abs().min(hi.abs())));
            if act < lo - slack || act > hi + slack {
                return Reduced::Infeasible(format!(
                    "row {} has no free variable; its value {act} is outside [{lo}, {hi}]",
                    i + 1
                ));
            }
        }
    }
    let dropped = m - rows.len() - unbounded_rows.len();
    if dropped > 0 {
        notes.push(format!("{dropped} rows without a variable removed (satisfied by the fixed columns)"));
    }
    if !unbounded_rows.is_empty() {
        notes.push(format!("{} rows without bounds set aside", unbounded_rows.len()));
    }
    if !fixed.is_empty() {
        notes.push(format!("{} fixed columns moved to the right-hand side", fixed.len()));
    }
    let slacks: Vec<usize> = (0..rows.len()).filter(|&k| row_lower[rows[k]] != row_upper[rows[k]]).collect();
    let (ms, ns) = (rows.len(), kept.len() + slacks.len());

    // A's kept rows and columns, then one −eᵢ per slack; A itself is moved
    // when nothing is removed or added.
    let mut a = if ms == m && kept.len() == n && slacks.is_empty() {
        a
    } else {
        let mut s = vec![0.0; ms * ns];
        for (k, &j) in kept.iter().enumerate() {
            for (r, &i) in rows.iter().enumerate() {
                s[r + k * ms] = a[i + j * m];
            }
        }
        for (k, &r) in slacks.iter().enumerate() {
            s[r + (kept.len() + k) * ms] = -1.0;
        }
        a.clear();
        a.shrink_to_fit();
        s
    };
    let mut b: Vec<f64> = rows
        .iter()
        .map(|&i| if row_lower[i] == row_upper[i] { row_lower[i] } else { 0.0 } - fixed_activity[i])
        .collect();
    let bounds = kept
        .iter()
        .map(|&j| (lower[j], upper[j], c[j], Some(j)))
        .chain(slacks.iter().map(|&r| (row_lower[rows[r]], row_upper[rows[r]], 0.0, None)));
    let mut cs = Vec::with_capacity(ns);
    let mut us = Vec::with_capacity(ns);
    let mut free = Vec::with_capacity(ns);
    let mut origin = Vec::with_capacity(ns);
    let mut constant_min = constant + fixed.iter().map(|&(j, v, _)| c[j] * v).sum::<f64>();
    for (k, (lo, hi, ck, column)) in bounds.enumerate() {
        let col = &mut a[k * ms..(k + 1) * ms];
        let (shift, reflect, u) = match (lo.is_finite(), hi.is_finite()) {
            (true, _) => (lo, false, hi - lo),
            (false, true) => (hi, true, f64::INFINITY),
            (false, false) => (0.0, false, f64::INFINITY),
        };
        if shift != 0.0 {
            for (bi, &aik) in b.iter_mut().zip(col.iter()) {
                *bi -= aik * shift;
            }
            constant_min += ck * shift;
        }
        if reflect {
            col.iter_mut().for_each(|v| *v = -*v);
        }
        cs.push(sign * if reflect { -ck } else { ck });
        us.push(u);
        free.push(!lo.is_finite() && !hi.is_finite());
        origin.push(Origin { column, shift, reflect });
    }
    let standard = Standard {
        m: ms,
        n: ns,
        a,
        b,
        c: cs,
        upper: us,
        free,
        sign,
        constant: sign * constant_min,
        origin,
        rows,
        fixed_activity,
        unbounded_rows,
        fixed,
        original: Bounds { m, n, row_lower, row_upper, lower, upper, c, constant },
    };
    Reduced::Standard(Box::new(standard), notes)
}

impl Standard {
    /// The given problem's objective at a standard-form objective value.
    pub fn objective(&self, minimized: f64) -> f64 {
        self.sign * (minimized + self.constant)
    }

    /// The original columns' values from the standard form's `x`.
    pub fn original_x(&self, x: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.original.n];
        for (&xk, o) in x.iter().zip(&self.origin) {
            if let Some(j) = o.column {
                out[j] = o.shift + if o.reflect { -xk } else { xk };
            }
        }
        for &(j, v, _) in &self.fixed {
            out[j] = v;
        }
        out
    }

    /// The original rows' duals `y` on the standard form's rows (`m`
    /// entries, zero past the kept rows).
    pub fn kept(&self, y: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.m];
        out.iter_mut().zip(&self.rows).for_each(|(o, &i)| *o = y[i]);
        out
    }

    /// The reduced costs `c − Aᵀy` of the given problem, from the
    /// standard form's `A_stdᵀ·y` on its columns (`aty`, of the kept rows'
    /// `y` from [`kept`](Self::kept)) and the original `y`.
    pub fn reduced_costs(&self, aty: &[f64], y: &[f64]) -> Vec<f64> {
        let c = &self.original.c;
        let mut out = vec![0.0; self.original.n];
        for (&t, o) in aty.iter().zip(&self.origin) {
            if let Some(j) = o.column {
                out[j] = c[j] - if o.reflect { -t } else { t };
            }
        }
        for (j, _, column) in &self.fixed {
            out[*j] = c[*j] - column.iter().zip(y).map(|(a, y)| a * y).sum::<f64>();
        }
        out
    }

    /// The values `v` whose product with the standard form's `A` is the
    /// structural part of `A_original·x` on its rows (slacks contribute 0).
    pub fn structural(&self, x_original: &[f64]) -> Vec<f64> {
        self.origin
            .iter()
            .map(|o| match o.column {
                Some(j) if o.reflect => -x_original[j],
                Some(j) => x_original[j],
                None => 0.0,
            })
            .collect()
    }

    /// Each original row's activity, given the standard rows' structural
    /// products `ax` (from [`structural`](Self::structural)).
    pub fn row_activity(&self, ax: &[f64], x_original: &[f64]) -> Vec<f64> {
        let mut act = self.fixed_activity.clone();
        for (&i, &v) in self.rows.iter().zip(ax) {
            act[i] += v;
        }
        for (i, row) in &self.unbounded_rows {
            act[*i] = row.iter().zip(x_original).map(|(a, x)| a * x).sum();
        }
        act
    }

    /// Each original row's dual value from the standard form's `y`; rows
    /// that were removed have 0.
    pub fn original_y(&self, y: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.original.m];
        for (&i, &yi) in self.rows.iter().zip(y) {
            out[i] = self.sign * yi;
        }
        out
    }
}

impl Bounds {
    /// The largest violation of a row or column bound by `x` with row
    /// activities `act`, relative to `1 + ` the largest finite bound.
    pub fn violation(&self, x: &[f64], act: &[f64]) -> f64 {
        let finite = |v: &&f64| v.is_finite();
        let scale = self.row_lower.iter().chain(&self.row_upper).chain(&self.lower).chain(&self.upper);
        let scale = 1.0 + scale.filter(finite).fold(0.0f64, |m, v| m.max(v.abs()));
        let over = |v: f64, lo: f64, hi: f64| (lo - v).max(v - hi).max(0.0);
        let rows = act.iter().zip(self.row_lower.iter().zip(&self.row_upper)).map(|(&v, (&lo, &hi))| over(v, lo, hi));
        let cols = x.iter().zip(self.lower.iter().zip(&self.upper)).map(|(&v, (&lo, &hi))| over(v, lo, hi));
        rows.chain(cols).fold(0.0, f64::max) / scale
    }
}
