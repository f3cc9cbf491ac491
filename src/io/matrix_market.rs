//! Matrix Market files (NIST's exchange format), read into and written from
//! dense column-major storage.
//!
//! A file is a banner line, optional comment lines, a size line and the
//! entries:
//!
//! ```text
//! %%MatrixMarket matrix coordinate real symmetric
//! % comments start with a percent sign
//! 3 3 4
//! 1 1 4.0
//! 2 1 -1.5
//! 2 2 4.0
//! 3 3 2.0
//! ```
//!
//! # What is read
//!
//! - Banner keywords are case-insensitive. Only the object `matrix` is
//!   supported; the formats `array` and `coordinate`; the fields `real` and
//!   `integer` (`complex` and `pattern` are an error that says so); the
//!   symmetries `general`, `symmetric` and `skew-symmetric` (`hermitian` is an
//!   error). An `integer` file's values are converted to the nearest `f64`.
//! - After the banner, blank lines and lines whose first non-blank character
//!   is `%` are ignored anywhere, also between entries. Line endings may be
//!   `\n` or `\r\n`; tokens may be separated by any ASCII whitespace.
//! - One entry per line, as the specification says: one value per line in
//!   `array` format, `row column value` in `coordinate` format.
//! - `array` entries are listed column by column; a `symmetric` file lists
//!   only the lower triangle including the diagonal, a `skew-symmetric` file
//!   only the strictly lower triangle.
//! - `coordinate` indices are 1-based. **Duplicate entries are summed**, as
//!   most readers do (an assembled finite-element matrix is often written
//!   that way); a sum that overflows to infinity is an error. A `symmetric`
//!   or `skew-symmetric` file may list only lower-triangle entries (an upper
//!   one is an error), and a `skew-symmetric` file no diagonal entry.
//! - Symmetric and skew-symmetric matrices are expanded to both triangles in
//!   [`MatrixMarket::data`].
//! - Empty matrices (no rows or no columns) are valid. A matrix of more than
//!   [`MAX_DENSE_ENTRIES`] entries, or whose dense storage does not fit in
//!   the host's [available memory](crate::backend::cpu::available_memory),
//!   is refused before anything is allocated, since it is always stored
//!   dense. The entries of an `array` file are read before the dense buffer
//!   is taken, so a size line larger than the file costs nothing.
//!
//! Every malformed input is an [`Error::Parse`] naming the file and the
//! 1-based line; the reader never panics. An error found only at the end of
//! the file (too few entries, a missing size line) names the file's last
//! line.
//!
//! # What is written
//!
//! Values are written with Rust's shortest representation that reads back
//! to the same `f64` (`0.1`, `1e-300`, `-0.0`, `5e-324`), so a write followed
//! by a read is bit-exact. The field is always `real`. `symmetric` and
//! `skew-symmetric` output is checked to be exactly (skew-)symmetric and
//! lists the lower triangle only; `coordinate` output lists nonzero entries
//! only (so a `-0.0` reads back as `0.0`).

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::backend::cpu::{check_fits, matrix_bytes};
use crate::{Error, Result};

/// The largest number of entries (`rows × cols`) read or written: 2³¹, which
/// is 16 GiB of `f64`. Larger matrices are an error, not an allocation
/// failure.
pub const MAX_DENSE_ENTRIES: usize = 1 << 31;

/// Longest token quoted back in an error message.
const MAX_SHOWN: usize = 40;

/// How the entries are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MmFormat {
    /// Every entry, column by column (dense).
    #[default]
    Array,
    /// `row column value` triplets (sparse).
    Coordinate,
}

/// The type of the values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MmField {
    /// Floating-point values.
    #[default]
    Real,
    /// Integer values (converted to the nearest `f64` when read).
    Integer,
}

