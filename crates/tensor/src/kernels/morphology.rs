//! Grayscale morphological dilation (TensorFlow's `Dilation2D`,
//! `Dilation2DBackpropInput`, `Dilation2DBackpropFilter`) over NHWC
//! tensors with a `[filter_height, filter_width, depth]` structuring
//! function: `out[b, y, x, c] = max over (i, j) of
//! input[b, y*sh + i*rh - pad_top, x*sw + j*rw - pad_left, c] + filter[i, j, c]`,
//! out-of-bounds taps skipped. The backprops send each output's gradient
//! to its first maximizing tap (row-major), as TensorFlow does.

use super::conv::{dims4, float_dispatch, same_dtype, to_f32, windowed_output, Lowest, Padding};
use super::elementwise::cast;
use super::parallel::zeroed;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// The attributes of `Dilation2D` and its backprops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dilation2dParams {
    /// Strides of the four NHWC dimensions.
    pub strides: [usize; 4],
    /// Input strides (dilation rates) of the four NHWC dimensions.
    pub rates: [usize; 4],
    /// `SAME` or `VALID`.
    pub padding: Padding,
}

fn four(op: &str, what: &str, v: &[i64]) -> Result<[usize; 4]> {
    if v.len() != 4 || v.iter().any(|&x| x <= 0) {
        return Err(Error::value(format!(
            "{op}: {what} must hold 4 positive values, but got {v:?}"
        )));
    }
    Ok([v[0], v[1], v[2], v[3]].map(|x| x as usize))
}

impl Dilation2dParams {
    /// Parses the `strides`, `rates` and `padding` attributes.
    pub fn parse(op: &str, strides: &[i64], rates: &[i64], padding: &str) -> Result<Self> {
        let s = four(op, "strides", strides)?;
        let r = four(op, "rates", rates)?;
        if s[0] != 1 || s[3] != 1 {
            return Err(Error::value(format!(
                "{op}: Current implementation does not yet support strides in the batch and depth dimensions."
            )));
        }
        if r[0] != 1 || r[3] != 1 {
            return Err(Error::value(format!(
                "{op}: Current implementation does not yet support rates in the batch and depth dimensions."
            )));
        }
        let padding = match padding {
            "SAME" => Padding::Same,
            "VALID" => Padding::Valid,
            other => {
                return Err(Error::value(format!(
                "Attr 'padding' of '{op}' Op passed string '{other}' not in: \"SAME\", \"VALID\"."
            )))
            }
        };
        Ok(Dilation2dParams {
            strides: s,
            rates: r,
            padding,
        })
    }
}

#[derive(Clone, Copy, Debug)]
struct Geom {
    n: usize,
    h: usize,
    w: usize,
    c: usize,
    fh: usize,
    fw: usize,
    sh: usize,
    sw: usize,
    rh: usize,
    rw: usize,
    pt: usize,
    pl: usize,
    oh: usize,
    ow: usize,
}

impl Geom {
    fn new(op: &str, input: &[usize], filter: &[usize], p: &Dilation2dParams) -> Result<Geom> {
        let [n, h, w, c] = dims4(op, "input", input)?;
        if filter.len() != 3 {
            return Err(Error::invalid_argument(format!(
                "{op}: filter must be 3-dimensional: {filter:?}"
            )));
        }
        let (fh, fw, fc) = (filter[0], filter[1], filter[2]);
        if fc != c {
            return Err(Error::invalid_argument(format!(
                "{op}: input and filter must have the same depth: {c} vs {fc}"
            )));
        }
        let (sh, sw, rh, rw) = (p.strides[1], p.strides[2], p.rates[1], p.rates[2]);
        let size = |input: usize, k: usize, s: usize, r: usize| {
            windowed_output(input, k, s, r, p.padding, 0).map_err(|out| {
                Error::invalid_argument(format!(
                    "{op}: Computed output size would be negative: {out} [input_size: {input}, effective_filter_size: {}, stride: {s}]",
                    (k.max(1) - 1) * r + 1
                ))
            })
        };
        let (oh, pt) = size(h, fh, sh, rh)?;
        let (ow, pl) = size(w, fw, sw, rw)?;
        Ok(Geom {
            n,
            h,
            w,
            c,
            fh,
            fw,
            sh,
            sw,
            rh,
            rw,
            pt,
            pl,
            oh,
            ow,
        })
    }

