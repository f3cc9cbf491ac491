//! MPS, the linear programs' exchange format (IBM's MPSX, as the netlib LP
//! collection and HiGHS read it), into a [`LinearProgram`] on the host.
//!
//! Sections, each header at the start of a line: `NAME`, `OBJSENSE`
//! (`MIN`/`MAX`, on its line or the next; also `OBJSENSE MAX`), `ROWS`
//! (`N`, `E`, `L`, `G`), `COLUMNS` (with `MARKER` lines `'INTORG'` /
//! `'INTEND'`), `RHS`, `RANGES`, `BOUNDS` (`UP`, `LO`, `FX`, `FR`, `MI`, `PL`,
//! `BV`, and the integer `LI`, `UI`), `ENDATA`. Data lines start with a
//! space; `*` starts a comment line. Conventions:
//!
//! - the first `N` row is the objective; further `N` rows are dropped with
//!   a note;
//! - an `RHS` entry on the objective row is minus a constant of the
//!   objective;
//! - only the first `RHS`, `RANGES` and `BOUNDS` sets are read (others are
//!   noted);
//! - a range `R` on row `b`: `E` rows `[b, b + |R|]` for `R > 0`,
//!   `[b − |R|, b]` for `R < 0`; `L` rows `[b − |R|, b]`; `G` rows
//!   `[b, b + |R|]`;
//! - columns are in `[0, ∞)` unless bounded; `UP` with a negative value on
//!   a column with no `LO` makes its lower bound `−∞` (noted);
//! - integrality (markers, `BV`, `LI`, `UI`) is read and reported: the LP
//!   relaxation is what gpumat solves, and [`LinearProgram::notes`] says so.
//!
//! [`MpsFormat::Free`] splits data lines at blanks (names without spaces;
//! the netlib files read so); [`MpsFormat::Fixed`] takes the six fields at
//! their columns (2–3, 5–12, 15–22, 25–36, 40–47, 50–61), so names may hold
//! spaces. Every malformed line, unknown name, duplicate entry or bound is
//! an [`Error::Parse`] with its line number; no input makes the reader
//! panic, and lines longer than [`MAX_LINE`] bytes are refused before they
//! are held.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::{Error, Result};

/// The longest line read, in bytes: MPS lines are short; a longer one is a
/// wrong file, refused before it is held in memory.
pub const MAX_LINE: usize = 1 << 16;

/// How data lines are split into fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MpsFormat {
    /// At blanks.
    #[default]
    Free,
    /// At the fixed columns of the original format.
    Fixed,
}

/// Minimize or maximize.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sense {
    #[default]
    Minimize,
    Maximize,
}

/// A constraint row's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    /// `aᵀx = b`.
    Equal,
    /// `aᵀx ≤ b`.
    Less,
    /// `aᵀx ≥ b`.
    Greater,
}

/// A linear program as the file states it: optimize `cᵀx + constant`
/// subject to `row_lower ≤ A·x ≤ row_upper` and `lower ≤ x ≤ upper`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinearProgram {
    pub name: String,
    pub sense: Sense,
    /// The objective row's name.
    pub objective: String,
    /// The objective's constant (minus the `RHS` entry on its row).
    pub constant: f64,
    /// The constraint rows' names and types, in file order.
    pub rows: Vec<(String, RowKind)>,
    /// The columns' names, in file order.
    pub columns: Vec<String>,
    /// Whether a column was marked integer (the relaxation is solved).
    pub integer: Vec<bool>,
    /// The objective's coefficients, one per column.
    pub c: Vec<f64>,
    /// `A`'s nonzeros as `(row, column, value)`, 0-based, column by column.
    pub entries: Vec<(usize, usize, f64)>,
    /// Each row's right-hand side (0 when the file gives none).
    pub rhs: Vec<f64>,
    /// Each row's range, when the file gives one.
    pub ranges: Vec<Option<f64>>,
    /// Each column's bounds (`±∞` where unbounded).
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
    /// What was read but not used, or read by a convention: one line each.
    pub notes: Vec<String>,
}

