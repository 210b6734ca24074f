//! Training throughput against thread count, without Python:
//! `cargo run --release --example scaling -p ferroflow -- [options]`.
//!
//! For each thread count the program runs itself again with
//! `RAYON_NUM_THREADS` set (the engine sizes its kernel team once per
//! process) and prints steps/s and GFLOP/s of three training steps with
//! Adam on fixed data: an MLP 784-512-512-10 at batch 128 and 512, and a
//! small convnet (two 5x5 convolutions of 32 and 64 channels with 2x2 max
//! pooling, dense 3136-256-10) at batch 64. It ends each thread count with
//! the engine's own f32 GEMM rate on a 2048-cube product. On request also
//! the mixed-precision issue's MLP 784-2048-2048-10 at batch 256 (`mlp2k`)
//! and its bare 256 x 2048 @ 2048 x 2048 product in float32 and bfloat16
//! (`gemm256`, `bf16gemm`).
//!
//! Options:
//! - `--threads 1,2,4` (default: 1, 2, 4, ... up to the CPUs this process
//!   may use, and that count itself);
//! - `--models mlp128,mlp512,conv64,gemm` (the default; also `mlp2k`,
//!   `gemm256`, `bf16gemm`);
//! - `--seconds S`, time per measurement (default 2);
//! - `--busy N`: N threads of this process spin on a core while the
//!   children measure, the "other work holds some cores" case;
//! - `--label NAME`: the first word of every result line (default
//!   `ferroflow-rust`), to tell builds apart in one sweep;
//! - `--inter-op N`: sessions run up to N independent steps at once
//!   (`SessionOptions::inter_op_threads`; default 1, one at a time);
//! - `--bf16`: sessions apply the bfloat16 mixed-precision rewrite
//!   (`SessionOptions::mixed_precision_bf16`).

mod common;

use common::Rng;
use ferroflow::train::Optimizer;
use ferroflow::{AttrValue, DType, GraphBuilder, NodeId, Output, Session, SessionOptions, Tensor};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The Python extension's allocator: mimalloc, large buffers cached.
#[global_allocator]
static ALLOCATOR: ferroflow::alloc::BufferCache<mimalloc::MiMalloc> =
    ferroflow::alloc::BufferCache::with_allocator(mimalloc::MiMalloc);

