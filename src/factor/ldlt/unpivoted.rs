//! LDLᵀ without pivoting, blocked as Cholesky is.
//!
//! With no pivot to search for, nothing in a block column depends on the
//! trailing matrix beyond it, so the factorization is Cholesky's loop
//! ([`crate::factor::symmetric`]), look-ahead included, with `ldlt_panel`
//! leaves (`W₂₁ = A₂₁·L₁₁⁻ᵀ` and `L₂₁ = W₂₁·D₁⁻¹` with the diagonal block)
//! and the updates `C −= L·Wᵀ`, `W = L·D` kept dense for the block column.
//! This is Paciullo and Krawezik's blocked LDLᵀ in packed storage, in RFP
//! storage here, on the GPU's level-3 routines.

use crate::backend::{Backend, BufferMut, DeviceBuffer, Triangle, ViewMut};
use crate::factor::cholesky::CholeskyParams;
use crate::factor::symmetric::{self, Leaves};
use crate::{Result, Scalar};

/// The widest leaf: the GPU factors leaves of up to 64 columns in one
/// launch (`ldlt_panel`), and a wider one gains nothing on the CPU.
pub(super) const LEAF: usize = 64;

/// The workspace: `W` of two consecutive block columns (`n × block_size`
/// each), a leaf's scratch (`leaf_size²`), the leaves' status word.
pub(super) struct Work<'w, B: Backend, T: Scalar> {
    pub w: [BufferMut<'w, B, T>; 2],
    pub leaf: BufferMut<'w, B, T>,
    pub info: ViewMut<'w, B, i32>,
}

/// Factors `L` where `tri` locates it without interchanges; `d` receives
/// `D`. A pivot of magnitude `≤ tol` is not divided by (its column of `L`
/// is zero). Enqueued as one unit of [`Backend::replay`], as Cholesky is.
pub(super) fn factor<B: Backend, T: Scalar>(
    be: &B,
    tri: &Triangle,
    a: &BufferMut<'_, B, T>,
    d: &mut ViewMut<'_, B, T>,
    tol: f64,
    params: CholeskyParams,
    mut work: Work<'_, B, T>,
) -> Result<()> {
    let params = CholeskyParams { leaf_size: params.leaf_size.clamp(1, LEAF), ..params };
    let key = format!(
        "ldlt {} {tri:?} {params:?} tol {tol:e} in {:#x}, W {:#x} {:#x} {:#x}, D {:#x} {:?}, info {:#x}",
        T::NAME,
        a.id(),
        work.w[0].id(),
        work.w[1].id(),
        work.leaf.id(),
        d.buffer().id(),
        d.block(),
        work.info.buffer().id()
    );
    be.fill(work.info.rb_mut(), 0)?;
    let mut enqueue = |q: &B| {
        let leaves = Leaves::Ldlt { d: d.rb_mut(), tol, w: [&work.w[0], &work.w[1]], dmat: &work.leaf };
        symmetric::factor(q, *tri, a, leaves, &mut work.info, 0, params)
    };
    if !params.recordable() {
        return enqueue(be);
    }
    be.replay(&key, &mut enqueue)
}