/// Which part of the matrix the file lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MmSymmetry {
    /// Every entry.
    #[default]
    General,
    /// `A = Aᵀ`; the lower triangle including the diagonal is listed.
    Symmetric,
    /// `A = -Aᵀ`; the strictly lower triangle is listed, the diagonal is zero.
    SkewSymmetric,
}

impl MmFormat {
    /// The banner keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            MmFormat::Array => "array",
            MmFormat::Coordinate => "coordinate",
        }
    }
}

impl MmField {
    /// The banner keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            MmField::Real => "real",
            MmField::Integer => "integer",
        }
    }
}

impl MmSymmetry {
    /// The banner keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            MmSymmetry::General => "general",
            MmSymmetry::Symmetric => "symmetric",
            MmSymmetry::SkewSymmetric => "skew-symmetric",
        }
    }
}

impl fmt::Display for MmFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

impl fmt::Display for MmField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

impl fmt::Display for MmSymmetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

/// A matrix read from a Matrix Market file, stored dense.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixMarket {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// The entries, column-major, `rows * cols` of them; a symmetric or
    /// skew-symmetric file is expanded to both triangles.
    pub data: Vec<f64>,
    /// The file's format.
    pub format: MmFormat,
    /// The file's field.
    pub field: MmField,
    /// The file's symmetry.
    pub symmetry: MmSymmetry,
}

/// Options for [`write_matrix_market`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MmWriteOptions {
    /// `Array` (every entry, the default) or `Coordinate` (nonzeros only).
    pub format: MmFormat,
    /// `General` (the default), or `Symmetric` / `SkewSymmetric` to write the
    /// lower triangle of a matrix that must be exactly (skew-)symmetric.
    pub symmetry: MmSymmetry,
    /// Text written after the banner, each of its lines prefixed with `%`.
    pub comment: Option<String>,
}

// ---------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------

/// Reads a Matrix Market file. See the [module documentation](self) for what
/// is accepted.
pub fn read_matrix_market(path: &Path) -> Result<MatrixMarket> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    read_matrix_market_from(BufReader::new(file), path)
}

/// Reads a Matrix Market file from `reader`; `name` is the path that error
/// messages give.
pub fn read_matrix_market_from(reader: impl BufRead, name: &Path) -> Result<MatrixMarket> {
    let mut lines = Lines { reader, name, text: String::new(), line: 0 };

    if !lines.advance()? {
        return Err(Error::parse(
            name,
            1,
            "empty file: expected the banner '%%MatrixMarket matrix <format> <field> <symmetry>'",
        ));
    }
    let text = lines.text.strip_prefix('\u{feff}').unwrap_or(&lines.text);
    let (format, field, symmetry) = parse_banner(text).map_err(|m| lines.error(m))?;

    if !lines.next_content()? {
        return Err(Error::parse(name, lines.eof_line(), "unexpected end of file: the size line is missing"));
    }
    let size_line = lines.line;
    let (rows, cols, nnz) = parse_size(lines.text.trim(), format).map_err(|m| lines.error(m))?;

    if symmetry != MmSymmetry::General && rows != cols {
        return Err(lines.error(format!("a {symmetry} matrix must be square, but the size line says {rows}×{cols}")));
    }
    let len = match rows.checked_mul(cols) {
        Some(len) if len <= MAX_DENSE_ENTRIES => len,
        Some(len) => {
            return Err(lines.error(format!(
                "matrix of {rows}×{cols} = {len} entries is too large for dense storage \
                 (the limit is 2^31 = {MAX_DENSE_ENTRIES} entries)"
            )));
        }
        None => {
            return Err(lines.error(format!(
                "matrix of {rows}×{cols} is too large for dense storage \
                 (rows × columns overflows; the limit is 2^31 entries)"
            )));
        }
    };
    // Checked before a dense buffer exists: Linux overcommits, so an
    // allocation beyond the machine would succeed and the process die later.
    check_fits(|| format!("the {rows}×{cols} matrix"), matrix_bytes(rows, cols, size_of::<f64>()))
        .map_err(|e| Error::parse(name, size_line, e.to_string()))?;

    let mut mm = MatrixMarket { rows, cols, data: Vec::new(), format, field, symmetry };
    match format {
        MmFormat::Array => {
            // The entries are read before the dense buffer is taken, so that
            // a size line that lies about a short file costs no more memory
            // than the file's own entries.
            let listed = read_array_entries(&mut lines, &mm)?;
            mm.data = dense(name, size_line, len, rows, cols)?;
            place_array_entries(&mut mm, listed);
        }
        MmFormat::Coordinate => {
            mm.data = dense(name, size_line, len, rows, cols)?;
            read_coordinate_entries(&mut lines, &mut mm, nnz)?;
        }
    }
    Ok(mm)
}