/// A built training step: the op to run and the FLOPs one run costs.
struct Model {
    session: Session,
    train: NodeId,
    loss: Output,
    flops: f64,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let seconds: f64 = value("--seconds").map_or(2.0, |s| s.parse().expect("--seconds"));
    let models = value("--models").unwrap_or_else(|| "mlp128,mlp512,conv64,gemm".into());
    let label = value("--label").unwrap_or_else(|| "ferroflow-rust".into());
    let inter_op = value("--inter-op").unwrap_or_else(|| "1".into());
    let bf16 = args.iter().any(|a| a == "--bf16");
    if let Some(t) = value("--child") {
        let options = SessionOptions {
            inter_op_threads: inter_op.parse().expect("--inter-op"),
            mixed_precision_bf16: bf16,
            ..Default::default()
        };
        return child(
            t.parse().expect("--child"),
            &models,
            seconds,
            &label,
            options,
        );
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads: Vec<usize> = value("--threads").map_or_else(
        || {
            let mut v: Vec<usize> = std::iter::successors(Some(1), |t| Some(t * 2))
                .take_while(|&t| t < cpus)
                .collect();
            v.push(cpus);
            v
        },
        |s| {
            s.split(',')
                .map(|t| t.parse().expect("--threads"))
                .collect()
        },
    );
    let busy: usize = value("--busy").map_or(0, |s| s.parse().expect("--busy"));
    let stop = AtomicBool::new(false);
    println!("# cpus this process may use: {cpus}; busy spinning threads: {busy}");
    std::thread::scope(|s| {
        for _ in 0..busy {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
        }
        for &t in &threads {
            let exe = std::env::current_exe().expect("own path");
            let status = Command::new(exe)
                .args(["--child", &t.to_string(), "--models", &models])
                .args(["--seconds", &seconds.to_string(), "--label", &label])
                .args(["--inter-op", &inter_op])
                .args(bf16.then_some("--bf16"))
                .env("RAYON_NUM_THREADS", t.to_string())
                .status()
                .expect("run a child");
            assert!(status.success(), "the child for {t} threads failed");
        }
        stop.store(true, Ordering::Relaxed);
    });
}

/// Measures every model in this process (whose thread count is set).
fn child(threads: usize, models: &str, seconds: f64, label: &str, options: SessionOptions) {
    for name in models.split(',') {
        let (steps, flops) = match name {
            "gemm" => gemm_rate([2048; 3], DType::Float32, seconds),
            "gemm256" => gemm_rate([256, 2048, 2048], DType::Float32, seconds),
            "bf16gemm" => gemm_rate([256, 2048, 2048], DType::BFloat16, seconds),
            _ => {
                let model = match name {
                    "mlp128" => mlp(128, &[784, 512, 512, 10], options),
                    "mlp512" => mlp(512, &[784, 512, 512, 10], options),
                    "mlp2k" => mlp(256, &[784, 2048, 2048, 10], options),
                    "conv64" => convnet(64, options),
                    other => panic!("unknown model {other}"),
                }
                .expect("build the model");
                steps_per_second(&model, seconds)
            }
        };
        println!(
            "{label} {name:<7} threads {threads:>3}  {steps:9.1} steps/s  {:7.1} GFLOP/s",
            steps * flops / 1e9
        );
    }
}

/// Calls per second of `f` over at least `seconds` (and at least three
/// calls), after `warmup` untimed calls.
fn calls_per_second(mut f: impl FnMut(), warmup: usize, seconds: f64) -> f64 {
    for _ in 0..warmup {
        f();
    }
    let start = Instant::now();
    let mut n = 0usize;
    while start.elapsed().as_secs_f64() < seconds || n < 3 {
        f();
        n += 1;
    }
    n as f64 / start.elapsed().as_secs_f64()
}

fn steps_per_second(model: &Model, seconds: f64) -> (f64, f64) {
    let step = || {
        model
            .session
            .run(vec![], &[], &[model.train])
            .expect("a training step");
    };
    let rate = calls_per_second(step, 3, seconds);
    let loss = model.session.run(vec![], &[model.loss], &[]).expect("loss")[0]
        .scalar_f64()
        .expect("a scalar loss");
    assert!(loss.is_finite(), "the loss diverged: {loss}");
    (rate, model.flops)
}

/// The engine's `MatMul` kernel on an `m x k @ k x n` product of `dtype`
/// operands: (calls/s, FLOPs).
fn gemm_rate([m, k, n]: [usize; 3], dtype: DType, seconds: f64) -> (f64, f64) {
    let mut rng = Rng(7);
    let operand = |rng: &mut Rng, dims: &[usize]| {
        let t = rng.tensor(dims, 1.0).expect("operand");
        ferroflow::kernels::elementwise::cast(&t, dtype).expect("cast")
    };
    let a = operand(&mut rng, &[m, k]);
    let b = operand(&mut rng, &[k, n]);
    let call = || {
        ferroflow::kernels::matmul::matmul(&a, &b, false, false).expect("matmul");
    };
    (calls_per_second(call, 1, seconds), 2.0 * (m * k * n) as f64)
}

/// The trainable variables of a model being built.
#[derive(Default)]
struct Params {
    inits: Vec<NodeId>,
    vars: Vec<ferroflow::VariableHandle>,
}

impl Params {
    /// A variable initialised to `init`; returns its value.
    fn variable(
        &mut self,
        g: &mut GraphBuilder,
        name: &str,
        init: Tensor,
    ) -> ferroflow::Result<Output> {
        let v = g.variable(name, init)?;
        self.inits.push(v.initializer);
        self.vars.push(v);
        Ok(v.value)
    }

