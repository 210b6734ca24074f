//! The Philox4x32-10 counter-based generator (the generator TensorFlow's
//! random ops use), keyed by an op's two seeds.
//!
//! Each block of four words is a pure function of (seed, seed2, block
//! index), so work that draws from it splits across threads with results
//! independent of the thread count, and a stateful user (a shuffling queue,
//! a sampled crop) only needs to remember how many blocks it has used. The
//! samplers that reproduce TensorFlow's random ops bit for bit live in
//! [`super::stateless_random`].

use super::stateless_random::philox4x32_10;

/// A Philox4x32-10 key and the high half of its counter.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Philox {
    key: [u32; 2],
    stream: [u32; 2],
}

impl Philox {
    /// A generator keyed by the op's two seeds.
    pub fn new(seed: u64, seed2: u64) -> Philox {
        Philox {
            key: [seed as u32, (seed >> 32) as u32],
            stream: [seed2 as u32, (seed2 >> 32) as u32],
        }
    }

    /// The four 32-bit words of block `index`.
    #[inline]
    pub fn block(&self, index: u64) -> [u32; 4] {
        philox4x32_10(
            [
                index as u32,
                (index >> 32) as u32,
                self.stream[0],
                self.stream[1],
            ],
            self.key,
        )
    }
}

/// A permutation of `0..n` (Fisher-Yates) drawn from blocks `base..`.
pub fn permutation(gen: &Philox, base: u64, n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let b = gen.block(base + i as u64);
        let r = ((b[0] as u64) << 32 | b[1] as u64) % (i as u64 + 1);
        p.swap(i, r as usize);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn philox_known_answer() {
        // Known-answer vectors of the Random123 distribution (philox4x32, 10 rounds).
        let g = Philox {
            key: [0, 0],
            stream: [0, 0],
        };
        assert_eq!(g.block(0), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
        let g = Philox {
            key: [0xa4093822, 0x299f31d0],
            stream: [0x13198a2e, 0x03707344],
        };
        assert_eq!(
            g.block(0x85a308d3_243f6a88),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }

    #[test]
    fn permutations_are_permutations() {
        let mut p = permutation(&Philox::new(1, 2), 0, 1000);
        assert_ne!(p, (0..1000).collect::<Vec<_>>());
        p.sort();
        assert_eq!(p, (0..1000).collect::<Vec<_>>());
    }
}
