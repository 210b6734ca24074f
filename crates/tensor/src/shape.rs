//! Fully known shapes of runtime tensors, and NumPy/TensorFlow broadcasting.

use crate::error::{Error, Result};
use smallvec::SmallVec;
use std::fmt;

/// Dimensions of a runtime tensor (row-major). Rank 0 is a scalar.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Shape(SmallVec<[usize; 4]>);

impl Shape {
    pub fn new(dims: &[usize]) -> Shape {
        Shape(SmallVec::from_slice(dims))
    }

    pub fn scalar() -> Shape {
        Shape(SmallVec::new())
    }

    pub fn dims(&self) -> &[usize] {
        &self.0
    }

    pub fn rank(&self) -> usize {
        self.0.len()
    }

    pub fn dim(&self, i: usize) -> usize {
        self.0[i]
    }

    /// Number of elements (1 for a scalar).
    pub fn num_elements(&self) -> usize {
        self.0.iter().product()
    }

    /// Row-major strides in elements.
    pub fn strides(&self) -> SmallVec<[usize; 4]> {
        let mut strides: SmallVec<[usize; 4]> = SmallVec::from_elem(1, self.rank());
        for i in (0..self.rank().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * self.0[i + 1];
        }
        strides
    }

    /// The shape as `i64`s (how shapes travel in tensors and protos).
    pub fn to_i64(&self) -> Vec<i64> {
        self.0.iter().map(|&d| d as i64).collect()
    }

    /// Builds a shape from `i64` dims, rejecting negative sizes.
    pub fn from_i64(dims: &[i64]) -> Result<Shape> {
        dims.iter()
            .enumerate()
            .map(|(i, &d)| {
                usize::try_from(d).map_err(|_| {
                    let all: Vec<String> = dims.iter().map(i64::to_string).collect();
                    Error::invalid_argument(format!(
                        "Dimension {d} must be >= 0 (dimension {i} of the shape [{}])",
                        all.join(",")
                    ))
                })
            })
            .collect::<Result<SmallVec<_>>>()
            .map(Shape)
    }

    pub fn push(&mut self, d: usize) {
        self.0.push(d);
    }

    pub fn insert(&mut self, i: usize, d: usize) {
        self.0.insert(i, d);
    }

    pub fn remove(&mut self, i: usize) -> usize {
        self.0.remove(i)
    }

    pub fn set_dim(&mut self, i: usize, d: usize) {
        self.0[i] = d;
    }
}

impl From<&[usize]> for Shape {
    fn from(d: &[usize]) -> Shape {
        Shape::new(d)
    }
}

impl<const N: usize> From<[usize; N]> for Shape {
    fn from(d: [usize; N]) -> Shape {
        Shape::new(&d)
    }
}

impl From<Vec<usize>> for Shape {
    fn from(d: Vec<usize>) -> Shape {
        Shape(SmallVec::from_vec(d))
    }
}

impl FromIterator<usize> for Shape {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Shape {
        Shape(iter.into_iter().collect())
    }
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Prints like TensorFlow's runtime shapes: `[2,3]`.
impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

/// The broadcast shape of `a` and `b` (NumPy rules), or `None` if they are
/// incompatible.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Shape> {
    let rank = a.len().max(b.len());
    let mut out = SmallVec::with_capacity(rank);
    for i in 0..rank {
        let da = if i + a.len() >= rank {
            a[i + a.len() - rank]
        } else {
            1
        };
        let db = if i + b.len() >= rank {
            b[i + b.len() - rank]
        } else {
            1
        };
        out.push(match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        });
    }
    Some(Shape(out))
}

/// Normalises a possibly negative axis against `rank`.
pub fn normalize_axis(axis: i64, rank: usize, what: &str) -> Result<usize> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        return Err(Error::invalid_argument(format!(
            "{what}: axis {axis} is out of range for a tensor of rank {rank} (must be in [{}, {}))",
            -r, r
        )));
    }
    Ok(if axis < 0 {
        (axis + r) as usize
    } else {
        axis as usize
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting() {
        assert_eq!(
            broadcast_shapes(&[3, 1, 5], &[4, 5]).unwrap().dims(),
            &[3, 4, 5]
        );
        assert_eq!(broadcast_shapes(&[], &[2]).unwrap().dims(), &[2]);
        assert!(broadcast_shapes(&[3], &[4]).is_none());
        assert_eq!(broadcast_shapes(&[0, 1], &[1, 4]).unwrap().dims(), &[0, 4]);
    }

    #[test]
    fn strides_and_display() {
        let s = Shape::new(&[2, 3, 4]);
        assert_eq!(s.strides().as_slice(), &[12, 4, 1]);
        assert_eq!(s.to_string(), "[2,3,4]");
        assert_eq!(Shape::scalar().num_elements(), 1);
    }

    #[test]
    fn axes() {
        assert_eq!(normalize_axis(-1, 3, "t").unwrap(), 2);
        assert!(normalize_axis(3, 3, "t").is_err());
        assert!(normalize_axis(-4, 3, "t").is_err());
    }
}