    fn out_dims(&self) -> [usize; 4] {
        [self.n, self.oh, self.ow, self.c]
    }

    /// Calls `f(out_index, pos)` for every output element, in order.
    fn for_each_out(&self, mut f: impl FnMut(usize, [usize; 4])) {
        let mut o = 0;
        for b in 0..self.n {
            for oy in 0..self.oh {
                for ox in 0..self.ow {
                    for ch in 0..self.c {
                        f(o, [b, oy, ox, ch]);
                        o += 1;
                    }
                }
            }
        }
    }

    /// Calls `f(input_index, filter_index)` for the in-bounds taps of the
    /// output element at `pos`, in row-major order.
    #[inline]
    fn taps(&self, pos: [usize; 4], mut f: impl FnMut(usize, usize)) {
        let [b, oy, ox, ch] = pos;
        for i in 0..self.fh {
            let Some(y) = (oy * self.sh + i * self.rh)
                .checked_sub(self.pt)
                .filter(|&y| y < self.h)
            else {
                continue;
            };
            for j in 0..self.fw {
                let Some(x) = (ox * self.sw + j * self.rw)
                    .checked_sub(self.pl)
                    .filter(|&x| x < self.w)
                else {
                    continue;
                };
                f(
                    ((b * self.h + y) * self.w + x) * self.c + ch,
                    (i * self.fw + j) * self.c + ch,
                );
            }
        }
    }

    /// For each output element, the (input, filter) indices of its first
    /// maximizing tap, if any tap is in bounds.
    fn argmax<T: Lowest>(&self, x: &[T], f: &[T]) -> Vec<Option<(usize, usize)>> {
        let mut best = vec![None; self.n * self.oh * self.ow * self.c];
        self.for_each_out(|o, pos| {
            let mut cur = T::lowest();
            let mut arg = None;
            self.taps(pos, |xi, fi| {
                let v = x[xi].add(f[fi]);
                if v > cur || arg.is_none() {
                    cur = v;
                    arg = Some((xi, fi));
                }
            });
            best[o] = arg;
        });
        best
    }
}

fn dilation_typed<T: Lowest + Send>(x: &[T], f: &[T], g: &Geom) -> Vec<T> {
    let mut out: Vec<T> = zeroed(g.n * g.oh * g.ow * g.c);
    g.for_each_out(|o, pos| {
        let mut cur = T::lowest();
        g.taps(pos, |xi, fi| {
            let v = x[xi].add(f[fi]);
            if v > cur {
                cur = v;
            }
        });
        out[o] = cur;
    });
    out
}

fn backprop_input_typed<T: Lowest + Send>(x: &[T], f: &[T], dy: &[T], g: &Geom) -> Vec<T> {
    let mut dx: Vec<T> = zeroed(x.len());
    for (o, a) in g.argmax(x, f).into_iter().enumerate() {
        if let Some((xi, _)) = a {
            dx[xi] = dx[xi].add(dy[o]);
        }
    }
    dx
}

fn backprop_filter_typed<T: Lowest + Send>(x: &[T], f: &[T], dy: &[T], g: &Geom) -> Vec<T> {
    let mut df: Vec<T> = zeroed(f.len());
    for (o, a) in g.argmax(x, f).into_iter().enumerate() {
        if let Some((_, fi)) = a {
            df[fi] = df[fi].add(dy[o]);
        }
    }
    df
}

fn check_dy(op: &str, g: &Geom, dy: &Tensor) -> Result<()> {
    if dy.dims() != g.out_dims() {
        return Err(Error::invalid_argument(format!(
            "{op}: out_backprop has incompatible size: expected {:?}, got {}",
            g.out_dims(),
            dy.shape()
        )));
    }
    Ok(())
}

