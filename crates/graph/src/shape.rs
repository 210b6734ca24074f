//! Partially known shapes for graph construction (TensorFlow's `TensorShape`).

use ferroflow_tensor::{Error, Result, Shape};
use std::fmt;

/// A shape whose rank and dimensions may be unknown.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct PartialShape(Option<Vec<Option<usize>>>);

impl PartialShape {
    /// Unknown rank.
    pub fn unknown() -> PartialShape {
        PartialShape(None)
    }

    /// Known rank, every dimension unknown.
    pub fn unknown_dims(rank: usize) -> PartialShape {
        PartialShape(Some(vec![None; rank]))
    }

    pub fn scalar() -> PartialShape {
        PartialShape(Some(Vec::new()))
    }

    pub fn from_dims(dims: Vec<Option<usize>>) -> PartialShape {
        PartialShape(Some(dims))
    }

    /// From TensorFlow's encoding: `None` is unknown rank, `-1` an unknown dim.
    pub fn from_i64(dims: Option<&[i64]>) -> PartialShape {
        PartialShape(dims.map(|d| d.iter().map(|&x| usize::try_from(x).ok()).collect()))
    }

    pub fn rank(&self) -> Option<usize> {
        self.0.as_ref().map(|d| d.len())
    }

    pub fn dims(&self) -> Option<&[Option<usize>]> {
        self.0.as_deref()
    }

    /// Dimension `i` (None if unknown or rank unknown).
    pub fn dim(&self, i: usize) -> Option<usize> {
        self.0.as_ref().and_then(|d| d.get(i).copied().flatten())
    }

    pub fn is_fully_defined(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|d| d.iter().all(Option::is_some))
    }

    /// The runtime shape, if fully known.
    pub fn to_shape(&self) -> Option<Shape> {
        let d = self.0.as_ref()?;
        d.iter()
            .copied()
            .collect::<Option<Vec<usize>>>()
            .map(Shape::from)
    }

    /// Number of elements, if fully known.
    pub fn num_elements(&self) -> Option<usize> {
        self.to_shape().map(|s| s.num_elements())
    }

    /// TensorFlow's encoding: `None` for unknown rank, `-1` for unknown dims.
    pub fn to_i64(&self) -> Option<Vec<i64>> {
        self.0
            .as_ref()
            .map(|d| d.iter().map(|x| x.map_or(-1, |v| v as i64)).collect())
    }

    /// True if a value of shape `s` could have this shape.
    pub fn is_compatible_with_shape(&self, s: &Shape) -> bool {
        match &self.0 {
            None => true,
            Some(d) => {
                d.len() == s.rank()
                    && d.iter()
                        .zip(s.dims())
                        .all(|(a, b)| a.is_none_or(|x| x == *b))
            }
        }
    }

    /// True if the two shapes could describe the same value.
    pub fn is_compatible_with(&self, other: &PartialShape) -> bool {
        self.merge(other).is_some()
    }

    /// The most specific shape compatible with both, or `None` if they conflict.
    pub fn merge(&self, other: &PartialShape) -> Option<PartialShape> {
        match (&self.0, &other.0) {
            (None, _) => Some(other.clone()),
            (_, None) => Some(self.clone()),
            (Some(a), Some(b)) => {
                if a.len() != b.len() {
                    return None;
                }
                a.iter()
                    .zip(b)
                    .map(|(x, y)| match (x, y) {
                        (Some(p), Some(q)) if p != q => Err(()),
                        (Some(p), _) => Ok(Some(*p)),
                        (_, q) => Ok(*q),
                    })
                    .collect::<Result<Vec<_>, ()>>()
                    .ok()
                    .map(|d| PartialShape(Some(d)))
            }
        }
    }

    /// Requires rank `r` (when the rank is known); `what` names the value.
    pub fn with_rank(&self, r: usize, what: &str) -> Result<PartialShape> {
        match self.rank() {
            None => Ok(PartialShape::unknown_dims(r)),
            Some(k) if k == r => Ok(self.clone()),
            Some(k) => Err(Error::value(format!(
                "Shape must be rank {r} but is rank {k} for {what} with shape {self}"
            ))),
        }
    }

    /// NumPy broadcasting of partial shapes; `None` if they cannot broadcast.
    ///
    /// Follows TensorFlow's broadcasting shape function exactly: an operand of
    /// unknown rank makes the result's rank unknown, and where one dimension is
    /// unknown the result keeps the other only when it is greater than 1 (a
    /// known 1 yields the unknown dimension, a known 0 yields unknown, since the
    /// unknown one may be 1).
    pub fn broadcast(&self, other: &PartialShape) -> Option<PartialShape> {
        let (Some(a), Some(b)) = (&self.0, &other.0) else {
            return Some(PartialShape::unknown());
        };
        let rank = a.len().max(b.len());
        let pad = |d: &[Option<usize>], i: usize| -> Option<usize> {
            if i + d.len() >= rank {
                d[i + d.len() - rank]
            } else {
                Some(1)
            }
        };
        let mut out = Vec::with_capacity(rank);
        for i in 0..rank {
            let (x, y) = (pad(a, i), pad(b, i));
            out.push(match (x, y) {
                (Some(p), Some(q)) if p == q => Some(p),
                (Some(1), q) => q,
                (p, Some(1)) => p,
                (Some(_), Some(_)) => return None,
                (Some(p), None) | (None, Some(p)) if p > 1 => Some(p),
                (Some(_), None) | (None, Some(_)) => None,
                (None, None) => None,
            });
        }
        Some(PartialShape(Some(out)))
    }
}

