//! How kernels split work across threads.
//!
//! Work is cut into chunks whose boundaries depend only on the problem size,
//! never on the number of threads, so every result is identical whatever the
//! thread count (reductions combine chunk results in a fixed order).

use rayon::prelude::*;

/// Below this many elements a kernel runs on the calling thread: a rayon
/// round trip costs more than the work.
pub const PARALLEL_THRESHOLD: usize = 1 << 16;

/// Elements per chunk for elementwise work.
pub const CHUNK: usize = 1 << 14;

/// Buffers at least this large ask for transparent huge pages.
const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// `n` zeroed (default) elements, for a kernel to fill in parallel.
///
/// Fresh large buffers arrive as untouched zero pages; their first-touch
/// page faults can cost more than the kernel itself. Asking Linux for
/// transparent huge pages (as NumPy does) cuts the faults 512-fold.
pub fn zeroed<T: Copy + Default>(n: usize) -> Vec<T> {
    let v = vec![T::default(); n];
    advise_huge_pages(&v);
    v
}

/// A copy of `src` in a fresh buffer; large copies land in huge pages (see
/// [`zeroed`]) and are made in parallel.
pub fn copied<T: Copy + Default + Send + Sync>(src: &[T]) -> Vec<T> {
    if std::mem::size_of_val(src) < HUGE_PAGE_MIN_BYTES {
        return src.to_vec();
    }
    let mut v = zeroed(src.len());
    const BLOCK: usize = 1 << 16;
    v.par_chunks_mut(BLOCK)
        .zip(src.par_chunks(BLOCK))
        .for_each(|(d, s)| d.copy_from_slice(s));
    v
}

#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(v: &[T]) {
    let bytes = std::mem::size_of_val(v);
    if bytes < HUGE_PAGE_MIN_BYTES {
        return;
    }
    const HUGE: usize = 2 << 20;
    let start = v.as_ptr() as usize;
    let aligned = (start + HUGE - 1) & !(HUGE - 1);
    let end = (start + bytes) & !(HUGE - 1);
    if end > aligned {
        // SAFETY: the range lies inside `v`'s allocation; madvise only
        // changes how the kernel backs those pages, not their contents.
        unsafe {
            libc::madvise(
                aligned as *mut libc::c_void,
                end - aligned,
                libc::MADV_HUGEPAGE,
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_: &[T]) {
    let _ = HUGE_PAGE_MIN_BYTES;
}

/// Fills `out[i] = f(i)` for each index, in parallel for large outputs.
#[inline]
pub fn fill_indexed<O: Send, F: Fn(usize, &mut [O]) + Sync>(out: &mut [O], f: F) {
    if out.len() < PARALLEL_THRESHOLD {
        f(0, out);
    } else {
        out.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(i, chunk)| f(i * CHUNK, chunk));
    }
}

/// Maps `x` into a new vector.
#[inline]
pub fn map<A: Copy + Sync, O: Copy + Send + Default, F: Fn(A) -> O + Sync>(
    x: &[A],
    f: F,
) -> Vec<O> {
    let mut out = vec![O::default(); x.len()];
    fill_indexed(&mut out, |start, chunk| {
        let src = &x[start..start + chunk.len()];
        for (o, &v) in chunk.iter_mut().zip(src) {
            *o = f(v);
        }
    });
    out
}

/// Maps `x` in place.
#[inline]
pub fn map_in_place<A: Copy + Send + Sync, F: Fn(A) -> A + Sync>(x: &mut [A], f: F) {
    fill_indexed(x, |_, chunk| {
        for v in chunk.iter_mut() {
            *v = f(*v);
        }
    });
}

/// Runs `f(row_start, rows)` over blocks of rows of `out`, where each row has
/// `row_len` elements, in parallel when there is enough work.
pub fn for_rows<O: Send, F: Fn(usize, &mut [O]) + Sync>(out: &mut [O], row_len: usize, f: F) {
    let n = out.len();
    if row_len == 0 || n == 0 {
        return;
    }
    if n < PARALLEL_THRESHOLD {
        f(0, out);
        return;
    }
    let rows_per_chunk = CHUNK.div_ceil(row_len).max(1);
    out.par_chunks_mut(rows_per_chunk * row_len)
        .enumerate()
        .for_each(|(i, chunk)| f(i * rows_per_chunk, chunk));
}