/// A zeroed dense buffer of `len` entries, or a parse error at the size line.
fn dense(name: &Path, size_line: usize, len: usize, rows: usize, cols: usize) -> Result<Vec<f64>> {
    let mut data = Vec::new();
    if data.try_reserve_exact(len).is_err() {
        return Err(Error::parse(
            name,
            size_line,
            format!("cannot allocate dense storage for {rows}×{cols} = {len} entries"),
        ));
    }
    data.resize(len, 0.0);
    Ok(data)
}

/// A line-by-line reader that knows the current 1-based line number.
struct Lines<'a, R> {
    reader: R,
    name: &'a Path,
    /// The current line without its line terminator.
    text: String,
    /// The current line's number; after the end of the file, the last line's.
    line: usize,
}

impl<R: BufRead> Lines<'_, R> {
    /// Moves to the next line; `false` at the end of the file.
    fn advance(&mut self) -> Result<bool> {
        self.text.clear();
        match self.reader.read_line(&mut self.text) {
            Ok(0) => Ok(false),
            Ok(_) => {
                self.line += 1;
                if self.text.ends_with('\n') {
                    self.text.pop();
                    if self.text.ends_with('\r') {
                        self.text.pop();
                    }
                }
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                Err(Error::parse(self.name, self.line + 1, "line is not valid UTF-8"))
            }
            Err(e) => Err(Error::io(self.name, e)),
        }
    }

    /// Moves to the next line that is neither blank nor a comment; `false` at
    /// the end of the file.
    fn next_content(&mut self) -> Result<bool> {
        while self.advance()? {
            let t = self.text.trim_start();
            if !t.is_empty() && !t.starts_with('%') {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Counts the content lines left, this one excluded; `None` if the rest
    /// of the file cannot be read.
    fn count_rest(&mut self) -> Option<usize> {
        let mut n = 0usize;
        loop {
            match self.next_content() {
                Ok(true) => n += 1,
                Ok(false) => return Some(n),
                Err(_) => return None,
            }
        }
    }

    /// The line that an error found at the end of the file names: the last
    /// line of the file.
    fn eof_line(&self) -> usize {
        self.line.max(1)
    }

    /// A parse error at the current line.
    fn error(&self, message: impl Into<String>) -> Error {
        Error::parse(self.name, self.line.max(1), message)
    }

    /// The error for an entry beyond the `expected` count declared by the
    /// size line, at the current line (the first extra entry).
    fn too_many(&mut self, expected: usize) -> Error {
        let line = self.line;
        let found = match self.count_rest() {
            Some(rest) => format!("{}", expected + 1 + rest),
            None => format!("at least {}", expected + 1),
        };
        Error::parse(
            self.name,
            line,
            format!(
                "too many entries: the size line declares {expected}, found {found} \
                 (the first extra entry is on this line)"
            ),
        )
    }

    /// The error for a file that ends after `found` of `expected` entries.
    fn too_few(&self, expected: usize, found: usize) -> Error {
        Error::parse(
            self.name,
            self.eof_line(),
            format!("unexpected end of file: the size line declares {expected} entries, found {found}"),
        )
    }
}

/// Quotes a token for an error message, shortened if long.
/// Control characters are escaped: a stray carriage return inside a line
/// must not break the one-line message.
fn shown(token: &str) -> String {
    let escape = |c: char| if c.is_control() { c.escape_debug().collect() } else { c.to_string() };
    if token.chars().count() > MAX_SHOWN {
        let head: String = token.chars().take(MAX_SHOWN).map(escape).collect();
        format!("'{head}…'")
    } else {
        format!("'{}'", token.chars().map(escape).collect::<String>())
    }
}

const BANNER_FORM: &str = "'%%MatrixMarket matrix <format> <field> <symmetry>'";

fn parse_banner(text: &str) -> std::result::Result<(MmFormat, MmField, MmSymmetry), String> {
    let mut tokens = text.split_ascii_whitespace();
    let first = tokens.next().unwrap_or("");
    if !first.eq_ignore_ascii_case("%%MatrixMarket") {
        let starts = text.get(..14).is_some_and(|s| s.eq_ignore_ascii_case("%%MatrixMarket"));
        return Err(if starts {
            format!("garbled banner {}: expected {BANNER_FORM}", shown(text))
        } else {
            format!("missing banner: the first line must be {BANNER_FORM}, found {}", shown(text))
        });
    }
    let missing = |what: &str| format!("the banner is missing the {what}: expected {BANNER_FORM}");

    let object = tokens.next().ok_or_else(|| missing("object ('matrix')"))?;
    if !object.eq_ignore_ascii_case("matrix") {
        return Err(format!("unsupported object {} in the banner: only 'matrix' is supported", shown(object)));
    }

    let format = tokens.next().ok_or_else(|| missing("format"))?;
    let format = match format.to_ascii_lowercase().as_str() {
        "array" => MmFormat::Array,
        "coordinate" => MmFormat::Coordinate,
        _ => {
            return Err(format!("unknown format {} in the banner: expected 'array' or 'coordinate'", shown(format)));
        }
    };

    let field = tokens.next().ok_or_else(|| missing("field"))?;
    let field = match field.to_ascii_lowercase().as_str() {
        "real" => MmField::Real,
        "integer" => MmField::Integer,
        "complex" | "pattern" => {
            return Err(format!("unsupported field {}: only 'real' and 'integer' are supported", shown(field)));
        }
        _ => {
            return Err(format!("unknown field {} in the banner: expected 'real' or 'integer'", shown(field)));
        }
    };

    let symmetry = tokens.next().ok_or_else(|| missing("symmetry"))?;
    let symmetry = match symmetry.to_ascii_lowercase().as_str() {
        "general" => MmSymmetry::General,
        "symmetric" => MmSymmetry::Symmetric,
        "skew-symmetric" => MmSymmetry::SkewSymmetric,
        "hermitian" => {
            return Err("unsupported symmetry 'hermitian': only 'general', 'symmetric' and \
                 'skew-symmetric' are supported"
                .to_string());
        }
        _ => {
            return Err(format!(
                "unknown symmetry {} in the banner: expected 'general', 'symmetric' or \
                 'skew-symmetric'",
                shown(symmetry)
            ));
        }
    };

    if let Some(extra) = tokens.next() {
        return Err(format!("unexpected {} after the banner's symmetry: expected {BANNER_FORM}", shown(extra)));
    }
    Ok((format, field, symmetry))
}

/// Parses the size line: `rows cols` (array) or `rows cols entries`
/// (coordinate; `entries` is returned as the third value, 0 for array).
fn parse_size(text: &str, format: MmFormat) -> std::result::Result<(usize, usize, usize), String> {
    let tokens: Vec<&str> = text.split_ascii_whitespace().take(4).collect();
    let (want, form) = match format {
        MmFormat::Array => (2, "'rows columns'"),
        MmFormat::Coordinate => (3, "'rows columns entries'"),
    };
    if tokens.len() != want {
        let found = if tokens.len() > want { "more".to_string() } else { tokens.len().to_string() };
        return Err(format!("the size line of a {format} file must have {want} numbers {form}, found {found}"));
    }
    let names = ["row count", "column count", "entry count"];
    let mut values = [0usize; 3];
    for (k, token) in tokens.iter().enumerate() {
        values[k] = token
            .parse::<usize>()
            .map_err(|_| format!("size line: the {} {} is not a non-negative integer", names[k], shown(token)))?;
    }
    Ok((values[0], values[1], values[2]))
}

/// Parses one value of the given field; the error is a message for the line.
fn parse_value(token: &str, field: MmField) -> std::result::Result<f64, String> {
    let value = match field {
        MmField::Real => token.parse::<f64>().map_err(|_| format!("{} is not a number", shown(token)))?,
        MmField::Integer => {
            let digits = token.strip_prefix(['+', '-']).unwrap_or(token);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("{} is not an integer, but the banner declares the field 'integer'", shown(token)));
            }
            token.parse::<f64>().map_err(|_| format!("{} is not an integer", shown(token)))?
        }
    };
    if value.is_finite() { Ok(value) } else { Err(format!("non-finite value {}", shown(token))) }
}

