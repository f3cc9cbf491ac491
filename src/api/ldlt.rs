//! `Ldlt<T>`: `P·A·Pᵀ = L·D·Lᵀ` for a symmetric, possibly indefinite `A`,
//! in full or in RFP storage (half the memory), whichever `A` was in: solves,
//! the inertia, the determinant and a condition estimate. `D` is block
//! diagonal (Bunch–Kaufman, or diagonal without pivoting) or tridiagonal
//! (Aasen).

use super::device::{Resident, Storage};
use super::{Matrix, Sym, SymStorage, validate};
use crate::backend::{Backend, Block, BufferMut, Norm, Triangle, View, ViewMut};
use crate::factor::ldlt::{self, BlockDiagonal, Inertia, LdltParams, LdltPivoting, Middle, SymTridiagonal};
use crate::factor::lu::Determinant;
use crate::layout::{Rfp, Uplo};
use crate::{Error, Result, Scalar};

/// How an LDLᵀ factorization pivots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LdltMethod {
    /// Bunch–Kaufman 1×1 and 2×2 pivots, `D` block diagonal (LAPACK's
    /// `dsytrf`): the CPU's default.
    BunchKaufman,
    /// Aasen's `P·A·Pᵀ = L·T·Lᵀ`, `T` tridiagonal (LAPACK's `dsytrf_aa`):
    /// as stable, and the GPU's default, since its pivots are searched in
    /// one column and its panels have one width.
    Aasen,
    /// No interchanges, `D` diagonal: for matrices known to allow it.
    Unpivoted,
}

impl LdltMethod {
    /// The blocking this method factors a matrix of order `n` with.
    pub fn params(self, n: usize) -> LdltParams {
        match self {
            LdltMethod::BunchKaufman => LdltParams::pivoted(n),
            LdltMethod::Aasen => LdltParams::aasen(n),
            LdltMethod::Unpivoted => LdltParams::unpivoted(n),
        }
    }

    /// The pivoted method that runs best on `device`.
    pub fn pivoted_for(device: &super::Device) -> Self {
        if device.is_cpu() { LdltMethod::BunchKaufman } else { LdltMethod::Aasen }
    }
}

/// The LDLᵀ factorization of a symmetric `n × n` matrix.
pub struct Ldlt<T: Scalar> {
    n: usize,
    /// `L` strictly below the diagonal and `D`'s diagonal on it: `n × n`,
    /// or the RFP array.
    data: Matrix<T>,
    rfp: Option<Rfp>,
    /// The interchanges, 1-based, applied in order (`P`); the identity
    /// without pivoting.
    ipiv: Storage<i32>,
    /// `D`'s diagonal and subdiagonal, `n × 1` each, on the device.
    d: Matrix<T>,
    e: Matrix<T>,
    /// The same, on the host.
    middle: SymTridiagonal,
    /// A block diagonal congruent to `D`: `D` itself, or Bunch's of
    /// Aasen's `T`.
    diagonal: BlockDiagonal,
    method: LdltMethod,
    /// `‖A‖₁`, for the condition estimate.
    a_norm: f64,
    /// `n·ε·max|aᵢⱼ|`: eigenvalues of `D` this small count as zero.
    tol: f64,
}

impl<T: Scalar> Sym<T> {
    /// The pivoted LDLᵀ factorization `P·A·Pᵀ = L·D·Lᵀ` in this matrix's
    /// storage, by the method that runs best on its device
    /// ([`LdltMethod::pivoted_for`]: Aasen's on the GPU, Bunch–Kaufman's on
    /// the CPU): backward stable for every symmetric matrix, definite or
    /// not. A singular `A` still factors (see [`Ldlt::zero_pivot`]); a NaN
    /// or infinity among `A`'s stored entries is refused before any work.
    /// Waits for the result.
    pub fn ldlt(&self) -> Result<Ldlt<T>> {
        let method = LdltMethod::pivoted_for(self.device());
        self.ldlt_with(method, method.params(self.n()))
    }

