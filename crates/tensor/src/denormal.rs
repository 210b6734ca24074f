//! Denormal floats flushed to zero while kernels run, as TensorFlow's CPU
//! runtime does.
//!
//! TensorFlow runs every CPU kernel with the SSE control bits FTZ (results
//! too small to be normal become zero) and DAZ (denormal inputs read as
//! zero) set. ferroflow does the same so results match TF's bit for bit where
//! values underflow, and because arithmetic on denormals is up to a hundred
//! times slower: an optimizer's slots decaying towards zero would otherwise
//! slow every later step. The bits are per thread: [`FlushDenormals`] sets
//! them on the calling thread for a scope, [`flush_on_rayon_workers`] sets
//! them once on every worker of a pool. Elsewhere than x86-64 both are
//! no-ops.

/// MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6) bits.
#[cfg(target_arch = "x86_64")]
const FTZ_DAZ: u32 = (1 << 15) | (1 << 6);

#[cfg(target_arch = "x86_64")]
fn read_mxcsr() -> u32 {
    let mut csr: u32 = 0;
    // SAFETY: stmxcsr stores the 32-bit control/status register to the
    // given address, a live local; SSE is part of the x86-64 baseline.
    unsafe { std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack)) };
    csr
}

#[cfg(target_arch = "x86_64")]
fn write_mxcsr(csr: u32) {
    // SAFETY: ldmxcsr loads a value previously read from the register with
    // only the FTZ/DAZ control bits changed, which cannot fault.
    unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack, readonly)) };
}

/// Whether denormals are flushed on the calling thread.
pub fn flushing() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        read_mxcsr() & FTZ_DAZ == FTZ_DAZ
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Sets or clears FTZ and DAZ on the calling thread for good (the kernel
/// team's helpers copy each job's caller this way).
pub(crate) fn set_flushing(on: bool) {
    #[cfg(target_arch = "x86_64")]
    {
        let csr = read_mxcsr();
        let want = if on { csr | FTZ_DAZ } else { csr & !FTZ_DAZ };
        if want != csr {
            write_mxcsr(want);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = on;
}

/// Flushes denormals on the calling thread until dropped, then restores the
/// thread's previous setting (the Python interpreter's thread keeps IEEE
/// behaviour outside `Session.run`).
#[must_use = "denormals are flushed only while the guard lives"]
pub struct FlushDenormals {
    #[cfg(target_arch = "x86_64")]
    saved: u32,
}

impl FlushDenormals {
    /// Sets FTZ and DAZ on this thread.
    pub fn new() -> FlushDenormals {
        #[cfg(target_arch = "x86_64")]
        {
            let saved = read_mxcsr();
            if saved & FTZ_DAZ != FTZ_DAZ {
                write_mxcsr(saved | FTZ_DAZ);
            }
            FlushDenormals { saved }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            FlushDenormals {}
        }
    }
}

impl Default for FlushDenormals {
    fn default() -> Self {
        FlushDenormals::new()
    }
}

impl Drop for FlushDenormals {
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        if read_mxcsr() != self.saved {
            write_mxcsr(self.saved);
        }
    }
}

/// Sets FTZ and DAZ for good on every worker thread of `pool` (rayon's
/// global pool if `None`). Workers only ever run kernels, so the setting
/// needs no restoring.
pub fn flush_on_rayon_workers(pool: Option<&rayon::ThreadPool>) {
    let set = |_: rayon::BroadcastContext<'_>| std::mem::forget(FlushDenormals::new());
    match pool {
        Some(p) => {
            p.broadcast(set);
        }
        None => {
            rayon::broadcast(set);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Multiplies through `black_box` so the compiler cannot fold the
    /// product at build time (which would ignore the thread's FTZ bit).
    fn product(a: f32, b: f32) -> f32 {
        std::hint::black_box(a) * std::hint::black_box(b)
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn guard_flushes_then_restores() {
        let tiny = f32::MIN_POSITIVE / 4.0; // a denormal
        assert!(!flushing());
        assert_eq!(product(tiny, 1.0), tiny);
        {
            let _guard = FlushDenormals::new();
            assert!(flushing());
            assert_eq!(product(tiny, 1.0), 0.0, "DAZ: denormal input reads as zero");
            assert_eq!(
                product(1e-30, 1e-10),
                0.0,
                "FTZ: denormal result becomes zero"
            );
            assert_eq!(product(1e-20, 1e-10), 1e-30);
        }
        assert!(!flushing());
        assert_eq!(product(tiny, 1.0), tiny);
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn pool_workers_flush() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        assert!(pool.broadcast(|_| !flushing()).into_iter().all(|b| b));
        flush_on_rayon_workers(Some(&pool));
        assert!(pool.broadcast(|_| flushing()).into_iter().all(|b| b));
        assert!(!flushing(), "the caller's thread is left alone");
    }
}
