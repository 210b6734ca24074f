//! `Bucketize`: the bucket index of each value given sorted boundaries, as
//! TensorFlow's CPU kernel computes it (`std::upper_bound` over float
//! boundaries).

use super::parallel;
use crate::{DType, Error, Result, Tensor};
use std::cmp::Ordering;

/// Checks that `boundaries` are sorted in non-decreasing order (TensorFlow's
/// kernel refuses others with this message).
pub fn check_boundaries(boundaries: &[f32]) -> Result<()> {
    if boundaries.windows(2).any(|w| w[1] < w[0]) {
        return Err(Error::invalid_argument("Expected sorted boundaries"));
    }
    Ok(())
}

/// The number of boundaries `<= x`: the index of the first boundary greater
/// than `x` (all of them for NaN, as `upper_bound` gives).
#[inline]
fn bucket<T: PartialOrd + Copy>(boundaries: &[T], x: T) -> i32 {
    boundaries.partition_point(|&b| x.partial_cmp(&b) != Some(Ordering::Less)) as i32
}

/// For each element of `input` (int32, int64, float32 or float64), the index
/// of its bucket among the sorted `boundaries`: an int32 tensor of the same
/// shape. Values are compared as TensorFlow's kernel compares them: integers
/// and float32 as float32, float64 against the boundaries widened to float64.
pub fn bucketize(input: &Tensor, boundaries: &[f32]) -> Result<Tensor> {
    check_boundaries(boundaries)?;
    let out: Vec<i32> = match input.dtype() {
        DType::Float32 => parallel::map(input.as_slice::<f32>()?, |x| bucket(boundaries, x)),
        DType::Float64 => {
            let wide: Vec<f64> = boundaries.iter().map(|&b| b as f64).collect();
            parallel::map(input.as_slice::<f64>()?, |x| bucket(&wide, x))
        }
        DType::Int32 => parallel::map(input.as_slice::<i32>()?, |x| bucket(boundaries, x as f32)),
        DType::Int64 => parallel::map(input.as_slice::<i64>()?, |x| bucket(boundaries, x as f32)),
        other => {
            return Err(Error::invalid_argument(format!(
                "Bucketize: input must be int32, int64, float or double, got {}",
                other.name()
            )))
        }
    };
    Tensor::from_vec(input.shape().clone(), out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_follow_upper_bound() {
        let x =
            Tensor::from_vec(vec![2, 3], vec![-5.0f32, 0.0, 0.5, 10.0, 100.0, f32::NAN]).unwrap();
        let y = bucketize(&x, &[0.0, 10.0, 100.0]).unwrap();
        assert_eq!(y.as_slice::<i32>().unwrap(), &[0, 1, 1, 2, 3, 3]);
        assert_eq!(y.dims(), &[2, 3]);
    }

    #[test]
    fn integers_and_doubles() {
        let x = Tensor::vector(vec![-1i64, 0, 3, 4]);
        let y = bucketize(&x, &[0.0, 3.5]).unwrap();
        assert_eq!(y.as_slice::<i32>().unwrap(), &[0, 1, 1, 2]);
        // 0.1f64 is above the float32 boundary 0.1f32 widened to f64.
        let x = Tensor::vector(vec![0.1f64, 0.099_999_999]);
        let y = bucketize(&x, &[0.1]).unwrap();
        assert_eq!(y.as_slice::<i32>().unwrap(), &[0, 0]);
        let y = bucketize(&Tensor::vector(vec![1i32, 2]), &[]).unwrap();
        assert_eq!(y.as_slice::<i32>().unwrap(), &[0, 0]);
    }

    #[test]
    fn unsorted_boundaries_are_refused() {
        let e = bucketize(&Tensor::vector(vec![1.0f32]), &[1.0, 0.0]).unwrap_err();
        assert!(e.to_string().contains("Expected sorted boundaries"));
    }
}
