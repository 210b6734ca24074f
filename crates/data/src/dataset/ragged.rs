//! RaggedTensor leaves of dataset elements: batching them into one more
//! ragged dimension, and cutting them into rows (`unbatch`,
//! `from_tensor_slices`).
//!
//! ferroflow carries a RaggedTensor of ragged rank `k` as `1 + k`
//! components: its flat values, then the row splits of each ragged
//! dimension, outermost first (`python/ferroflow/data/_structure.py`).
//! Splits are int32 or int64, start at 0, never decrease, and end at the
//! length of the level they cut.

use super::{rows, Element};
use ferroflow_tensor::kernels::array::concat;
use ferroflow_tensor::{ensure, DType, Result, Tensor};

/// One RaggedTensor leaf of an element: where its components start, its
/// ragged rank, and its row-splits dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RaggedLeaf {
    pub start: usize,
    pub ragged_rank: usize,
    pub splits_dtype: DType,
}

impl RaggedLeaf {
    /// Leaves from the `_ragged` attr ferroflow's Python sets: (start,
    /// ragged rank, row-splits dtype enum) triples.
    pub fn from_attr(ints: &[i64]) -> Vec<RaggedLeaf> {
        ints.chunks_exact(3)
            .map(|t| RaggedLeaf {
                start: t[0].max(0) as usize,
                ragged_rank: t[1].max(0) as usize,
                splits_dtype: match DType::from_enum(t[2] as i32) {
                    Some(DType::Int32) => DType::Int32,
                    _ => DType::Int64,
                },
            })
            .collect()
    }

    /// The number of components the leaf has in an element.
    pub fn num_components(&self) -> usize {
        1 + self.ragged_rank
    }
}

fn splits_tensor(v: Vec<i64>, dtype: DType) -> Tensor {
    if dtype == DType::Int32 {
        Tensor::vector(v.into_iter().map(|x| x as i32).collect::<Vec<i32>>())
    } else {
        Tensor::vector(v)
    }
}

/// The leaf's row splits, checked: each level starts at 0, never
/// decreases, and ends at the length of the level below (the flat values'
/// first dimension for the innermost).
fn read_splits(comps: &[Tensor], leaf: &RaggedLeaf) -> Result<Vec<Vec<i64>>> {
    let c = leaf.start;
    let flat = &comps[c];
    ensure!(
        flat.rank() != 0,
        invalid_argument,
        "the flat values of a RaggedTensor in component {c} must be at least 1-dimensional, got a scalar"
    );
    let mut levels = Vec::with_capacity(leaf.ragged_rank);
    for j in 0..leaf.ragged_rank {
        let t = &comps[c + 1 + j];
        ensure!(
            t.rank() == 1,
            invalid_argument,
            "the row splits of a RaggedTensor in component {c} must be a vector, got shape {}",
            t.shape()
        );
        let s = t.to_i64_vec()?;
        ensure!(
            s.first() == Some(&0),
            invalid_argument,
            "the row splits of a RaggedTensor in component {c} (ragged dimension {}) must start at 0, got {:?}",
            j + 1,
            s.first()
        );
        ensure!(
            s.windows(2).all(|w| w[0] <= w[1]),
            invalid_argument,
            "the row splits of a RaggedTensor in component {c} (ragged dimension {}) must not decrease",
            j + 1
        );
        levels.push(s);
    }
    for j in 0..levels.len() {
        let below = match levels.get(j + 1) {
            Some(next) => next.len() - 1,
            None => flat.dims()[0],
        };
        let last = *levels[j].last().unwrap_or(&0);
        ensure!(
            last == below as i64,
            invalid_argument,
            "the row splits of a RaggedTensor in component {c} (ragged dimension {}) end at {last}, but the level they cut has {below} rows",
            j + 1
        );
    }
    Ok(levels)
}

/// The rows of one element's RaggedTensor leaf along its outermost ragged
/// dimension (its ragged rank at least 1).
pub(crate) struct RaggedRows {
    pub(crate) leaf: RaggedLeaf,
    levels: Vec<Vec<i64>>,
    flat: Tensor,
}

