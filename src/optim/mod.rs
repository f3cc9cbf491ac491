//! Optimizers built on the public API: they use [`Matrix`](crate::Matrix),
//! [`Sym`](crate::Sym) and their factorizations as a user would.

pub mod lp;
