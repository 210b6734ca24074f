//! Discrete Fourier transforms: TensorFlow's `FFT` / `IFFT` (1-D, 2-D, 3-D
//! and N-D) and its `RFFT` / `IRFFT` families.
//!
//! Every transform runs over the innermost `k` dimensions of its input and
//! is batched over the others. A k-D transform is k passes of 1-D
//! transforms, one per axis: the innermost axis transforms contiguous rows
//! in place; an outer axis gathers a group of its columns into a contiguous
//! buffer, transforms them there and scatters them back. The 1-D transforms
//! are rustfft's (SIMD kernels chosen at run time); realfft builds the
//! real-to-complex and complex-to-real passes along the innermost axis on
//! top of them.
//!
//! Forward transforms are unnormalised; inverse ones divide by the product
//! of the transform lengths (TensorFlow's and NumPy's default). Each 1-D
//! transform runs the same plan on the same numbers whichever thread takes
//! it, so results do not depend on the thread count.
//!
//! Plans are made once per (length, direction) and kept in an [`FftPlans`],
//! which a kernel owns for the life of its node: the first run plans, later
//! runs reuse.

use super::complex::Part;
use super::parallel;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::team;
use crate::tensor::{Element, Tensor};
use num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use rustfft::{Fft, FftNum, FftPlanner};
use std::mem::{ManuallyDrop, MaybeUninit};
use std::sync::{Arc, Mutex, MutexGuard};

/// Elements each parallel task transforms (rows or columns are grouped up
/// to about this many; a longer row is a task of its own).
const TASK_ELEMS: usize = 1 << 15;

/// Transforms over fewer elements than this run on the calling thread.
const PARALLEL_MIN: usize = 1 << 15;

/// Columns gathered together at least, so that each row of the gather reads
/// a run of contiguous elements.
const MIN_COLUMNS: usize = 8;

/// The planners of one element type.
struct Planners<T: FftNum> {
    complex: Mutex<FftPlanner<T>>,
    real: Mutex<RealFftPlanner<T>>,
}

impl<T: FftNum> Default for Planners<T> {
    fn default() -> Self {
        Planners {
            complex: Mutex::new(FftPlanner::new()),
            real: Mutex::new(RealFftPlanner::new()),
        }
    }
}

/// A planner lock; a panic while planning cannot leave a planner's cache
/// half-written in a way that matters, so a poisoned lock is taken over.
fn lock<P>(m: &Mutex<P>) -> MutexGuard<'_, P> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<T: FftNum> Planners<T> {
    fn c2c(&self, n: usize, inverse: bool) -> Arc<dyn Fft<T>> {
        let mut p = lock(&self.complex);
        if inverse {
            p.plan_fft_inverse(n)
        } else {
            p.plan_fft_forward(n)
        }
    }

    fn r2c(&self, n: usize) -> Arc<dyn RealToComplex<T>> {
        lock(&self.real).plan_fft_forward(n)
    }

    fn c2r(&self, n: usize) -> Arc<dyn ComplexToReal<T>> {
        lock(&self.real).plan_fft_inverse(n)
    }
}

/// The FFT plans of one kernel (one graph node), kept across its runs.
#[derive(Default)]
pub struct FftPlans {
    single: Planners<f32>,
    double: Planners<f64>,
}

/// The real types the transforms compute in.
trait FftFloat: Part + FftNum {
    fn planners(plans: &FftPlans) -> &Planners<Self>;
}

impl FftFloat for f32 {
    fn planners(plans: &FftPlans) -> &Planners<f32> {
        &plans.single
    }
}

impl FftFloat for f64 {
    fn planners(plans: &FftPlans) -> &Planners<f64> {
        &plans.double
    }
}

/// A raw pointer handed to tasks that touch disjoint parts of one buffer.
struct SendPtr<T>(*mut T);

impl<T> SendPtr<T> {
    /// The pointer (a method, so that closures capture the whole `Sync`
    /// wrapper rather than its raw field).
    fn get(&self) -> *mut T {
        self.0
    }
}
// SAFETY: used only to give parallel tasks disjoint elements of one slice.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}

fn dims_text(dims: &[usize]) -> String {
    let parts: Vec<String> = dims.iter().map(usize::to_string).collect();
    format!("[{}]", parts.join(","))
}

/// TensorFlow's check that a transform of `rank` dimensions has them.
fn check_rank(x: &Tensor, rank: usize) -> Result<()> {
    if x.rank() < rank {
        return Err(Error::invalid_argument(format!(
            "Input must have rank of at least {rank} but got: {}",
            dims_text(x.dims())
        )));
    }
    Ok(())
}

