//! Histograms: TF1's exponential-bucket `HistogramProto` and TF2's
//! `[k, 3]` bucket tensor.

use std::sync::OnceLock;

use crate::proto::HistogramProto;

/// TensorFlow's default bucket limits, in ascending order (1551 values):
/// `-DBL_MAX`, the negated positive limits in reverse, `0`, then the
/// positive limits `1e-12 * 1.1^k` below `1e20` and `DBL_MAX`.
pub fn default_bucket_limits() -> &'static [f64] {
    static LIMITS: OnceLock<Vec<f64>> = OnceLock::new();
    LIMITS.get_or_init(|| {
        let mut positive = Vec::new();
        // Each limit is the previous one times 1.1 in double arithmetic;
        // computing 1.1^k directly would round differently.
        let mut v = 1.0e-12;
        while v < 1.0e20 {
            positive.push(v);
            v *= 1.1;
        }
        positive.push(f64::MAX);
        let mut limits: Vec<f64> = positive.iter().rev().map(|x| -x).collect();
        limits.push(0.0);
        limits.extend(positive);
        limits
    })
}

/// An accumulating TF1 histogram (`tensorflow::histogram::Histogram`).
#[derive(Clone, Debug)]
pub struct Histogram {
    limits: Vec<f64>,
    counts: Vec<f64>,
    min: f64,
    max: f64,
    num: f64,
    sum: f64,
    sum_squares: f64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    /// An empty histogram with TensorFlow's default buckets.
    pub fn new() -> Histogram {
        Self::with_limits(default_bucket_limits().to_vec())
    }

    /// An empty histogram with custom ascending bucket limits; the last limit
    /// should be `f64::MAX`, as it catches every larger value.
    pub fn with_limits(limits: Vec<f64>) -> Histogram {
        let n = limits.len();
        Histogram {
            limits,
            counts: vec![0.0; n],
            min: f64::MAX,
            max: -f64::MAX,
            num: 0.0,
            sum: 0.0,
            sum_squares: 0.0,
        }
    }

    /// Adds one value. A value equal to a limit goes to the next bucket.
    pub fn add(&mut self, x: f64) {
        if self.limits.is_empty() {
            return;
        }
        // First limit greater than x, searching all but the last limit so
        // anything larger lands in the last bucket.
        let search = &self.limits[..self.limits.len() - 1];
        let bucket = search.partition_point(|&limit| limit <= x);
        self.counts[bucket] += 1.0;
        if x < self.min {
            self.min = x;
        }
        if x > self.max {
            self.max = x;
        }
        self.num += 1.0;
        self.sum += x;
        self.sum_squares += x * x;
    }

    /// Encodes the histogram. Unless `preserve_zero_buckets`, every run of
    /// empty buckets becomes one zero bucket carrying the run's last limit
    /// (what the summary op writes); an empty result is one `(DBL_MAX, 0)`
    /// bucket.
    pub fn to_proto(&self, preserve_zero_buckets: bool) -> HistogramProto {
        let mut proto = HistogramProto {
            min: self.min,
            max: self.max,
            num: self.num,
            sum: self.sum,
            sum_squares: self.sum_squares,
            ..Default::default()
        };
        let mut i = 0;
        while i < self.counts.len() {
            let mut end = self.limits[i];
            let mut count = self.counts[i];
            i += 1;
            if !preserve_zero_buckets && count <= 0.0 {
                while i < self.counts.len() && self.counts[i] <= 0.0 {
                    end = self.limits[i];
                    count = self.counts[i];
                    i += 1;
                }
            }
            proto.bucket_limit.push(end);
            proto.bucket.push(count);
        }
        if proto.bucket.is_empty() {
            proto.bucket_limit.push(f64::MAX);
            proto.bucket.push(0.0);
        }
        proto
    }
}

/// The TF1 histogram of `values` (as `tf.compat.v1.summary.histogram`
/// writes it), with TensorFlow's default buckets. Non-finite values are
/// bucketed like any other; the summary op rejects them first.
pub fn histogram(values: &[f64]) -> HistogramProto {
    let mut h = Histogram::new();
    for &x in values {
        h.add(x);
    }
    h.to_proto(false)
}

