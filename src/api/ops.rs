//! Operators on matrices. They cannot return a `Result`: a failure (shapes
//! that do not fit, a failed operand) becomes a matrix that carries it and
//! raises it at its first read. Use `matmul`, `add_scaled`, … to fail at once.

use std::ops::{Add, Mul, Neg, Sub};

use super::Matrix;
use crate::{Result, Scalar};

fn deferred<T: Scalar>(like: &Matrix<T>, shape: (usize, usize), r: Result<Matrix<T>>) -> Matrix<T> {
    r.unwrap_or_else(|e| Matrix::failed(like.device().clone(), shape.0, shape.1, e))
}

impl<T: Scalar> Mul<&Matrix<T>> for &Matrix<T> {
    type Output = Matrix<T>;
    fn mul(self, b: &Matrix<T>) -> Matrix<T> {
        deferred(self, (self.rows(), b.cols()), self.matmul(b))
    }
}

impl<T: Scalar> Add<&Matrix<T>> for &Matrix<T> {
    type Output = Matrix<T>;
    fn add(self, b: &Matrix<T>) -> Matrix<T> {
        deferred(self, self.shape(), self.add_scaled(T::ONE, T::ONE, b))
    }
}

impl<T: Scalar> Sub<&Matrix<T>> for &Matrix<T> {
    type Output = Matrix<T>;
    fn sub(self, b: &Matrix<T>) -> Matrix<T> {
        deferred(self, self.shape(), self.add_scaled(T::ONE, -T::ONE, b))
    }
}

impl<T: Scalar> Neg for &Matrix<T> {
    type Output = Matrix<T>;
    fn neg(self) -> Matrix<T> {
        deferred(self, self.shape(), self.scaled(-T::ONE))
    }
}

impl<T: Scalar> Mul<T> for &Matrix<T> {
    type Output = Matrix<T>;
    fn mul(self, alpha: T) -> Matrix<T> {
        deferred(self, self.shape(), self.scaled(alpha))
    }
}

macro_rules! scalar_times_matrix {
    ($t:ty) => {
        impl Mul<&Matrix<$t>> for $t {
            type Output = Matrix<$t>;
            fn mul(self, a: &Matrix<$t>) -> Matrix<$t> {
                a * self
            }
        }
    };
}
scalar_times_matrix!(f32);
scalar_times_matrix!(f64);
