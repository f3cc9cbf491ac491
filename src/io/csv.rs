//! Numeric CSV tables, read column by column (for data fitting).
//!
//! A file is a header row of column names followed by data rows, fields
//! separated by commas, with CSV quoting (`"a, b"`) as usual. Whitespace
//! around names and fields is trimmed, blank lines are skipped and a leading
//! UTF-8 byte-order mark is ignored. Column names must be non-empty and
//! distinct; every row must have as many fields as the header; every field
//! must be a finite number. Each violation is an [`Error::Parse`] naming the
//! file, the 1-based line (the header is line 1) and, for a bad field, the
//! column. The table grows with the file, and each growth is checked
//! against the host's [available
//! memory](crate::backend::cpu::available_memory) before it is allocated:
//! a table too large for the machine is an error, not an abort.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use ::csv::{ErrorKind, ReaderBuilder, StringRecord, Trim};

use crate::backend::cpu::{check_fits, matrix_bytes};
use crate::{Error, Result};

/// A table of named numeric columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The column names, in file order.
    pub columns: Vec<String>,
    /// The values, one `Vec` per column (in the order of `columns`), each of
    /// [`Table::nrows`] entries.
    pub data: Vec<Vec<f64>>,
}

impl Table {
    /// The values of the column called `name`; an unknown name is an
    /// [`Error::InvalidArgument`] that lists the available columns.
    pub fn column(&self, name: &str) -> Result<&[f64]> {
        match self.columns.iter().position(|c| c == name) {
            Some(k) => Ok(&self.data[k]),
            None => {
                let available: Vec<String> = self.columns.iter().map(|c| shown(c)).collect();
                Err(Error::InvalidArgument(format!(
                    "no column named {}; the available columns are {}",
                    shown(name),
                    available.join(", ")
                )))
            }
        }
    }

    /// The number of data rows.
    pub fn nrows(&self) -> usize {
        self.data.first().map_or(0, Vec::len)
    }

    /// The number of columns.
    pub fn ncols(&self) -> usize {
        self.columns.len()
    }
}

/// Reads a numeric CSV file. See the [module documentation](self).
pub fn read_csv(path: &Path) -> Result<Table> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    read_csv_from(BufReader::new(file), path)
}

/// Reads a numeric CSV table from `reader`; `name` is the path that error
/// messages give.
pub fn read_csv_from(reader: impl Read, name: &Path) -> Result<Table> {
    let mut rdr = ReaderBuilder::new().has_headers(true).trim(Trim::All).flexible(true).from_reader(reader);

    let header = rdr.headers().map_err(|e| csv_error(name, e))?.clone();
    let header_line = line_of(&header).max(1);
    if header.is_empty() {
        return Err(Error::parse(name, 1, "empty file: no header row and no data rows"));
    }
    let mut columns: Vec<String> = Vec::with_capacity(header.len());
    for (k, column) in header.iter().enumerate() {
        let column = if k == 0 { column.trim_start_matches('\u{feff}').trim() } else { column };
        if column.is_empty() {
            return Err(Error::parse(name, header_line, format!("column {} of the header has an empty name", k + 1)));
        }
        if let Some(first) = columns.iter().position(|c| c == column) {
            return Err(Error::parse(
                name,
                header_line,
                format!("duplicate column name {} (columns {} and {})", shown(column), first + 1, k + 1),
            ));
        }
        columns.push(column.to_string());
    }

    let mut data: Vec<Vec<f64>> = vec![Vec::new(); columns.len()];
    let mut record = StringRecord::new();
    let mut rows = 0usize;
    while rdr.read_record(&mut record).map_err(|e| csv_error(name, e))? {
        let line = line_of(&record);
        if record.len() != columns.len() {
            return Err(Error::parse(
                name,
                line,
                format!("expected {} fields as in the header, found {}", columns.len(), record.len()),
            ));
        }
        if rows == data[0].capacity() {
            grow(&mut data, name, line)?;
        }
        rows += 1;
        for ((field, column), values) in record.iter().zip(&columns).zip(&mut data) {
            let value = match field.parse::<f64>() {
                Ok(v) if v.is_finite() => v,
                Ok(_) => {
                    return Err(Error::parse(
                        name,
                        line,
                        format!("column {}: non-finite value {}", shown(column), shown(field)),
                    ));
                }
                Err(_) if field.is_empty() => {
                    return Err(Error::parse(
                        name,
                        line,
                        format!("column {}: empty field, expected a number", shown(column)),
                    ));
                }
                Err(_) => {
                    return Err(Error::parse(
                        name,
                        line,
                        format!("column {}: {} is not a number", shown(column), shown(field)),
                    ));
                }
            };
            values.push(value);
        }
    }

    if data[0].is_empty() {
        let line = usize::try_from(rdr.position().line()).unwrap_or(usize::MAX).max(header_line);
        return Err(Error::parse(name, line, "no data rows after the header"));
    }
    Ok(Table { columns, data })
}

/// Doubles the room of every column, after checking that the whole table
/// at that size fits in the available memory: the file's size is not known
/// in advance, so each growth is checked before it is allocated.
fn grow(data: &mut [Vec<f64>], name: &Path, line: usize) -> Result<()> {
    let (rows, cols) = (data[0].capacity().max(4).saturating_mul(2), data.len());
    check_fits(|| format!("a table of {rows} rows × {cols} columns"), matrix_bytes(rows, cols, size_of::<f64>()))
        .map_err(|e| Error::parse(name, line, e.to_string()))?;
    for column in data {
        column.reserve_exact(rows - column.len());
    }
    Ok(())
}

/// The 1-based line where `record` starts.
fn line_of(record: &StringRecord) -> usize {
    record.position().map_or(0, |p| usize::try_from(p.line()).unwrap_or(usize::MAX))
}

fn csv_error(name: &Path, e: ::csv::Error) -> Error {
    let line = e.position().map_or(1, |p| usize::try_from(p.line()).unwrap_or(usize::MAX));
    match e.into_kind() {
        ErrorKind::Io(io) => Error::io(name, io),
        ErrorKind::Utf8 { .. } => Error::parse(name, line, "line is not valid UTF-8"),
        ErrorKind::UnequalLengths { expected_len, len, .. } => {
            Error::parse(name, line, format!("expected {expected_len} fields as in the header, found {len}"))
        }
        other => Error::parse(name, line, format!("malformed CSV: {other:?}")),
    }
}

/// Quotes a field for an error message, shortened if long, with control
/// characters escaped: a quoted field may hold a line break, and an error is
/// one line.
fn shown(field: &str) -> String {
    const MAX: usize = 40;
    let escape = |c: char| if c.is_control() { c.escape_debug().collect() } else { c.to_string() };
    if field.chars().count() > MAX {
        let head: String = field.chars().take(MAX).map(escape).collect();
        format!("'{head}…'")
    } else {
        format!("'{}'", field.chars().map(escape).collect::<String>())
    }
}
