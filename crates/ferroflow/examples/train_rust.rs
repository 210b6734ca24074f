//! Trains a small classifier end to end from Rust alone, the TensorFlow 1 way: a graph with
//! placeholders, a learning-rate schedule of the global step, Adam, TensorBoard summaries and a
//! Saver that checkpoints every 100 steps (with the meta graph) and keeps the last three. Run it
//! again with the same log directory and it resumes from the latest checkpoint.
//!
//! ```text
//! cargo run --release --example train_rust -p ferroflow -- [--logdir DIR] [--steps N] [--expected FILE]
//! ```
//!
//! The data: 512 points of the square [-1, 1]^2, labelled by the quadrant's sign (x0 * x1 > 0), so
//! the model (2 -> 16 relu -> 2) needs its hidden layer. `--expected FILE` writes a JSON record
//! of the run (the points, the final loss and variables, the logged losses) that
//! `tests/python/test_rust_checkpoint.py` checks Python ferroflow against; the fixture in
//! `tests/fixtures/rust_checkpoint/` was written with
//! `--logdir tests/fixtures/rust_checkpoint --steps 300 --expected tests/fixtures/rust_checkpoint/expected.json`.

mod common;

use common::Rng;
use ferroflow::meta_graph::export_meta_graph;
use ferroflow::saver::{get_checkpoint_state, Saver};
use ferroflow::summary::{self, FileWriter};
use ferroflow::train::{exponential_decay, get_or_create_global_step, Adam, Optimizer};
use ferroflow::{DType, Error, GraphBuilder, PartialShape, Session, Tensor};
use std::path::PathBuf;

/// The Python extension's allocator: mimalloc, large buffers cached.
#[global_allocator]
static ALLOCATOR: ferroflow::alloc::BufferCache<mimalloc::MiMalloc> =
    ferroflow::alloc::BufferCache::with_allocator(mimalloc::MiMalloc);

const POINTS: usize = 512;
const HIDDEN: usize = 16;
const SUMMARY_EVERY: i64 = 10;
const SAVE_EVERY: i64 = 100;

struct Args {
    logdir: PathBuf,
    steps: i64,
    expected: Option<PathBuf>,
}

