//! Helpers shared by the examples (kept free of extra dependencies).

use ferroflow::Tensor;

/// A deterministic pseudo-random stream (xorshift).
pub struct Rng(pub u64);

impl Rng {
    /// A float uniform in [0, 1).
    pub fn uniform(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A float32 tensor of shape `dims`, uniform in [-scale, scale).
    pub fn tensor(&mut self, dims: &[usize], scale: f32) -> ferroflow::Result<Tensor> {
        let n = dims.iter().product();
        let v: Vec<f32> = (0..n)
            .map(|_| (self.uniform() * 2.0 - 1.0) * scale)
            .collect();
        Tensor::from_vec(dims.to_vec(), v)
    }
}