/// The listed values of an array file, in file order: exactly as many as the
/// size line declares, or an error. The vector grows with the file, never
/// beyond the declared count.
fn read_array_entries<R: BufRead>(lines: &mut Lines<'_, R>, mm: &MatrixMarket) -> Result<Vec<f64>> {
    let (m, n) = (mm.rows, mm.cols);
    let expected = match mm.symmetry {
        MmSymmetry::General => m * n,
        MmSymmetry::Symmetric => n * (n + 1) / 2,
        MmSymmetry::SkewSymmetric => n * n.saturating_sub(1) / 2,
    };
    let mut listed: Vec<f64> = Vec::new();
    while lines.next_content()? {
        let mut tokens = lines.text.split_ascii_whitespace();
        let token = tokens.next().unwrap_or("");
        let extra = tokens.count();
        if listed.len() == expected {
            return Err(lines.too_many(expected));
        }
        if extra > 0 {
            return Err(lines.error(format!("expected one value per line in array format, found {}", extra + 1)));
        }
        let value = parse_value(token, mm.field).map_err(|msg| lines.error(msg))?;
        if listed.len() == listed.capacity() {
            // Doubling, capped at the declared count: no slack at the end.
            listed.reserve_exact(listed.capacity().max(1024).min(expected - listed.len()));
        }
        listed.push(value);
    }
    if listed.len() < expected {
        return Err(lines.too_few(expected, listed.len()));
    }
    Ok(listed)
}