    /// LDLᵀ without pivoting, `A = L·D·Lᵀ`, blocked as Cholesky is, for
    /// matrices known to allow it: symmetric quasi-definite matrices
    /// `[[H, Bᵀ], [B, −G]]` with `H` and `G` positive definite (the KKT
    /// matrices of regularized interior-point methods), and diagonally
    /// dominant ones. Elsewhere the element growth is unbounded: a pivot of
    /// magnitude `≤ n·ε·max|aᵢⱼ|` is refused as [`Error::ZeroPivot`] naming
    /// its column, and a small one that passes can still lose accuracy —
    /// check the backward error, or use [`ldlt`](Self::ldlt).
    pub fn ldlt_unpivoted(&self) -> Result<Ldlt<T>> {
        self.ldlt_with(LdltMethod::Unpivoted, LdltParams::unpivoted(self.n()))
    }

    /// The LDLᵀ factorization by the given method, with explicit tuning.
    pub fn ldlt_with(&self, method: LdltMethod, params: LdltParams) -> Result<Ldlt<T>> {
        let rfp = (self.storage() == SymStorage::Rfp).then(|| self.rfp_layout());
        let (data, norm) = self.factorable_copy_and_norm()?;
        Ldlt::factor_owned(self.n(), data, rfp, method, params, norm)
    }
}

impl<T: Scalar> Ldlt<T> {
    /// Factors `data` in place: `n × n` holding `A` in its lower triangle
    /// (the strictly upper part is neither read nor kept; zeros there keep
    /// [`stored`](Self::stored) clean), or `A`'s RFP array when `rfp` is
    /// given, its entries finite ([`Sym::factorable_copy`]). `a_norm` is
    /// `‖A‖₁`, for [`rcond`](Self::rcond).
    pub(crate) fn factor_owned(
        n: usize,
        mut data: Matrix<T>,
        rfp: Option<Rfp>,
        method: LdltMethod,
        params: LdltParams,
        a_norm: f64,
    ) -> Result<Self> {
        let tol = n as f64 * T::EPSILON.to_f64() * data.norm(Norm::Max)?.to_f64();
        let tri = triangle(n, rfp)?;
        let pivoting = match method {
            LdltMethod::BunchKaufman => LdltPivoting::BunchKaufman,
            LdltMethod::Aasen => LdltPivoting::Aasen,
            LdltMethod::Unpivoted => LdltPivoting::None { tol },
        };
        let device = data.device().clone();
        let (ipiv, d, e, zero) = with_backend!(device, be => {
            let mut ipiv = be.alloc::<i32>(n)?;
            let (mut d, mut e) = (be.alloc::<T>(n)?, be.alloc::<T>(n)?);
            let zero = {
                let a = BufferMut::new(data.buffer_mut(be)?);
                let (ipiv, d, e) = (ViewMut::dense(&mut ipiv, n, 1)?, ViewMut::dense(&mut d, n, 1)?, ViewMut::dense(&mut e, n, 1)?);
                ldlt::factor_in_place(be, &tri, &a, ipiv, d, e, pivoting, params)?
            };
            let d = Matrix::from_storage(device.clone(), n, 1, be.wrap(d));
            let e = Matrix::from_storage(device.clone(), n, 1, be.wrap(e));
            (be.wrap(ipiv), d, e, zero)
        });
        if let (LdltMethod::Unpivoted, Some(column)) = (method, zero) {
            return Err(Error::ZeroPivot { column });
        }
        let host = |m: &Matrix<T>| -> Result<Vec<f64>> { Ok(m.to_host()?.into_iter().map(|x| x.to_f64()).collect()) };
        let middle = SymTridiagonal { d: host(&d)?, e: host(&e)? };
        if middle.d.iter().chain(&middle.e).any(|x| !x.is_finite()) {
            return Err(Error::Overflow { what: "D of the LDLᵀ factorization (element growth)".into() });
        }
        let diagonal = match method {
            LdltMethod::Aasen => middle.block_diagonal(),
            _ => BlockDiagonal { d: middle.d.clone(), e: middle.e.clone() },
        };
        Ok(Ldlt { n, data, rfp, ipiv, d, e, middle, diagonal, method, a_norm, tol })
    }
}

