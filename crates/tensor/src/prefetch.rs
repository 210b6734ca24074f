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

/// The size of the last-level cache in bytes (Linux: from sysfs, the
/// largest cache CPU 0 reports; elsewhere, or if unreadable, 32 MiB).
///
/// Kernels use it to tell data that stays cache-resident from one step to
/// the next from data streamed from DRAM every step, which wants
/// different access patterns.
pub fn last_level_cache_bytes() -> usize {
    static BYTES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| read_cache_sizes().into_iter().max().unwrap_or(32 << 20))
}

#[cfg(target_os = "linux")]
fn read_cache_sizes() -> Vec<usize> {
    let Ok(dir) = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache") else {
        return Vec::new();
    };
    dir.filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("size")).ok())
        .filter_map(|s| parse_cache_size(s.trim()))
        .collect()
}

#[cfg(not(target_os = "linux"))]
fn read_cache_sizes() -> Vec<usize> {
    Vec::new()
}

/// `"491520K"`, `"2048K"`, `"32M"` or plain bytes.
fn parse_cache_size(s: &str) -> Option<usize> {
    let (digits, scale) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits.parse::<usize>().ok()?.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_parse_as_sysfs_writes_them() {
        assert_eq!(parse_cache_size("491520K"), Some(491520 << 10));
        assert_eq!(parse_cache_size("32M"), Some(32 << 20));
        assert_eq!(parse_cache_size("1024"), Some(1024));
        assert_eq!(parse_cache_size("K"), None);
        assert_eq!(parse_cache_size("lots"), None);
        assert!(last_level_cache_bytes() >= 1 << 10);
    }
}