/// Puts the `listed` values of an array file (column by column: all of a
/// general matrix, the lower or strictly lower triangle of a symmetric or
/// skew-symmetric one) into the zeroed dense `mm.data`.
fn place_array_entries(mm: &mut MatrixMarket, listed: Vec<f64>) {
    let n = mm.cols;
    let first_row = match mm.symmetry {
        MmSymmetry::General => {
            mm.data = listed;
            return;
        }
        MmSymmetry::Symmetric => 0,
        MmSymmetry::SkewSymmetric => 1,
    };
    let mut values = listed.into_iter();
    for j in 0..n {
        for (i, v) in (j + first_row..n).zip(values.by_ref()) {
            mm.data[i + j * n] = v;
        }
    }
    match mm.symmetry {
        MmSymmetry::Symmetric => mirror(&mut mm.data, n, |v| v),
        _ => mirror(&mut mm.data, n, |v| -v),
    }
}

fn read_coordinate_entries<R: BufRead>(lines: &mut Lines<'_, R>, mm: &mut MatrixMarket, expected: usize) -> Result<()> {
    let (m, n) = (mm.rows, mm.cols);
    let mut found = 0usize;
    while lines.next_content()? {
        if found == expected {
            return Err(lines.too_many(expected));
        }
        let tokens: Vec<&str> = lines.text.split_ascii_whitespace().take(4).collect();
        if tokens.len() != 3 {
            let count = if tokens.len() > 3 { "more".to_string() } else { tokens.len().to_string() };
            return Err(
                lines.error(format!("expected 3 fields 'row column value' in coordinate format, found {count}"))
            );
        }
        let index = |token: &str, what: &str, bound: usize| match token.parse::<usize>() {
            Ok(k) if (1..=bound).contains(&k) => Ok(k),
            Ok(k) => Err(format!("{what} index {k} is out of range: the matrix is {m}×{n} (indices are 1-based)")),
            Err(_) => Err(format!("{what} index {} is not a positive integer", shown(token))),
        };
        let i = index(tokens[0], "row", m).map_err(|msg| lines.error(msg))?;
        let j = index(tokens[1], "column", n).map_err(|msg| lines.error(msg))?;
        match mm.symmetry {
            MmSymmetry::General => {}
            MmSymmetry::Symmetric | MmSymmetry::SkewSymmetric if i < j => {
                return Err(lines.error(format!(
                    "entry ({i}, {j}) is in the upper triangle, but a {} file lists only the \
                     lower triangle",
                    mm.symmetry
                )));
            }
            MmSymmetry::SkewSymmetric if i == j => {
                return Err(lines.error(format!(
                    "diagonal entry ({i}, {j}) in a skew-symmetric file, whose diagonal is zero \
                     and not listed"
                )));
            }
            _ => {}
        }
        let value = parse_value(tokens[2], mm.field).map_err(|msg| lines.error(msg))?;
        let slot = &mut mm.data[(i - 1) + (j - 1) * m];
        let sum = *slot + value;
        if !sum.is_finite() {
            return Err(lines.error(format!("duplicate entries at ({i}, {j}) sum to a non-finite value")));
        }
        *slot = sum;
        found += 1;
    }
    if found < expected {
        return Err(lines.too_few(expected, found));
    }
    match mm.symmetry {
        MmSymmetry::General => {}
        MmSymmetry::Symmetric => mirror(&mut mm.data, n, |v| v),
        // `0.0 - v` rather than `-v`: an entry not listed stays +0.0.
        MmSymmetry::SkewSymmetric => mirror(&mut mm.data, n, |v| 0.0 - v),
    }
    Ok(())
}