/// Where the factor's lower triangle lies: all of an `n × n` array, or the
/// pieces of the RFP array.
fn triangle(n: usize, rfp: Option<Rfp>) -> Result<Triangle> {
    match rfp {
        Some(rfp) => Ok(Triangle::rfp(rfp, 0)),
        None => Triangle::full(Uplo::Lower, Block::dense(n, n)),
    }
}

fn ipiv_buffer<'s, B: Resident>(_: &B, s: &'s Storage<i32>) -> Result<&'s B::Buffer<i32>> {
    B::buffer(s)
}

impl<T: Scalar> Ldlt<T> {
    pub fn n(&self) -> usize {
        self.n
    }

    /// Whether the factor is in RFP storage.
    pub fn is_packed(&self) -> bool {
        self.rfp.is_some()
    }

    /// Whether the factorization pivoted (Bunch–Kaufman or Aasen).
    pub fn is_pivoted(&self) -> bool {
        self.method != LdltMethod::Unpivoted
    }

    /// How the factorization pivoted.
    pub fn method(&self) -> LdltMethod {
        self.method
    }

    fn middle_kind(&self) -> Middle {
        if self.method == LdltMethod::Aasen { Middle::Tridiagonal } else { Middle::BlockDiagonal }
    }

    /// `D` on the host: block diagonal (`e[j] ≠ 0` at the first row of a
    /// 2×2 block), or Aasen's tridiagonal `T`.
    pub fn middle(&self) -> &SymTridiagonal {
        &self.middle
    }

    /// The factor as it lies on the device: `n × n`, or the RFP array as one
    /// column; `L` strictly below the diagonal, `D`'s diagonal on it.
    pub fn stored(&self) -> &Matrix<T> {
        &self.data
    }

    /// A block diagonal congruent to `A` (`e[j] ≠ 0` marks the 2×2 block at
    /// rows `j` and `j + 1`): `D` itself, or for Aasen's factorization the
    /// `D` of Bunch's `T = M·D·Mᵀ`. Its inertia and determinant are `A`'s.
    pub fn block_diagonal(&self) -> &BlockDiagonal {
        &self.diagonal
    }

    /// The interchanges, 1-based: at step `j`, rows (and columns) `j` and
    /// `ipiv[j] − 1` were exchanged (waits).
    pub fn pivots(&self) -> Result<Vec<i32>> {
        let mut host = vec![0i32; self.n];
        with_backend!(self.data.device(), be => be.download(ipiv_buffer(be, &self.ipiv)?, &mut host))?;
        Ok(host)
    }

    /// The first column (1-based) where `D` is singular to the tolerance
    /// `n·ε·max|aᵢⱼ|` (an eigenvalue of its block that small), if any: `A`
    /// is then singular to working precision, and [`solve`](Self::solve)
    /// refuses it.
    pub fn zero_pivot(&self) -> Option<usize> {
        self.diagonal.first_zero(self.tol)
    }

    /// The numbers of positive, negative and zero eigenvalues of `A`
    /// (Sylvester's law of inertia: those of `D`), an eigenvalue of a block
    /// of `D` of magnitude `≤ n·ε·max|aᵢⱼ|` counting as zero.
    pub fn inertia(&self) -> Inertia {
        self.diagonal.inertia(self.tol)
    }

    /// `det A = det D` as `mantissa · 2^exponent`, whatever its size; 0
    /// when `A` is singular to working precision ([`zero_pivot`](Self::zero_pivot)).
    pub fn determinant(&self) -> Determinant {
        if self.zero_pivot().is_some() {
            return Determinant::ZERO;
        }
        self.diagonal.determinant()
    }