impl RaggedRows {
    pub(crate) fn new(comps: &[Tensor], leaf: RaggedLeaf) -> Result<RaggedRows> {
        ensure!(
            leaf.ragged_rank >= 1,
            invalid_argument,
            "a RaggedTensor to cut into rows needs a ragged dimension"
        );
        ensure!(
            leaf.start + leaf.num_components() <= comps.len(),
            invalid_argument,
            "a RaggedTensor at component {} needs {} components, the element has {}",
            leaf.start,
            leaf.num_components(),
            comps.len()
        );
        Ok(RaggedRows {
            leaf,
            levels: read_splits(comps, &leaf)?,
            flat: comps[leaf.start].clone(),
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.levels[0].len() - 1
    }

    /// Row `i`: its flat values, then the row splits of its remaining
    /// ragged dimensions (re-based to start at 0).
    pub(crate) fn row(&self, i: usize) -> Result<Vec<Tensor>> {
        let (mut lo, mut hi) = (self.levels[0][i], self.levels[0][i + 1]);
        let mut splits = Vec::with_capacity(self.levels.len() - 1);
        for s in &self.levels[1..] {
            let part = &s[lo as usize..=hi as usize];
            let base = part[0];
            splits.push(splits_tensor(
                part.iter().map(|v| v - base).collect(),
                self.leaf.splits_dtype,
            ));
            (lo, hi) = (part[0], part[part.len() - 1]);
        }
        let mut out = Vec::with_capacity(self.leaf.num_components() - 1);
        out.push(rows(&self.flat, lo as usize, (hi - lo) as usize)?);
        out.extend(splits);
        Ok(out)
    }
}

/// The leaf of the elements batched: one RaggedTensor of one more ragged
/// dimension, whose row `b` is element `b`'s leaf. A leaf of ragged rank 0
/// is a dense tensor (of at least one dimension) whose rows become a
/// ragged row.
pub(crate) fn batch_ragged(elements: &[Element], leaf: &RaggedLeaf) -> Result<Vec<Tensor>> {
    let c = leaf.start;
    let mut outer = Vec::with_capacity(elements.len() + 1);
    outer.push(0i64);
    let mut levels: Vec<Vec<i64>> = vec![vec![0]; leaf.ragged_rank];
    let mut flats = Vec::with_capacity(elements.len());
    for (b, e) in elements.iter().enumerate() {
        ensure!(
            c + leaf.num_components() <= e.len(),
            invalid_argument,
            "element {b} has {} components, too few for a RaggedTensor at component {c}",
            e.len()
        );
        let splits = read_splits(e, leaf)?;
        let flat = &e[c];
        let first = &elements[0][c];
        ensure!(
            flat.dtype() == first.dtype(),
            invalid_argument,
            "Cannot batch RaggedTensors in component {c}: the first element's values are {} and element {b}'s {}.",
            first.dtype(),
            flat.dtype()
        );
        // TensorFlow's words, with the inner shapes it prints.
        ensure!(
            flat.dims()[1..] == first.dims()[1..],
            invalid_argument,
            "Cannot batch RaggedTensors in component {c}: all flat_values must have compatible shapes. Shape at index 0: {:?}. Shape at index {b}: {:?}.",
            &first.dims()[1..],
            &flat.dims()[1..]
        );
        let nrows = match splits.first() {
            Some(s) => s.len() - 1,
            None => flat.dims()[0],
        };
        outer.push(outer[outer.len() - 1] + nrows as i64);
        for (out, s) in levels.iter_mut().zip(&splits) {
            let base = out[out.len() - 1];
            out.extend(s[1..].iter().map(|v| v + base));
        }
        flats.push(flat.clone());
    }
    let mut out = Vec::with_capacity(leaf.num_components() + 1);
    out.push(concat(&flats, 0)?);
    out.push(splits_tensor(outer, leaf.splits_dtype));
    out.extend(
        levels
            .into_iter()
            .map(|s| splits_tensor(s, leaf.splits_dtype)),
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(start: usize, ragged_rank: usize) -> RaggedLeaf {
        RaggedLeaf {
            start,
            ragged_rank,
            splits_dtype: DType::Int64,
        }
    }

    fn ints(t: &Tensor) -> Vec<i64> {
        t.to_i64_vec().unwrap()
    }

    #[test]
    fn attr_triples() {
        let got = RaggedLeaf::from_attr(&[1, 2, 3, 5, 0, 9]);
        assert_eq!(
            got,
            vec![
                RaggedLeaf {
                    start: 1,
                    ragged_rank: 2,
                    splits_dtype: DType::Int32
                },
                leaf(5, 0)
            ]
        );
    }

    #[test]
    fn batch_dense_rows_then_cut_them_again() {
        // [[1, 2], [], [3, 4, 5]] as three elements of ragged rank 0.
        let elements: Vec<Element> = vec![
            vec![Tensor::vector(vec![1i64, 2])],
            vec![Tensor::vector(Vec::<i64>::new())],
            vec![Tensor::vector(vec![3i64, 4, 5])],
        ];
        let b = batch_ragged(&elements, &leaf(0, 0)).unwrap();
        assert_eq!(ints(&b[0]), vec![1, 2, 3, 4, 5]);
        assert_eq!(ints(&b[1]), vec![0, 2, 2, 5]);
        let rows = RaggedRows::new(&b, leaf(0, 1)).unwrap();
        assert_eq!(rows.len(), 3);
        for (i, e) in elements.iter().enumerate() {
            let r = rows.row(i).unwrap();
            assert_eq!(r.len(), 1);
            assert_eq!(ints(&r[0]), ints(&e[0]));
        }
    }

    #[test]
    fn batch_rank2_offsets_every_level_and_rows_invert_it() {
        // a = [[[0, 1], [2]], []], b = [[[3]], [[], [4, 5]]] (int32 splits).
        let l = RaggedLeaf {
            start: 1,
            ragged_rank: 2,
            splits_dtype: DType::Int32,
        };
        let a: Element = vec![
            Tensor::scalar(7i64),
            Tensor::vector(vec![0.0f32, 1.0, 2.0]),
            Tensor::vector(vec![0i32, 2, 2]),
            Tensor::vector(vec![0i32, 2, 3]),
        ];
        let b: Element = vec![
            Tensor::scalar(8i64),
            Tensor::vector(vec![3.0f32, 4.0, 5.0]),
            Tensor::vector(vec![0i32, 1, 3]),
            Tensor::vector(vec![0i32, 1, 1, 3]),
        ];
        let out = batch_ragged(&[a.clone(), b.clone()], &l).unwrap();
        assert_eq!(out.len(), 4);
        assert_eq!(
            out[0].to_f64_vec().unwrap(),
            vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        );
        assert_eq!(out[1].dtype(), DType::Int32);
        assert_eq!(ints(&out[1]), vec![0, 2, 4]);
        assert_eq!(ints(&out[2]), vec![0, 2, 2, 3, 5]);
        assert_eq!(ints(&out[3]), vec![0, 2, 3, 4, 4, 6]);
        let mut batched = vec![Tensor::scalar(0i64)];
        batched.extend(out);
        let rows = RaggedRows::new(
            &batched,
            RaggedLeaf {
                ragged_rank: 3,
                ..l
            },
        )
        .unwrap();
        for (i, e) in [a, b].iter().enumerate() {
            let r = rows.row(i).unwrap();
            assert_eq!(r[0].to_f64_vec().unwrap(), e[1].to_f64_vec().unwrap());
            assert_eq!(r[1].dtype(), DType::Int32);
            assert_eq!(ints(&r[1]), ints(&e[2]));
            assert_eq!(ints(&r[2]), ints(&e[3]));
        }
    }

    #[test]
    fn inner_dimensions_must_agree() {
        let elements: Vec<Element> = vec![
            vec![Tensor::from_vec(vec![1, 2], vec![1.0f32, 2.0]).unwrap()],
            vec![Tensor::from_vec(vec![1, 3], vec![1.0f32, 2.0, 3.0]).unwrap()],
        ];
        let e = batch_ragged(&elements, &leaf(0, 0)).unwrap_err();
        assert!(
            e.message()
                .contains("Shape at index 0: [2]. Shape at index 1: [3]."),
            "{}",
            e.message()
        );
    }

    #[test]
    fn bad_splits_are_invalid_argument() {
        let flat = Tensor::vector(vec![1i64, 2, 3]);
        for (splits, what) in [
            (vec![1i64, 3], "must start at 0"),
            (vec![0i64, 2, 1, 3], "must not decrease"),
            (vec![0i64, 2], "end at 2"),
        ] {
            let comps = vec![flat.clone(), Tensor::vector(splits)];
            let e = RaggedRows::new(&comps, leaf(0, 1))
                .err()
                .expect("bad splits accepted");
            assert!(e.message().contains(what), "{}", e.message());
        }
        let e = batch_ragged(&[vec![Tensor::scalar(1i64)]], &leaf(0, 0)).unwrap_err();
        assert!(
            e.message().contains("at least 1-dimensional"),
            "{}",
            e.message()
        );
    }
}
