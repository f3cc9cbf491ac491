//! The same block of each member of a batch: `count` matrices laid out one
//! after another, `stride` entries apart, in one buffer — the
//! "strided batched" operand of cuBLAS.
//!
//! [`Strided`] reads the block of every member, [`StridedMut`] writes it.
//! A `StridedMut`'s members never share an entry (its stride is at least
//! the block's extent), so a backend may work on them all at once. A
//! batched primitive checks its arguments as the single-matrix primitive
//! does on member 0 ([`Strided::member`]): with one stride for all the
//! views of a buffer, what holds for member 0 holds for every member.

use std::marker::PhantomData;

use super::{Backend, Block, DeviceBuffer, View, ViewMut};
use crate::{Elem, Error, Result};

/// The block `block` of member 0 and the same block of members `1..count`,
/// `stride` entries further each; read-only.
pub struct Strided<'a, B: Backend, E: Elem> {
    buf: &'a B::Buffer<E>,
    block: Block,
    stride: usize,
    count: usize,
}

/// As [`Strided`], writable.
pub struct StridedMut<'a, B: Backend, E: Elem> {
    buf: &'a B::Buffer<E>,
    block: Block,
    stride: usize,
    count: usize,
    _exclusive: PhantomData<&'a mut B::Buffer<E>>,
}

impl<B: Backend, E: Elem> Clone for Strided<'_, B, E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B: Backend, E: Elem> Copy for Strided<'_, B, E> {}

/// The checks both kinds make: member 0 is a valid block, the last member
/// ends inside the buffer, and (for writes) members are disjoint.
fn check(len: usize, block: Block, stride: usize, count: usize, disjoint: bool) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    let extent = block.end() - block.offset;
    let last = (count - 1).checked_mul(stride).and_then(|s| s.checked_add(block.end()));
    if last.is_none_or(|end| end > len) {
        return Err(Error::InvalidArgument(format!(
            "{count} blocks {}×{} {stride} entries apart from offset {} overrun a buffer of {len}",
            block.rows, block.cols, block.offset
        )));
    }
    if disjoint && count > 1 && stride < extent {
        return Err(Error::InvalidArgument(format!("written blocks of {extent} entries {stride} apart would overlap")));
    }
    Ok(())
}

/// Accessors both kinds share.
macro_rules! strided_accessors {
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
        /// Entries between one member's block and the next one's.
        pub fn stride(&self) -> usize {
            self.stride
        }
        pub fn count(&self) -> usize {
            self.count
        }
        /// Member `s`'s block.
        pub fn member_block(&self, s: usize) -> Block {
            Block { offset: self.block.offset + s * self.stride, ..self.block }
        }
        /// Member `s`'s block. Member 0's is there even in an empty batch
        /// (a batched primitive checks its arguments on it).
        pub fn member(&self, s: usize) -> Result<View<'_, B, E>> {
            if s >= self.count.max(1) {
                return Err(Error::InvalidArgument(format!("member {s} of a batch of {}", self.count)));
            }
            View::new(self.buf, self.member_block(s))
        }
    };
}

impl<'a, B: Backend, E: Elem> Strided<'a, B, E> {
    pub fn new(buf: &'a B::Buffer<E>, block: Block, stride: usize, count: usize) -> Result<Self> {
        View::<B, E>::new(buf, block)?;
        check(buf.len(), block, stride, count, false)?;
        Ok(Strided { buf, block, stride, count })
    }

    pub fn buffer(&self) -> &'a B::Buffer<E> {
        self.buf
    }
    strided_accessors!();

    /// The sub-block `rows × cols` at `(i, j)` of every member.
    pub fn sub(&self, i: usize, j: usize, rows: usize, cols: usize) -> Result<Self> {
        Ok(Strided { block: self.block.sub(i, j, rows, cols)?, ..*self })
    }
}

impl<'a, B: Backend, E: Elem> StridedMut<'a, B, E> {
    pub fn new(buf: &'a mut B::Buffer<E>, block: Block, stride: usize, count: usize) -> Result<Self> {
        Self::from_shared(buf, block, stride, count)
    }

    /// Made from shared access: callers hold the exclusive one (a
    /// [`BufferMut`](super::BufferMut) or a `StridedMut` being split).
    pub(crate) fn from_shared(buf: &'a B::Buffer<E>, block: Block, stride: usize, count: usize) -> Result<Self> {
        View::<B, E>::new(buf, block)?;
        check(buf.len(), block, stride, count, true)?;
        Ok(StridedMut { buf, block, stride, count, _exclusive: PhantomData })
    }

    /// The dense `rows × cols` matrices of a whole buffer, `count` of them.
    pub fn dense(buf: &'a mut B::Buffer<E>, rows: usize, cols: usize, count: usize) -> Result<Self> {
        let stride = rows * cols;
        Self::new(buf, Block::dense(rows, cols), stride, count)
    }

    pub fn buffer(&self) -> &B::Buffer<E> {
        self.buf
    }
    strided_accessors!();

    /// Member `s`'s block, writable; members are disjoint, so a backend may
    /// hold several at once (one per thread).
    pub fn member_mut(&self, s: usize) -> Result<ViewMut<'_, B, E>> {
        self.member(s)?;
        Ok(ViewMut::from_shared(self.buf, self.member_block(s)))
    }

    /// Reads the same blocks.
    pub fn rb(&self) -> Strided<'_, B, E> {
        Strided { buf: self.buf, block: self.block, stride: self.stride, count: self.count }
    }

    /// Reborrows for one operation, keeping `self` for the next.
    pub fn rb_mut(&mut self) -> StridedMut<'_, B, E> {
        StridedMut { buf: self.buf, block: self.block, stride: self.stride, count: self.count, _exclusive: PhantomData }
    }

    /// The sub-block `rows × cols` at `(i, j)` of every member, writable.
    pub fn sub_mut(self, i: usize, j: usize, rows: usize, cols: usize) -> Result<Self> {
        Ok(StridedMut { block: self.block.sub(i, j, rows, cols)?, ..self })
    }
}