impl LinearProgram {
    /// Each row's `[lower, upper]` from its type, right-hand side and
    /// range.
    pub fn row_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        self.rows
            .iter()
            .zip(&self.rhs)
            .zip(&self.ranges)
            .map(|((&(_, kind), &b), &range)| match (kind, range) {
                (RowKind::Equal, None) => (b, b),
                (RowKind::Equal, Some(r)) if r >= 0.0 => (b, b + r),
                (RowKind::Equal, Some(r)) => (b + r, b),
                (RowKind::Less, None) => (f64::NEG_INFINITY, b),
                (RowKind::Less, Some(r)) => (b - r.abs(), b),
                (RowKind::Greater, None) => (b, f64::INFINITY),
                (RowKind::Greater, Some(r)) => (b, b + r.abs()),
            })
            .unzip()
    }
}

/// Reads the MPS file at `path`.
pub fn read_mps(path: &Path, format: MpsFormat) -> Result<LinearProgram> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    read_mps_from(BufReader::new(file), path, format)
}

/// [`read_mps`] from any reader; `name` is the file named in errors.
pub fn read_mps_from(reader: impl BufRead, name: &Path, format: MpsFormat) -> Result<LinearProgram> {
    let mut parser = Parser {
        name,
        format,
        lp: LinearProgram::default(),
        section: Section::Start,
        row_index: HashMap::new(),
        column_index: HashMap::new(),
        seen: HashSet::new(),
        objective_seen: HashSet::new(),
        integer_block: false,
        rhs_set: None,
        ranges_set: None,
        bounds_set: None,
        lower_given: Vec::new(),
        sense_pending: false,
    };
    let mut reader = reader;
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        number += 1;
        let read =
            (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line).map_err(|e| Error::io(name, e))?;
        if read == 0 {
            break;
        }
        if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            return Err(Error::parse(name, number, format!("a line longer than {MAX_LINE} bytes: not an MPS file")));
        }
        let text = std::str::from_utf8(&line).map_err(|_| Error::parse(name, number, "not UTF-8 text"))?;
        if parser.line(number, text.trim_end_matches(['\n', '\r']))? {
            return parser.finish(number);
        }
    }
    Err(Error::parse(name, number, "the file ends before ENDATA"))
}

/// The sections in the order a file has them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
enum Section {
    #[default]
    Start,
    Name,
    ObjSense,
    Rows,
    Columns,
    Rhs,
    Ranges,
    Bounds,
}

/// The file being read, and what its lines so far say.
struct Parser<'a> {
    name: &'a Path,
    format: MpsFormat,
    lp: LinearProgram,
    section: Section,
    /// Rows by name: `None` for the objective and dropped `N` rows.
    row_index: HashMap<String, Option<usize>>,
    column_index: HashMap<String, usize>,
    /// Entries seen, to refuse a duplicate.
    seen: HashSet<(usize, usize)>,
    objective_seen: HashSet<usize>,
    integer_block: bool,
    /// The sets read (the first of each section), and those noted.
    rhs_set: Option<String>,
    ranges_set: Option<String>,
    bounds_set: Option<String>,
    /// Columns given an explicit lower bound.
    lower_given: Vec<bool>,
    sense_pending: bool,
}

