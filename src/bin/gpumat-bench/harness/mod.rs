//! What every suite shares: timing on the device, random inputs, error
//! measures, the factorizations more than one suite times, the search for
//! the largest order that fits, and the record of a measurement with the
//! writer of the results. Suites use the harness and never each other.

pub mod capacity;
pub mod errors;
pub mod factorizations;
pub mod inputs;
pub mod results;
pub mod timing;

/// What a suite is asked to run: the orders, and the timed runs of each
/// routine (the median is reported).
pub struct Settings {
    pub sizes: Vec<usize>,
    pub reps: usize,
}
