//! Standard output of every command. A write error becomes an error naming
//! stdout instead of `println!`'s panic: a full disk is exit code 1, a closed
//! pipe a quiet end (see `exit`).

use std::io::Write;

use gpumat::{Error, Result};

/// A write error on stdout.
pub fn error(e: std::io::Error) -> Error {
    Error::io("stdout", e)
}

pub fn write_fmt(args: std::fmt::Arguments<'_>) -> Result<()> {
    std::io::stdout().lock().write_fmt(args).map_err(error)
}

/// What is still buffered, so that its failure is reported too.
pub fn flush() -> Result<()> {
    std::io::stdout().lock().flush().map_err(error)
}

/// `println!` that returns the write error instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::stdout::write_fmt(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use outln;
