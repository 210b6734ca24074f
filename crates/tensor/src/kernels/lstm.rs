//! The fused LSTM over a whole sequence: TensorFlow's `BlockLSTM` and
//! `BlockLSTMV2` (forward) and `BlockLSTMGrad` / `BlockLSTMGradV2`
//! (backward), float32.
//!
//! One step of the cell, for a batch row, with `[x_t, h_{t-1}] @ w + b`
//! split into four gate blocks of `cell` columns (`i, ci, f, o` for the
//! first version, `i, f, ci, o` for V2):
//!
//! ```text
//! i  = sigmoid(gate_i + cs_{t-1} * wci)            (peephole terms only
//! f  = sigmoid(gate_f + forget_bias + cs_{t-1} * wcf)  with use_peephole)
//! ci = tanh(gate_ci)
//! cs = ci * i + cs_{t-1} * f       (then clipped to ±cell_clip when > 0)
//! co = tanh(cs)
//! o  = sigmoid(gate_o + cs * wco)
//! h  = co * o
//! ```
//!
//! V2 has no `forget_bias` (it is 0). Steps at or past `seq_len_max`
//! output zeros. The backward pass is TensorFlow's: the gradient ignores
//! the clip, and only `cs_grad` and `h_grad` flow in.
//!
//! Why fused: a `while_loop` over the cell multiplies `[x_t, h_{t-1}]` by
//! the whole weight at every step, and its gradient forms one `k = batch`
//! weight-gradient product per step. Here only the recurrent half runs per
//! step:
//! - forward: `x @ w_x` for all steps is one product before the loop; each
//!   step adds `h_{t-1} @ w_h`. The recurrent weight is copied once,
//!   transposed and grouped by blocks of units, so each step's product runs
//!   in the dot-product layout and each thread of the kernel team reads only
//!   its own units' columns (which then stay in its L2 cache).
//! - backward: each step forms `dh_{t-1} = dgates_t @ w_h^T` only; after the
//!   loop, `dx = dgates @ w_x^T`, `dw = [x, h_prev]^T @ dgates` and `db` are
//!   each one product (or sum) over all steps at once.
//!
//! Each step is one job of the kernel team: task `k` owns a block of units
//! and computes their four gate columns, then their gate math, so no
//! intermediate crosses threads within a step. Every output element is
//! computed whole by one task, in an order fixed by the problem, so the
//! results do not depend on the thread count.

use super::matmul::{sgemm_serial, sgemm_team, F32Gemm, Mat};
use crate::{bail, team, DType, Error, Result, Tensor};

/// Where the four gates sit among the weight's column blocks.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GateLayout {
    /// `BlockLSTM`: input, cell input, forget, output.
    Icfo,
    /// `BlockLSTMV2`: input, forget, cell input, output.
    Ifco,
}

impl GateLayout {
    /// The column block (in units of `cell` columns) of gates `i, ci, f, o`.
    fn blocks(self) -> [usize; 4] {
        match self {
            GateLayout::Icfo => [0, 1, 2, 3],
            GateLayout::Ifco => [0, 2, 1, 3],
        }
    }
}

/// The forward op's attributes.
#[derive(Copy, Clone, Debug)]
pub struct LstmParams {
    pub forget_bias: f32,
    /// Clip `cs` to `[-cell_clip, cell_clip]` when positive.
    pub cell_clip: f32,
    pub use_peephole: bool,
    pub layout: GateLayout,
}

/// The seven `[time, batch, cell]` outputs of the forward op.
pub struct LstmOutputs {
    pub i: Tensor,
    pub cs: Tensor,
    pub f: Tensor,
    pub o: Tensor,
    pub ci: Tensor,
    pub co: Tensor,
    pub h: Tensor,
}

/// The eight outputs of the gradient op, shaped as the matching inputs.
pub struct LstmGrads {
    pub x: Tensor,
    pub cs_prev: Tensor,
    pub h_prev: Tensor,
    pub w: Tensor,
    pub wci: Tensor,
    pub wcf: Tensor,
    pub wco: Tensor,
    pub b: Tensor,
}

/// The forward op's inputs after `seq_len_max`.
pub struct LstmInputs<'a> {
    pub x: &'a Tensor,
    pub cs_prev: &'a Tensor,
    pub h_prev: &'a Tensor,
    pub w: &'a Tensor,
    pub wci: &'a Tensor,
    pub wcf: &'a Tensor,
    pub wco: &'a Tensor,
    pub b: &'a Tensor,
}

/// The forward op's outputs and the gradients arriving at `cs` and `h`: the
/// gradient op's inputs after the forward op's.
pub struct LstmBackInputs<'a> {
    pub i: &'a Tensor,
    pub cs: &'a Tensor,
    pub f: &'a Tensor,
    pub o: &'a Tensor,
    pub ci: &'a Tensor,
    pub co: &'a Tensor,
    pub h: &'a Tensor,
    pub cs_grad: &'a Tensor,
    pub h_grad: &'a Tensor,
}

/// Sizes of one problem: `time` steps of which the first `steps` run.
#[derive(Copy, Clone, Debug)]
struct Dims {
    time: usize,
    batch: usize,
    input: usize,
    cell: usize,
    steps: usize,
}

/// Units per task of a step (a multiple of 16 lanes; a 256-unit cell makes
/// four tasks, two per core on two cores).
const UNIT_BLOCK: usize = 64;

fn float32<'a>(op: &str, name: &str, t: &'a Tensor) -> Result<&'a [f32]> {
    match t.dtype() {
        DType::Float32 => t.as_slice::<f32>(),
        DType::Float16 => Err(Error::unimplemented(format!(
            "{op}: float16 is not supported yet (input {name}); use float32"
        ))),
        d => Err(Error::invalid_argument(format!(
            "{op}: input {name} must be float32 (or float16), got {d}"
        ))),
    }
}

