//! Neural-network kernels that are more than elementwise math: softmax and
//! the fused cross-entropy ops (which also return the gradient, like TF's).

use super::elementwise::cast;
use super::scalar::Float;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::tensor::{Element, Tensor};

fn rows_of(x: &Tensor, op: &str) -> Result<(usize, usize)> {
    let Some(&n) = x.dims().last() else {
        return Err(Error::invalid_argument(format!(
            "{op}: logits must have rank >= 1"
        )));
    };
    Ok((x.num_elements() / n.max(1), n))
}

/// Runs a float kernel for f32/f64 directly and for half types in f32.
fn float_kernel(
    x: &Tensor,
    op: &str,
    f32k: impl Fn(&Tensor) -> Result<Tensor>,
    f64k: impl Fn(&Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    match x.dtype() {
        DType::Float32 => f32k(x),
        DType::Float64 => f64k(x),
        d @ (DType::Float16 | DType::BFloat16) => cast(&f32k(&cast(x, DType::Float32)?)?, d),
        d => Err(Error::invalid_argument(format!(
            "{op} is not supported for {d} tensors"
        ))),
    }
}

fn softmax_rows<T: Float>(x: &Tensor, log: bool) -> Result<Tensor> {
    let (rows, n) = rows_of(x, "Softmax")?;
    let v = x.as_slice::<T>()?;
    let mut out = vec![T::zero(); v.len()];
    if n == 0 {
        return Tensor::from_vec(x.shape().clone(), out);
    }
    let row = |(src, dst): (&[T], &mut [T])| {
        let max = src
            .iter()
            .fold(T::min_value(), |m, &a| if a > m { a } else { m });
        let mut sum = T::zero();
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = s - max;
            sum = sum + d.exp();
        }
        if log {
            let ls = sum.ln();
            dst.iter_mut().for_each(|d| *d = *d - ls);
        } else {
            dst.iter_mut().for_each(|d| *d = d.exp() / sum);
        }
    };
    if v.len() >= super::parallel::PARALLEL_THRESHOLD && rows > 1 {
        // Whole rows per task, about a chunk's worth of elements each.
        let rows_per_task = (super::parallel::CHUNK / n).max(1);
        crate::team::for_each_chunk_mut(&mut out, rows_per_task * n, |t, dst| {
            let src = &v[t * rows_per_task * n..];
            src.chunks(n).zip(dst.chunks_mut(n)).for_each(row);
        });
    } else {
        v.chunks(n).zip(out.chunks_mut(n)).for_each(row);
    }
    Tensor::from_vec(x.shape().clone(), out)
}

/// Softmax (or log-softmax) over the last dimension.
pub fn softmax(x: &Tensor, log: bool) -> Result<Tensor> {
    float_kernel(
        x,
        "Softmax",
        |t| softmax_rows::<f32>(t, log),
        |t| softmax_rows::<f64>(t, log),
    )
}

fn xent_rows<T: Float>(logits: &Tensor, labels: &Tensor) -> Result<(Tensor, Tensor)> {
    let (rows, n) = rows_of(logits, "SoftmaxCrossEntropyWithLogits")?;
    let lv = logits.as_slice::<T>()?;
    let yv = labels.as_slice::<T>()?;
    let mut loss = vec![T::zero(); rows];
    let mut back = vec![T::zero(); lv.len()];
    for r in 0..rows {
        let x = &lv[r * n..(r + 1) * n];
        let y = &yv[r * n..(r + 1) * n];
        let max = x
            .iter()
            .fold(T::min_value(), |m, &a| if a > m { a } else { m });
        let sum = x.iter().fold(T::zero(), |s, &a| s + (a - max).exp());
        let lse = sum.ln();
        let mut l = T::zero();
        for j in 0..n {
            let shifted = x[j] - max;
            l = l + y[j] * (lse - shifted);
            back[r * n + j] = shifted.exp() / sum - y[j];
        }
        loss[r] = l;
    }
    let mut loss_shape = logits.shape().clone();
    loss_shape.remove(loss_shape.rank() - 1);
    Ok((
        Tensor::from_vec(loss_shape, loss)?,
        Tensor::from_vec(logits.shape().clone(), back)?,
    ))
}

/// `SoftmaxCrossEntropyWithLogits`: per-row loss and its gradient
/// `softmax(logits) - labels`.
pub fn softmax_cross_entropy(logits: &Tensor, labels: &Tensor) -> Result<(Tensor, Tensor)> {
    if logits.shape() != labels.shape() || logits.rank() != 2 {
        return Err(Error::invalid_argument(format!(
            "logits and labels must be same size and 2-D: logits_size={} labels_size={}",
            logits.shape(),
            labels.shape()
        )));
    }
    if logits.dtype() != labels.dtype() {
        return Err(Error::invalid_argument(
            "logits and labels must have one dtype",
        ));
    }
    match logits.dtype() {
        DType::Float32 => xent_rows::<f32>(logits, labels),
        DType::Float64 => xent_rows::<f64>(logits, labels),
        d @ (DType::Float16 | DType::BFloat16) => {
            let (l, b) = xent_rows::<f32>(
                &cast(logits, DType::Float32)?,
                &cast(labels, DType::Float32)?,
            )?;
            Ok((cast(&l, d)?, cast(&b, d)?))
        }
        d => Err(Error::invalid_argument(format!(
            "SoftmaxCrossEntropyWithLogits is not supported for {d}"
        ))),
    }
}

