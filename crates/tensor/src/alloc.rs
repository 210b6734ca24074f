//! A global allocator that keeps large freed buffers for reuse.
//!
//! Large tensors come and go on every step: a restored checkpoint's values,
//! the result of an elementwise op on millions of elements. Memory fresh
//! from the OS costs a page fault and a page zeroed by the kernel the first
//! time each page is touched (profiled on a 1 GiB restore: 40% of the time
//! went to the kernel clearing pages), and giving it back costs an `munmap`.
//! [`BufferCache`] passes small requests straight to the allocator it wraps
//! (the system's by default) and keeps freed blocks of [`LARGE_MIN_BYTES`]
//! or more, up to a byte budget, for the next request of the same size:
//! already mapped, already in huge pages.
//!
//! The budget is `FERROFLOW_BUFFER_CACHE_MB` megabytes (`0` turns caching
//! off), by default an eighth of physical memory. When it is exceeded the
//! oldest cached blocks go back to the OS.
//!
//! Programs opt in with `#[global_allocator]`; the Python extension does.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Requests of at least this many bytes are cached when freed.
pub const LARGE_MIN_BYTES: usize = 4 << 20;

/// Large blocks are rounded up to, and aligned on, this (a huge page), so a
/// freed block serves any request that rounds to the same size.
const GRANULE: usize = 2 << 20;

const BUDGET_UNSET: usize = usize::MAX;

/// Freed large blocks, oldest first.
struct Blocks {
    /// `(address, rounded size)`.
    free: Vec<(usize, usize)>,
    bytes: usize,
}

/// A [`GlobalAlloc`] that caches large freed blocks (see the module docs)
/// on top of the allocator `A`, which serves everything else.
pub struct BufferCache<A = System> {
    blocks: Mutex<Blocks>,
    budget: AtomicUsize,
    inner: A,
}

impl Default for BufferCache {
    fn default() -> Self {
        Self::new()
    }
}

impl BufferCache {
    /// A cache over the system allocator whose budget comes from the
    /// environment on first use.
    pub const fn new() -> BufferCache {
        BufferCache::with_budget(BUDGET_UNSET)
    }

    /// A cache over the system allocator keeping at most `bytes` of freed
    /// blocks.
    pub const fn with_budget(bytes: usize) -> BufferCache {
        BufferCache::over(System, bytes)
    }
}

impl<A: GlobalAlloc> BufferCache<A> {
    /// A cache over `inner` whose budget comes from the environment on
    /// first use.
    pub const fn with_allocator(inner: A) -> BufferCache<A> {
        BufferCache::over(inner, BUDGET_UNSET)
    }

    const fn over(inner: A, budget: usize) -> BufferCache<A> {
        BufferCache {
            blocks: Mutex::new(Blocks {
                free: Vec::new(),
                bytes: 0,
            }),
            budget: AtomicUsize::new(budget),
            inner,
        }
    }

    /// Bytes currently held in freed blocks.
    pub fn cached_bytes(&self) -> usize {
        self.lock().bytes
    }

    /// Returns every cached block to the OS.
    pub fn release(&self) {
        let mut b = self.lock();
        for (addr, size) in b.free.drain(..) {
            // SAFETY: every cached block was allocated by `inner` with
            // `block_layout(size)`.
            unsafe { self.inner.dealloc(addr as *mut u8, block_layout(size)) };
        }
        b.bytes = 0;
    }

