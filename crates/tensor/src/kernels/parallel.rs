//! How kernels split work across threads.
//!
//! Work is cut into chunks whose boundaries depend only on the problem size,
//! never on the number of threads, so every result is identical whatever the
//! thread count (reductions combine chunk results in a fixed order). The
//! chunks run as tasks of the kernel team ([`crate::team`]).

use crate::team;
use std::mem::MaybeUninit;

/// Below this many elements a kernel runs on the calling thread: handing
/// work to other threads costs more than the work.
pub const PARALLEL_THRESHOLD: usize = 1 << 16;

/// Elements per chunk for elementwise work.
pub const CHUNK: usize = 1 << 14;

/// Buffers at least this large ask for transparent huge pages.
const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// `n` zeroed (default) elements, for a kernel to fill in parallel.
///
/// Fresh large buffers arrive as untouched zero pages; their first-touch
/// page faults can cost more than the kernel itself. Asking Linux for
/// transparent huge pages (as NumPy does) cuts the faults 512-fold. Large
/// buffers are cleared in parallel (a reused buffer from the allocator's
/// cache is not zero).
pub fn zeroed<T: Copy + Default + Send>(n: usize) -> Vec<T> {
    filled(n, |_, _| {})
}

/// A new vector of `n` elements in which `f(start, chunk)` fills each
/// chunk (`chunk` holds the elements from index `start` on, preset to
/// `T::default()`), in parallel for large vectors.
///
/// Each chunk is cleared just before `f` fills it, while it is in the
/// cache, so a large result costs one pass over memory, not two.
#[inline]
pub fn filled<T: Copy + Default + Send, F: Fn(usize, &mut [T]) + Sync>(n: usize, f: F) -> Vec<T> {
    filled_by(n, &f)
}

/// [`filled`], compiled once per element type: `f` is called once per
/// chunk, and its loop over the chunk's elements stays monomorphic.
fn filled_by<T: Copy + Default + Send>(n: usize, f: &(dyn Fn(usize, &mut [T]) + Sync)) -> Vec<T> {
    if n < PARALLEL_THRESHOLD {
        let mut v = vec![T::default(); n];
        f(0, &mut v);
        return v;
    }
    let mut v: Vec<MaybeUninit<T>> = Vec::with_capacity(n);
    // SAFETY: `MaybeUninit` elements need no initialisation.
    unsafe { v.set_len(n) };
    advise_huge_pages(&v);
    team::for_each_chunk_mut(&mut v, CHUNK, |i, chunk| {
        for x in chunk.iter_mut() {
            x.write(T::default());
        }
        // SAFETY: every element of the chunk was just initialised.
        let chunk = unsafe { &mut *(chunk as *mut [MaybeUninit<T>] as *mut [T]) };
        f(i * CHUNK, chunk);
    });
    // SAFETY: every chunk, hence every element, was initialised above.
    unsafe { assume_init(v) }
}

/// A copy of `src` in a fresh buffer; large copies land in huge pages (see
/// [`zeroed`]) and are made in parallel.
pub fn copied<T: Copy + Default + Send + Sync>(src: &[T]) -> Vec<T> {
    if std::mem::size_of_val(src) < HUGE_PAGE_MIN_BYTES {
        return src.to_vec();
    }
    let mut v: Vec<MaybeUninit<T>> = Vec::with_capacity(src.len());
    // SAFETY: `MaybeUninit` elements need no initialisation.
    unsafe { v.set_len(src.len()) };
    advise_huge_pages(&v);
    const BLOCK: usize = 1 << 16;
    team::for_each_chunk_mut(&mut v, BLOCK, |i, d| {
        for (d, &s) in d.iter_mut().zip(&src[i * BLOCK..]) {
            d.write(s);
        }
    });
    // SAFETY: every element was written by the copy.
    unsafe { assume_init(v) }
}

/// The `Vec<T>` of a fully initialised `Vec<MaybeUninit<T>>`, reusing its
/// allocation.
///
/// # Safety
/// Every element of `v` must be initialised.
unsafe fn assume_init<T>(v: Vec<MaybeUninit<T>>) -> Vec<T> {
    let mut v = std::mem::ManuallyDrop::new(v);
    Vec::from_raw_parts(v.as_mut_ptr() as *mut T, v.len(), v.capacity())
}

/// Asks Linux for transparent huge pages under the whole 2 MiB pages of a
/// buffer of at least 4 MiB (a no-op for smaller buffers and elsewhere).
#[cfg(target_os = "linux")]
pub fn advise_huge_pages<T>(v: &[T]) {
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

/// Huge pages are only requested on Linux.
#[cfg(not(target_os = "linux"))]
pub fn advise_huge_pages<T>(_: &[T]) {
    let _ = HUGE_PAGE_MIN_BYTES;
}

/// Calls `f(start, chunk)` over consecutive chunks of `out` (`chunk` holds
/// the elements from index `start` on), in parallel for large outputs.
#[inline]
pub fn fill_indexed<O: Send, F: Fn(usize, &mut [O]) + Sync>(out: &mut [O], f: F) {
    fill_indexed_by(out, &f)
}

/// [`fill_indexed`], compiled once per element type.
fn fill_indexed_by<O: Send>(out: &mut [O], f: &(dyn Fn(usize, &mut [O]) + Sync)) {
    if out.len() < PARALLEL_THRESHOLD {
        f(0, out);
    } else {
        team::for_each_chunk_mut(out, CHUNK, |i, chunk| f(i * CHUNK, chunk));
    }
}

/// Maps `x` into a new vector.
#[inline]
pub fn map<A: Copy + Sync, O: Copy + Send + Default, F: Fn(A) -> O + Sync>(
    x: &[A],
    f: F,
) -> Vec<O> {
    filled(x.len(), |start, chunk| {
        let src = &x[start..start + chunk.len()];
        for (o, &v) in chunk.iter_mut().zip(src) {
            *o = f(v);
        }
    })
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
#[inline]
pub fn for_rows<O: Send, F: Fn(usize, &mut [O]) + Sync>(out: &mut [O], row_len: usize, f: F) {
    for_rows_by(out, row_len, &f)
}

/// [`for_rows`], compiled once per element type.
fn for_rows_by<O: Send>(out: &mut [O], row_len: usize, f: &(dyn Fn(usize, &mut [O]) + Sync)) {
    let n = out.len();
    if row_len == 0 || n == 0 {
        return;
    }
    if n < PARALLEL_THRESHOLD {
        f(0, out);
        return;
    }
    let rows_per_chunk = CHUNK.div_ceil(row_len).max(1);
    team::for_each_chunk_mut(out, rows_per_chunk * row_len, |i, chunk| {
        f(i * rows_per_chunk, chunk)
    });
}
