//! Window geometry shared by convolutions and pools: output sizes and
//! leading padding for TFLite's SAME and VALID paddings.

use crate::error::{LiteError, Result};
use ferroflow_tensor::bail;

/// TFLite's padding schemes (`Padding` in the schema).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// Output size `ceil(in / stride)`, zero padding split with the smaller
    /// half first.
    Same,
    /// No padding: windows lie inside the input.
    Valid,
}

/// One spatial dimension of a windowed op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Axis {
    /// Input extent.
    pub input: usize,
    /// Output extent.
    pub output: usize,
    /// Window size (undilated).
    pub window: usize,
    /// Step between windows.
    pub stride: usize,
    /// Gap between window taps (1: dense).
    pub dilation: usize,
    /// Zero padding before the first element.
    pub pad_before: usize,
}

impl Axis {
    /// The geometry of one dimension; an error names `op` when the window
    /// does not fit or a stride or dilation is not positive.
    pub fn new(
        op: &str,
        padding: Padding,
        input: usize,
        window: usize,
        stride: i32,
        dilation: i32,
    ) -> Result<Axis> {
        if stride < 1 || dilation < 1 || window == 0 {
            bail!(
                invalid,
                "{op}: stride {stride}, dilation {dilation} and window {window} must be positive"
            );
        }
        let (stride, dilation) = (stride as usize, dilation as usize);
        let effective = (window - 1) * dilation + 1;
        let output = match padding {
            Padding::Same => input.div_ceil(stride),
            Padding::Valid => {
                if input < effective {
                    0
                } else {
                    (input - effective) / stride + 1
                }
            }
        };
        let needed = (output.saturating_sub(1) * stride + effective).saturating_sub(input);
        Ok(Axis {
            input,
            output,
            window,
            stride,
            dilation,
            pad_before: if padding == Padding::Same {
                needed / 2
            } else {
                0
            },
        })
    }

    /// The input coordinate of tap `k` of output `o` (may be outside).
    #[inline(always)]
    pub fn source(&self, o: usize, k: usize) -> isize {
        (o * self.stride + k * self.dilation) as isize - self.pad_before as isize
    }

    /// The taps of output `o` that land inside the input.
    #[inline(always)]
    pub fn valid_taps(&self, o: usize) -> std::ops::Range<usize> {
        let start = o as isize * self.stride as isize - self.pad_before as isize;
        if self.dilation == 1 {
            // The common case, without the divisions below (tens of
            // cycles each, per output pixel).
            let lo = (-start).clamp(0, self.window as isize) as usize;
            let hi = (self.input as isize - start).clamp(0, self.window as isize) as usize;
            return lo..hi.max(lo);
        }
        let d = self.dilation as isize;
        let mut lo = 0isize;
        if start < 0 {
            lo = (-start + d - 1) / d;
        }
        let mut hi = self.window as isize;
        let last_ok = self.input as isize - 1 - start; // k*d <= last_ok
        if last_ok < 0 {
            hi = 0;
        } else {
            hi = hi.min(last_ok / d + 1);
        }
        let lo = lo.clamp(0, self.window as isize) as usize;
        let hi = hi.max(lo as isize) as usize;
        lo..hi
    }

    /// The outputs whose tap `k` lands inside the input (a contiguous
    /// range: the source coordinate grows with the output).
    #[inline]
    pub fn valid_outputs(&self, k: usize) -> std::ops::Range<usize> {
        let off = k * self.dilation;
        // source = o * stride + off - pad_before, kept in [0, input).
        let lo = if self.pad_before > off {
            (self.pad_before - off).div_ceil(self.stride)
        } else {
            0
        };
        let hi = if self.input + self.pad_before <= off {
            0
        } else {
            ((self.input - 1 + self.pad_before - off) / self.stride + 1).min(self.output)
        };
        lo.min(hi)..hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_outputs_agree_with_valid_taps() {
        for padding in [Padding::Same, Padding::Valid] {
            for input in 1..9 {
                for window in 1..5 {
                    for stride in 1..4 {
                        for dilation in 1..3 {
                            let a =
                                Axis::new("t", padding, input, window, stride, dilation).unwrap();
                            for k in 0..window {
                                let want: Vec<usize> = (0..a.output)
                                    .filter(|&o| a.valid_taps(o).contains(&k))
                                    .collect();
                                let got: Vec<usize> = a.valid_outputs(k).collect();
                                assert_eq!(got, want, "{a:?} tap {k}");
                            }
                        }
                    }
                }
            }
        }
    }
}