impl From<&Shape> for PartialShape {
    fn from(s: &Shape) -> PartialShape {
        PartialShape(Some(s.dims().iter().map(|&d| Some(d)).collect()))
    }
}

impl From<Shape> for PartialShape {
    fn from(s: Shape) -> PartialShape {
        PartialShape::from(&s)
    }
}

impl fmt::Debug for PartialShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Prints like TensorFlow 1's `TensorShape`: `(?, 3)`, `(5,)`, `()` or `<unknown>`.
impl fmt::Display for PartialShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            None => f.write_str("<unknown>"),
            Some(d) => {
                f.write_str("(")?;
                for (i, x) in d.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    match x {
                        Some(v) => write!(f, "{v}")?,
                        None => f.write_str("?")?,
                    }
                }
                if d.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_and_broadcast() {
        let a = PartialShape::from_dims(vec![None, Some(3)]);
        let b = PartialShape::from_dims(vec![Some(2), None]);
        assert_eq!(
            a.merge(&b).unwrap(),
            PartialShape::from_dims(vec![Some(2), Some(3)])
        );
        assert!(a
            .merge(&PartialShape::from_dims(vec![Some(2), Some(4)]))
            .is_none());
        let c = PartialShape::from_dims(vec![Some(4), Some(1), Some(3)]);
        let d = PartialShape::from_dims(vec![None, Some(1)]);
        assert_eq!(c.broadcast(&d).unwrap().to_string(), "(4, ?, 3)");
        assert!(PartialShape::from_dims(vec![Some(2)])
            .broadcast(&PartialShape::from_dims(vec![Some(3)]))
            .is_none());
        assert_eq!(PartialShape::from_dims(vec![Some(5)]).to_string(), "(5,)");
        // A known 0 against an unknown dimension: TF leaves the result unknown.
        let zero = PartialShape::from_dims(vec![Some(0)]);
        let unk = PartialShape::from_dims(vec![None]);
        assert_eq!(zero.broadcast(&unk).unwrap().to_string(), "(?,)");
        assert_eq!(unk.broadcast(&zero).unwrap().to_string(), "(?,)");
        // A scalar keeps the other operand's shape; unknown rank stays unknown.
        let x = PartialShape::from_dims(vec![None, Some(3)]);
        assert_eq!(PartialShape::scalar().broadcast(&x).unwrap(), x);
        assert_eq!(
            PartialShape::unknown().broadcast(&x).unwrap(),
            PartialShape::unknown()
        );
    }
}
