//! Broadcasting without materialising the broadcast operands.
//!
//! A [`Broadcast`] collapses two input shapes against their output shape
//! into an innermost contiguous run plus a few outer dimensions, so the hot
//! loop is always one of four simple forms (both contiguous, one operand a
//! repeated scalar, or both scalars) that the compiler vectorises.

use super::parallel;
use crate::error::{Error, Result};
use crate::shape::{broadcast_shapes, Shape};
use smallvec::SmallVec;

/// How two shapes broadcast to an output shape.
#[derive(Clone, Debug)]
pub struct Broadcast {
    pub out: Shape,
    /// Length of the innermost run.
    inner: usize,
    /// Strides of `a` and `b` along the innermost run: 1 (contiguous) or 0 (repeated).
    sa: usize,
    sb: usize,
    /// Outer dimensions, outermost first: (size, stride in a, stride in b).
    outer: SmallVec<[(usize, usize, usize); 4]>,
}

impl Broadcast {
    /// Plans `a op b`; `op` names the operation in the error message
    /// (formatted only then: no allocation on the way to a kernel).
    pub fn new(a: &[usize], b: &[usize], op: &dyn std::fmt::Display) -> Result<Broadcast> {
        // The common cases of small ops, planned without stride vectors:
        // equal shapes, or a scalar against anything.
        let elementwise = |out: &[usize], sa, sb| Broadcast {
            out: Shape::new(out),
            inner: out.iter().product(),
            sa,
            sb,
            outer: SmallVec::new(),
        };
        if a == b {
            return Ok(elementwise(a, 1, 1));
        }
        if b.is_empty() {
            return Ok(elementwise(a, 1, 0));
        }
        if a.is_empty() {
            return Ok(elementwise(b, 0, 1));
        }
        let out = broadcast_shapes(a, b).ok_or_else(|| {
            Error::invalid_argument(format!(
                "{op}: Incompatible shapes: {} vs. {}",
                Shape::new(a),
                Shape::new(b)
            ))
        })?;
        Ok(Broadcast::to(a, b, out))
    }

    /// Plans with a known output shape that both inputs broadcast to.
    pub fn to(a: &[usize], b: &[usize], out: Shape) -> Broadcast {
        let rank = out.rank();
        let strides = |s: &[usize]| -> SmallVec<[usize; 4]> {
            let mut st: SmallVec<[usize; 4]> = SmallVec::from_elem(0, rank);
            let mut acc = 1;
            for i in (0..s.len()).rev() {
                let oi = i + rank - s.len();
                st[oi] = if s[i] == 1 { 0 } else { acc };
                acc *= s[i];
            }
            st
        };
        let (sta, stb) = (strides(a), strides(b));
        let mut dims: SmallVec<[(usize, usize, usize); 4]> = SmallVec::new();
        for i in 0..rank {
            let n = out.dim(i);
            if n == 1 {
                continue;
            }
            if let Some(last) = dims.last_mut() {
                if last.1 == sta[i] * n && last.2 == stb[i] * n {
                    *last = (last.0 * n, sta[i], stb[i]);
                    continue;
                }
            }
            dims.push((n, sta[i], stb[i]));
        }
        let (inner, sa, sb) = dims.pop().unwrap_or((1, 0, 0));
        Broadcast {
            out,
            inner,
            sa,
            sb,
            outer: dims,
        }
    }

    pub fn num_elements(&self) -> usize {
        self.out.num_elements()
    }

    /// Offsets into `a` and `b` of the first element of output row `row`.
    #[inline]
    fn row_offsets(&self, row: usize) -> (usize, usize) {
        let mut r = row;
        let (mut oa, mut ob) = (0, 0);
        for &(n, sa, sb) in self.outer.iter().rev() {
            let i = r % n;
            r /= n;
            oa += i * sa;
            ob += i * sb;
        }
        (oa, ob)
    }

    /// Calls `seg(out_offset, a_offset, b_offset, len)` for every contiguous
    /// run of output positions `[start, start+len)`.
    #[inline]
    fn segments(&self, start: usize, len: usize, mut seg: impl FnMut(usize, usize, usize, usize)) {
        let inner = self.inner;
        let end = start + len;
        let mut pos = start;
        while pos < end {
            let row = pos / inner;
            let col = pos % inner;
            let n = (inner - col).min(end - pos);
            let (oa, ob) = self.row_offsets(row);
            seg(pos - start, oa + col * self.sa, ob + col * self.sb, n);
            pos += n;
        }
    }

    /// `out[i] = f(a[..], b[..])` into a new vector.
    pub fn map<A, B, O, F>(&self, a: &[A], b: &[B], f: F) -> Vec<O>
    where
        A: Copy + Sync,
        B: Copy + Sync,
        O: Copy + Send + Default,
        F: Fn(A, B) -> O + Sync,
    {
        let (sa, sb) = (self.sa, self.sb);
        parallel::filled(self.num_elements(), |start, chunk| {
            self.segments(start, chunk.len(), |o, ia, ib, n| {
                let o = &mut chunk[o..o + n];
                match (sa, sb) {
                    (1, 1) => {
                        for ((o, &x), &y) in o.iter_mut().zip(&a[ia..ia + n]).zip(&b[ib..ib + n]) {
                            *o = f(x, y);
                        }
                    }
                    (1, 0) => {
                        let y = b[ib];
                        for (o, &x) in o.iter_mut().zip(&a[ia..ia + n]) {
                            *o = f(x, y);
                        }
                    }
                    (0, 1) => {
                        let x = a[ia];
                        for (o, &y) in o.iter_mut().zip(&b[ib..ib + n]) {
                            *o = f(x, y);
                        }
                    }
                    _ => o.fill(f(a[ia], b[ib])),
                }
            });
        })
    }

