//! `ExtractImagePatches` (`tf.image.extract_patches`,
//! `tf.extract_image_patches`): every `ksize` window of an image, sampled
//! every `rate` pixels and stepped by `strides`, flattened into the depth of
//! the output; windows hanging over the border (`SAME`) read zeros.
//!
//! Its gradient scatters each window element back to the pixel it came
//! from: the windows of an image of pixel numbers say which pixel that is,
//! and `UnsortedSegmentSum` adds the gradients up (the same graph TensorFlow
//! builds, with a segment sum where TensorFlow uses a sparse matmul).

use ferroflow_autodiff::{register_gradient, Builder, Grad};
use ferroflow_graph::{
    AttrValue, Attrs, AttrsExt, InferContext, Node, OpDef, Output, OutputInfo, PartialShape,
};
use ferroflow_runtime::{factory, KernelFactory, OpContext};
use ferroflow_tensor::kernels::parallel::for_rows;
use ferroflow_tensor::{bail, ensure, with_data, DType, Element, Error, Result, Tensor};

use crate::pixels::image_dims;

/// Registers `ExtractImagePatches`, its kernel and gradient (idempotent).
pub(crate) fn register() {
    ferroflow_graph::register_op(OpDef::new(
        "ExtractImagePatches",
        &["images"],
        infer_patches,
    ));
    ferroflow_runtime::register_kernel("ExtractImagePatches", kernel());
    register_gradient("ExtractImagePatches", grad_patches);
}

/// The window geometry of one `ExtractImagePatches` node.
#[derive(Clone, Copy, Debug)]
pub struct Windows {
    /// Window height and width.
    pub ksize: [usize; 2],
    /// Step between windows.
    pub strides: [usize; 2],
    /// Step between the pixels a window samples.
    pub rates: [usize; 2],
    /// `SAME` (pad so that `ceil(in / stride)` windows fit) or `VALID`.
    pub same: bool,
}

impl Windows {
    fn from_attrs(a: &Attrs) -> Result<Windows> {
        let four = |name: &str| -> Result<[usize; 2]> {
            let v = a.ints(name)?;
            ensure!(
                v.len() == 4,
                invalid_argument,
                "{name} input must be a list of length 4, got {}",
                v.len()
            );
            if v[0] != 1 || v[3] != 1 {
                bail!(unimplemented, "Only support {name} across space.");
            }
            if v[1] < 1 || v[2] < 1 {
                bail!(invalid_argument, "{name} must be positive, got {v:?}");
            }
            Ok([v[1] as usize, v[2] as usize])
        };
        let padding = a.string("padding")?;
        let same = match padding.as_str() {
            "SAME" => true,
            "VALID" => false,
            other => {
                bail!(
                    invalid_argument,
                    "padding must be SAME or VALID, got {other:?}"
                )
            }
        };
        Ok(Windows {
            ksize: four("ksizes")?,
            strides: four("strides")?,
            rates: four("rates")?,
            same,
        })
    }

    /// Output length along axis `a` for an input of length `n`, and the
    /// padding before the first window.
    fn along(&self, a: usize, n: usize) -> (usize, usize) {
        let eff = self.ksize[a] + (self.ksize[a] - 1) * (self.rates[a] - 1);
        let s = self.strides[a];
        if self.same {
            let out = n.div_ceil(s);
            let need = ((out.max(1) - 1) * s + eff).saturating_sub(n);
            (out, need / 2)
        } else {
            ((n + 1).saturating_sub(eff).div_ceil(s), 0)
        }
    }
}

fn infer_patches(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_rank(0, 4)?;
    let w = Windows::from_attrs(ctx.attrs()).map_err(|e| ctx.shape_error(e.message()))?;
    let dtype = ctx.dtype(0);
    let dims = match ctx.shape(0).dims() {
        None => vec![None; 4],
        Some(d) => {
            let rows = d[1].map(|n| w.along(0, n).0);
            let cols = d[2].map(|n| w.along(1, n).0);
            let depth = d[3].map(|c| c * w.ksize[0] * w.ksize[1]);
            vec![d[0], rows, cols, depth]
        }
    };
    Ok(vec![OutputInfo::new(dtype, PartialShape::from_dims(dims))])
}

/// `ExtractImagePatches` of a `[batch, rows, cols, depth]` tensor.
pub fn extract_patches(images: &Tensor, w: Windows) -> Result<Tensor> {
    let [b, h, wd, d] = image_dims(images, "input")?;
    let (oh, top) = w.along(0, h);
    let (ow, left) = w.along(1, wd);
    let [kh, kw] = w.ksize;
    let depth = kh * kw * d;
    let shape = vec![b, oh, ow, depth];
    let data = with_data!(images.data(), v => {
        let src: &[_] = v;
        let mut out = vec![Default::default(); b * oh * ow * depth];
        if !out.is_empty() {
            let row = ow * depth;
            for_rows(&mut out, row, |first, rows| {
                for (k, orow) in rows.chunks_mut(row).enumerate() {
                    let (n, y) = ((first + k) / oh, (first + k) % oh);
                    for x in 0..ow {
                        let patch = &mut orow[x * depth..(x + 1) * depth];
                        for i in 0..kh {
                            let r = (y * w.strides[0] + i * w.rates[0]) as i64 - top as i64;
                            for j in 0..kw {
                                let c = (x * w.strides[1] + j * w.rates[1]) as i64 - left as i64;
                                let dst = &mut patch[(i * kw + j) * d..(i * kw + j + 1) * d];
                                if r >= 0 && (r as usize) < h && c >= 0 && (c as usize) < wd {
                                    let at = ((n * h + r as usize) * wd + c as usize) * d;
                                    dst.clone_from_slice(&src[at..at + d]);
                                }
                            }
                        }
                    }
                }
            });
        }
        Element::wrap(out)
    });
    Tensor::new(shape.into(), data)
}