    /// `(sign, log|det A|)`: the sign −1, 0 or 1, and the natural logarithm
    /// of the magnitude (`−∞` for a singular `D`).
    pub fn sign_log_det(&self) -> (f64, f64) {
        let det = self.determinant();
        if det.mantissa == 0.0 {
            return (0.0, f64::NEG_INFINITY);
        }
        (det.mantissa.signum(), det.mantissa.abs().ln() + det.exponent as f64 * std::f64::consts::LN_2)
    }

    /// `X` with `A·X = B`, for `B` of `n` rows (any number of columns).
    /// [`Error::Singular`] if `D` is singular ([`zero_pivot`](Self::zero_pivot)),
    /// [`Error::NonFinite`] for a NaN or infinity in `B`,
    /// [`Error::Overflow`] for an `X` beyond the range of `T`.
    pub fn solve(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        self.data.check_with(b)?;
        if b.rows() != self.n {
            return Err(Error::dims(
                "Ldlt::solve",
                format!("A is {0}×{0} but B is {1}×{2}", self.n, b.rows(), b.cols()),
            ));
        }
        if let Some(pivot) = self.zero_pivot() {
            return Err(Error::Singular { pivot });
        }
        validate::finite("B", b)?;
        let mut x = b.try_clone()?;
        let tri = triangle(self.n, self.rfp)?;
        with_backend!(self.data.device(), be => {
            let pivots = (View::dense(ipiv_buffer(be, &self.ipiv)?, self.n, 1)?, self.d.view()?, self.e.view()?);
            ldlt::solve_in_place(be, &tri, self.data.view_on(be)?.buffer(), pivots, self.middle_kind(), x.view_mut()?)
        })?;
        if x.find_non_finite()?.is_some() {
            return Err(Error::Overflow { what: "X".into() });
        }
        Ok(x)
    }

    /// An estimate of the reciprocal condition number in the 1-norm,
    /// `1/(‖A‖₁·‖A⁻¹‖₁)`, as LAPACK's `dsycon`; 0 for a singular `D`. Waits.
    pub fn rcond(&self) -> Result<f64> {
        if self.zero_pivot().is_some() {
            return Ok(0.0);
        }
        let tri = triangle(self.n, self.rfp)?;
        with_backend!(self.data.device(), be => {
            let pivots = (View::dense(ipiv_buffer(be, &self.ipiv)?, self.n, 1)?, self.d.view()?, self.e.view()?);
            ldlt::rcond(be, &tri, self.data.view_on(be)?.buffer(), pivots, self.middle_kind(), self.a_norm)
        })
    }

    /// `Pᵀ·L·D·Lᵀ·P`, which is `A` up to rounding: for checking the
    /// factorization (`O(n³)`, with `D` made dense).
    pub fn reconstruct(&self) -> Result<Matrix<T>> {
        let n = self.n;
        let device = self.data.device();
        let l = match self.rfp {
            None => self.data.try_clone()?,
            Some(rfp) => with_backend!(device, be => {
                self.data.new_with(be, n, n, |a| be.rfp_to_full(self.data.view()?, rfp, a))?
            }),
        };
        let dense: Vec<T> = self.middle.dense().into_iter().map(T::from_f64).collect();
        let dense = device.from_col_major(n, n, &dense)?;
        with_backend!(device, be => {
            let ipiv = View::dense(ipiv_buffer(be, &self.ipiv)?, n, 1)?;
            l.new_with(be, n, n, |out| ldlt::reconstruct(be, l.view()?, dense.view()?, ipiv, out))
        })
    }
}

/// The inertia of a symmetric matrix from its pivoted LDLᵀ factorization.
impl<T: Scalar> Sym<T> {
    /// The numbers of positive, negative and zero eigenvalues of `A − σ·I`
    /// (`shift = σ`), from its LDLᵀ factorization: the number of
    /// eigenvalues of `A` below `σ` without computing any.
    pub fn inertia(&self, shift: f64) -> Result<Inertia> {
        let a = if shift == 0.0 { self.ldlt()? } else { self.shifted(-shift)?.ldlt()? };
        Ok(a.inertia())
    }
}