/// Checks shapes as TensorFlow's kernel does (same messages) and reads
/// `seq_len_max`.
fn dims(op: &str, seq_len_max: &Tensor, a: &LstmInputs<'_>) -> Result<Dims> {
    if seq_len_max.rank() != 0 || seq_len_max.dtype() != DType::Int64 {
        bail!(
            invalid_argument,
            "{op}: seq_len_max must be an int64 scalar, got {} of shape {}",
            seq_len_max.dtype(),
            seq_len_max.shape()
        );
    }
    let x = a.x.dims();
    if x.len() != 3 {
        bail!(invalid_argument, "{op}: x must be 3D");
    }
    let (time, batch, input) = (x[0], x[1], x[2]);
    let rank2 = |t: &Tensor, name: &str| -> Result<()> {
        if t.rank() != 2 {
            bail!(invalid_argument, "{op}: {name} must be 2D");
        }
        Ok(())
    };
    rank2(a.cs_prev, "cs_prev")?;
    let cs = a.cs_prev.dims();
    if cs[0] != batch {
        bail!(
            invalid_argument,
            "{op}: cs_prev.dims(0) != batch_size: {} vs. {batch}",
            cs[0]
        );
    }
    let cell = cs[1];
    rank2(a.h_prev, "h_prev")?;
    let h = a.h_prev.dims();
    if h[0] != batch {
        bail!(
            invalid_argument,
            "{op}: h_prev.dims(0) != batch_size: {} vs. {batch}",
            h[0]
        );
    }
    if h[1] != cell {
        bail!(
            invalid_argument,
            "{op}: h_prev.dims(1) != cell_size: {} vs. {cell}",
            h[1]
        );
    }
    rank2(a.w, "w")?;
    let w = a.w.dims();
    if w[0] != input + cell {
        bail!(
            invalid_argument,
            "{op}: w.dim_size(0) != input_size + cell_size: {} vs. {}",
            w[0],
            input + cell
        );
    }
    if w[1] != cell * 4 {
        bail!(
            invalid_argument,
            "{op}: w.dim_size(1) != cell_size * 4: {} vs. {}",
            w[1],
            cell * 4
        );
    }
    for (t, name) in [(a.wci, "wci"), (a.wcf, "wcf"), (a.wco, "wco")] {
        if t.rank() != 1 {
            bail!(invalid_argument, "{op}: {name} must be 1D");
        }
        if t.dims()[0] != cell {
            bail!(
                invalid_argument,
                "{op}: {name}.dim_size(0) != cell_size: {} vs. {cell}",
                t.dims()[0]
            );
        }
    }
    if a.b.rank() != 1 {
        bail!(invalid_argument, "{op}: b must be 1D");
    }
    if a.b.dims()[0] != cell * 4 {
        bail!(
            invalid_argument,
            "{op}: b.dim_size(0) != cell_size * 4: {} vs. {}",
            a.b.dims()[0],
            cell * 4
        );
    }
    let steps = seq_len_max.scalar_i64()?;
    if steps < 0 || steps as u64 > time as u64 {
        bail!(
            invalid_argument,
            "{op}: seq_len_max must be in [0, {time}] (the time steps of x), got {steps}"
        );
    }
    Ok(Dims {
        time,
        batch,
        input,
        cell,
        steps: steps as usize,
    })
}

/// A raw pointer that crosses into the team's tasks; each task writes only
/// its own units' elements through it.
#[derive(Copy, Clone)]
struct Shared(*mut f32);
// SAFETY: tasks write disjoint elements; reads of other tasks' elements
// happen only after the job that wrote them has ended.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    fn of(v: &mut [f32]) -> Shared {
        Shared(v.as_mut_ptr())
    }

    /// `len` elements from `start`.
    ///
    /// # Safety
    /// The range must lie inside the buffer, which must outlive the slice,
    /// and no one else may access it while the slice lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn part(&self, start: usize, len: usize) -> &mut [f32] {
        std::slice::from_raw_parts_mut(self.0.add(start), len)
    }

    /// `len` elements from `start`, read-only.
    ///
    /// # Safety
    /// The range must lie inside the buffer, which must outlive the slice,
    /// and no one may write it while the slice lives.
    unsafe fn read(&self, start: usize, len: usize) -> &[f32] {
        std::slice::from_raw_parts(self.0.add(start), len)
    }
}

/// The unit range of task `k`.
fn unit_range(cell: usize, k: usize) -> (usize, usize) {
    let u0 = k * UNIT_BLOCK;
    (u0, (u0 + UNIT_BLOCK).min(cell))
}

fn tensor(dims: &[usize], v: Vec<f32>) -> Result<Tensor> {
    Tensor::from_vec(dims.to_vec(), v)
}

/// `BlockLSTM` (layout [`GateLayout::Icfo`]) or `BlockLSTMV2`
/// ([`GateLayout::Ifco`]) over `seq_len_max` steps of `x`.
pub fn block_lstm(
    op: &str,
    seq_len_max: &Tensor,
    a: &LstmInputs<'_>,
    p: &LstmParams,
) -> Result<LstmOutputs> {
    let d = dims(op, seq_len_max, a)?;
    let x = float32(op, "x", a.x)?;
    let cs_prev = float32(op, "cs_prev", a.cs_prev)?;
    let h_prev = float32(op, "h_prev", a.h_prev)?;
    let w = float32(op, "w", a.w)?;
    let wci = float32(op, "wci", a.wci)?;
    let wcf = float32(op, "wcf", a.wcf)?;
    let wco = float32(op, "wco", a.wco)?;
    let b = float32(op, "b", a.b)?;
    let n = d.time * d.batch * d.cell;
    let mut out: [Vec<f32>; 7] = std::array::from_fn(|_| vec![0f32; n]);
    if d.steps > 0 && d.batch > 0 && d.cell > 0 {
        forward(&d, x, cs_prev, h_prev, w, [wci, wcf, wco], b, p, &mut out);
    }
    let shape = [d.time, d.batch, d.cell];
    let [i, cs, f, o, ci, co, h] = out;
    Ok(LstmOutputs {
        i: tensor(&shape, i)?,
        cs: tensor(&shape, cs)?,
        f: tensor(&shape, f)?,
        o: tensor(&shape, o)?,
        ci: tensor(&shape, ci)?,
        co: tensor(&shape, co)?,
        h: tensor(&shape, h)?,
    })
}

/// Slots of `cs` and `h` among the outputs (in the op's order: i, cs, f,
/// o, ci, co, h).
const CS: usize = 1;
const H: usize = 6;