fn kernel() -> KernelFactory {
    factory(|init| {
        let w = Windows::from_attrs(&init.node.attrs)?;
        Ok(Box::new(move |ctx: &mut OpContext<'_>| {
            let out = extract_patches(ctx.input(0)?, w)?;
            ctx.output(out);
            Ok(())
        }))
    })
}

/// The gradient: windows of pixel numbers (1-based, so padding reads 0 and
/// becomes the dropped segment -1) index an `UnsortedSegmentSum` of the
/// incoming gradient over pixels.
fn grad_patches(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> Result<Vec<Option<Grad>>> {
    let dy = g[0].ok_or_else(|| Error::internal("ExtractImagePatches gradient without dy"))?;
    let x = n.inputs[0];
    let attrs: Vec<(&'static str, AttrValue)> = ["ksizes", "strides", "rates", "padding"]
        .iter()
        .filter_map(|&k| n.attrs.get(k).map(|v| (k, v.clone())))
        .collect();
    let shape = b.shape(x)?; // [batch, rows, cols, depth]
    let at = |b: &mut Builder<'_>, i: i32| b.element(shape, i);
    let (batch, rows, cols, depth) = (at(b, 0)?, at(b, 1)?, at(b, 2)?, at(b, 3)?);
    let pixels = b.binary("Mul", rows, cols)?;
    // Pixel numbers 1..=rows*cols as a [1, rows, cols, 1] int64 image.
    let one = b.scalar(DType::Int64, 1.0)?;
    let pixels64 = b.cast(pixels, DType::Int64)?;
    let limit = b.add(pixels64, one)?;
    let numbers = b.op(
        "Range",
        &[one, limit, one],
        vec![("Tidx", AttrValue::Type(DType::Int64))],
    )?;
    let one32 = b.scalar_i32(1)?;
    let img_shape = b.pack(&[one32, rows, cols, one32], 0)?;
    let numbers = b.reshape(numbers, img_shape)?;
    let windows = b.op("ExtractImagePatches", &[numbers], attrs)?;
    let ids = b.sub(windows, one)?;
    let flat = b.const_i32(vec![-1])?;
    let ids = b.reshape(ids, flat)?;
    // dy: [batch, out_rows, out_cols, kh*kw*depth] -> [positions, batch, depth].
    let minus1 = b.scalar_i32(-1)?;
    let by_pos = b.pack(&[batch, minus1, depth], 0)?;
    let dy3 = b.reshape(dy, by_pos)?;
    let perm = b.const_i32(vec![1, 0, 2])?;
    let dy3 = b.transpose(dy3, perm)?;
    let summed = b.op("UnsortedSegmentSum", &[dy3, ids, pixels], vec![])?; // [pixels, batch, depth]
    let summed = b.transpose(summed, perm)?;
    let dx = b.reshape(summed, shape)?;
    Ok(vec![Some(Grad::Dense(dx))])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(k: usize, s: usize, r: usize, same: bool) -> Windows {
        Windows {
            ksize: [k, k],
            strides: [s, s],
            rates: [r, r],
            same,
        }
    }

    #[test]
    fn valid_two_by_two_windows() {
        let x = Tensor::from_vec(
            vec![1, 3, 3, 1],
            (1..=9).map(|v| v as f32).collect::<Vec<_>>(),
        )
        .unwrap();
        let out = extract_patches(&x, windows(2, 1, 1, false)).unwrap();
        assert_eq!(out.dims(), &[1, 2, 2, 4]);
        assert_eq!(
            out.as_slice::<f32>().unwrap(),
            &[1., 2., 4., 5., 2., 3., 5., 6., 4., 5., 7., 8., 5., 6., 8., 9.]
        );
    }

    #[test]
    fn same_padding_reads_zeros() {
        let x = Tensor::from_vec(vec![1, 2, 2, 1], vec![1i32, 2, 3, 4]).unwrap();
        let out = extract_patches(&x, windows(2, 2, 1, true)).unwrap();
        assert_eq!(out.dims(), &[1, 1, 1, 4]);
        assert_eq!(out.as_slice::<i32>().unwrap(), &[1, 2, 3, 4]);
        let out = extract_patches(&x, windows(3, 1, 1, true)).unwrap();
        assert_eq!(out.dims(), &[1, 2, 2, 9]);
        // The first window is centred on pixel (0, 0): its top row and left
        // column hang over the border.
        assert_eq!(
            &out.as_slice::<i32>().unwrap()[..9],
            &[0, 0, 0, 0, 1, 2, 0, 3, 4]
        );
    }

    #[test]
    fn rates_skip_pixels() {
        let x = Tensor::from_vec(vec![1, 3, 3, 1], (1..=9).collect::<Vec<i64>>()).unwrap();
        let out = extract_patches(&x, windows(2, 1, 2, false)).unwrap();
        assert_eq!(out.dims(), &[1, 1, 1, 4]);
        assert_eq!(out.as_slice::<i64>().unwrap(), &[1, 3, 7, 9]);
    }
}