    /// Makes `fork()` safe for this cache (the process's global allocator;
    /// only the first call in a process registers anything).
    ///
    /// A child process has only the thread that forked. Had another thread
    /// held the cache's lock at that moment, the child's first large
    /// allocation would wait forever. With these handlers the forking thread
    /// takes the lock just before `fork()` (waiting for any holder to
    /// finish) and both processes release it right after.
    pub fn install_fork_handlers(&'static self) {
        #[cfg(unix)]
        {
            let me = &self.blocks as *const Mutex<Blocks> as *mut Mutex<Blocks>;
            if FORK_GUARDED
                .compare_exchange(
                    std::ptr::null_mut(),
                    me,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
            {
                // SAFETY: the handlers only take and release this cache's
                // lock, on the forking thread.
                unsafe {
                    libc::pthread_atfork(
                        Some(lock_before_fork),
                        Some(unlock_after_fork),
                        Some(unlock_after_fork),
                    );
                }
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Blocks> {
        // Nothing panics while the lock is held; recover from poisoning
        // rather than abort in an allocator.
        self.blocks.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn budget(&self) -> usize {
        let b = self.budget.load(Ordering::Relaxed);
        if b != BUDGET_UNSET {
            return b;
        }
        // Reading the environment allocates a little; the cache's lock is
        // not held here and small requests never take it.
        let b = budget_from_env();
        self.budget.store(b, Ordering::Relaxed);
        b
    }

    /// A cached block of exactly `size` (rounded) bytes, most recently
    /// freed first (its pages are the likeliest to be in the TLB).
    fn take(&self, size: usize) -> Option<*mut u8> {
        let mut b = self.lock();
        let i = b.free.iter().rposition(|&(_, s)| s == size)?;
        let (addr, _) = b.free.remove(i);
        b.bytes -= size;
        Some(addr as *mut u8)
    }

    /// Keeps a freed block, returning the oldest to the OS past the budget.
    fn keep(&self, addr: *mut u8, size: usize) {
        let budget = self.budget();
        if size > budget {
            // SAFETY: allocated by `inner` with this layout (see `alloc`).
            unsafe { self.inner.dealloc(addr, block_layout(size)) };
            return;
        }
        let mut b = self.lock();
        b.free.push((addr as usize, size));
        b.bytes += size;
        while b.bytes > budget {
            let (old, old_size) = b.free.remove(0);
            b.bytes -= old_size;
            // SAFETY: as above.
            unsafe { self.inner.dealloc(old as *mut u8, block_layout(old_size)) };
        }
    }
}

/// Whether a request is served (and freed) through the cache.
fn is_large(layout: &Layout) -> bool {
    // A request within a granule of `isize::MAX` cannot be rounded up to a
    // valid layout: the wrapped allocator refuses it (null) instead.
    layout.size() >= LARGE_MIN_BYTES
        && layout.size() <= isize::MAX as usize - GRANULE
        && layout.align() <= GRANULE
}

fn rounded(size: usize) -> usize {
    size.div_ceil(GRANULE) * GRANULE
}

fn block_layout(rounded_size: usize) -> Layout {
    Layout::from_size_align(rounded_size, GRANULE).expect("rounded sizes are valid layouts")
}

fn budget_from_env() -> usize {
    if let Some(mb) = std::env::var_os("FERROFLOW_BUFFER_CACHE_MB")
        .and_then(|v| v.into_string().ok())
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        return mb.saturating_mul(1 << 20);
    }
    physical_memory() / 8
}

#[cfg(target_os = "linux")]
fn physical_memory() -> usize {
    // SAFETY: sysconf only reads system configuration.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages <= 0 || page <= 0 {
        return 1 << 30;
    }
    (pages as usize).saturating_mul(page as usize)
}

#[cfg(not(target_os = "linux"))]
fn physical_memory() -> usize {
    8 << 30
}

/// Asks for transparent huge pages on a fresh block (aligned and sized in
/// whole huge pages).
#[cfg(target_os = "linux")]
fn advise_huge(addr: *mut u8, size: usize) {
    // SAFETY: the range is exactly a block we just mapped; the advice only
    // changes how the kernel backs it.
    unsafe {
        libc::madvise(addr as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_: *mut u8, _: usize) {}

/// The lock of the cache whose fork handlers hold it across `fork()`.
#[cfg(unix)]
static FORK_GUARDED: std::sync::atomic::AtomicPtr<Mutex<Blocks>> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

#[cfg(unix)]
thread_local! {
    /// The lock taken by [`lock_before_fork`], on the forking thread.
    static HELD_ACROSS_FORK: std::cell::RefCell<Option<std::sync::MutexGuard<'static, Blocks>>> =
        const { std::cell::RefCell::new(None) };
}

#[cfg(unix)]
extern "C" fn lock_before_fork() {
    let cache = FORK_GUARDED.load(Ordering::Acquire);
    if !cache.is_null() {
        // SAFETY: registered from the lock of a `&'static BufferCache`.
        let guard = unsafe { &*cache }.lock().unwrap_or_else(|e| e.into_inner());
        HELD_ACROSS_FORK.with(|h| *h.borrow_mut() = Some(guard));
    }
}

/// Runs in both the parent and the child (a futex mutex has no owner
/// thread, so the child's only thread may release it).
#[cfg(unix)]
extern "C" fn unlock_after_fork() {
    HELD_ACROSS_FORK.with(|h| drop(h.borrow_mut().take()));
}

// SAFETY: small requests are the inner allocator's; large ones are blocks
// of `block_layout(rounded(size))` from the inner allocator, handed out to
// one owner at a time (a block is either in `free` or owned, never both).
unsafe impl<A: GlobalAlloc> GlobalAlloc for BufferCache<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !is_large(&layout) {
            return self.inner.alloc(layout);
        }
        let size = rounded(layout.size());
        if let Some(p) = self.take(size) {
            return p;
        }
        let p = self.inner.alloc(block_layout(size));
        if !p.is_null() {
            advise_huge(p, size);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !is_large(&layout) {
            return self.inner.alloc_zeroed(layout);
        }
        let size = rounded(layout.size());
        if let Some(p) = self.take(size) {
            std::ptr::write_bytes(p, 0, layout.size());
            return p;
        }
        // Fresh mappings arrive zeroed; only the pages touched get cleared.
        let p = self.inner.alloc_zeroed(block_layout(size));
        if !p.is_null() {
            advise_huge(p, size);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !is_large(&layout) {
            return self.inner.dealloc(ptr, layout);
        }
        self.keep(ptr, rounded(layout.size()));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY (for the layout below): the caller guarantees `new_size`
        // with `layout.align()` is a valid layout.
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        match (is_large(&layout), is_large(&new_layout)) {
            (false, false) => self.inner.realloc(ptr, layout, new_size),
            (true, true) if rounded(layout.size()) == rounded(new_size) => ptr,
            _ => {
                let new = self.alloc(new_layout);
                if !new.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                new
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: usize = 1 << 20;

    #[test]
    #[cfg(target_os = "linux")]
    fn a_fork_while_another_thread_holds_the_lock_leaves_the_child_able_to_allocate() {
        use std::time::{Duration, Instant};
        static CACHE: BufferCache = BufferCache::with_budget(64 * MB);
        CACHE.install_fork_handlers();
        let big = layout(8 * MB);
        // A cached block, so the child's request goes through the lock.
        unsafe { CACHE.dealloc(CACHE.alloc(big), big) };
        let (locked, wait) = std::sync::mpsc::channel();
        let holder = std::thread::spawn(move || {
            let guard = CACHE.lock();
            locked.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(200));
            drop(guard);
        });
        wait.recv().unwrap();
        // SAFETY: the child only allocates through the cache and exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let ok = unsafe {
                let p = CACHE.alloc(big);
                let ok = !p.is_null();
                if ok {
                    CACHE.dealloc(p, big);
                }
                ok
            };
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        assert!(pid > 0, "fork failed");
        holder.join().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut status = 0;
        loop {
            let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if done == pid {
                break;
            }
            if Instant::now() > deadline {
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                panic!("the child hung on the cache's lock, held by a thread fork() did not copy");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "child status {status}"
        );
        // The parent's cache works after the fork too.
        unsafe { CACHE.dealloc(CACHE.alloc(big), big) };
    }

    fn layout(size: usize) -> Layout {
        Layout::from_size_align(size, 64).unwrap()
    }

    #[test]
    fn a_freed_large_block_serves_the_next_request_of_its_size() {
        let cache = BufferCache::with_budget(64 * MB);
        unsafe {
            let a = cache.alloc(layout(10 * MB));
            assert!(!a.is_null());
            assert_eq!(
                a as usize % GRANULE,
                0,
                "large blocks are huge-page aligned"
            );
            a.write_bytes(7, 10 * MB);
            cache.dealloc(a, layout(10 * MB));
            assert_eq!(cache.cached_bytes(), 10 * MB);
            // 9.5 MB rounds to the same 10 MB block.
            let b = cache.alloc(layout(9 * MB + MB / 2));
            assert_eq!(b, a);
            assert_eq!(cache.cached_bytes(), 0);
            // A different rounded size does not take it.
            cache.dealloc(b, layout(9 * MB + MB / 2));
            let c = cache.alloc(layout(20 * MB));
            assert_ne!(c, a);
            cache.dealloc(c, layout(20 * MB));
            assert_eq!(cache.cached_bytes(), 30 * MB);
            cache.release();
            assert_eq!(cache.cached_bytes(), 0);
        }
    }

    #[test]
    fn reused_zeroed_blocks_are_zero() {
        let cache = BufferCache::with_budget(64 * MB);
        unsafe {
            let a = cache.alloc(layout(8 * MB));
            a.write_bytes(0xAB, 8 * MB);
            cache.dealloc(a, layout(8 * MB));
            let b = cache.alloc_zeroed(layout(8 * MB));
            assert_eq!(b, a);
            let s = std::slice::from_raw_parts(b, 8 * MB);
            assert!(s.iter().all(|&x| x == 0));
            cache.dealloc(b, layout(8 * MB));
            cache.release();
        }
    }

    #[test]
    fn the_budget_returns_the_oldest_blocks() {
        let cache = BufferCache::with_budget(20 * MB);
        unsafe {
            let blocks: Vec<*mut u8> = (0..3).map(|_| cache.alloc(layout(8 * MB))).collect();
            for &p in &blocks {
                cache.dealloc(p, layout(8 * MB));
            }
            // 24 MB freed, 20 MB allowed: the first block went back.
            assert_eq!(cache.cached_bytes(), 16 * MB);
            let again = cache.alloc(layout(8 * MB));
            assert_eq!(
                again, blocks[2],
                "the most recently freed block comes first"
            );
            cache.dealloc(again, layout(8 * MB));
            cache.release();
        }
        let off = BufferCache::with_budget(0);
        unsafe {
            let p = off.alloc(layout(8 * MB));
            off.dealloc(p, layout(8 * MB));
        }
        assert_eq!(off.cached_bytes(), 0, "a zero budget caches nothing");
    }

    #[test]
    fn realloc_keeps_contents_across_the_size_threshold() {
        let cache = BufferCache::with_budget(64 * MB);
        unsafe {
            let small = cache.alloc(layout(1000));
            for i in 0..1000 {
                *small.add(i) = i as u8;
            }
            let big = cache.realloc(small, layout(1000), 5 * MB);
            assert!((0..1000).all(|i| *big.add(i) == i as u8));
            // Growing within the rounded (6 MB) block keeps the address.
            let same = cache.realloc(big, layout(5 * MB), 5 * MB + 1000);
            assert_eq!(same, big);
            let back = cache.realloc(same, layout(5 * MB + 1000), 500);
            assert!((0..500).all(|i| *back.add(i) == i as u8));
            assert_eq!(cache.cached_bytes(), 6 * MB);
            cache.dealloc(back, layout(500));
            cache.release();
        }
    }
}
