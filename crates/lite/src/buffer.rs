//! Tensor storage: 64-byte-aligned bytes viewed as typed slices.

use bytemuck::{Pod, Zeroable};

/// One cache line; the unit of allocation, so every buffer starts aligned.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

// SAFETY: a plain byte array with no padding (size 64 = align 64).
unsafe impl Zeroable for Line {}
// SAFETY: as above; every bit pattern is valid.
unsafe impl Pod for Line {}

/// A tensor's bytes, aligned for any element type.
#[derive(Clone, Default)]
pub struct Buffer {
    lines: Vec<Line>,
    len: usize,
}

impl Buffer {
    /// `len` zero bytes.
    pub fn zeroed(len: usize) -> Buffer {
        Buffer {
            lines: vec![Line([0; 64]); len.div_ceil(64)],
            len,
        }
    }

    /// A copy of `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Buffer {
        let mut b = Buffer::zeroed(bytes.len());
        b.bytes_mut().copy_from_slice(bytes);
        b
    }

    /// Resizes to `len` bytes (contents unspecified after growing).
    pub fn resize(&mut self, len: usize) {
        let lines = len.div_ceil(64);
        if lines != self.lines.len() {
            self.lines.resize(lines, Line([0; 64]));
        }
        self.len = len;
    }

    /// Resizes to `len` bytes like [`Buffer::resize`], or returns an error
    /// (and keeps the buffer as it was) when the memory cannot be had.
    pub fn try_resize(&mut self, len: usize) -> Result<(), std::collections::TryReserveError> {
        let lines = len.div_ceil(64);
        if lines > self.lines.len() {
            self.lines.try_reserve_exact(lines - self.lines.len())?;
        }
        self.resize(len);
        Ok(())
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.lines)[..self.len]
    }

    /// The bytes, mutable.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.lines)[..self.len]
    }

    /// The elements as `T` (the length must be a multiple of `T`'s size).
    pub fn as_slice<T: Pod>(&self) -> &[T] {
        bytemuck::cast_slice(self.bytes())
    }

    /// The elements as `T`, mutable.
    pub fn as_mut_slice<T: Pod>(&mut self) -> &mut [T] {
        bytemuck::cast_slice_mut(self.bytes_mut())
    }
}