fn args() -> Result<Args, String> {
    let mut out = Args {
        logdir: std::env::temp_dir().join("ferroflow-train-rust"),
        steps: 300,
        expected: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--logdir" => out.logdir = value()?.into(),
            "--steps" => out.steps = value()?.parse().map_err(|e| format!("--steps: {e}"))?,
            "--expected" => out.expected = Some(value()?.into()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(out)
}

/// `(points, labels)`: uniform points of [-1, 1]^2, labelled 1 where x0 * x1 > 0.
fn dataset(rng: &mut Rng) -> (Vec<f32>, Vec<i32>) {
    let xs: Vec<f32> = (0..POINTS * 2).map(|_| rng.uniform() * 2.0 - 1.0).collect();
    let ys = xs.chunks(2).map(|p| (p[0] * p[1] > 0.0) as i32).collect();
    (xs, ys)
}

fn main() -> ferroflow::Result<()> {
    let args = args().map_err(Error::invalid_argument)?;
    let mut rng = Rng(7);
    let (xs, ys) = dataset(&mut rng);

    let mut g = GraphBuilder::new();
    let x = g.placeholder(
        DType::Float32,
        PartialShape::from_dims(vec![None, Some(2)]),
        "x",
    )?;
    let y = g.placeholder(DType::Int32, PartialShape::from_dims(vec![None]), "y")?;
    let mut dense =
        |g: &mut GraphBuilder, scope: &str, input: ferroflow::Output, from: usize, to: usize| {
            let limit = (6.0 / (from + to) as f32).sqrt();
            let w = g.variable(&format!("{scope}/kernel"), rng.tensor(&[from, to], limit)?)?;
            let b = g.variable(
                &format!("{scope}/bias"),
                Tensor::zeros(DType::Float32, [to]),
            )?;
            let h = g.matmul(input, w.value, false, false)?;
            Ok::<_, Error>((g.add_v2(h, b.value)?, w))
        };
    let (h, kernel) = dense(&mut g, "dense", x, 2, HIDDEN)?;
    let h = g.relu(h)?;
    let (logits, _) = dense(&mut g, "dense_1", h, HIDDEN, 2)?;
    let xent = g.sparse_softmax_cross_entropy(logits, y)?;
    let loss = g.reduce_mean(xent)?;

    // Adam at a rate halving every 100 steps of the global step.
    let step = get_or_create_global_step(&mut g)?;
    let lr = exponential_decay(&mut g, 0.05, step.value, 100.0, 0.5, false)?;
    let train = Optimizer::new(Adam::new(lr)).minimize(&mut g, loss, None, Some(&step))?;

    summary::scalar(&mut g, "loss", loss)?;
    summary::scalar(&mut g, "learning_rate", lr)?;
    summary::histogram(&mut g, "hidden_kernel", kernel.value)?;
    let summaries = summary::merge_all(&mut g)?.expect("three summaries");
    let mut saver = Saver::new(&mut g, None)?.max_to_keep(3);
    let init = g.global_variables_initializer()?;
    // Every checkpoint gets its meta graph, which TensorFlow's import_meta_graph reads.
    saver.set_meta_graph(Some(export_meta_graph(&g, Some(&saver), &[train])?));

    let sess = Session::new(g.graph());
    match get_checkpoint_state(&args.logdir)? {
        Some(state) if ferroflow::saver::checkpoint_exists(&state.model_checkpoint_path) => {
            saver.restore(&sess, &state.model_checkpoint_path)?;
            saver.recover_last_checkpoints(&state.all_model_checkpoint_paths);
            println!("restored {}", state.model_checkpoint_path);
        }
        _ => {
            sess.run(vec![], &[], &[init])?;
            println!("starting from step 0 in {}", args.logdir.display());
        }
    }
    let writer = FileWriter::new(&args.logdir)?;
    writer.add_graph(&g.graph().read())?;

    let feed = || {
        vec![
            (x, Tensor::from_vec([POINTS, 2], xs.clone()).expect("shape")),
            (y, Tensor::vector(ys.clone())),
        ]
    };
    let global_step = |sess: &Session| -> ferroflow::Result<i64> {
        sess.run(vec![], &[step.value], &[])?[0].scalar_i64()
    };
    let first = global_step(&sess)?;
    let prefix = args.logdir.join("model.ckpt");
    let mut logged = Vec::new();
    let started = std::time::Instant::now();
    for _ in 0..args.steps {
        let s = global_step(&sess)?;
        if s % SUMMARY_EVERY == 0 {
            let out = sess.run(feed(), &[summaries, loss], &[])?;
            writer.add_summary_tensor(&out[0], s)?;
            logged.push((s, out[1].scalar_f64()?));
        }
        sess.run(feed(), &[], &[train])?;
        let s = s + 1;
        if s % SAVE_EVERY == 0 {
            let path = saver.save(&sess, &prefix, Some(s))?;
            let l = sess.run(feed(), &[loss], &[])?[0].scalar_f64()?;
            println!("step {s:5}: loss {l:.4}, saved {path}");
        }
    }
    let last = global_step(&sess)?;
    let secs = started.elapsed().as_secs_f64();
    println!(
        "trained {} steps in {secs:.2} s ({:.0} steps/s); global step is now {last}",
        last - first,
        (last - first) as f64 / secs.max(1e-9)
    );
    if last % SAVE_EVERY != 0 {
        saver.save(&sess, &prefix, Some(last))?;
    }
    writer.close()?;

    let out = sess.run(feed(), &[logits, loss], &[])?;
    let scores = out[0].as_slice::<f32>()?;
    let correct = scores
        .chunks(2)
        .zip(&ys)
        .filter(|(s, &label)| ((s[1] > s[0]) as i32) == label)
        .count();
    let final_loss = out[1].scalar_f64()?;
    println!(
        "loss {final_loss:.4}, training accuracy {:.1}% ({correct}/{POINTS})",
        100.0 * correct as f64 / POINTS as f64
    );

    if let Some(path) = &args.expected {
        let mut variables = serde_json::Map::new();
        for v in g.trainable_variables() {
            let name = g.graph().read().node(v.var.node).name.clone();
            let value = &sess.run(vec![], &[v.value], &[])?[0];
            variables.insert(
                name,
                serde_json::json!({"shape": value.dims(), "values": value.as_slice::<f32>()?}),
            );
        }
        let record = serde_json::json!({
            "written_by": "cargo run --release --example train_rust -p ferroflow",
            "global_step": last,
            "points": xs,
            "labels": ys,
            "loss": final_loss,
            "variables": variables,
            "logged_loss": logged,
        });
        let text = serde_json::to_string(&record).expect("json");
        std::fs::write(path, text + "\n")
            .map_err(|e| Error::io(&e, format_args!("cannot write {}", path.display())))?;
    }
    Ok(())
}