    /// `a[i] = f(a[i], b[..])` in place; `a` must have the output shape.
    pub fn update_left<A, B, F>(&self, a: &mut [A], b: &[B], f: F)
    where
        A: Copy + Send + Sync,
        B: Copy + Sync,
        F: Fn(A, B) -> A + Sync,
    {
        let sb = self.sb;
        parallel::fill_indexed(a, |start, chunk| {
            self.segments(start, chunk.len(), |o, _, ib, n| {
                let o = &mut chunk[o..o + n];
                if sb == 1 {
                    for (o, &y) in o.iter_mut().zip(&b[ib..ib + n]) {
                        *o = f(*o, y);
                    }
                } else {
                    let y = b[ib];
                    for o in o.iter_mut() {
                        *o = f(*o, y);
                    }
                }
            });
        });
    }

    /// `b[i] = f(a[..], b[i])` in place; `b` must have the output shape.
    pub fn update_right<A, B, F>(&self, a: &[A], b: &mut [B], f: F)
    where
        A: Copy + Sync,
        B: Copy + Send + Sync,
        F: Fn(A, B) -> B + Sync,
    {
        let sa = self.sa;
        parallel::fill_indexed(b, |start, chunk| {
            self.segments(start, chunk.len(), |o, ia, _, n| {
                let o = &mut chunk[o..o + n];
                if sa == 1 {
                    for (o, &x) in o.iter_mut().zip(&a[ia..ia + n]) {
                        *o = f(x, *o);
                    }
                } else {
                    let x = a[ia];
                    for o in o.iter_mut() {
                        *o = f(x, *o);
                    }
                }
            });
        });
    }
}

/// Copies `x` (of shape `from`) broadcast to shape `to`.
pub fn broadcast_to<T: Clone + Send + Sync>(x: &[T], from: &[usize], to: &Shape) -> Result<Vec<T>> {
    let ok = broadcast_shapes(from, to.dims()).is_some_and(|s| &s == to);
    if !ok {
        return Err(Error::invalid_argument(format!(
            "Unable to broadcast tensor of shape {} to tensor of shape {}",
            Shape::new(from),
            to
        )));
    }
    let plan = Broadcast::to(from, to.dims(), to.clone());
    let n = to.num_elements();
    let mut out = Vec::with_capacity(n);
    plan.segments(0, n, |_, ia, _, len| {
        if plan.sa == 1 {
            out.extend_from_slice(&x[ia..ia + len]);
        } else {
            out.extend(std::iter::repeat_n(x[ia].clone(), len));
        }
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: &[f32], ash: &[usize], b: &[f32], bsh: &[usize]) -> Vec<f32> {
        let out = broadcast_shapes(ash, bsh).unwrap();
        let rank = out.rank();
        let n = out.num_elements();
        let idx = |sh: &[usize], coord: &[usize]| -> usize {
            let mut off = 0;
            for (i, &d) in sh.iter().enumerate() {
                let c = coord[i + rank - sh.len()];
                off = off * d + if d == 1 { 0 } else { c };
            }
            off
        };
        (0..n)
            .map(|flat| {
                let mut coord = vec![0; rank];
                let mut r = flat;
                for i in (0..rank).rev() {
                    coord[i] = r % out.dim(i);
                    r /= out.dim(i);
                }
                a[idx(ash, &coord)] + 10.0 * b[idx(bsh, &coord)]
            })
            .collect()
    }

    #[test]
    fn matches_naive_broadcasting() {
        let cases: &[(&[usize], &[usize])] = &[
            (&[2, 3], &[2, 3]),
            (&[2, 3], &[3]),
            (&[2, 1], &[1, 3]),
            (&[4, 1, 5], &[3, 1]),
            (&[], &[2, 2]),
            (&[1, 1], &[]),
            (&[3, 1, 2, 1], &[1, 4, 1, 5]),
            (&[300, 700], &[700]),
            (&[300, 1], &[300, 700]),
        ];
        for (ash, bsh) in cases {
            let a: Vec<f32> = (0..ash.iter().product::<usize>())
                .map(|i| i as f32)
                .collect();
            let b: Vec<f32> = (0..bsh.iter().product::<usize>())
                .map(|i| i as f32)
                .collect();
            let plan = Broadcast::new(ash, bsh, &"t").unwrap();
            let got = plan.map(&a, &b, |x, y| x + 10.0 * y);
            assert_eq!(got, naive(&a, ash, &b, bsh), "{ash:?} {bsh:?}");
            if plan.out.dims() == *ash {
                let mut a2 = a.clone();
                plan.update_left(&mut a2, &b, |x, y| x + 10.0 * y);
                assert_eq!(a2, got);
            }
        }
    }

    #[test]
    fn broadcast_to_copies() {
        let x = [1, 2, 3];
        let out = broadcast_to(&x, &[3], &Shape::new(&[2, 3])).unwrap();
        assert_eq!(out, vec![1, 2, 3, 1, 2, 3]);
        let out = broadcast_to(&[7, 8], &[2, 1], &Shape::new(&[2, 2])).unwrap();
        assert_eq!(out, vec![7, 7, 8, 8]);
        assert!(broadcast_to(&x, &[3], &Shape::new(&[2, 2])).is_err());
    }
}