#[allow(clippy::too_many_arguments)]
fn forward(
    d: &Dims,
    x: &[f32],
    cs_prev: &[f32],
    h_prev: &[f32],
    w: &[f32],
    peep: [&[f32]; 3],
    b: &[f32],
    p: &LstmParams,
    out: &mut [Vec<f32>; 7],
) {
    let (batch, input, cell, steps) = (d.batch, d.input, d.cell, d.steps);
    let g4 = 4 * cell;
    let rows = steps * batch;
    // The input half of every step's gates at once.
    let mut gx = vec![0f32; rows * g4];
    sgemm_team(
        rows,
        input,
        g4,
        &x[..rows * input],
        Mat {
            rs: input as isize,
            cs: 1,
        },
        &w[..input * g4],
        Mat {
            rs: g4 as isize,
            cs: 1,
        },
        &mut gx,
    );
    let tasks = cell.div_ceil(UNIT_BLOCK);
    let w_h = &w[input * g4..];
    let h_layout = Mat {
        rs: cell as isize,
        cs: 1,
    };
    let wt_layout = Mat {
        rs: 1,
        cs: cell as isize,
    };
    let lib = F32Gemm::for_product(batch, cell, g4, h_layout, wt_layout);
    let panels = lib == F32Gemm::Dot;
    // Block k's share of the recurrent weight: its four gates' columns of
    // w_h (column s * wk + u - u0 of the block is column s * cell + u of
    // w_h), as panels for the broadcast kernel on AVX-512, else transposed
    // (4 * wk rows of `cell` floats) for the dot-product layout.
    let mut wblocks: Vec<Vec<f32>> = vec![Vec::new(); tasks];
    team::for_each_mut_sweep(&mut wblocks, team::Sweep::Forward, |k, dst| {
        let (u0, u1) = unit_range(cell, k);
        let wk = u1 - u0;
        let col = |c: usize| (c / wk) * cell + u0 + c % wk;
        if panels {
            *dst = panel::pack(cell, 4 * wk, |l, c| w_h[l * g4 + col(c)]);
        } else {
            *dst = vec![0f32; 4 * wk * cell];
            // Row by row of w_h, so its reads run along memory.
            for j in 0..cell {
                for c in 0..4 * wk {
                    dst[c * cell + j] = w_h[j * g4 + col(c)];
                }
            }
        }
    });
    // Each task's gate block of a step: [batch, 4 * wk] from 4 * batch * u0.
    let mut scratch = vec![0f32; batch * g4];
    let scratch_ptr = Shared::of(&mut scratch);
    let ptrs: [Shared; 7] = std::array::from_fn(|j| Shared::of(&mut out[j]));
    let [gi, gci, gf, go] = p.layout.blocks();
    let step_len = batch * cell;
    for t in 0..steps {
        team::run(tasks, |k| {
            let (u0, u1) = unit_range(cell, k);
            let wk = u1 - u0;
            // SAFETY: step t-1's outputs were written by the previous job;
            // this job writes only step t.
            let h_in = if t == 0 {
                h_prev
            } else {
                unsafe { ptrs[H].read((t - 1) * step_len, step_len) }
            };
            // SAFETY: task k alone uses its block of the scratch buffer.
            let sc = unsafe { scratch_ptr.part(4 * batch * u0, 4 * batch * wk) };
            let wb = &wblocks[k];
            if panels {
                // SAFETY: `sc` is this task's batch x 4wk block.
                unsafe {
                    panel::product(batch, cell, 4 * wk, h_in, cell, wb, sc.as_mut_ptr(), 4 * wk)
                };
            } else {
                // SAFETY: `h_in` is batch x cell, `wb` 4wk rows of cell, and
                // `sc` batch x 4wk.
                unsafe {
                    sgemm_serial(
                        lib,
                        batch,
                        cell,
                        4 * wk,
                        h_in.as_ptr(),
                        h_layout,
                        wb.as_ptr(),
                        wt_layout,
                        sc.as_mut_ptr(),
                        (4 * wk) as isize,
                        false,
                    )
                };
            }
            for r in 0..batch {
                let row = &mut sc[r * 4 * wk..][..4 * wk];
                let gxr = &gx[(t * batch + r) * g4..][..g4];
                for s in 0..4 {
                    let col = s * cell + u0;
                    let acc = &mut row[s * wk..][..wk];
                    for ((v, &gv), &bv) in acc.iter_mut().zip(&gxr[col..]).zip(&b[col..]) {
                        *v += gv + bv;
                    }
                }
                let at = (t * batch + r) * cell + u0;
                let csp = if t == 0 {
                    &cs_prev[r * cell + u0..][..wk]
                } else {
                    // SAFETY: written by the previous job.
                    unsafe { ptrs[CS].read(at - step_len, wk) }
                };
                // SAFETY: row r, units u0..u1 of step t belong to task k.
                let [i, cs, f, o, ci, co, h] =
                    std::array::from_fn::<_, 7, _>(|j| unsafe { ptrs[j].part(at, wk) });
                let gate = |s: usize| &row[s * wk..][..wk];
                i.copy_from_slice(gate(gi));
                f.copy_from_slice(gate(gf));
                if p.use_peephole {
                    let (wci, wcf) = (&peep[0][u0..u1], &peep[1][u0..u1]);
                    for u in 0..wk {
                        i[u] += csp[u] * wci[u];
                        f[u] += csp[u] * wcf[u];
                    }
                }
                for v in f.iter_mut() {
                    *v += p.forget_bias;
                }
                act::sigmoid(i);
                act::sigmoid(f);
                ci.copy_from_slice(gate(gci));
                act::tanh(ci);
                for u in 0..wk {
                    cs[u] = ci[u] * i[u] + csp[u] * f[u];
                }
                if p.cell_clip > 0.0 {
                    let c = p.cell_clip;
                    for v in cs.iter_mut() {
                        *v = v.clamp(-c, c);
                    }
                }
                co.copy_from_slice(cs);
                act::tanh(co);
                o.copy_from_slice(gate(go));
                if p.use_peephole {
                    let wco = &peep[2][u0..u1];
                    for u in 0..wk {
                        o[u] += cs[u] * wco[u];
                    }
                }
                act::sigmoid(o);
                for u in 0..wk {
                    h[u] = co[u] * o[u];
                }
            }
        });
    }
}

/// `BlockLSTMGrad` (layout [`GateLayout::Icfo`]) or `BlockLSTMGradV2`
/// ([`GateLayout::Ifco`]).
pub fn block_lstm_grad(
    op: &str,
    seq_len_max: &Tensor,
    a: &LstmInputs<'_>,
    g: &LstmBackInputs<'_>,
    use_peephole: bool,
    layout: GateLayout,
) -> Result<LstmGrads> {
    let d = dims(op, seq_len_max, a)?;
    let seq = [d.time, d.batch, d.cell];
    let named = [
        (g.i, "i"),
        (g.cs, "cs"),
        (g.f, "f"),
        (g.o, "o"),
        (g.ci, "ci"),
        (g.co, "co"),
        (g.h, "h"),
        (g.cs_grad, "cs_grad"),
        (g.h_grad, "h_grad"),
    ];
    let mut fwd: Vec<&[f32]> = Vec::with_capacity(9);
    for (t, name) in named {
        if t.dims() != seq {
            bail!(
                invalid_argument,
                "{op}: {name} must have shape [{}, {}, {}] (time, batch, cell), got {}",
                d.time,
                d.batch,
                d.cell,
                t.shape()
            );
        }
        fwd.push(float32(op, name, t)?);
    }
    let x = float32(op, "x", a.x)?;
    let cs_prev = float32(op, "cs_prev", a.cs_prev)?;
    let h_prev = float32(op, "h_prev", a.h_prev)?;
    let w = float32(op, "w", a.w)?;
    let peep = [
        float32(op, "wci", a.wci)?,
        float32(op, "wcf", a.wcf)?,
        float32(op, "wco", a.wco)?,
    ];
    float32(op, "b", a.b)?;
    let (batch, input, cell) = (d.batch, d.input, d.cell);
    let g4 = 4 * cell;
    let mut dx = vec![0f32; d.time * batch * input];
    let mut dcs_prev = vec![0f32; batch * cell];
    let mut dh_prev = vec![0f32; batch * cell];
    let mut dw = vec![0f32; (input + cell) * g4];
    let mut dpeep: [Vec<f32>; 3] = std::array::from_fn(|_| vec![0f32; cell]);
    let mut db = vec![0f32; g4];
    if d.steps > 0 && batch > 0 && cell > 0 {
        let fwd: [&[f32]; 9] = std::array::from_fn(|j| fwd[j]);
        let mut out = BackOut {
            dx: &mut dx,
            dcs_prev: &mut dcs_prev,
            dh_prev: &mut dh_prev,
            dw: &mut dw,
            dpeep: &mut dpeep,
            db: &mut db,
        };
        backward(
            &d,
            x,
            cs_prev,
            h_prev,
            w,
            peep,
            fwd,
            use_peephole,
            layout,
            &mut out,
        );
    }
    let [wci, wcf, wco] = dpeep;
    Ok(LstmGrads {
        x: tensor(&[d.time, batch, input], dx)?,
        cs_prev: tensor(&[batch, cell], dcs_prev)?,
        h_prev: tensor(&[batch, cell], dh_prev)?,
        w: tensor(&[input + cell, g4], dw)?,
        wci: tensor(&[cell], wci)?,
        wcf: tensor(&[cell], wcf)?,
        wco: tensor(&[cell], wco)?,
        b: tensor(&[g4], db)?,
    })
}