/// `fft_length` as lengths, with TensorFlow's checks: `rank` entries, none
/// negative.
fn lengths(fft_length: &[i64], rank: usize) -> Result<Vec<usize>> {
    if fft_length.len() != rank {
        return Err(Error::invalid_argument(format!(
            "fft_length must have shape [{rank}]"
        )));
    }
    fft_length
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            usize::try_from(v).map_err(|_| {
                Error::invalid_argument(format!("fft_length[{i}] must >= 0, but got: {v}"))
            })
        })
        .collect()
}

/// The product of `dims` (1 for none).
fn product(dims: &[usize]) -> usize {
    dims.iter().product()
}

/// `data` (of shape `src`) cropped or zero-padded to `dst`, a shape of the
/// same rank.
fn resize<E: Copy + Default>(data: &[E], src: &[usize], dst: &[usize]) -> Vec<E> {
    let rank = dst.len();
    let mut out = vec![E::default(); product(dst)];
    if out.is_empty() || data.is_empty() {
        return out;
    }
    let (src_last, dst_last) = (src[rank - 1], dst[rank - 1]);
    let run = src_last.min(dst_last);
    let rows = out.len() / dst_last;
    let mut index = vec![0usize; rank - 1];
    for row in 0..rows {
        if index.iter().zip(src).all(|(&i, &s)| i < s) {
            let src_row = index
                .iter()
                .zip(src)
                .fold(0usize, |acc, (&i, &s)| acc * s + i);
            let from = &data[src_row * src_last..src_row * src_last + run];
            out[row * dst_last..row * dst_last + run].copy_from_slice(from);
        }
        // The next row's index, last dimension fastest.
        for d in (0..rank - 1).rev() {
            index[d] += 1;
            if index[d] < dst[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

/// Multiplies every element by `scale` unless it is one.
fn scale_all<T: FftFloat>(v: &mut [Complex<T>], scale: T) {
    if scale != T::one() {
        for z in v {
            *z = *z * scale;
        }
    }
}

/// The 1-D transform `plan` along `axis` of `data` (shape `dims`), in
/// place, each result multiplied by `scale`.
fn along_axis<T: FftFloat>(
    plan: &Arc<dyn Fft<T>>,
    data: &mut [Complex<T>],
    dims: &[usize],
    axis: usize,
    scale: T,
) {
    let n = dims[axis];
    if data.is_empty() || (n == 1 && scale == T::one()) {
        return;
    }
    let inner = product(&dims[axis + 1..]);
    if inner == 1 {
        rows(plan, data, n, scale);
    } else {
        columns(plan, data, n, inner, scale);
    }
}

/// Transforms the contiguous rows of length `n` that make up `data`.
fn rows<T: FftFloat>(plan: &Arc<dyn Fft<T>>, data: &mut [Complex<T>], n: usize, scale: T) {
    let run = |piece: &mut [Complex<T>]| {
        let mut scratch = vec![Complex::default(); plan.get_inplace_scratch_len()];
        plan.process_with_scratch(piece, &mut scratch);
        scale_all(piece, scale);
    };
    if data.len() < PARALLEL_MIN {
        run(data);
    } else {
        let per_task = (TASK_ELEMS / n).max(1) * n;
        team::for_each_chunk_mut(data, per_task, |_, piece| run(piece));
    }
}

/// Transforms `data`, seen as `[outer, n, inner]`, along its middle axis:
/// each task gathers a group of columns of one `[n, inner]` block into a
/// contiguous buffer, transforms them and writes them back.
fn columns<T: FftFloat>(
    plan: &Arc<dyn Fft<T>>,
    data: &mut [Complex<T>],
    n: usize,
    inner: usize,
    scale: T,
) {
    let outer = data.len() / (n * inner);
    let group = (TASK_ELEMS / n).max(MIN_COLUMNS).min(inner);
    let groups = inner.div_ceil(group);
    let base = SendPtr(data.as_mut_ptr());
    let task = |t: usize| {
        let (o, g) = (t / groups, t % groups);
        let c0 = g * group;
        let w = group.min(inner - c0);
        let mut buf = vec![Complex::default(); w * n];
        let mut scratch = vec![Complex::default(); plan.get_inplace_scratch_len()];
        // SAFETY: task `t` alone touches columns `c0..c0 + w` of block `o`,
        // which lie inside `data`; `data` outlives the tasks and nothing
        // else reads or writes it meanwhile.
        let block = unsafe { base.get().add(o * n * inner + c0) };
        for r in 0..n {
            // SAFETY: see above; the `w` elements of row `r` of this group.
            let src = unsafe { std::slice::from_raw_parts(block.add(r * inner), w) };
            for (j, &z) in src.iter().enumerate() {
                buf[j * n + r] = z;
            }
        }
        plan.process_with_scratch(&mut buf, &mut scratch);
        for r in 0..n {
            // SAFETY: as for the gather.
            let dst = unsafe { std::slice::from_raw_parts_mut(block.add(r * inner), w) };
            for (j, z) in dst.iter_mut().enumerate() {
                *z = buf[j * n + r];
            }
        }
        if scale != T::one() {
            for r in 0..n {
                // SAFETY: as for the gather.
                let dst = unsafe { std::slice::from_raw_parts_mut(block.add(r * inner), w) };
                scale_all(dst, scale);
            }
        }
    };
    let tasks = outer * groups;
    if data.len() < PARALLEL_MIN {
        (0..tasks).for_each(task);
    } else {
        team::run(tasks, task);
    }
}

/// The scale of the last pass: `1/N` for an inverse transform over the
/// innermost `k` axes of `dims`, else one.
fn final_scale<T: FftFloat>(dims: &[usize], k: usize, inverse: bool) -> T {
    if inverse {
        T::of(1.0 / product(&dims[dims.len() - k..]) as f64)
    } else {
        T::one()
    }
}

/// The passes over the outer transformed axes (all but the innermost), the
/// last of them scaled by `scale`.
fn outer_passes<T: FftFloat>(
    planners: &Planners<T>,
    data: &mut [Complex<T>],
    dims: &[usize],
    k: usize,
    inverse: bool,
    scale: T,
) {
    let rank = dims.len();
    for axis in rank - k..rank - 1 {
        let plan = planners.c2c(dims[axis], inverse);
        let s = if axis == rank - 2 { scale } else { T::one() };
        along_axis(&plan, data, dims, axis, s);
    }
}

/// Complex-to-complex transforms along the innermost `k` axes of `data`
/// (shape `dims`), in place; inverse transforms are scaled by `1/N` in
/// their last pass.
fn c2c<T: FftFloat>(
    planners: &Planners<T>,
    data: &mut [Complex<T>],
    dims: &[usize],
    k: usize,
    inverse: bool,
) {
    let rank = dims.len();
    if data.is_empty() || k == 0 {
        return;
    }
    let scale = final_scale::<T>(dims, k, inverse);
    let plan = planners.c2c(dims[rank - 1], inverse);
    let first = if k == 1 { scale } else { T::one() };
    along_axis(&plan, data, dims, rank - 1, first);
    outer_passes(planners, data, dims, k, inverse, scale);
}

/// As [`c2c`], into a new buffer: the innermost pass copies each group of
/// rows from `src` and transforms it while it is in the cache, so the copy
/// costs no pass over memory of its own.
fn c2c_copy<T: FftFloat>(
    planners: &Planners<T>,
    src: &[Complex<T>],
    dims: &[usize],
    k: usize,
    inverse: bool,
) -> Vec<Complex<T>> {
    let rank = dims.len();
    let n = dims[rank - 1];
    if src.is_empty() || k == 0 {
        return src.to_vec();
    }
    let scale = final_scale::<T>(dims, k, inverse);
    let first = if k == 1 { scale } else { T::one() };
    let plan = planners.c2c(n, inverse);
    let mut out = rows_filled(src.len() / n, n, |row, piece: &mut [Complex<T>]| {
        piece.copy_from_slice(&src[row * n..row * n + piece.len()]);
        let mut scratch = vec![Complex::default(); plan.get_inplace_scratch_len()];
        plan.process_with_scratch(piece, &mut scratch);
        scale_all(piece, first);
    });
    outer_passes(planners, &mut out, dims, k, inverse, scale);
    out
}

/// A new buffer of `rows` rows of `len` elements, each group of whole rows
/// filled by `f(first_row, group)` (in parallel for large buffers). A group
/// is cleared just before `f` fills it, while it is in the cache, so a
/// large result costs one pass over memory, not two; large buffers ask for
/// transparent huge pages (see [`parallel::zeroed`]).
fn rows_filled<E, F>(rows: usize, len: usize, f: F) -> Vec<E>
where
    E: Copy + Default + Send,
    F: Fn(usize, &mut [E]) + Sync,
{
    let n = rows * len;
    if n == 0 {
        return Vec::new();
    }
    if n < PARALLEL_MIN {
        let mut v = vec![E::default(); n];
        f(0, &mut v);
        return v;
    }
    let mut v: Vec<MaybeUninit<E>> = Vec::with_capacity(n);
    // SAFETY: `MaybeUninit` elements need no initialisation.
    unsafe { v.set_len(n) };
    parallel::advise_huge_pages(&v);
    let per = (TASK_ELEMS / len).max(1);
    team::for_each_chunk_mut(&mut v, per * len, |i, chunk| {
        for x in chunk.iter_mut() {
            x.write(E::default());
        }
        // SAFETY: every element of the chunk was just initialised.
        let chunk = unsafe { &mut *(chunk as *mut [MaybeUninit<E>] as *mut [E]) };
        f(i * per, chunk);
    });
    let mut v = ManuallyDrop::new(v);
    // SAFETY: every chunk, hence every element, was initialised above, and
    // `MaybeUninit<E>` has `E`'s layout.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut E, v.len(), v.capacity()) }
}

fn r2c_impl<T: FftFloat>(
    planners: &Planners<T>,
    x: &[T],
    in_dims: &[usize],
    fft: &[usize],
    out_dims: &[usize],
) -> Vec<Complex<T>> {
    let rank = in_dims.len();
    let k = fft.len();
    if product(out_dims) == 0 || x.is_empty() {
        return vec![Complex::default(); product(out_dims)];
    }
    // Crop the outer transform axes first if needed; the innermost one is
    // cropped as rows are read.
    let cropped;
    let (src, stride) = if in_dims[rank - k..rank - 1] == fft[..k - 1] {
        (x, in_dims[rank - 1])
    } else {
        let mut mid = in_dims.to_vec();
        mid[rank - k..rank - 1].copy_from_slice(&fft[..k - 1]);
        cropped = resize(x, in_dims, &mid);
        (&cropped[..], in_dims[rank - 1])
    };
    let n = fft[k - 1];
    let h = out_dims[rank - 1];
    let plan = planners.r2c(n);
    let mut out = rows_filled(
        product(out_dims) / h,
        h,
        |first, piece: &mut [Complex<T>]| {
            let mut row_in = vec![T::zero(); n];
            let mut scratch = vec![Complex::default(); plan.get_scratch_len()];
            for (i, row_out) in piece.chunks_exact_mut(h).enumerate() {
                let at = (first + i) * stride;
                row_in.copy_from_slice(&src[at..at + n]);
                plan.process_with_scratch(&mut row_in, row_out, &mut scratch)
                    .expect("row lengths match the plan");
            }
        },
    );
    // The outer axes: complex transforms of the half spectrum.
    for axis in rank - k..rank - 1 {
        let plan = planners.c2c(out_dims[axis], false);
        along_axis(&plan, &mut out, out_dims, axis, T::one());
    }
    out
}

fn c2r_impl<T: FftFloat>(
    planners: &Planners<T>,
    x: &[Complex<T>],
    in_dims: &[usize],
    fft: &[usize],
    out_dims: &[usize],
) -> Vec<T> {
    let rank = in_dims.len();
    let k = fft.len();
    if product(out_dims) == 0 || x.is_empty() {
        return vec![T::zero(); product(out_dims)];
    }
    let n = fft[k - 1];
    let h = n / 2 + 1;
    // The half spectrum cropped to [.., fft[..k-1], h], with the inverse
    // transforms of the outer axes done (the 1-D case reads rows in place).
    let spectrum;
    let (src, stride) = if k == 1 {
        (x, in_dims[rank - 1])
    } else {
        let mut mid = in_dims.to_vec();
        mid[rank - k..rank - 1].copy_from_slice(&fft[..k - 1]);
        mid[rank - 1] = h;
        let mut s = resize(x, in_dims, &mid);
        for axis in rank - k..rank - 1 {
            let plan = planners.c2c(mid[axis], true);
            along_axis(&plan, &mut s, &mid, axis, T::one());
        }
        spectrum = s;
        (&spectrum[..], h)
    };
    let scale = T::of(1.0 / product(fft) as f64);
    let plan = planners.c2r(n);
    rows_filled(product(out_dims) / n, n, |first, piece: &mut [T]| {
        let mut row_in = vec![Complex::default(); h];
        let mut scratch = vec![Complex::default(); plan.get_scratch_len()];
        for (i, row_out) in piece.chunks_exact_mut(n).enumerate() {
            let at = (first + i) * stride;
            row_in.copy_from_slice(&src[at..at + h]);
            // A real signal's DC term (and Nyquist term, for even lengths)
            // is real: their imaginary parts are ignored, as TensorFlow's
            // and NumPy's transforms do.
            row_in[0].im = T::zero();
            if n.is_multiple_of(2) {
                row_in[h - 1].im = T::zero();
            }
            plan.process_with_scratch(&mut row_in, row_out, &mut scratch)
                .expect("row lengths match the plan");
            for v in row_out.iter_mut() {
                *v = *v * scale;
            }
        }
    })
}

/// Runs `$body` with `$t` the part type of the complex dtype `$d`.
macro_rules! by_part {
    ($d:expr, $t:ident => $body:expr, _ => $other:expr) => {
        match $d {
            DType::Complex64 => {
                type $t = f32;
                $body
            }
            DType::Complex128 => {
                type $t = f64;
                $body
            }
            _ => $other,
        }
    };
}

fn complex_only(op: &str, d: DType) -> Error {
    Error::invalid_argument(format!(
        "{op} expects a complex64 or complex128 tensor, got {d}"
    ))
}

/// TensorFlow's `FFT`, `IFFT`, `FFT2D`, `IFFT2D`, `FFT3D`, `IFFT3D`: the
/// `rank`-D transform of the innermost `rank` dimensions of a complex
/// tensor, batched over the rest. Transforms in place when `x` holds the
/// only handle to its buffer.
pub fn fft(plans: &FftPlans, op: &str, x: Tensor, rank: usize, inverse: bool) -> Result<Tensor> {
    check_rank(&x, rank)?;
    fn go<T: FftFloat>(plans: &FftPlans, x: Tensor, rank: usize, inverse: bool) -> Result<Tensor>
    where
        Complex<T>: Element,
    {
        let shape = x.shape().clone();
        let mut x = x;
        let planners = T::planners(plans);
        let data = if x.is_unique() {
            let mut data = x.into_vec::<Complex<T>>()?;
            c2c(planners, &mut data, shape.dims(), rank, inverse);
            data
        } else {
            c2c_copy(
                planners,
                x.as_slice::<Complex<T>>()?,
                shape.dims(),
                rank,
                inverse,
            )
        };
        Tensor::from_vec(shape, data)
    }
    by_part!(x.dtype(), T => go::<T>(plans, x, rank, inverse), _ => Err(complex_only(op, x.dtype())))
}

/// TensorFlow's `FFTND` / `IFFTND`: the transform of the innermost
/// `fft_length.len()` dimensions, each first cropped or zero-padded to its
/// `fft_length` (NumPy's `fftn` with `s`).
pub fn fft_nd(
    plans: &FftPlans,
    op: &str,
    x: Tensor,
    fft_length: &[i64],
    inverse: bool,
) -> Result<Tensor> {
    let k = fft_length.len();
    check_rank(&x, k)?;
    let fft = lengths(fft_length, k)?;
    let rank = x.rank();
    let mut out_dims = x.dims().to_vec();
    out_dims[rank - k..].copy_from_slice(&fft);
    Tensor::check_allocation(op, x.dtype(), &out_dims)?;
    fn go<T: FftFloat>(
        plans: &FftPlans,
        x: Tensor,
        out_dims: Vec<usize>,
        k: usize,
        inverse: bool,
    ) -> Result<Tensor>
    where
        Complex<T>: Element,
    {
        let mut data = if x.dims() == out_dims.as_slice() {
            x.into_vec::<Complex<T>>()?
        } else {
            resize(x.as_slice::<Complex<T>>()?, x.dims(), &out_dims)
        };
        c2c(T::planners(plans), &mut data, &out_dims, k, inverse);
        Tensor::from_vec(Shape::new(&out_dims), data)
    }
    by_part!(x.dtype(), T => go::<T>(plans, x, out_dims, k, inverse), _ => Err(complex_only(op, x.dtype())))
}

/// TensorFlow's DataType number of `d`, as its runtime messages print dtypes.
fn enum_of(d: DType) -> i32 {
    d.as_enum()
}

/// TensorFlow's `RFFT`, `RFFT2D`, `RFFT3D` and `RFFTND`: the transform of
/// the innermost `fft_length.len()` dimensions of a real tensor, each
/// cropped to its `fft_length` (an input shorter than that is an error, as
/// in TensorFlow; the Python wrappers pad), keeping the `fft_length / 2 + 1`
/// non-negative frequencies of the innermost one. `out` is the `Tcomplex`
/// attr: complex64 for float32 input, complex128 for float64.
pub fn rfft(
    plans: &FftPlans,
    op: &str,
    x: &Tensor,
    fft_length: &[i64],
    out: DType,
) -> Result<Tensor> {
    let k = fft_length.len();
    check_rank(x, k)?;
    let fft = lengths(fft_length, k)?;
    let rank = x.rank();
    let in_dims = x.dims();
    for (i, &n) in fft.iter().enumerate() {
        let idx = rank - k + i;
        if in_dims[idx] != 0 && in_dims[idx] < n {
            return Err(Error::invalid_argument(format!(
                "Input dimension {idx} must have length of at least {n} but got: {}",
                in_dims[idx]
            )));
        }
    }
    let mut out_dims = in_dims.to_vec();
    out_dims[rank - k..].copy_from_slice(&fft);
    let last = fft[k - 1];
    out_dims[rank - 1] = if last == 0 { 0 } else { last / 2 + 1 };
    let data = match (x.dtype(), out) {
        (DType::Float32, DType::Complex64) => {
            Tensor::check_allocation(op, out, &out_dims)?;
            Complex::<f32>::wrap(r2c_impl(
                &plans.single,
                x.as_slice::<f32>()?,
                in_dims,
                &fft,
                &out_dims,
            ))
        }
        (DType::Float64, DType::Complex128) => {
            Tensor::check_allocation(op, out, &out_dims)?;
            Complex::<f64>::wrap(r2c_impl(
                &plans.double,
                x.as_slice::<f64>()?,
                in_dims,
                &fft,
                &out_dims,
            ))
        }
        (a, b) => {
            return Err(Error::invalid_argument(format!(
                "Wrong types for forward real FFT: in={} out={}",
                enum_of(a),
                enum_of(b)
            )))
        }
    };
    Tensor::new(Shape::new(&out_dims), data)
}

/// TensorFlow's `IRFFT`, `IRFFT2D`, `IRFFT3D` and `IRFFTND`: the real
/// signal of length `fft_length` (per transformed dimension) whose
/// non-negative frequencies are the innermost `fft_length[-1] / 2 + 1`
/// entries of `x`; the other transformed dimensions are cropped to their
/// `fft_length`. The imaginary parts of the DC and (even lengths) Nyquist
/// terms are ignored. `out` is the `Treal` attr.
pub fn irfft(
    plans: &FftPlans,
    op: &str,
    x: &Tensor,
    fft_length: &[i64],
    out: DType,
) -> Result<Tensor> {
    let k = fft_length.len();
    check_rank(x, k)?;
    let fft = lengths(fft_length, k)?;
    let rank = x.rank();
    let in_dims = x.dims();
    for (i, &n) in fft.iter().enumerate() {
        let idx = rank - k + i;
        let need = if i == k - 1 { n / 2 + 1 } else { n };
        if in_dims[idx] != 0 && in_dims[idx] < need {
            return Err(Error::invalid_argument(format!(
                "Input dimension {idx} must have length of at least {need} but got: {}",
                in_dims[idx]
            )));
        }
    }
    let mut out_dims = in_dims.to_vec();
    out_dims[rank - k..].copy_from_slice(&fft);
    let data = match (x.dtype(), out) {
        (DType::Complex64, DType::Float32) => {
            Tensor::check_allocation(op, out, &out_dims)?;
            f32::wrap(c2r_impl(
                &plans.single,
                x.as_slice::<Complex<f32>>()?,
                in_dims,
                &fft,
                &out_dims,
            ))
        }
        (DType::Complex128, DType::Float64) => {
            Tensor::check_allocation(op, out, &out_dims)?;
            f64::wrap(c2r_impl(
                &plans.double,
                x.as_slice::<Complex<f64>>()?,
                in_dims,
                &fft,
                &out_dims,
            ))
        }
        (a, b) => {
            return Err(Error::invalid_argument(format!(
                "Wrong types for backward real FFT: in={} out={}",
                enum_of(a),
                enum_of(b)
            )))
        }
    };
    Tensor::new(Shape::new(&out_dims), data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The DFT by its definition, in f64: over the innermost `k` axes of
    /// `x` (shape `dims`), `sign` -1 forward, +1 inverse (unscaled).
    fn naive(x: &[Complex<f64>], dims: &[usize], k: usize, sign: f64) -> Vec<Complex<f64>> {
        let mut data = x.to_vec();
        let rank = dims.len();
        for axis in rank - k..rank {
            let n = dims[axis];
            let inner = product(&dims[axis + 1..]);
            let outer = product(&dims[..axis]);
            let mut next = data.clone();
            for o in 0..outer {
                for c in 0..inner {
                    for f in 0..n {
                        let mut acc = Complex::new(0.0, 0.0);
                        for t in 0..n {
                            let angle =
                                sign * 2.0 * std::f64::consts::PI * ((f * t) % n) as f64 / n as f64;
                            acc += data[(o * n + t) * inner + c] * Complex::from_polar(1.0, angle);
                        }
                        next[(o * n + f) * inner + c] = acc;
                    }
                }
            }
            data = next;
        }
        data
    }

    /// Deterministic test values.
    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
            })
            .collect()
    }

    fn complex_values(n: usize, seed: u64) -> Vec<Complex<f64>> {
        let re = values(n, seed);
        let im = values(n, seed + 1);
        re.into_iter()
            .zip(im)
            .map(|(r, i)| Complex::new(r, i))
            .collect()
    }

    fn close(a: &[Complex<f64>], b: &[Complex<f64>], tol: f64) {
        assert_eq!(a.len(), b.len());
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                (x - y).norm() <= tol * (1.0 + y.norm()),
                "element {i}: {x} vs {y}"
            );
        }
    }

    fn c128(dims: &[usize], v: Vec<Complex<f64>>) -> Tensor {
        Tensor::from_vec(Shape::new(dims), v).unwrap()
    }

    #[test]
    fn complex_transforms_match_the_definition() {
        let plans = FftPlans::default();
        // Odd, even, prime and power-of-two lengths, batched.
        for (dims, k) in [
            (vec![3, 8], 1),
            (vec![2, 7], 1),
            (vec![5, 12], 1),
            (vec![1], 1),
            (vec![4, 6, 5], 2),
            (vec![2, 3, 4, 5], 3),
            (vec![11, 13], 2),
        ] {
            let x = complex_values(product(&dims), 7);
            let want = naive(&x, &dims, k, -1.0);
            let got = fft(&plans, "FFT", c128(&dims, x.clone()), k, false).unwrap();
            close(got.as_slice::<Complex<f64>>().unwrap(), &want, 1e-12);
            let n = product(&dims[dims.len() - k..]) as f64;
            let want_inv: Vec<_> = naive(&x, &dims, k, 1.0)
                .into_iter()
                .map(|z| z / n)
                .collect();
            let got = fft(&plans, "IFFT", c128(&dims, x), k, true).unwrap();
            close(got.as_slice::<Complex<f64>>().unwrap(), &want_inv, 1e-12);
        }
    }

    #[test]
    fn parallel_paths_match_the_serial_ones() {
        // Large enough for the threaded row and column passes.
        let plans = FftPlans::default();
        let dims = [3, 96, 160];
        let x = complex_values(product(&dims), 3);
        let got = fft(&plans, "FFT2D", c128(&dims, x.clone()), 2, false).unwrap();
        let got = got.as_slice::<Complex<f64>>().unwrap();
        for b in 0..3 {
            let one = &x[b * 96 * 160..(b + 1) * 96 * 160];
            let want = naive(one, &[96, 160], 2, -1.0);
            close(&got[b * 96 * 160..(b + 1) * 96 * 160], &want, 1e-11);
        }
    }

    #[test]
    fn shared_inputs_are_copied_and_give_the_same_bits() {
        // A tensor another handle shares is transformed into a new buffer
        // (the copy fused with the first pass), a unique one in place.
        let plans = FftPlans::default();
        for (dims, k) in [
            (vec![40, 1000], 1),
            (vec![3, 96, 160], 2),
            (vec![2, 5, 7], 3),
        ] {
            let x = c128(&dims, complex_values(product(&dims), 13));
            let keep = x.clone();
            let copied = fft(&plans, "IFFT", x, k, true).unwrap();
            let unique = Tensor::from_vec(
                Shape::new(&dims),
                keep.as_slice::<Complex<f64>>().unwrap().to_vec(),
            )
            .unwrap();
            let in_place = fft(&plans, "IFFT", unique, k, true).unwrap();
            assert_eq!(
                copied.as_slice::<Complex<f64>>().unwrap(),
                in_place.as_slice::<Complex<f64>>().unwrap()
            );
            // The shared input is untouched.
            let again = complex_values(product(&dims), 13);
            assert_eq!(keep.as_slice::<Complex<f64>>().unwrap(), again.as_slice());
        }
    }

    #[test]
    fn single_precision_is_close() {
        let plans = FftPlans::default();
        let dims = [4, 30];
        let x = complex_values(120, 5);
        let x32: Vec<Complex<f32>> = x
            .iter()
            .map(|z| Complex::new(z.re as f32, z.im as f32))
            .collect();
        let got = fft(
            &plans,
            "FFT",
            Tensor::from_vec(Shape::new(&dims), x32).unwrap(),
            1,
            false,
        )
        .unwrap();
        let got: Vec<Complex<f64>> = got
            .as_slice::<Complex<f32>>()
            .unwrap()
            .iter()
            .map(|z| Complex::new(z.re as f64, z.im as f64))
            .collect();
        close(&got, &naive(&x, &dims, 1, -1.0), 1e-5);
    }

    #[test]
    fn real_transforms_crop_and_match_the_definition() {
        let plans = FftPlans::default();
        // Input [2, 5, 9] cropped to fft_length [4, 7] (2-D) and [6] (1-D).
        let dims = [2, 5, 9];
        let x = values(product(&dims), 11);
        let t = Tensor::from_vec(Shape::new(&dims), x.clone()).unwrap();
        let got = rfft(&plans, "RFFT2D", &t, &[4, 7], DType::Complex128).unwrap();
        assert_eq!(got.dims(), &[2, 4, 4]);
        let cropped: Vec<Complex<f64>> = resize(&x, &dims, &[2, 4, 7])
            .into_iter()
            .map(|r| Complex::new(r, 0.0))
            .collect();
        let full = naive(&cropped, &[2, 4, 7], 2, -1.0);
        let want: Vec<_> = resize(&full, &[2, 4, 7], &[2, 4, 4]);
        close(got.as_slice::<Complex<f64>>().unwrap(), &want, 1e-12);

        let got = rfft(&plans, "RFFT", &t, &[6], DType::Complex128).unwrap();
        assert_eq!(got.dims(), &[2, 5, 4]);
        let cropped: Vec<Complex<f64>> = resize(&x, &dims, &[2, 5, 6])
            .into_iter()
            .map(|r| Complex::new(r, 0.0))
            .collect();
        let want = resize(
            &naive(&cropped, &[2, 5, 6], 1, -1.0),
            &[2, 5, 6],
            &[2, 5, 4],
        );
        close(got.as_slice::<Complex<f64>>().unwrap(), &want, 1e-12);
    }

    #[test]
    fn inverse_real_transforms_invert_and_ignore_dc_imaginary_parts() {
        let plans = FftPlans::default();
        for (dims, fft_len) in [
            (vec![3, 8], vec![8]),
            (vec![3, 7], vec![7]),
            (vec![2, 6, 10], vec![6, 10]),
            (vec![2, 3, 5, 7], vec![3, 5, 7]),
        ] {
            let x = values(product(&dims), 2);
            let t = Tensor::from_vec(Shape::new(&dims), x.clone()).unwrap();
            let lens: Vec<i64> = fft_len.iter().map(|&v| v as i64).collect();
            let spec = rfft(&plans, "RFFT", &t, &lens, DType::Complex128).unwrap();
            let back = irfft(&plans, "IRFFT", &spec, &lens, DType::Float64).unwrap();
            assert_eq!(back.dims(), dims.as_slice());
            for (a, b) in back.as_slice::<f64>().unwrap().iter().zip(&x) {
                assert!((a - b).abs() < 1e-12, "{a} vs {b}");
            }
        }
        // [1+5j, 2+1j, 3+7j] at length 4: the imaginary parts of the DC and
        // Nyquist terms do not count.
        let z = vec![
            Complex::new(1.0, 5.0),
            Complex::new(2.0, 1.0),
            Complex::new(3.0, 7.0),
        ];
        let got = irfft(&plans, "IRFFT", &c128(&[3], z), &[4], DType::Float64).unwrap();
        let want = [2.0, -1.0, 0.0, 0.0];
        for (a, b) in got.as_slice::<f64>().unwrap().iter().zip(want) {
            assert!((a - b).abs() < 1e-15, "{a} vs {b}");
        }
    }

    #[test]
    fn fft_nd_pads_and_crops() {
        let plans = FftPlans::default();
        let dims = [2, 3, 4];
        let x = complex_values(24, 9);
        let got = fft_nd(&plans, "FFTND", c128(&dims, x.clone()), &[5, 2], false).unwrap();
        assert_eq!(got.dims(), &[2, 5, 2]);
        let resized = resize(&x, &dims, &[2, 5, 2]);
        close(
            got.as_slice::<Complex<f64>>().unwrap(),
            &naive(&resized, &[2, 5, 2], 2, -1.0),
            1e-12,
        );
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        let plans = FftPlans::default();
        let x = Tensor::from_vec(Shape::new(&[10]), vec![0.0f32; 10]).unwrap();
        let msg = |r: Result<Tensor>| r.unwrap_err().to_string();
        assert!(msg(rfft(&plans, "RFFT", &x, &[12], DType::Complex64))
            .contains("Input dimension 0 must have length of at least 12 but got: 10"));
        assert!(msg(rfft(&plans, "RFFT", &x, &[-2], DType::Complex64))
            .contains("fft_length[0] must >= 0, but got: -2"));
        assert!(msg(rfft(&plans, "RFFT", &x, &[4], DType::Complex128))
            .contains("Wrong types for forward real FFT: in=1 out=18"));
        assert!(msg(rfft(&plans, "RFFT2D", &x, &[2, 2], DType::Complex64))
            .contains("Input must have rank of at least 2 but got: [10]"));
        assert!(msg(fft(&plans, "FFT", x, 1, false)).contains("complex64 or complex128"));
    }

    #[test]
    fn empty_and_zero_lengths() {
        let plans = FftPlans::default();
        let x = Tensor::from_vec(Shape::new(&[3, 0]), Vec::<f32>::new()).unwrap();
        let got = rfft(&plans, "RFFT", &x, &[4], DType::Complex64).unwrap();
        assert_eq!(got.dims(), &[3, 3]);
        assert!(got
            .as_slice::<Complex<f32>>()
            .unwrap()
            .iter()
            .all(|z| *z == Complex::new(0.0, 0.0)));
        let x = Tensor::from_vec(Shape::new(&[5]), vec![1.0f32; 5]).unwrap();
        let got = rfft(&plans, "RFFT", &x, &[0], DType::Complex64).unwrap();
        assert_eq!(got.dims(), &[0]);
        let z = Tensor::from_vec(Shape::new(&[0, 4]), Vec::<Complex<f32>>::new()).unwrap();
        assert_eq!(fft(&plans, "FFT", z, 1, false).unwrap().dims(), &[0, 4]);
    }
}