/// Fills the strictly upper triangle of the `n×n` column-major `data` from
/// the strictly lower one: `a[j, i] = f(a[i, j])` for `i > j`.
fn mirror(data: &mut [f64], n: usize, f: impl Fn(f64) -> f64) {
    for j in 0..n {
        for i in j + 1..n {
            data[j + i * n] = f(data[i + j * n]);
        }
    }
}

// ---------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------

/// Writes the `rows×cols` column-major matrix `data` to the file at `path`.
///
/// Everything is checked before the file is created: `data` must have
/// `rows * cols` entries, all finite (else [`Error::NonFinite`]), and a
/// symmetric or skew-symmetric matrix must be square and exactly so (else
/// [`Error::InvalidArgument`]).
pub fn write_matrix_market(path: &Path, rows: usize, cols: usize, data: &[f64], opts: &MmWriteOptions) -> Result<()> {
    check_for_writing(rows, cols, data, opts, &format!("matrix to write to {}", path.display()))?;
    let file = File::create(path).map_err(|e| Error::io(path, e))?;
    write_entries(file, rows, cols, data, opts).map_err(|e| Error::io(path, e))
}

/// Writes the `rows×cols` column-major matrix `data` to `w` (standard output,
/// a buffer), with the checks of [`write_matrix_market`]. An I/O error names
/// the path `<output>`.
pub fn write_matrix_market_to(
    w: impl Write,
    rows: usize,
    cols: usize,
    data: &[f64],
    opts: &MmWriteOptions,
) -> Result<()> {
    check_for_writing(rows, cols, data, opts, "matrix to write")?;
    write_entries(w, rows, cols, data, opts).map_err(|e| Error::io(PathBuf::from("<output>"), e))
}