struct BackOut<'a> {
    dx: &'a mut [f32],
    dcs_prev: &'a mut [f32],
    dh_prev: &'a mut [f32],
    dw: &'a mut [f32],
    dpeep: &'a mut [Vec<f32>; 3],
    db: &'a mut [f32],
}

#[allow(clippy::too_many_arguments)]
fn backward<'a>(
    d: &Dims,
    x: &[f32],
    cs_prev: &[f32],
    h_prev: &[f32],
    w: &[f32],
    peep: [&[f32]; 3],
    fwd: [&'a [f32]; 9],
    use_peephole: bool,
    layout: GateLayout,
    out: &mut BackOut<'_>,
) {
    let (batch, input, cell, steps) = (d.batch, d.input, d.cell, d.steps);
    let g4 = 4 * cell;
    let rows = steps * batch;
    let step_len = batch * cell;
    let [fi, fcs, ff, fo, fci, fco, fh, cs_grad, h_grad] = fwd;
    // The gates' gradients of every step, in w's column order.
    let mut dg = vec![0f32; rows * g4];
    let dg_ptr = Shared::of(&mut dg);
    // dh arriving from step t + 1 (through w_h) and dcs from step t + 1.
    let mut dh_next = vec![0f32; step_len];
    let dh_ptr = Shared::of(&mut dh_next);
    let dcs_ptr = Shared::of(out.dcs_prev);
    let dpeep_ptr: [Shared; 3] = std::array::from_fn(|j| Shared::of(&mut out.dpeep[j]));
    let dg_layout = Mat {
        rs: g4 as isize,
        cs: 1,
    };
    // w_h^T: element (l, j) is w_h[j][l].
    let wht_layout = Mat {
        rs: 1,
        cs: g4 as isize,
    };
    let lib = F32Gemm::for_product(batch, g4, cell, dg_layout, wht_layout);
    let w_h = &w[input * g4..];
    let [gi, gci, gf, go] = layout.blocks();
    let tasks = cell.div_ceil(UNIT_BLOCK);
    // On AVX-512, block k's columns of w_h^T (rows u0..u1 of w_h) as panels
    // for the broadcast kernel.
    let panels = lib == F32Gemm::Dot;
    let mut wblocks: Vec<Vec<f32>> = vec![Vec::new(); tasks];
    if panels {
        team::for_each_mut_sweep(&mut wblocks, team::Sweep::Forward, |k, dst| {
            let (u0, u1) = unit_range(cell, k);
            *dst = panel::pack_columns(g4, u1 - u0, |u| &w_h[(u0 + u) * g4..][..g4]);
        });
    }
    for t in (0..steps).rev() {
        team::run(tasks, |k| {
            let (u0, u1) = unit_range(cell, k);
            let wk = u1 - u0;
            if t + 1 < steps && panels {
                // SAFETY: step t+1's gate gradients were written by the
                // previous job; this task alone writes columns u0..u1 of
                // dh_next.
                unsafe {
                    let dgn = dg_ptr.read((t + 1) * batch * g4, batch * g4);
                    let dhn = dh_ptr.0.add(u0);
                    panel::product(batch, g4, wk, dgn, g4, &wblocks[k], dhn, cell);
                }
            } else if t + 1 < steps {
                // SAFETY: as above; w_h's rows u0..u1 are in bounds.
                unsafe {
                    let dgn = dg_ptr.read((t + 1) * batch * g4, batch * g4);
                    sgemm_serial(
                        lib,
                        batch,
                        g4,
                        wk,
                        dgn.as_ptr(),
                        dg_layout,
                        w_h.as_ptr().add(u0 * g4),
                        wht_layout,
                        dh_ptr.0.add(u0),
                        cell as isize,
                        false,
                    );
                }
            }
            // SAFETY: units u0..u1 of the peephole gradients belong to task k.
            let dp: [&mut [f32]; 3] = std::array::from_fn(|j| unsafe { dpeep_ptr[j].part(u0, wk) });
            for r in 0..batch {
                let at = (t * batch + r) * cell + u0;
                let get = |v: &'a [f32]| &v[at..at + wk];
                let (i, cs, f, o, ci, co) =
                    (get(fi), get(fcs), get(ff), get(fo), get(fci), get(fco));
                let (csg, hg) = (get(cs_grad), get(h_grad));
                let csp = if t == 0 {
                    &cs_prev[r * cell + u0..][..wk]
                } else {
                    &fcs[at - step_len..][..wk]
                };
                // SAFETY: row r, units u0..u1 belong to task k (dh_next and
                // dcs carry, and step t's gate gradients of those units).
                let dhn = unsafe { dh_ptr.part(r * cell + u0, wk) };
                let dcsn = unsafe { dcs_ptr.part(r * cell + u0, wk) };
                let base = (t * batch + r) * g4 + u0;
                let [dgi, dgci, dgf, dgo] =
                    [gi, gci, gf, go].map(|s| unsafe { dg_ptr.part(base + s * cell, wk) });
                for u in 0..wk {
                    let dh = hg[u] + dhn[u];
                    let d_o = o[u] * (1.0 - o[u]) * dh * co[u];
                    let mut dcs = (1.0 - co[u] * co[u]) * dh * o[u] + csg[u] + dcsn[u];
                    if use_peephole {
                        dcs += d_o * peep[2][u0 + u];
                    }
                    let di = i[u] * (1.0 - i[u]) * dcs * ci[u];
                    let df = f[u] * (1.0 - f[u]) * dcs * csp[u];
                    let dci = (1.0 - ci[u] * ci[u]) * dcs * i[u];
                    dgi[u] = di;
                    dgci[u] = dci;
                    dgf[u] = df;
                    dgo[u] = d_o;
                    let mut carry = dcs * f[u];
                    if use_peephole {
                        carry += di * peep[0][u0 + u] + df * peep[1][u0 + u];
                        dp[0][u] += di * csp[u];
                        dp[1][u] += df * csp[u];
                        dp[2][u] += d_o * cs[u];
                    }
                    dcsn[u] = carry;
                }
            }
        });
    }
    // dh_prev = dgates_0 @ w_h^T.
    sgemm_team(
        batch,
        g4,
        cell,
        &dg[..batch * g4],
        dg_layout,
        w_h,
        wht_layout,
        out.dh_prev,
    );
    // dx = dgates @ w_x^T over every step at once (steps past seq_len_max
    // stay zero).
    sgemm_team(
        rows,
        g4,
        input,
        &dg,
        dg_layout,
        &w[..input * g4],
        wht_layout,
        &mut out.dx[..rows * input],
    );
    // dw = [x, h_prev]^T @ dgates, one product per half of w.
    sgemm_team(
        input,
        rows,
        g4,
        &x[..rows * input],
        Mat {
            rs: 1,
            cs: input as isize,
        },
        &dg,
        dg_layout,
        &mut out.dw[..input * g4],
    );
    let mut hp = vec![0f32; rows * cell];
    hp[..step_len].copy_from_slice(h_prev);
    hp[step_len..].copy_from_slice(&fh[..(steps - 1) * step_len]);
    sgemm_team(
        cell,
        rows,
        g4,
        &hp,
        Mat {
            rs: 1,
            cs: cell as isize,
        },
        &dg,
        dg_layout,
        &mut out.dw[input * g4..],
    );
    for row in dg.chunks_exact(g4) {
        for (acc, &v) in out.db.iter_mut().zip(row) {
            *acc += v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic values in [-scale, scale).
    fn values(n: usize, seed: u64, scale: f32) -> Vec<f32> {
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
            })
            .collect()
    }

    struct Case {
        t: usize,
        b: usize,
        n_in: usize,
        c: usize,
        steps: usize,
        p: LstmParams,
    }

    struct Data {
        x: Vec<f32>,
        cs0: Vec<f32>,
        h0: Vec<f32>,
        w: Vec<f32>,
        peep: [Vec<f32>; 3],
        b: Vec<f32>,
        cs_grad: Vec<f32>,
        h_grad: Vec<f32>,
    }

    fn data(k: &Case) -> Data {
        let (t, b, n_in, c) = (k.t, k.b, k.n_in, k.c);
        Data {
            x: values(t * b * n_in, 1, 1.0),
            cs0: values(b * c, 2, 1.0),
            h0: values(b * c, 3, 1.0),
            w: values((n_in + c) * 4 * c, 4, 0.4),
            peep: [values(c, 5, 0.5), values(c, 6, 0.5), values(c, 7, 0.5)],
            b: values(4 * c, 8, 0.5),
            cs_grad: values(t * b * c, 9, 1.0),
            h_grad: values(t * b * c, 10, 1.0),
        }
    }

    /// The forward outputs (i, cs, f, o, ci, co, h) in float64, step by step.
    fn reference_forward(k: &Case, d: &Data) -> [Vec<f64>; 7] {
        let (b, n_in, c) = (k.b, k.n_in, k.c);
        let g4 = 4 * c;
        let sig = |z: f64| 1.0 / (1.0 + (-z).exp());
        let [gi, gci, gf, go] = k.p.layout.blocks();
        let mut out: [Vec<f64>; 7] = std::array::from_fn(|_| vec![0.0; k.t * b * c]);
        let mut cs: Vec<f64> = d.cs0.iter().map(|&v| v as f64).collect();
        let mut h: Vec<f64> = d.h0.iter().map(|&v| v as f64).collect();
        for t in 0..k.steps {
            let (mut ncs, mut nh) = (vec![0.0; b * c], vec![0.0; b * c]);
            for r in 0..b {
                let gate = |col: usize| {
                    let mut s = d.b[col] as f64;
                    for j in 0..n_in {
                        s += d.x[(t * b + r) * n_in + j] as f64 * d.w[j * g4 + col] as f64;
                    }
                    for j in 0..c {
                        s += h[r * c + j] * d.w[(n_in + j) * g4 + col] as f64;
                    }
                    s
                };
                for u in 0..c {
                    let csp = cs[r * c + u];
                    let pe = |j: usize| {
                        if k.p.use_peephole {
                            d.peep[j][u] as f64
                        } else {
                            0.0
                        }
                    };
                    let i = sig(gate(gi * c + u) + csp * pe(0));
                    let f = sig(gate(gf * c + u) + k.p.forget_bias as f64 + csp * pe(1));
                    let ci = gate(gci * c + u).tanh();
                    let mut s = ci * i + csp * f;
                    if k.p.cell_clip > 0.0 {
                        s = s.clamp(-k.p.cell_clip as f64, k.p.cell_clip as f64);
                    }
                    let co = s.tanh();
                    let o = sig(gate(go * c + u) + s * pe(2));
                    let at = (t * b + r) * c + u;
                    for (j, v) in [i, s, f, o, ci, co, co * o].into_iter().enumerate() {
                        out[j][at] = v;
                    }
                    ncs[r * c + u] = s;
                    nh[r * c + u] = co * o;
                }
            }
            cs = ncs;
            h = nh;
        }
        out
    }

    fn tensors(k: &Case, d: &Data) -> (Tensor, Vec<Tensor>) {
        let (t, b, n_in, c) = (k.t, k.b, k.n_in, k.c);
        let v = |dims: &[usize], x: &Vec<f32>| Tensor::from_vec(dims.to_vec(), x.clone()).unwrap();
        (
            Tensor::scalar(k.steps as i64),
            vec![
                v(&[t, b, n_in], &d.x),
                v(&[b, c], &d.cs0),
                v(&[b, c], &d.h0),
                v(&[n_in + c, 4 * c], &d.w),
                v(&[c], &d.peep[0]),
                v(&[c], &d.peep[1]),
                v(&[c], &d.peep[2]),
                v(&[4 * c], &d.b),
            ],
        )
    }

    fn inputs(v: &[Tensor]) -> LstmInputs<'_> {
        LstmInputs {
            x: &v[0],
            cs_prev: &v[1],
            h_prev: &v[2],
            w: &v[3],
            wci: &v[4],
            wcf: &v[5],
            wco: &v[6],
            b: &v[7],
        }
    }

    fn close(what: &str, got: &[f32], want: &[f64], tol: f64) {
        assert_eq!(got.len(), want.len(), "{what}: length");
        for (j, (&g, &w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g as f64 - w).abs() <= tol * (1.0 + w.abs()),
                "{what}[{j}]: {g} vs {w}"
            );
        }
    }

    fn cases() -> Vec<Case> {
        let p = |layout, use_peephole, cell_clip, forget_bias| LstmParams {
            forget_bias,
            cell_clip,
            use_peephole,
            layout,
        };
        vec![
            Case {
                t: 4,
                b: 3,
                n_in: 5,
                c: 2,
                steps: 4,
                p: p(GateLayout::Icfo, false, -1.0, 1.0),
            },
            Case {
                t: 5,
                b: 2,
                n_in: 3,
                c: 70,
                steps: 3,
                p: p(GateLayout::Icfo, true, 0.5, 0.7),
            },
            Case {
                t: 3,
                b: 11,
                n_in: 80,
                c: 130,
                steps: 3,
                p: p(GateLayout::Ifco, true, 0.0, 0.0),
            },
            Case {
                t: 3,
                b: 1,
                n_in: 0,
                c: 3,
                steps: 0,
                p: p(GateLayout::Ifco, false, 3.0, 0.0),
            },
        ]
    }

    #[test]
    fn forward_matches_a_float64_reference() {
        for k in cases() {
            let d = data(&k);
            let (slm, v) = tensors(&k, &d);
            let o = block_lstm("BlockLSTM", &slm, &inputs(&v), &k.p).unwrap();
            let want = reference_forward(&k, &d);
            let got = [&o.i, &o.cs, &o.f, &o.o, &o.ci, &o.co, &o.h];
            for (j, name) in ["i", "cs", "f", "o", "ci", "co", "h"].iter().enumerate() {
                assert_eq!(got[j].dims(), [k.t, k.b, k.c]);
                close(name, got[j].as_slice::<f32>().unwrap(), &want[j], 2e-5);
            }
        }
    }

    #[test]
    fn backward_matches_a_float64_reference() {
        for k in cases() {
            let d = data(&k);
            let (slm, v) = tensors(&k, &d);
            let a = inputs(&v);
            let o = block_lstm("BlockLSTM", &slm, &a, &k.p).unwrap();
            let sh = [k.t, k.b, k.c];
            let csg = Tensor::from_vec(sh.to_vec(), d.cs_grad.clone()).unwrap();
            let hg = Tensor::from_vec(sh.to_vec(), d.h_grad.clone()).unwrap();
            let g = LstmBackInputs {
                i: &o.i,
                cs: &o.cs,
                f: &o.f,
                o: &o.o,
                ci: &o.ci,
                co: &o.co,
                h: &o.h,
                cs_grad: &csg,
                h_grad: &hg,
            };
            let got = block_lstm_grad("BlockLSTMGrad", &slm, &a, &g, k.p.use_peephole, k.p.layout)
                .unwrap();
            let want = reference_backward(&k, &d, &o);
            let got = [
                &got.x,
                &got.cs_prev,
                &got.h_prev,
                &got.w,
                &got.wci,
                &got.wcf,
                &got.wco,
                &got.b,
            ];
            for (j, name) in ["x", "cs_prev", "h_prev", "w", "wci", "wcf", "wco", "b"]
                .iter()
                .enumerate()
            {
                close(name, got[j].as_slice::<f32>().unwrap(), &want[j], 2e-5);
            }
        }
    }

    /// TensorFlow's backward recurrence in float64, from the forward outputs.
    fn reference_backward(k: &Case, d: &Data, o: &LstmOutputs) -> [Vec<f64>; 8] {
        let (b, n_in, c) = (k.b, k.n_in, k.c);
        let g4 = 4 * c;
        let f64s = |t: &Tensor| -> Vec<f64> {
            t.as_slice::<f32>()
                .unwrap()
                .iter()
                .map(|&v| v as f64)
                .collect()
        };
        let (i, cs, f, og, ci, co, h) = (
            f64s(&o.i),
            f64s(&o.cs),
            f64s(&o.f),
            f64s(&o.o),
            f64s(&o.ci),
            f64s(&o.co),
            f64s(&o.h),
        );
        let [gi, gci, gf, go] = k.p.layout.blocks();
        let mut dx = vec![0.0; k.t * b * n_in];
        let mut dw = vec![0.0; (n_in + c) * g4];
        let mut db = vec![0.0; g4];
        let mut dp: [Vec<f64>; 3] = std::array::from_fn(|_| vec![0.0; c]);
        let mut dh_n = vec![0.0; b * c];
        let mut dcs_n = vec![0.0; b * c];
        for t in (0..k.steps).rev() {
            let mut dg = vec![0.0; b * g4];
            for r in 0..b {
                for u in 0..c {
                    let at = (t * b + r) * c + u;
                    let csp = if t == 0 {
                        d.cs0[r * c + u] as f64
                    } else {
                        cs[at - b * c]
                    };
                    let pe = |j: usize| {
                        if k.p.use_peephole {
                            d.peep[j][u] as f64
                        } else {
                            0.0
                        }
                    };
                    let dh = d.h_grad[at] as f64 + dh_n[r * c + u];
                    let d_o = og[at] * (1.0 - og[at]) * dh * co[at];
                    let dcs = (1.0 - co[at] * co[at]) * dh * og[at]
                        + d.cs_grad[at] as f64
                        + dcs_n[r * c + u]
                        + d_o * pe(2);
                    let di = i[at] * (1.0 - i[at]) * dcs * ci[at];
                    let df = f[at] * (1.0 - f[at]) * dcs * csp;
                    let dci = (1.0 - ci[at] * ci[at]) * dcs * i[at];
                    dg[r * g4 + gi * c + u] = di;
                    dg[r * g4 + gci * c + u] = dci;
                    dg[r * g4 + gf * c + u] = df;
                    dg[r * g4 + go * c + u] = d_o;
                    dcs_n[r * c + u] = dcs * f[at] + di * pe(0) + df * pe(1);
                    if k.p.use_peephole {
                        dp[0][u] += di * csp;
                        dp[1][u] += df * csp;
                        dp[2][u] += d_o * cs[at];
                    }
                }
            }
            for r in 0..b {
                let xh = |j: usize| {
                    if j < n_in {
                        d.x[(t * b + r) * n_in + j] as f64
                    } else if t == 0 {
                        d.h0[r * c + j - n_in] as f64
                    } else {
                        h[((t - 1) * b + r) * c + j - n_in]
                    }
                };
                for j in 0..n_in + c {
                    let mut s = 0.0;
                    for col in 0..g4 {
                        s += dg[r * g4 + col] * d.w[j * g4 + col] as f64;
                        dw[j * g4 + col] += xh(j) * dg[r * g4 + col];
                    }
                    if j < n_in {
                        dx[(t * b + r) * n_in + j] = s;
                    } else {
                        dh_n[r * c + j - n_in] = s;
                    }
                }
                for col in 0..g4 {
                    db[col] += dg[r * g4 + col];
                }
            }
        }
        let [a, bb, cc] = dp;
        [dx, dcs_n, dh_n, dw, a, bb, cc, db]
    }

    #[test]
    fn bad_shapes_and_dtypes_are_typed_errors() {
        let k = &cases()[0];
        let d = data(k);
        let (slm, mut v) = tensors(k, &d);
        let run = |slm: &Tensor, v: &[Tensor]| block_lstm("BlockLSTM", slm, &inputs(v), &k.p);
        let e = run(&Tensor::scalar(5i64), &v).err().unwrap();
        assert!(
            e.to_string().contains("seq_len_max must be in [0, 4]"),
            "{e}"
        );
        let e = run(&Tensor::scalar(-1i64), &v).err().unwrap();
        assert!(e.to_string().contains("seq_len_max"), "{e}");
        v[7] = Tensor::from_vec(vec![7], vec![0f32; 7]).unwrap();
        let e = run(&slm, &v).err().unwrap();
        assert!(
            e.to_string()
                .contains("b.dim_size(0) != cell_size * 4: 7 vs. 8"),
            "{e}"
        );
        let (_, mut v) = tensors(k, &d);
        v[3] = Tensor::from_vec(vec![6, 8], vec![0f32; 48]).unwrap();
        let e = run(&slm, &v).err().unwrap();
        assert!(
            e.to_string()
                .contains("w.dim_size(0) != input_size + cell_size: 6 vs. 7"),
            "{e}"
        );
        let (_, mut v) = tensors(k, &d);
        v[0] = Tensor::from_vec(vec![3, 5], vec![0f32; 15]).unwrap();
        let e = run(&slm, &v).err().unwrap();
        assert!(e.to_string().contains("x must be 3D"), "{e}");
        let (_, mut v) = tensors(k, &d);
        for t in v.iter_mut() {
            let n = t.dims().to_vec();
            *t = Tensor::zeros(DType::Float16, n);
        }
        let e = run(&slm, &v).err().unwrap();
        assert_eq!(e.code(), Some(crate::Code::Unimplemented), "{e}");
    }
}

