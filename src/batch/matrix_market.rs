//! A batch in and out of one Matrix Market file: its matrices stacked
//! vertically, matrix `s` in rows `s·rows .. (s + 1)·rows` of a
//! `(rows·count) × cols` array. Any Matrix Market reader opens the file; a
//! batch is read back by saying how many matrices it stacks.

use std::path::Path;

use super::Batch;
use crate::io::{MmWriteOptions, read_matrix_market, write_matrix_market};
use crate::{Device, Error, Result, Scalar};

impl<T: Scalar> Batch<T> {
    /// Writes the batch to `path`, its matrices stacked vertically, a
    /// comment line saying so (entries in f64: f32 values exactly).
    pub fn write_matrix_market(&self, path: &Path) -> Result<()> {
        let ((rows, cols), count) = (self.shape(), self.count());
        let host = self.to_host()?;
        let height = rows * count;
        let mut stacked = vec![0.0; host.len()];
        for s in 0..count {
            for j in 0..cols {
                for i in 0..rows {
                    stacked[s * rows + i + j * height] = host[s * rows * cols + i + j * rows].to_f64();
                }
            }
        }
        let comment = format!("gpumat batch: {count} matrices of {rows}×{cols}, stacked vertically");
        write_matrix_market(
            path,
            height,
            cols,
            &stacked,
            &MmWriteOptions { comment: Some(comment), ..Default::default() },
        )
    }

    /// Reads `count` matrices stacked vertically from the Matrix Market file
    /// at `path` (as [`write_matrix_market`](Self::write_matrix_market)
    /// writes them) onto `device`: the file's rows must be a multiple of
    /// `count`.
    pub fn read_matrix_market(device: &Device, path: &Path, count: usize) -> Result<Self> {
        let mm = read_matrix_market(path)?;
        if count == 0 || mm.rows % count != 0 {
            return Err(Error::InvalidArgument(format!(
                "{}: {} rows do not stack {count} matrices of one height",
                path.display(),
                mm.rows
            )));
        }
        let (rows, cols) = (mm.rows / count, mm.cols);
        let mut values = vec![T::ZERO; mm.data.len()];
        for s in 0..count {
            for j in 0..cols {
                for i in 0..rows {
                    values[s * rows * cols + i + j * rows] = T::from_f64(mm.data[s * rows + i + j * mm.rows]);
                }
            }
        }
        Batch::from_host(device, (rows, cols), count, &values)
    }
}
