//! Software prefetch: start loading memory into the cache without waiting.
//!
//! Kernels that visit many small objects (an optimizer step touching the
//! headers of hundreds of variables, each pushed out of the cache by the
//! previous step's data) first prefetch all of them, so the cache misses
//! overlap instead of costing one memory latency each in turn.

/// Starts loading the cache lines of `bytes` bytes from `ptr` (a hint: it
/// never faults and does nothing on targets without a prefetch instruction).
#[inline]
pub fn prefetch_range<T>(ptr: *const T, bytes: usize) {
    const LINE: usize = 64;
    let start = ptr as usize & !(LINE - 1);
    let end = ptr as usize + bytes.max(1);
    let mut line = start;
    while line < end {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: prefetch is a hint that never faults, whatever the address.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(line as *const i8);
        }
        line += LINE;
    }
}

/// Starts loading the `T` behind an [`Arc`](std::sync::Arc), with its
/// reference counts.
#[inline]
pub fn prefetch_arc<T>(arc: &std::sync::Arc<T>) {
    // The two counts sit just before the value in the allocation.
    let counts = 2 * std::mem::size_of::<usize>();
    let value = std::sync::Arc::as_ptr(arc) as *const u8;
    prefetch_range(
        value.wrapping_sub(counts),
        counts + std::mem::size_of::<T>(),
    );
}