/// A broadcast-FMA product for the per-step recurrent products on AVX-512:
/// `c = a @ b` with `b` packed once per op call into panels of [`panel::NR`]
/// columns (each `k` rows of `NR` contiguous floats), and `a`'s elements
/// broadcast. With a 32-row batch this keeps 16 accumulators busy per two
/// loads of `b`, where the dot-product layout spends a horizontal sum on
/// every output element. Each output element is one sum over `k` in order,
/// so the result does not depend on how the columns are split.
mod panel {
    /// Columns per panel (two 16-lane registers).
    pub const NR: usize = 32;
    /// Rows per register tile.
    const MR: usize = 8;

    /// The `k x n` matrix with element (l, j) `get(l, j)`, as panels.
    pub fn pack(k: usize, n: usize, get: impl Fn(usize, usize) -> f32) -> Vec<f32> {
        let mut out = vec![0f32; n.div_ceil(NR) * NR * k];
        for (q, panel) in out.chunks_exact_mut(NR * k).enumerate() {
            let cols = NR.min(n - q * NR);
            for l in 0..k {
                for y in 0..cols {
                    panel[l * NR + y] = get(l, q * NR + y);
                }
            }
        }
        out
    }

    /// The `k x n` matrix whose column `j` is `column(j)` (`k` floats), as
    /// panels.
    pub fn pack_columns<'a>(k: usize, n: usize, column: impl Fn(usize) -> &'a [f32]) -> Vec<f32> {
        let mut out = vec![0f32; n.div_ceil(NR) * NR * k];
        for (q, panel) in out.chunks_exact_mut(NR * k).enumerate() {
            for y in 0..NR.min(n - q * NR) {
                for (l, &v) in column(q * NR + y).iter().enumerate() {
                    panel[l * NR + y] = v;
                }
            }
        }
        out
    }

    /// `c = a @ b` for `m x k` `a` (row stride `lda`) and `k x n` `b` packed
    /// by [`pack`]; `c` has row stride `ldc`. Panics unless the CPU runs
    /// AVX-512F (`dot_gemm::available`).
    ///
    /// # Safety
    /// `c` must address `m` rows of `n` floats `ldc` apart that no one else
    /// accesses meanwhile (other threads may use the columns in between).
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn product(
        m: usize,
        k: usize,
        n: usize,
        a: &[f32],
        lda: usize,
        b: &[f32],
        c: *mut f32,
        ldc: usize,
    ) {
        if m == 0 || n == 0 {
            return;
        }
        assert!(
            (m - 1) * lda + k <= a.len()
                && b.len() >= n.div_ceil(NR) * NR * k
                && super::super::dot_gemm::available(),
            "panel::product: an operand is smaller than its shape"
        );
        #[cfg(target_arch = "x86_64")]
        for q in 0..n.div_ceil(NR) {
            let cols = NR.min(n - q * NR);
            let bp = b[q * NR * k..].as_ptr();
            let mut i = 0;
            // SAFETY: checked above: rows i.. of `a` hold k floats each and
            // the panel k * NR; the caller vouches for c's rows.
            unsafe {
                let (ap, cp) = (a.as_ptr(), c.add(q * NR));
                while i + MR <= m {
                    avx512::tile::<MR>(k, ap.add(i * lda), lda, bp, cp.add(i * ldc), ldc, cols);
                    i += MR;
                }
                let (ap, cp) = (ap.add(i * lda), cp.add(i * ldc));
                match m - i {
                    0 => {}
                    1 => avx512::tile::<1>(k, ap, lda, bp, cp, ldc, cols),
                    2 => avx512::tile::<2>(k, ap, lda, bp, cp, ldc, cols),
                    3 => avx512::tile::<3>(k, ap, lda, bp, cp, ldc, cols),
                    4 => avx512::tile::<4>(k, ap, lda, bp, cp, ldc, cols),
                    5 => avx512::tile::<5>(k, ap, lda, bp, cp, ldc, cols),
                    6 => avx512::tile::<6>(k, ap, lda, bp, cp, ldc, cols),
                    _ => avx512::tile::<7>(k, ap, lda, bp, cp, ldc, cols),
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    mod avx512 {
        use super::NR;
        use std::arch::x86_64::*;

        /// `R` rows of `c` (the first `cols` of a panel's `NR` columns) =
        /// those rows of `a` @ the panel at `b`.
        ///
        /// # Safety
        /// AVX-512F; `a` holds `R` rows of `k` floats `lda` apart, `b` a
        /// panel of `k * NR` floats, and `c` `R` rows of `cols` floats
        /// `ldc` apart.
        #[target_feature(enable = "avx512f")]
        pub(super) unsafe fn tile<const R: usize>(
            k: usize,
            a: *const f32,
            lda: usize,
            b: *const f32,
            c: *mut f32,
            ldc: usize,
            cols: usize,
        ) {
            let mut acc = [[_mm512_setzero_ps(); 2]; R];
            for l in 0..k {
                let b0 = _mm512_loadu_ps(b.add(l * NR));
                let b1 = _mm512_loadu_ps(b.add(l * NR + 16));
                for (x, row) in acc.iter_mut().enumerate() {
                    let av = _mm512_set1_ps(*a.add(x * lda + l));
                    row[0] = _mm512_fmadd_ps(av, b0, row[0]);
                    row[1] = _mm512_fmadd_ps(av, b1, row[1]);
                }
            }
            let m0 = (((1u64 << cols.min(16)) - 1) & 0xffff) as __mmask16;
            let m1 = (((1u64 << cols.saturating_sub(16)) - 1) & 0xffff) as __mmask16;
            for (x, row) in acc.iter().enumerate() {
                let out = c.add(x * ldc);
                _mm512_mask_storeu_ps(out, m0, row[0]);
                _mm512_mask_storeu_ps(out.add(16), m1, row[1]);
            }
        }
    }
}

/// The gate activations of the forward op. On AVX-512 CPUs these are
/// 16-lane versions of `fast_math`'s schemes (Cephes-style `exp` by range
/// reduction and a degree-6 polynomial; `tanh` an odd polynomial below
/// 0.625, else `1 - 2 / (exp(2|x|) + 1)`) with `2^n` applied by `vscalefps`:
/// `fast_math`'s portable code converts `n` to an integer lane by lane
/// (scalar conversions), which made the activations a quarter of the
/// forward op's time. Elsewhere they are `fast_math`'s.
mod act {
    use super::super::fast_math::{sigmoid_in_place, tanh_in_place};

    /// `1 / (1 + exp(-x))` of every element, in place.
    pub fn sigmoid(v: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if super::super::dot_gemm::available() {
            // SAFETY: the CPU runs AVX-512F.
            unsafe { avx512::map(v, avx512::sigmoid16) };
            return;
        }
        sigmoid_in_place(v)
    }

    /// `tanh` of every element, in place.
    pub fn tanh(v: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if super::super::dot_gemm::available() {
            // SAFETY: the CPU runs AVX-512F.
            unsafe { avx512::map(v, avx512::tanh16) };
            return;
        }
        tanh_in_place(v)
    }

    #[cfg(target_arch = "x86_64")]
    mod avx512 {
        use std::arch::x86_64::*;

        /// `f` over `v` in 16-lane pieces, the last one masked.
        #[target_feature(enable = "avx512f")]
        pub(super) unsafe fn map(v: &mut [f32], f: unsafe fn(__m512) -> __m512) {
            let mut chunks = v.chunks_exact_mut(16);
            for c in &mut chunks {
                let p = c.as_mut_ptr();
                _mm512_storeu_ps(p, f(_mm512_loadu_ps(p)));
            }
            let rest = chunks.into_remainder();
            if !rest.is_empty() {
                let m = ((1u32 << rest.len()) - 1) as __mmask16;
                let p = rest.as_mut_ptr();
                _mm512_mask_storeu_ps(p, m, f(_mm512_maskz_loadu_ps(m, p)));
            }
        }

        #[inline(always)]
        fn set(x: f32) -> __m512 {
            // SAFETY: AVX-512F in every caller.
            unsafe { _mm512_set1_ps(x) }
        }

        /// exp of 16 lanes: 0 below -87.34, infinity above 88.38, NaN kept.
        #[target_feature(enable = "avx512f")]
        #[inline]
        unsafe fn exp16(x: __m512) -> __m512 {
            const HI: f32 = 88.376_26;
            const LO: f32 = -87.336_55;
            let c = _mm512_min_ps(_mm512_max_ps(x, set(LO)), set(HI));
            let n = _mm512_roundscale_ps::<0x09>(_mm512_fmadd_ps(
                c,
                set(std::f32::consts::LOG2_E),
                set(0.5),
            ));
            let r = _mm512_fnmadd_ps(n, set(0.693_359_4), c);
            let r = _mm512_fnmadd_ps(n, set(-2.121_944_4e-4), r);
            let mut y = _mm512_fmadd_ps(set(1.987_569_1e-4), r, set(1.398_2e-3));
            y = _mm512_fmadd_ps(y, r, set(8.333_452e-3));
            y = _mm512_fmadd_ps(y, r, set(4.166_579_6e-2));
            y = _mm512_fmadd_ps(y, r, set(1.666_666_5e-1));
            y = _mm512_fmadd_ps(y, r, set(5e-1));
            y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), _mm512_add_ps(r, set(1.0)));
            let mut v = _mm512_scalef_ps(y, n);
            v = _mm512_mask_blend_ps(
                _mm512_cmp_ps_mask::<_CMP_GT_OQ>(x, set(HI)),
                v,
                set(f32::INFINITY),
            );
            v = _mm512_mask_blend_ps(
                _mm512_cmp_ps_mask::<_CMP_LT_OQ>(x, set(LO)),
                v,
                _mm512_setzero_ps(),
            );
            _mm512_mask_blend_ps(_mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x), v, x)
        }

        #[target_feature(enable = "avx512f")]
        pub(super) unsafe fn sigmoid16(x: __m512) -> __m512 {
            let e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), x));
            _mm512_div_ps(set(1.0), _mm512_add_ps(set(1.0), e))
        }

        #[target_feature(enable = "avx512f")]
        pub(super) unsafe fn tanh16(x: __m512) -> __m512 {
            let a = _mm512_abs_ps(x);
            let e = exp16(_mm512_mul_ps(set(2.0), _mm512_min_ps(a, set(9.0))));
            let big = _mm512_sub_ps(
                set(1.0),
                _mm512_div_ps(set(2.0), _mm512_add_ps(e, set(1.0))),
            );
            let big =
                _mm512_mask_blend_ps(_mm512_cmp_ps_mask::<_CMP_GE_OQ>(a, set(9.0)), big, set(1.0));
            let big = _mm512_mask_blend_ps(
                _mm512_cmp_ps_mask::<_CMP_LT_OQ>(x, _mm512_setzero_ps()),
                big,
                _mm512_sub_ps(_mm512_setzero_ps(), big),
            );
            let z = _mm512_mul_ps(x, x);
            let mut p = _mm512_fmadd_ps(set(-5.704_988_7e-3), z, set(2.063_909e-2));
            p = _mm512_fmadd_ps(p, z, set(-5.373_971_6e-2));
            p = _mm512_fmadd_ps(p, z, set(1.333_144_2e-1));
            p = _mm512_fmadd_ps(p, z, set(-3.333_328e-1));
            let small = _mm512_fmadd_ps(_mm512_mul_ps(p, z), x, x);
            let small = _mm512_mask_blend_ps(
                _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(z, _mm512_setzero_ps()),
                small,
                x,
            );
            let out =
                _mm512_mask_blend_ps(_mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, set(0.625)), big, small);
            _mm512_mask_blend_ps(_mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x), out, x)
        }
    }

    #[cfg(test)]
    mod tests {
        /// Both activations against float64 over a sweep (lengths not a
        /// multiple of 16), the extremes, infinities, NaN and -0.0.
        #[test]
        fn activations_match_float64() {
            let mut xs: Vec<f32> = (0..20_003).map(|i| -30.0 + i as f32 * 0.003).collect();
            xs.extend([
                -0.0,
                0.0,
                1e-30,
                -1e-30,
                0.624,
                0.626,
                8.99,
                9.01,
                87.0,
                -87.0,
                88.5,
                -88.5,
                1e30,
                -1e30,
                f32::INFINITY,
                f32::NEG_INFINITY,
            ]);
            for (f, reference) in [
                (
                    super::sigmoid as fn(&mut [f32]),
                    (|x: f64| 1.0 / (1.0 + (-x).exp())) as fn(f64) -> f64,
                ),
                (super::tanh, f64::tanh),
            ] {
                let mut v = xs.clone();
                f(&mut v);
                for (&x, &y) in xs.iter().zip(&v) {
                    let want = reference(x as f64);
                    let err = (y as f64 - want).abs();
                    assert!(
                        err <= 4e-7 * want.abs().max(1e-30) || err < 1e-37,
                        "f({x}) = {y}, want {want}"
                    );
                }
                let mut nan = [f32::NAN; 3];
                f(&mut nan);
                assert!(nan.iter().all(|v| v.is_nan()));
            }
            let mut z = [-0.0f32];
            tanh(&mut z);
            assert!(z[0] == 0.0 && z[0].is_sign_negative());
        }

        use super::tanh;
    }
}
