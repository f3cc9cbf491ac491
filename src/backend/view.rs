//! Strided sub-blocks of device buffers.
//!
//! A [`Block`] is a column-major rectangle inside a buffer: an offset, a shape
//! and a leading dimension — exactly what BLAS and cuBLAS take. [`View`] reads
//! a block, [`ViewMut`] writes one. A `ViewMut` is made only from `&mut` access
//! to its buffer, directly or through a [`BufferMut`] that hands out several
//! views of one buffer (the pieces of an RFP rectangle, the panel and trailing
//! matrix of a factorization). Backends check, per operation, that the block
//! written does not overlap a block read (see `region`), so in-place algorithms
//! on one buffer stay free of data races.

use std::marker::PhantomData;

use super::{Backend, DeviceBuffer, Strided, StridedMut};
use crate::{Elem, Error, Result};

/// A column-major rectangle inside a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub offset: usize,
    pub rows: usize,
    pub cols: usize,
    /// Distance between the starts of consecutive columns; `≥ max(rows, 1)`.
    pub ld: usize,
}

impl Block {
    /// The dense `rows × cols` block at the start of a buffer.
    pub fn dense(rows: usize, cols: usize) -> Self {
        Block { offset: 0, rows, cols, ld: rows.max(1) }
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0 || self.cols == 0
    }

    /// One past the last element the block touches.
    pub fn end(&self) -> usize {
        if self.is_empty() { self.offset } else { self.offset + (self.cols - 1) * self.ld + self.rows }
    }

    /// Position in the buffer of element `(i, j)` of the block.
    #[inline]
    pub fn index(&self, i: usize, j: usize) -> usize {
        self.offset + i + j * self.ld
    }

    /// The sub-block of `rows × cols` starting at `(i, j)`.
    pub fn sub(&self, i: usize, j: usize, rows: usize, cols: usize) -> Result<Block> {
        if i + rows > self.rows || j + cols > self.cols {
            return Err(Error::InvalidArgument(format!(
                "sub-block {rows}×{cols} at ({i}, {j}) does not fit in a {}×{} block",
                self.rows, self.cols
            )));
        }
        Ok(Block { offset: self.offset + i + j * self.ld, rows, cols, ld: self.ld })
    }

    /// The number of entries of a vector block (one row or one column).
    pub fn vector_len(&self) -> Option<usize> {
        match (self.rows, self.cols) {
            (_, 1) => Some(self.rows),
            (1, _) | (0, _) => Some(self.cols * self.rows.min(1)),
            _ => None,
        }
    }

    /// Position of entry `k` of a vector block.
    #[inline]
    pub fn vector_index(&self, k: usize) -> usize {
        if self.cols == 1 { self.offset + k } else { self.offset + k * self.ld }
    }

    fn check(&self, len: usize) -> Result<()> {
        if self.ld < self.rows.max(1) {
            return Err(Error::LeadingDimension { ld: self.ld, rows: self.rows });
        }
        if self.end() > len {
            return Err(Error::InvalidArgument(format!(
                "block {}×{} at offset {} with leading dimension {} reaches element {} of a buffer of {len}",
                self.rows,
                self.cols,
                self.offset,
                self.ld,
                self.end()
            )));
        }
        Ok(())
    }
}

/// A block of a buffer, read-only.
pub struct View<'a, B: Backend, E: Elem> {
    buf: &'a B::Buffer<E>,
    block: Block,
}

/// A block of a buffer that an operation may write.
pub struct ViewMut<'a, B: Backend, E: Elem> {
    buf: &'a B::Buffer<E>,
    block: Block,
    _exclusive: PhantomData<&'a mut B::Buffer<E>>,
}

impl<B: Backend, E: Elem> Clone for View<'_, B, E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B: Backend, E: Elem> Copy for View<'_, B, E> {}

/// `block()`, `rows()` and `cols()`, the same for both kinds of view.
macro_rules! shape_accessors {
    () => {
        pub fn block(&self) -> Block {
            self.block
        }
        pub fn rows(&self) -> usize {
            self.block.rows
        }
        pub fn cols(&self) -> usize {
            self.block.cols
        }
    };
}

impl<'a, B: Backend, E: Elem> View<'a, B, E> {
    pub fn new(buf: &'a B::Buffer<E>, block: Block) -> Result<Self> {
        block.check(buf.len())?;
        Ok(View { buf, block })
    }

    /// The whole buffer as a dense `rows × cols` matrix.
    pub fn dense(buf: &'a B::Buffer<E>, rows: usize, cols: usize) -> Result<Self> {
        Self::new(buf, Block::dense(rows, cols))
    }