impl Parser<'_> {
    fn error(&self, line: usize, message: impl Into<String>) -> Error {
        Error::parse(self.name, line, message)
    }

    /// One line; `true` at `ENDATA`.
    fn line(&mut self, n: usize, text: &str) -> Result<bool> {
        if text.trim().is_empty() || text.starts_with('*') {
            return Ok(false);
        }
        if text.chars().any(|c| c.is_control() && c != '\t') {
            return Err(self.error(n, "a control character in the line"));
        }
        if !text.starts_with([' ', '\t']) {
            return self.header(n, text);
        }
        if self.sense_pending {
            self.sense_pending = false;
            return self.sense(n, text.trim());
        }
        let fields = self.fields(text);
        match self.section {
            Section::Rows => self.row(n, &fields),
            Section::Columns => self.column(n, &fields),
            Section::Rhs => self.rhs(n, &fields),
            Section::Ranges => self.range(n, &fields),
            Section::Bounds => self.bound(n, &fields),
            Section::ObjSense => self.sense(n, text.trim()),
            Section::Start | Section::Name => Err(self.error(n, "a data line before the ROWS section")),
        }
    }

    /// A data line's fields: at blanks, or at the fixed columns (empty
    /// fields dropped, so that an absent set name reads as in free format).
    fn fields<'t>(&self, text: &'t str) -> Vec<&'t str> {
        match self.format {
            MpsFormat::Free => text.split_whitespace().collect(),
            MpsFormat::Fixed => [(1, 3), (4, 12), (14, 22), (24, 36), (39, 47), (49, 61)]
                .iter()
                .filter_map(|&(a, b)| text.get(a.min(text.len())..b.min(text.len())))
                .map(str::trim)
                .filter(|f| !f.is_empty())
                .collect(),
        }
    }

    fn header(&mut self, n: usize, text: &str) -> Result<bool> {
        let mut words = text.split_whitespace();
        let word = words.next().unwrap_or("");
        let next = match word {
            "NAME" => Section::Name,
            "OBJSENSE" => Section::ObjSense,
            "ROWS" => Section::Rows,
            "COLUMNS" => Section::Columns,
            "RHS" => Section::Rhs,
            "RANGES" => Section::Ranges,
            "BOUNDS" => Section::Bounds,
            "ENDATA" => return Ok(true),
            other => return Err(self.error(n, format!("unknown section '{other}'"))),
        };
        if next <= self.section && !(next == Section::Name && self.section == Section::Start) {
            return Err(self.error(n, format!("section {word} out of order or repeated")));
        }
        self.section = next;
        match next {
            Section::Name => self.lp.name = words.collect::<Vec<_>>().join(" "),
            Section::ObjSense => match words.next() {
                Some(s) => {
                    self.sense(n, s)?;
                }
                None => self.sense_pending = true,
            },
            // Free-MPS writers may name a set on the header: nothing to read.
            _ => {}
        }
        Ok(false)
    }

    fn sense(&mut self, n: usize, word: &str) -> Result<bool> {
        self.lp.sense = match word {
            "MIN" | "MINIMIZE" | "MINIMISE" => Sense::Minimize,
            "MAX" | "MAXIMIZE" | "MAXIMISE" => Sense::Maximize,
            other => return Err(self.error(n, format!("OBJSENSE must be MIN or MAX, not '{other}'"))),
        };
        Ok(false)
    }

    fn row(&mut self, n: usize, f: &[&str]) -> Result<bool> {
        let [kind, name] = f[..] else {
            return Err(self.error(n, "a ROWS line is a type (N, E, L, G) and a name"));
        };
        if self.row_index.contains_key(name) {
            return Err(self.error(n, format!("row '{name}' is defined twice")));
        }
        let kind = match kind {
            "N" if self.lp.objective.is_empty() => {
                self.lp.objective = name.to_string();
                self.row_index.insert(name.to_string(), None);
                return Ok(false);
            }
            "N" => {
                self.lp.notes.push(format!("free row '{name}' (line {n}) is not the objective: dropped"));
                self.row_index.insert(name.to_string(), None);
                return Ok(false);
            }
            "E" => RowKind::Equal,
            "L" => RowKind::Less,
            "G" => RowKind::Greater,
            other => return Err(self.error(n, format!("row type must be N, E, L or G, not '{other}'"))),
        };
        let i = self.lp.rows.len();
        self.row_index.insert(name.to_string(), Some(i));
        self.lp.rows.push((name.to_string(), kind));
        self.lp.rhs.push(0.0);
        self.lp.ranges.push(None);
        Ok(false)
    }

    /// The row an entry names: `Ok(None)` for the objective or a dropped
    /// `N` row (told apart by `objective`).
    fn row_of(&self, n: usize, name: &str) -> Result<(Option<usize>, bool)> {
        match self.row_index.get(name) {
            Some(&i) => Ok((i, name == self.lp.objective)),
            None => Err(self.error(n, format!("unknown row '{name}'"))),
        }
    }

    fn number(&self, n: usize, s: &str, what: &str) -> Result<f64> {
        match s.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.error(n, format!("{what} '{s}' is not a finite number"))),
        }
    }

    fn column(&mut self, n: usize, f: &[&str]) -> Result<bool> {
        if f.len() >= 3 && f[1].trim_matches('\'') == "MARKER" {
            match f[2].trim_matches('\'') {
                "INTORG" => self.integer_block = true,
                "INTEND" => self.integer_block = false,
                other => return Err(self.error(n, format!("a MARKER is 'INTORG' or 'INTEND', not '{other}'"))),
            }
            return Ok(false);
        }
        if f.len() != 3 && f.len() != 5 {
            return Err(self.error(n, "a COLUMNS line is a column and one or two (row, value) pairs"));
        }
        let name = f[0];
        let j = match self.column_index.get(name) {
            Some(&j) if j + 1 == self.lp.columns.len() => j,
            Some(_) => {
                return Err(self.error(n, format!("column '{name}' appears again after other columns")));
            }
            None => {
                let j = self.lp.columns.len();
                self.column_index.insert(name.to_string(), j);
                self.lp.columns.push(name.to_string());
                let integer = self.integer_block;
                self.lp.integer.push(integer);
                self.lp.c.push(0.0);
                self.lp.lower.push(0.0);
                self.lp.upper.push(f64::INFINITY);
                self.lower_given.push(false);
                j
            }
        };
        for pair in f[1..].chunks(2) {
            let value = self.number(n, pair[1], "coefficient")?;
            match self.row_of(n, pair[0])? {
                (Some(i), _) => {
                    if !self.seen.insert((i, j)) {
                        return Err(self.error(n, format!("entry ({}, {name}) is given twice", pair[0])));
                    }
                    if value != 0.0 {
                        self.lp.entries.push((i, j, value));
                    }
                }
                (None, true) => {
                    if !self.objective_seen.insert(j) {
                        return Err(self.error(n, format!("the objective coefficient of '{name}' is given twice")));
                    }
                    self.lp.c[j] = value;
                }
                (None, false) => {}
            }
        }
        Ok(false)
    }

    /// The `(name, value)` pairs of an `RHS` or `RANGES` line and whether
    /// they belong to the first set: an odd count of fields starts with the
    /// set's name.
    fn set_pairs<'f>(&mut self, n: usize, f: &[&'f str], ranges: bool) -> Result<Option<Vec<(&'f str, f64)>>> {
        let what = if ranges { "RANGES" } else { "RHS" };
        let (set, pairs) = if f.len() % 2 == 1 { (f[0], &f[1..]) } else { ("", f) };
        if pairs.is_empty() || pairs.len() > 4 {
            return Err(
                self.error(n, format!("an {what} line is an optional set name and one or two (row, value) pairs"))
            );
        }
        let first = if ranges { &mut self.ranges_set } else { &mut self.rhs_set };
        match first {
            None => *first = Some(set.to_string()),
            Some(s) if s == set => {}
            Some(_) => {
                let note = format!("{what} set '{set}' ignored (only the first is read)");
                if !self.lp.notes.contains(&note) {
                    self.lp.notes.push(note);
                }
                return Ok(None);
            }
        }
        let mut out = Vec::new();
        for pair in pairs.chunks(2) {
            out.push((pair[0], self.number(n, pair[1], "value")?));
        }
        Ok(Some(out))
    }

    fn rhs(&mut self, n: usize, f: &[&str]) -> Result<bool> {
        let Some(pairs) = self.set_pairs(n, f, false)? else { return Ok(false) };
        for (row, value) in pairs {
            match self.row_of(n, row)? {
                (Some(i), _) => self.lp.rhs[i] = value,
                (None, true) => self.lp.constant = -value,
                (None, false) => {}
            }
        }
        Ok(false)
    }

    fn range(&mut self, n: usize, f: &[&str]) -> Result<bool> {
        let Some(pairs) = self.set_pairs(n, f, true)? else { return Ok(false) };
        for (row, value) in pairs {
            match self.row_of(n, row)? {
                (Some(i), _) => {
                    if self.lp.ranges[i].replace(value).is_some() {
                        return Err(self.error(n, format!("row '{row}' is given two ranges")));
                    }
                }
                (None, _) => return Err(self.error(n, format!("free row '{row}' cannot have a range"))),
            }
        }
        Ok(false)
    }

    fn bound(&mut self, n: usize, f: &[&str]) -> Result<bool> {
        let Some(&kind) = f.first() else { return Ok(false) };
        let needs_value = matches!(kind, "UP" | "LO" | "FX" | "LI" | "UI");
        // Type, optional set name, column, value (if the type takes one;
        // BV may carry one too).
        let known = |s: &str| self.column_index.contains_key(s);
        let missing = || self.error(n, format!("a {kind} bound needs a value"));
        let (set, column, value) = match f.len() {
            4 => (f[1], f[2], Some(f[3])),
            3 if needs_value && !known(f[1]) && known(f[2]) => return Err(missing()),
            3 if needs_value => ("", f[1], Some(f[2])),
            3 if known(f[2]) => (f[1], f[2], None),
            3 => ("", f[1], Some(f[2])),
            2 if needs_value => return Err(missing()),
            2 => ("", f[1], None),
            _ => return Err(self.error(n, "a BOUNDS line is a type, an optional set name, a column and a value")),
        };
        match &self.bounds_set {
            None => self.bounds_set = Some(set.to_string()),
            Some(s) if s == set => {}
            Some(_) => {
                let note = format!("BOUNDS set '{set}' ignored (only the first is read)");
                if !self.lp.notes.contains(&note) {
                    self.lp.notes.push(note);
                }
                return Ok(false);
            }
        }
        let Some(&j) = self.column_index.get(column) else {
            return Err(self.error(n, format!("unknown column '{column}'")));
        };
        let value = match value {
            Some(v) => Some(self.number(n, v, "bound")?),
            None if needs_value => return Err(self.error(n, format!("a {kind} bound needs a value"))),
            None => None,
        };
        let v = value.unwrap_or(0.0);
        match kind {
            "UP" | "UI" => {
                self.lp.upper[j] = v;
                if v < 0.0 && !self.lower_given[j] && self.lp.lower[j] == 0.0 {
                    self.lp.lower[j] = f64::NEG_INFINITY;
                    self.lp.notes.push(format!(
                        "column '{column}': negative upper bound {v} with no lower bound (line {n}): lower bound −∞, \
                         as the MPS convention says"
                    ));
                }
            }
            "LO" | "LI" => {
                self.lp.lower[j] = v;
                self.lower_given[j] = true;
            }
            "FX" => {
                self.lp.lower[j] = v;
                self.lp.upper[j] = v;
                self.lower_given[j] = true;
            }
            "FR" => {
                self.lp.lower[j] = f64::NEG_INFINITY;
                self.lp.upper[j] = f64::INFINITY;
                self.lower_given[j] = true;
            }
            "MI" => {
                self.lp.lower[j] = f64::NEG_INFINITY;
                self.lower_given[j] = true;
            }
            "PL" => self.lp.upper[j] = f64::INFINITY,
            "BV" => {
                self.lp.lower[j] = 0.0;
                self.lp.upper[j] = 1.0;
                self.lower_given[j] = true;
            }
            other => {
                return Err(
                    self.error(n, format!("bound type must be UP, LO, FX, FR, MI, PL, BV, LI or UI, not '{other}'"))
                );
            }
        }
        if matches!(kind, "BV" | "LI" | "UI") {
            self.lp.integer[j] = true;
        }
        Ok(false)
    }

    fn finish(mut self, n: usize) -> Result<LinearProgram> {
        if self.lp.objective.is_empty() {
            return Err(self.error(n, "no objective: the ROWS section has no N row"));
        }
        if self.section < Section::Columns {
            return Err(self.error(n, "ENDATA before a COLUMNS section"));
        }
        for j in 0..self.lp.columns.len() {
            if self.lp.lower[j] > self.lp.upper[j] {
                let column = &self.lp.columns[j];
                return Err(self.error(
                    n,
                    format!(
                        "column '{column}' has lower bound {} above its upper bound {}",
                        self.lp.lower[j], self.lp.upper[j]
                    ),
                ));
            }
        }
        let integers = self.lp.integer.iter().filter(|&&i| i).count();
        if integers > 0 {
            self.lp
                .notes
                .push(format!("{integers} integer column(s): their integrality is ignored (the LP relaxation)"));
        }
        Ok(self.lp)
    }
}