    /// Adds `relu?(x @ w + b)` for a `[fan_in, fan_out]` layer.
    fn dense(
        &mut self,
        g: &mut GraphBuilder,
        rng: &mut Rng,
        x: Output,
        (fan_in, fan_out): (usize, usize),
        relu: bool,
    ) -> ferroflow::Result<Output> {
        let limit = (6.0 / (fan_in + fan_out) as f32).sqrt();
        let w = self.variable(g, "kernel", rng.tensor(&[fan_in, fan_out], limit)?)?;
        let b = self.variable(g, "bias", Tensor::from_vec([fan_out], vec![0f32; fan_out])?)?;
        let h = g.matmul(x, w, false, false)?;
        let h = g.add_v2(h, b)?;
        if relu {
            g.relu(h)
        } else {
            Ok(h)
        }
    }
}

/// Finishes a model: softmax cross-entropy against fixed labels, Adam, a
/// session with every variable initialised.
fn finish(
    mut g: GraphBuilder,
    rng: &mut Rng,
    logits: Output,
    batch: usize,
    params: Params,
    flops: f64,
    options: SessionOptions,
) -> ferroflow::Result<Model> {
    let labels: Vec<i32> = (0..batch)
        .map(|_| (rng.uniform() * 10.0) as i32 % 10)
        .collect();
    let labels = g.constant(Tensor::vector(labels), "labels")?;
    let xent = g.sparse_softmax_cross_entropy(logits, labels)?;
    let loss = g.reduce_mean(xent)?;
    let mut opt = Optimizer::adam(1e-3);
    let train = opt.minimize(&mut g, loss, Some(&params.vars), None)?;
    let session = Session::with_options(g.graph(), options)?;
    let mut all = params.inits;
    all.extend(opt.initializers(&g));
    session.run(vec![], &[], &all)?;
    Ok(Model {
        session,
        train,
        loss,
        flops,
    })
}

/// An MLP of layer `sizes` on a fixed batch.
fn mlp(batch: usize, sizes: &[usize], options: SessionOptions) -> ferroflow::Result<Model> {
    let mut rng = Rng(42);
    let mut g = GraphBuilder::new();
    let x = g.constant(rng.tensor(&[batch, sizes[0]], 1.0)?, "x")?;
    let mut params = Params::default();
    let mut h = x;
    for (i, pair) in sizes.windows(2).enumerate() {
        let relu = i + 2 < sizes.len();
        h = g.with_name_scope("dense", |g| {
            params.dense(g, &mut rng, h, (pair[0], pair[1]), relu)
        })?;
    }
    // Forward, then twice that backward, less the first layer's input
    // gradient (x is a constant, so nothing asks for it).
    let forward: f64 = sizes
        .windows(2)
        .map(|p| 2.0 * (batch * p[0] * p[1]) as f64)
        .sum();
    let flops = 3.0 * forward - 2.0 * (batch * sizes[0] * sizes[1]) as f64;
    finish(g, &mut rng, h, batch, params, flops, options)
}

/// Two 5x5 SAME convolutions (32 and 64 channels) with ReLU and 2x2 max
/// pooling on 28x28x1 images, then dense 3136-256-10.
fn convnet(batch: usize, options: SessionOptions) -> ferroflow::Result<Model> {
    let mut rng = Rng(43);
    let mut g = GraphBuilder::new();
    let x = g.constant(rng.tensor(&[batch, 28, 28, 1], 1.0)?, "x")?;
    let mut params = Params::default();
    let mut h = x;
    let mut flops_fwd = Vec::new();
    let mut side = 28usize;
    for (cin, cout) in [(1usize, 32usize), (32, 64)] {
        let limit = (6.0 / ((cin + cout) * 25) as f32).sqrt();
        let w = params.variable(
            &mut g,
            "conv/kernel",
            rng.tensor(&[5, 5, cin, cout], limit)?,
        )?;
        let b = params.variable(
            &mut g,
            "conv/bias",
            Tensor::from_vec([cout], vec![0f32; cout])?,
        )?;
        let conv = g.add(
            "Conv2D",
            "conv",
            &[h, w],
            vec![
                ("T", AttrValue::Type(DType::Float32)),
                ("strides", AttrValue::IntList(vec![1, 1, 1, 1])),
                ("padding", AttrValue::Str(b"SAME".to_vec())),
            ],
        )?;
        let biased = g.add(
            "BiasAdd",
            "bias_add",
            &[Output::new(conv, 0), b],
            vec![("T", AttrValue::Type(DType::Float32))],
        )?;
        let act = g.relu(Output::new(biased, 0))?;
        let pool = g.add(
            "MaxPool",
            "pool",
            &[act],
            vec![
                ("T", AttrValue::Type(DType::Float32)),
                ("ksize", AttrValue::IntList(vec![1, 2, 2, 1])),
                ("strides", AttrValue::IntList(vec![1, 2, 2, 1])),
                ("padding", AttrValue::Str(b"VALID".to_vec())),
            ],
        )?;
        flops_fwd.push(2.0 * (batch * side * side * 25 * cin * cout) as f64);
        h = Output::new(pool, 0);
        side /= 2;
    }
    let shape = g.constant(Tensor::vector(vec![batch as i32, 3136]), "flat_shape")?;
    let flat = g.add(
        "Reshape",
        "flatten",
        &[h, shape],
        vec![
            ("T", AttrValue::Type(DType::Float32)),
            ("Tshape", AttrValue::Type(DType::Int32)),
        ],
    )?;
    let mut h = Output::new(flat, 0);
    for (fan_in, fan_out, relu) in [(3136usize, 256usize, true), (256, 10, false)] {
        h = g.with_name_scope("dense", |g| {
            params.dense(g, &mut rng, h, (fan_in, fan_out), relu)
        })?;
        flops_fwd.push(2.0 * (batch * fan_in * fan_out) as f64);
    }
    // Backward is twice forward, less the first convolution's input gradient.
    let forward: f64 = flops_fwd.iter().sum();
    let flops = 3.0 * forward - flops_fwd[0];
    finish(g, &mut rng, h, batch, params, flops, options)
}