/// TF2's histogram buckets (`tf.summary.histogram`, TensorBoard 2.21) as
/// `(left, right, count)` rows.
///
/// `bucket_count` below zero is treated as zero (no rows). No data gives
/// `bucket_count` zero rows; a single distinct value gives rows whose edges
/// all equal it, with every count in the last row; otherwise buckets of
/// equal width span `[min, max]`, the last one closed.
pub fn histogram_buckets(values: &[f64], bucket_count: i64) -> Vec<[f64; 3]> {
    let k = bucket_count.max(0) as usize;
    if k == 0 {
        return Vec::new();
    }
    if values.is_empty() {
        return vec![[0.0; 3]; k];
    }
    // tf.reduce_min / reduce_max.
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let range = max - min;
    if range == 0.0 {
        let mut rows = vec![[min, min, 0.0]; k];
        rows[k - 1][2] = values.len() as f64;
        return rows;
    }
    let width = range / k as f64;
    let mut counts = vec![0.0f64; k];
    for &x in values {
        // floor((x - min) / width) cast to int32, clamped to k - 1.
        let idx = ((x - min) / width).floor();
        let idx = if idx.is_nan() { 0.0 } else { idx };
        let idx = (idx as i64).clamp(i32::MIN as i64, (k - 1) as i64);
        if idx >= 0 {
            counts[idx as usize] += 1.0;
        }
    }
    // tf.linspace(min, max, k + 1): start + delta * i, the last edge forced to max.
    let delta = range / k as f64;
    let edge = |i: usize| if i == k { max } else { min + delta * i as f64 };
    (0..k).map(|i| [edge(i), edge(i + 1), counts[i]]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_shape() {
        let l = default_bucket_limits();
        assert_eq!(l.len(), 1551);
        assert_eq!(l[0], -f64::MAX);
        assert_eq!(l[775], 0.0);
        assert_eq!(l[776], 1e-12);
        assert_eq!(*l.last().unwrap(), f64::MAX);
        assert!(l.windows(2).all(|w| w[0] < w[1]));
    }

    /// The worked example of the events spec (§4.1).
    #[test]
    fn spec_example() {
        let input: Vec<f64> = [1.0f32, 2.0, 3.0, -0.5, 0.0, 1e-13]
            .iter()
            .map(|&v| v as f64)
            .collect();
        let h = histogram(&input);
        assert_eq!(h.bucket_limit.len(), 11);
        assert_eq!(h.bucket, vec![0., 1., 0., 2., 0., 1., 0., 1., 0., 1., 0.]);
        assert_eq!(h.bucket_limit[2], 0.0);
        assert_eq!(h.bucket_limit[3], 1e-12);
        assert_eq!(*h.bucket_limit.last().unwrap(), f64::MAX);
        assert!((h.bucket_limit[0] + 0.51776).abs() < 1e-5);
        assert_eq!(h.min, -0.5);
        assert_eq!(h.max, 3.0);
        assert_eq!(h.num, 6.0);
        assert_eq!(h.sum, 5.5 + 1e-13f32 as f64);
    }

    #[test]
    fn empty_histogram() {
        let h = histogram(&[]);
        assert_eq!(h.bucket_limit, vec![f64::MAX]);
        assert_eq!(h.bucket, vec![0.0]);
        assert!(h.min > h.max);
    }

    #[test]
    fn huge_values_land_in_last_bucket() {
        let h = histogram(&[f64::MAX, f64::INFINITY, -f64::MAX]);
        assert_eq!(h.num, 3.0);
        assert_eq!(h.bucket.iter().sum::<f64>(), 3.0);
    }

    #[test]
    fn v2_buckets() {
        let rows = histogram_buckets(&[1.0, 2.0, 2.0, 10.0], 30);
        assert_eq!(rows.len(), 30);
        assert_eq!(rows[0], [1.0, 1.3, 1.0]);
        assert_eq!(rows[29][1], 10.0);
        assert_eq!(rows.iter().map(|r| r[2]).sum::<f64>(), 4.0);
        assert!(histogram_buckets(&[1.0], 0).is_empty());
        assert!(histogram_buckets(&[1.0], -3).is_empty());
        assert_eq!(histogram_buckets(&[], 2), vec![[0.0; 3]; 2]);
        assert_eq!(
            histogram_buckets(&[4.0, 4.0], 3),
            vec![[4.0, 4.0, 0.0], [4.0, 4.0, 0.0], [4.0, 4.0, 2.0]]
        );
    }
}