fn check_for_writing(rows: usize, cols: usize, data: &[f64], opts: &MmWriteOptions, what: &str) -> Result<()> {
    match rows.checked_mul(cols) {
        Some(len) if len == data.len() => {}
        _ => {
            return Err(Error::InvalidArgument(format!(
                "Matrix Market output of a {rows}×{cols} matrix needs {} entries, got {}",
                rows.checked_mul(cols).map_or("rows × cols (overflowing)".to_string(), |l| l.to_string()),
                data.len()
            )));
        }
    }
    if let Some(k) = data.iter().position(|v| !v.is_finite()) {
        return Err(Error::NonFinite { what: what.to_string(), row: k % rows + 1, col: k / rows + 1, value: data[k] });
    }
    if opts.symmetry == MmSymmetry::General {
        return Ok(());
    }
    if rows != cols {
        return Err(Error::InvalidArgument(format!(
            "{} Matrix Market output needs a square matrix, got {rows}×{cols}",
            opts.symmetry
        )));
    }
    let n = rows;
    let skew = opts.symmetry == MmSymmetry::SkewSymmetric;
    for j in 0..n {
        if skew && data[j + j * n] != 0.0 {
            return Err(Error::InvalidArgument(format!(
                "matrix is not skew-symmetric: diagonal entry ({0}, {0}) = {1:?} is not zero",
                j + 1,
                data[j + j * n]
            )));
        }
        for i in j + 1..n {
            let (lower, upper) = (data[i + j * n], data[j + i * n]);
            let mirrored = if skew { -lower } else { lower };
            if upper != mirrored {
                return Err(Error::InvalidArgument(format!(
                    "matrix is not {}: entry ({}, {}) = {lower:?} but entry ({}, {}) = {upper:?}",
                    opts.symmetry,
                    i + 1,
                    j + 1,
                    j + 1,
                    i + 1
                )));
            }
        }
    }
    Ok(())
}

/// Writes a checked matrix.
fn write_entries(w: impl Write, rows: usize, cols: usize, data: &[f64], opts: &MmWriteOptions) -> std::io::Result<()> {
    let mut w = BufWriter::new(w);
    writeln!(w, "%%MatrixMarket matrix {} real {}", opts.format, opts.symmetry)?;
    if let Some(comment) = &opts.comment {
        for line in comment.lines() {
            // A stray carriage return would end the comment line early for
            // some readers.
            let line = line.replace('\r', " ");
            if line.is_empty() {
                writeln!(w, "%")?;
            } else {
                writeln!(w, "% {line}")?;
            }
        }
    }
    // The listed positions (i, j): all, lower triangle, or strictly lower.
    let first_row = |j: usize| match opts.symmetry {
        MmSymmetry::General => 0,
        MmSymmetry::Symmetric => j,
        MmSymmetry::SkewSymmetric => j + 1,
    };
    match opts.format {
        MmFormat::Array => {
            writeln!(w, "{rows} {cols}")?;
            for j in 0..cols {
                for i in first_row(j)..rows {
                    writeln!(w, "{:?}", data[i + j * rows])?;
                }
            }
        }
        MmFormat::Coordinate => {
            let nnz: usize =
                (0..cols).map(|j| (first_row(j)..rows).filter(|&i| data[i + j * rows] != 0.0).count()).sum();
            writeln!(w, "{rows} {cols} {nnz}")?;
            for j in 0..cols {
                for i in first_row(j)..rows {
                    let v = data[i + j * rows];
                    if v != 0.0 {
                        writeln!(w, "{} {} {v:?}", i + 1, j + 1)?;
                    }
                }
            }
        }
    }
    w.flush()
}