    pub fn buffer(&self) -> &'a B::Buffer<E> {
        self.buf
    }
    shape_accessors!();

    /// The sub-block `rows × cols` at `(i, j)`.
    pub fn sub(&self, i: usize, j: usize, rows: usize, cols: usize) -> Result<Self> {
        Ok(View { buf: self.buf, block: self.block.sub(i, j, rows, cols)? })
    }
}

impl<'a, B: Backend, E: Elem> ViewMut<'a, B, E> {
    pub fn new(buf: &'a mut B::Buffer<E>, block: Block) -> Result<Self> {
        block.check(buf.len())?;
        Ok(ViewMut { buf, block, _exclusive: PhantomData })
    }

    /// The whole buffer as a dense `rows × cols` matrix.
    pub fn dense(buf: &'a mut B::Buffer<E>, rows: usize, cols: usize) -> Result<Self> {
        Self::new(buf, Block::dense(rows, cols))
    }

    pub fn buffer(&self) -> &B::Buffer<E> {
        self.buf
    }
    shape_accessors!();

    /// The buffer and block, for a backend to write through.
    pub fn into_parts(self) -> (&'a B::Buffer<E>, Block) {
        (self.buf, self.block)
    }

    /// Reads the same block.
    pub fn rb(&self) -> View<'_, B, E> {
        View { buf: self.buf, block: self.block }
    }

    /// Made from shared access by a holder of the exclusive one.
    pub(crate) fn from_shared(buf: &'a B::Buffer<E>, block: Block) -> Self {
        ViewMut { buf, block, _exclusive: PhantomData }
    }

    /// Reborrows for one operation, keeping `self` for the next.
    pub fn rb_mut(&mut self) -> ViewMut<'_, B, E> {
        ViewMut { buf: self.buf, block: self.block, _exclusive: PhantomData }
    }

    /// Rows `0..k` and `k..`, both writable: they share no entry.
    pub fn split_at_row(self, k: usize) -> Result<(Self, Self)> {
        let b = self.block;
        let top = b.sub(0, 0, k, b.cols)?;
        let bottom = b.sub(k, 0, b.rows - k, b.cols)?;
        let part = |block| ViewMut { buf: self.buf, block, _exclusive: PhantomData };
        Ok((part(top), part(bottom)))
    }

    /// Columns `0..k` and `k..`, both writable: they share no entry.
    pub fn split_at_col(self, k: usize) -> Result<(Self, Self)> {
        let b = self.block;
        let left = b.sub(0, 0, b.rows, k)?;
        let right = b.sub(0, k, b.rows, b.cols - k)?;
        let part = |block| ViewMut { buf: self.buf, block, _exclusive: PhantomData };
        Ok((part(left), part(right)))
    }

    /// The sub-block `rows × cols` at `(i, j)`, writable.
    pub fn sub_mut(self, i: usize, j: usize, rows: usize, cols: usize) -> Result<Self> {
        Ok(ViewMut { block: self.block.sub(i, j, rows, cols)?, ..self })
    }
}

/// Exclusive access to one buffer, handing out any number of read and write
/// views of it. Operations reject a write that overlaps one of their reads.
pub struct BufferMut<'a, B: Backend, E: Elem> {
    buf: &'a B::Buffer<E>,
    _exclusive: PhantomData<&'a mut B::Buffer<E>>,
}

impl<'a, B: Backend, E: Elem> BufferMut<'a, B, E> {
    pub fn new(buf: &'a mut B::Buffer<E>) -> Self {
        BufferMut { buf, _exclusive: PhantomData }
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// The buffer, to read.
    pub fn buffer(&self) -> &'a B::Buffer<E> {
        self.buf
    }

    /// The buffer's [`DeviceBuffer::id`].
    pub fn id(&self) -> usize {
        self.buf.id()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.len() == 0
    }

    pub fn view(&self, block: Block) -> Result<View<'_, B, E>> {
        View::new(self.buf, block)
    }

    pub fn view_mut(&self, block: Block) -> Result<ViewMut<'_, B, E>> {
        block.check(self.buf.len())?;
        Ok(ViewMut { buf: self.buf, block, _exclusive: PhantomData })
    }

    /// `block` of `count` members `stride` entries apart.
    pub fn strided(&self, block: Block, stride: usize, count: usize) -> Result<Strided<'_, B, E>> {
        Strided::new(self.buf, block, stride, count)
    }

    /// `block` of `count` members `stride` entries apart, writable.
    pub fn strided_mut(&self, block: Block, stride: usize, count: usize) -> Result<StridedMut<'_, B, E>> {
        StridedMut::from_shared(self.buf, block, stride, count)
    }
}