/// `Dilation2D`: `input` `[batch, h, w, depth]` dilated by `filter`
/// `[fh, fw, depth]`.
pub fn dilation2d(input: &Tensor, filter: &Tensor, p: &Dilation2dParams) -> Result<Tensor> {
    let op = "Dilation2D";
    same_dtype(op, input, filter)?;
    let g = Geom::new(op, input.dims(), filter.dims(), p)?;
    float_dispatch!(
        op,
        input.dtype(),
        g.out_dims(),
        dilation2d(&to_f32(input)?, &to_f32(filter)?, p),
        |T| dilation_typed::<T>(input.as_slice()?, filter.as_slice()?, &g)
    )
}

/// `Dilation2DBackpropInput`: the gradient of [`dilation2d`] with respect
/// to `input`.
pub fn dilation2d_backprop_input(
    input: &Tensor,
    filter: &Tensor,
    out_backprop: &Tensor,
    p: &Dilation2dParams,
) -> Result<Tensor> {
    let op = "Dilation2DBackpropInput";
    same_dtype(op, input, filter)?;
    same_dtype(op, input, out_backprop)?;
    let g = Geom::new(op, input.dims(), filter.dims(), p)?;
    check_dy(op, &g, out_backprop)?;
    float_dispatch!(
        op,
        input.dtype(),
        input.dims().to_vec(),
        dilation2d_backprop_input(&to_f32(input)?, &to_f32(filter)?, &to_f32(out_backprop)?, p),
        |T| backprop_input_typed::<T>(
            input.as_slice()?,
            filter.as_slice()?,
            out_backprop.as_slice()?,
            &g
        )
    )
}

/// `Dilation2DBackpropFilter`: the gradient of [`dilation2d`] with respect
/// to `filter`.
pub fn dilation2d_backprop_filter(
    input: &Tensor,
    filter: &Tensor,
    out_backprop: &Tensor,
    p: &Dilation2dParams,
) -> Result<Tensor> {
    let op = "Dilation2DBackpropFilter";
    same_dtype(op, input, filter)?;
    same_dtype(op, input, out_backprop)?;
    let g = Geom::new(op, input.dims(), filter.dims(), p)?;
    check_dy(op, &g, out_backprop)?;
    float_dispatch!(
        op,
        input.dtype(),
        filter.dims().to_vec(),
        dilation2d_backprop_filter(&to_f32(input)?, &to_f32(filter)?, &to_f32(out_backprop)?, p),
        |T| backprop_filter_typed::<T>(
            input.as_slice()?,
            filter.as_slice()?,
            out_backprop.as_slice()?,
            &g
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dilation_of_a_flat_filter_is_a_max_pool_and_routes_gradients_to_the_first_max() {
        let p =
            Dilation2dParams::parse("Dilation2D", &[1, 1, 1, 1], &[1, 1, 1, 1], "VALID").unwrap();
        let x = Tensor::from_vec(vec![1, 2, 2, 1], vec![1.0f32, 4., 4., 2.]).unwrap();
        let f = Tensor::from_vec(vec![2, 2, 1], vec![0.0f32; 4]).unwrap();
        let y = dilation2d(&x, &f, &p).unwrap();
        assert_eq!(y.as_slice::<f32>().unwrap(), &[4.0]);
        let dy = Tensor::from_vec(vec![1, 1, 1, 1], vec![1.0f32]).unwrap();
        let dx = dilation2d_backprop_input(&x, &f, &dy, &p).unwrap();
        assert_eq!(dx.as_slice::<f32>().unwrap(), &[0., 1., 0., 0.]);
        let df = dilation2d_backprop_filter(&x, &f, &dy, &p).unwrap();
        assert_eq!(df.as_slice::<f32>().unwrap(), &[0., 1., 0., 0.]);
        let bad = Tensor::from_vec(vec![2, 2, 2], vec![0.0f32; 8]).unwrap();
        let e = dilation2d(&x, &bad, &p).unwrap_err();
        assert!(e
            .message()
            .contains("Dilation2D: input and filter must have the same depth"));
    }
}