fn sparse_xent_rows<T: Float>(logits: &Tensor, labels: &[i64]) -> Result<(Tensor, Tensor)> {
    let (rows, n) = (logits.dims()[0], logits.dims()[1]);
    let lv = logits.as_slice::<T>()?;
    let mut loss = vec![T::zero(); rows];
    let mut back = vec![T::zero(); lv.len()];
    for r in 0..rows {
        let x = &lv[r * n..(r + 1) * n];
        let label = labels[r];
        if label < 0 || label as usize >= n {
            return Err(Error::invalid_argument(format!(
                "Received a label value of {label} which is outside the valid range of [0, {n}).  Label values: {}",
                labels.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(" ")
            )));
        }
        let max = x
            .iter()
            .fold(T::min_value(), |m, &a| if a > m { a } else { m });
        let sum = x.iter().fold(T::zero(), |s, &a| s + (a - max).exp());
        let lse = sum.ln();
        loss[r] = lse - (x[label as usize] - max);
        for j in 0..n {
            let p = (x[j] - max).exp() / sum;
            back[r * n + j] = if j == label as usize { p - T::one() } else { p };
        }
    }
    Ok((
        Tensor::from_vec([rows], loss)?,
        Tensor::from_vec(logits.shape().clone(), back)?,
    ))
}

/// `SparseSoftmaxCrossEntropyWithLogits` with integer class labels.
pub fn sparse_softmax_cross_entropy(logits: &Tensor, labels: &Tensor) -> Result<(Tensor, Tensor)> {
    if logits.rank() != 2 || labels.rank() != 1 || labels.dims()[0] != logits.dims()[0] {
        return Err(Error::invalid_argument(format!(
            "logits must be 2-D and labels 1-D with matching batch size, got logits {} and labels {}",
            logits.shape(),
            labels.shape()
        )));
    }
    let lab = labels.to_i64_vec()?;
    match logits.dtype() {
        DType::Float32 => sparse_xent_rows::<f32>(logits, &lab),
        DType::Float64 => sparse_xent_rows::<f64>(logits, &lab),
        d @ (DType::Float16 | DType::BFloat16) => {
            let (l, b) = sparse_xent_rows::<f32>(&cast(logits, DType::Float32)?, &lab)?;
            Ok((cast(&l, d)?, cast(&b, d)?))
        }
        d => Err(Error::invalid_argument(format!(
            "SparseSoftmaxCrossEntropyWithLogits is not supported for {d}"
        ))),
    }
}

/// `sum(x ** 2) / 2` as a scalar.
pub fn l2_loss(x: &Tensor) -> Result<Tensor> {
    fn go<T: Float + Element>(x: &Tensor) -> Result<Tensor> {
        let v = x.as_slice::<T>()?;
        let sq = super::parallel::map(v, |a| a * a);
        let sq = Tensor::from_vec(Shape::new(&[sq.len()]), sq)?;
        let s = super::reduce::reduce(super::reduce::ReduceOp::Sum, &sq, None, false)?;
        let total = s.as_slice::<T>()?[0];
        Ok(Tensor::scalar(total / T::lit(2.0)))
    }
    float_kernel(x, "L2Loss", go::<f32>, go::<f64>)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_rows_sum_to_one() {
        let x = Tensor::from_vec([2, 3], vec![1.0f64, 2.0, 3.0, 1000.0, 1000.0, 1000.0]).unwrap();
        let s = softmax(&x, false).unwrap();
        let v = s.as_slice::<f64>().unwrap();
        assert!((v[0..3].iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((v[3] - 1.0 / 3.0).abs() < 1e-12);
        let l = softmax(&x, true).unwrap();
        assert!((l.as_slice::<f64>().unwrap()[2] - v[2].ln()).abs() < 1e-12);
    }

    #[test]
    fn sparse_xent_checks_labels() {
        let logits = Tensor::from_vec([1, 3], vec![0.0f32; 3]).unwrap();
        let (loss, back) =
            sparse_softmax_cross_entropy(&logits, &Tensor::vector(vec![1i32])).unwrap();
        assert!((loss.as_slice::<f32>().unwrap()[0] - 3f32.ln()).abs() < 1e-6);
        assert!((back.as_slice::<f32>().unwrap()[1] + 2.0 / 3.0).abs() < 1e-6);
        let err = sparse_softmax_cross_entropy(&logits, &Tensor::vector(vec![3i32])).unwrap_err();
        assert!(err.to_string().contains("label value of 3"));
    }
}
