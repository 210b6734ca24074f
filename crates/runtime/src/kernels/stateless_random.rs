//! Kernels of TensorFlow's stateless random ops (bit-exact with TensorFlow
//! for the same seed, key and counter) and of the stateful samplers that
//! share their distributions (`Multinomial`, `RandomGamma`,
//! `RandomPoisson(V2)`), `RandomGammaGrad` and `RandomIndexShuffle`.

use super::boxed;
use crate::kernel::{factory, KernelFactory, KernelInit, OpContext};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::kernels::stateless_random::{
    binomial_sample, gamma, gamma_sample_grad, multinomial, parameterized_truncated_normal,
    philox4x32_10, poisson, stateless_float, stateless_int, FloatDist, PhiloxRandom, TruncParams,
};
use ferroflow_tensor::{
    bail, bf16, broadcast_shapes, ensure, f16, DType, Error, Result, Shape, Tensor,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// TensorFlow's algorithm ids (`tf.random.Algorithm`).
const ALG_PHILOX: i64 = 1;
const ALG_THREEFRY: i64 = 2;
const ALG_AUTO_SELECT: i64 = 3;

fn dims_text(t: &Tensor) -> String {
    format!(
        "[{}]",
        t.dims()
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(",")
    )
}

/// The generator of a `[2]` seed tensor (TF's `GenerateKey`).
fn from_seed(seed: &Tensor) -> Result<PhiloxRandom> {
    ensure!(
        seed.dims() == [2],
        invalid_argument,
        "seed must have shape [2], not {}",
        dims_text(seed)
    );
    let s = seed.to_i64_vec()?;
    Ok(PhiloxRandom::from_seed(s[0], s[1]))
}

/// The generator of the `key`, `counter` and `alg` inputs of the V2 ops.
fn from_key_counter(key: &Tensor, counter: &Tensor, alg: &Tensor) -> Result<PhiloxRandom> {
    ensure!(
        alg.rank() == 0,
        invalid_argument,
        "alg must be a scalar; got shape: {}",
        dims_text(alg)
    );
    let alg = alg.scalar_i64()?;
    ensure!(
        key.dims() == [1],
        invalid_argument,
        "key must have shape [1], not {}. (Note that batched keys are not supported yet.)",
        dims_text(key)
    );
    match alg {
        ALG_PHILOX | ALG_AUTO_SELECT | ALG_THREEFRY => {
            if counter.rank() != 1 || counter.dims()[0] < 2 {
                bail!(
                    invalid_argument,
                    "counter must be a vector with length at least 2; got shape: {}",
                    dims_text(counter)
                );
            }
            ensure!(
                alg != ALG_THREEFRY,
                invalid_argument,
                "Unsupported algorithm id: 2 (ThreeFry has no CPU kernel in TensorFlow)"
            );
        }
        other => {
            bail!(invalid_argument, "Unsupported algorithm id: {other}")
        }
    }
    let k = key.to_i64_vec()?[0] as u64;
    let c = counter.to_i64_vec()?;
    Ok(PhiloxRandom::from_key_counter(
        k,
        [c[0] as u64, c[1] as u64],
    ))
}

/// The output shape given as input `i`, checked for size.
fn shape_input(ctx: &OpContext<'_>, i: usize, op: &str, dtype: DType) -> Result<Shape> {
    let t = ctx.input(i)?;
    ensure!(
        t.rank() == 1,
        invalid_argument,
        "{op}: shape must be a vector, got shape {}",
        dims_text(t)
    );
    let shape = Shape::from_i64(&t.to_i64_vec()?)?;
    Tensor::check_allocation(op, dtype, shape.dims())?;
    Ok(shape)
}

/// `v` as a tensor of `dtype`, narrowing as C++'s `static_cast` does
/// (half and bfloat16 through float, as Eigen converts doubles).
fn from_f64s(shape: Shape, v: Vec<f64>, dtype: DType) -> Result<Tensor> {
    match dtype {
        DType::Float64 => Tensor::from_vec(shape, v),
        DType::Float32 => Tensor::from_vec(shape, v.into_iter().map(|x| x as f32).collect()),
        DType::Float16 => Tensor::from_vec(
            shape,
            v.into_iter().map(|x| f16::from_f32(x as f32)).collect(),
        ),
        DType::BFloat16 => Tensor::from_vec(
            shape,
            v.into_iter().map(|x| bf16::from_f32(x as f32)).collect(),
        ),
        DType::Int32 => Tensor::from_vec(shape, v.into_iter().map(|x| x as i32).collect()),
        DType::Int64 => Tensor::from_vec(shape, v.into_iter().map(|x| x as i64).collect()),
        d => Err(Error::invalid_argument(format!(
            "unsupported output dtype {d} for a random sampler"
        ))),
    }
}

/// A stateful op's generator (from its `seed`/`seed2` attrs, fresh ones
/// when both are 0) and how many blocks it has handed out.
struct Stream {
    gen: PhiloxRandom,
    next: AtomicU64,
}

impl Stream {
    /// The generator advanced past everything handed out so far, reserving
    /// `blocks` more.
    fn reserve(&self, blocks: u64) -> PhiloxRandom {
        self.gen
            .skipped(self.next.fetch_add(blocks, Ordering::Relaxed))
    }
}

fn stream(init: &KernelInit<'_>) -> Result<Arc<Stream>> {
    let a = &init.node.attrs;
    let (mut seed, mut seed2) = (a.int_or("seed", 0)? as u64, a.int_or("seed2", 0)? as u64);
    if seed == 0 && seed2 == 0 {
        use std::hash::BuildHasher;
        let h = std::collections::hash_map::RandomState::new();
        seed = h.hash_one(init.node.id);
        seed2 = h.hash_one(seed);
    }
    // TF's PhiloxRandom(seed, seed2): the key from seed, the counter's high half from seed2.
    let gen = PhiloxRandom::new(
        [0, 0, seed2 as u32, (seed2 >> 32) as u32],
        [seed as u32, (seed >> 32) as u32],
    );
    init.session.get_or_create(init.node.id, || Stream {
        gen,
        next: AtomicU64::new(0),
    })
}

/// The float ops: (V1 name, V2 name, distribution).
const FLOAT_OPS: [(&str, &str, FloatDist); 3] = [
    (
        "StatelessRandomUniform",
        "StatelessRandomUniformV2",
        FloatDist::Uniform,
    ),
    (
        "StatelessRandomNormal",
        "StatelessRandomNormalV2",
        FloatDist::Normal,
    ),
    (
        "StatelessTruncatedNormal",
        "StatelessTruncatedNormalV2",
        FloatDist::TruncatedNormal,
    ),
];

fn multinomial_kernel(
    ctx: &mut OpContext<'_>,
    gen: Option<PhiloxRandom>,
    stream: Option<&Stream>,
    out: DType,
) -> Result<()> {
    let logits = ctx.input(0)?;
    ensure!(
        logits.rank() == 2,
        invalid_argument,
        "logits should be a matrix, got shape {}",
        dims_text(logits)
    );
    let n = ctx.input(1)?;
    ensure!(
        n.rank() == 0,
        invalid_argument,
        "num_samples should be a scalar, got shape {}",
        dims_text(n)
    );
    let num_samples = n.scalar_i64()?;
    if num_samples < 0 {
        bail!(
            invalid_argument,
            "num_samples should be nonnegative, got {num_samples}"
        );
    }
    let (batch, classes) = (logits.dims()[0], logits.dims()[1]);
    ensure!(
        classes != 0,
        invalid_argument,
        "num_classes should be positive, got {classes}"
    );
    let ns = num_samples as usize;
    Tensor::check_allocation("Multinomial", out, &[batch, ns])?;
    let gen = match (gen, stream) {
        (Some(g), _) => g,
        // TF: ReserveRandomOutputs(batch * ceil4(num_samples) * 2, 256).
        (None, Some(s)) => s.reserve(256 * (batch * ns.div_ceil(4) * 4 * 2) as u64),
        _ => unreachable!("a generator or a stream"),
    };
    let l = logits.to_f64_vec()?;
    let v = multinomial(&gen, &l, batch, classes, ns);
    let t = Tensor::from_vec([batch, ns], v)?;
    ctx.output(ferroflow_tensor::kernels::elementwise::cast(&t, out)?);
    Ok(())
}

/// Row-major index of each element of `out` in a tensor of shape `from`
/// broadcast to `out`.
fn broadcast_index(from: &[usize], out: &[usize]) -> Vec<usize> {
    let n: usize = out.iter().product();
    let off = out.len() - from.len();
    let mut idx = vec![0usize; n];
    for (i, slot) in idx.iter_mut().enumerate() {
        let (mut rem, mut src, mut stride) = (i, 0usize, 1usize);
        for d in (0..out.len()).rev() {
            let k = rem % out[d];
            rem /= out[d];
            if d >= off {
                let fd = from[d - off];
                if fd != 1 {
                    src += k * stride;
                }
                stride *= fd;
            }
        }
        *slot = src;
    }
    idx
}

fn narrower(d: DType) -> fn(f64) -> f64 {
    match d {
        DType::Float16 => |x| f16::from_f64(x).to_f64(),
        DType::Float32 => |x| x as f32 as f64,
        _ => |x| x,
    }
}

/// `max(1, n)` samples per parameter: output `[samples..., params...]`.
fn samples_per(shape: &Shape, params: &[usize], op: &str, what: &str) -> Result<usize> {
    let d = shape.dims();
    if d.len() < params.len() || d[d.len() - params.len()..] != *params {
        bail!(
            invalid_argument,
            "{op}: Shape passed in must end with broadcasted shape ({what} has shape [{}], shape is [{}])",
            params.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","),
            d.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
        );
    }
    let np: usize = params.iter().product();
    ensure!(
        np != 0,
        invalid_argument,
        "{op}: Input {what} should have non-zero element count, got: 0"
    );
    Ok(shape.num_elements() / np)
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    for (v1, v2, dist) in FLOAT_OPS {
        reg(
            v1,
            factory(move |init| {
                let dtype = init.node.attrs.dtype("dtype")?;
                boxed(move |ctx| {
                    let shape = shape_input(ctx, 0, v1, dtype)?;
                    let gen = from_seed(ctx.input(1)?)?;
                    ctx.output(stateless_float(&gen, dist, &shape, dtype)?);
                    Ok(())
                })
            }),
        );
        reg(
            v2,
            factory(move |init| {
                let dtype = init.node.attrs.dtype("dtype")?;
                boxed(move |ctx| {
                    let shape = shape_input(ctx, 0, v2, dtype)?;
                    let gen = from_key_counter(ctx.input(1)?, ctx.input(2)?, ctx.input(3)?)?;
                    ctx.output(stateless_float(&gen, dist, &shape, dtype)?);
                    Ok(())
                })
            }),
        );
    }
    for (name, v2) in [
        ("StatelessRandomUniformInt", false),
        ("StatelessRandomUniformIntV2", true),
    ] {
        reg(
            name,
            factory(move |_| {
                boxed(move |ctx| {
                    let (lo_i, gen) = if v2 {
                        (
                            4,
                            from_key_counter(ctx.input(1)?, ctx.input(2)?, ctx.input(3)?)?,
                        )
                    } else {
                        (2, from_seed(ctx.input(1)?)?)
                    };
                    let (lo, hi) = (ctx.input(lo_i)?, ctx.input(lo_i + 1)?);
                    for (t, what) in [(lo, "minval"), (hi, "maxval")] {
                        ensure!(
                            t.rank() == 0,
                            invalid_argument,
                            "{what} must be 0-D, got shape {}",
                            dims_text(t)
                        );
                    }
                    let dtype = lo.dtype();
                    let range = (lo.scalar_i64()?, hi.scalar_i64()?);
                    let shape = shape_input(ctx, 0, name, dtype)?;
                    if shape.num_elements() == 0 {
                        ctx.output(Tensor::zeros(dtype, shape));
                        return Ok(());
                    }
                    ctx.output(stateless_int(&gen, &shape, dtype, Some(range))?);
                    Ok(())
                })
            }),
        );
    }
    for (name, v2) in [
        ("StatelessRandomUniformFullInt", false),
        ("StatelessRandomUniformFullIntV2", true),
    ] {
        reg(
            name,
            factory(move |init| {
                let dtype = init.node.attrs.dtype("dtype")?;
                boxed(move |ctx| {
                    let gen = if v2 {
                        from_key_counter(ctx.input(1)?, ctx.input(2)?, ctx.input(3)?)?
                    } else {
                        from_seed(ctx.input(1)?)?
                    };
                    let shape = shape_input(ctx, 0, name, dtype)?;
                    ctx.output(stateless_int(&gen, &shape, dtype, None)?);
                    Ok(())
                })
            }),
        );
    }
    for name in [
        "StatelessRandomGetKeyCounter",
        "StatelessRandomGetKeyCounterAlg",
    ] {
        reg(
            name,
            factory(move |_| {
                boxed(move |ctx| {
                    let g = from_seed(ctx.input(0)?)?;
                    let c = g.counter_u64();
                    ctx.output(Tensor::vector(vec![g.key_u64() as i64]));
                    ctx.output(Tensor::vector(vec![c[0] as i64, c[1] as i64]));
                    if name.ends_with("Alg") {
                        ctx.output(Tensor::scalar(ALG_PHILOX as i32));
                    }
                    Ok(())
                })
            }),
        );
    }
    reg(
        "StatelessRandomGetAlg",
        factory(|_| {
            boxed(|ctx| {
                ctx.output(Tensor::scalar(ALG_PHILOX as i32));
                Ok(())
            })
        }),
    );
    reg(
        "StatelessMultinomial",
        factory(|init| {
            let out = init.node.attrs.dtype_or("output_dtype", DType::Int64)?;
            boxed(move |ctx| {
                let gen = from_seed(ctx.input(2)?)?;
                multinomial_kernel(ctx, Some(gen), None, out)
            })
        }),
    );
    reg(
        "Multinomial",
        factory(|init| {
            let out = init.node.attrs.dtype_or("output_dtype", DType::Int64)?;
            let st = stream(init)?;
            boxed(move |ctx| multinomial_kernel(ctx, None, Some(&st), out))
        }),
    );
    // Gamma: stateless V2 (seed) and V3 (key/counter/alg), and stateful.
    for (name, alpha_i) in [("StatelessRandomGammaV2", 2), ("StatelessRandomGammaV3", 4)] {
        reg(
            name,
            factory(move |_| {
                boxed(move |ctx| {
                    let alpha = ctx.input(alpha_i)?;
                    let dtype = alpha.dtype();
                    let shape = shape_input(ctx, 0, name, dtype)?;
                    let gen = if alpha_i == 2 {
                        from_seed(ctx.input(1)?)?
                    } else {
                        from_key_counter(ctx.input(1)?, ctx.input(2)?, ctx.input(3)?)?
                    };
                    if shape.num_elements() == 0 {
                        ctx.output(Tensor::zeros(dtype, shape));
                        return Ok(());
                    }
                    let per = samples_per(&shape, alpha.dims(), name, "alpha")?;
                    let v = gamma(&gen, &alpha.to_f64_vec()?, per);
                    ctx.output(from_f64s(shape, v, dtype)?);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "RandomGamma",
        factory(|init| {
            let st = stream(init)?;
            boxed(move |ctx| {
                let alpha = ctx.input(1)?;
                let dtype = alpha.dtype();
                let mut dims = ctx.input(0)?.to_i64_vec()?;
                dims.extend(alpha.dims().iter().map(|&d| d as i64));
                let shape = Shape::from_i64(&dims)?;
                Tensor::check_allocation("RandomGamma", dtype, shape.dims())?;
                let n = shape.num_elements();
                if n == 0 {
                    ctx.output(Tensor::zeros(dtype, shape));
                    return Ok(());
                }
                let gen = st.reserve(256 * n as u64);
                let v = gamma(&gen, &alpha.to_f64_vec()?, n / alpha.num_elements());
                ctx.output(from_f64s(shape, v, dtype)?);
                Ok(())
            })
        }),
    );
    reg(
        "RandomGammaGrad",
        factory(|_| {
            boxed(|ctx| {
                let (a, x) = (ctx.input(0)?, ctx.input(1)?);
                let dtype = a.dtype();
                let out = broadcast_shapes(a.dims(), x.dims()).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "RandomGammaGrad: Incompatible shapes: {} vs. {}",
                        dims_text(a),
                        dims_text(x)
                    ))
                })?;
                let (ia, ix) = (
                    broadcast_index(a.dims(), out.dims()),
                    broadcast_index(x.dims(), out.dims()),
                );
                let (av, xv) = (a.to_f64_vec()?, x.to_f64_vec()?);
                let v: Vec<f64> = ia
                    .iter()
                    .zip(&ix)
                    .map(|(&i, &j)| gamma_sample_grad(av[i], xv[j]))
                    .collect();
                ctx.output(from_f64s(out, v, dtype)?);
                Ok(())
            })
        }),
    );
    // Poisson: stateless (seed) and stateful V1/V2.
    reg(
        "StatelessRandomPoisson",
        factory(|init| {
            let dtype = init.node.attrs.dtype("dtype")?;
            boxed(move |ctx| {
                let shape = shape_input(ctx, 0, "StatelessRandomPoisson", dtype)?;
                let gen = from_seed(ctx.input(1)?)?;
                let rate = ctx.input(2)?;
                if shape.num_elements() == 0 {
                    ctx.output(Tensor::zeros(dtype, shape));
                    return Ok(());
                }
                let per = samples_per(&shape, rate.dims(), "StatelessRandomPoisson", "rate")?;
                let double = true; // TF computes in double for every rate dtype.
                let v = poisson(&gen, &rate.to_f64_vec()?, per, double);
                ctx.output(from_f64s(shape, v, dtype)?);
                Ok(())
            })
        }),
    );
    for name in ["RandomPoisson", "RandomPoissonV2"] {
        reg(
            name,
            factory(move |init| {
                let st = stream(init)?;
                let attr_dtype = init.node.attrs.dtype_or("dtype", DType::Float32)?;
                boxed(move |ctx| {
                    let rate = ctx.input(1)?;
                    let dtype = if name == "RandomPoisson" {
                        rate.dtype()
                    } else {
                        attr_dtype
                    };
                    let mut dims = ctx.input(0)?.to_i64_vec()?;
                    dims.extend(rate.dims().iter().map(|&d| d as i64));
                    let shape = Shape::from_i64(&dims)?;
                    Tensor::check_allocation(name, dtype, shape.dims())?;
                    let n = shape.num_elements();
                    if n == 0 {
                        ctx.output(Tensor::zeros(dtype, shape));
                        return Ok(());
                    }
                    let gen = st.reserve(256 * n as u64);
                    let double = true; // TF computes in double for every rate dtype.
                    let v = poisson(&gen, &rate.to_f64_vec()?, n / rate.num_elements(), double);
                    ctx.output(from_f64s(shape, v, dtype)?);
                    Ok(())
                })
            }),
        );
    }
    reg(
        "StatelessRandomBinomial",
        factory(|init| {
            let dtype = init.node.attrs.dtype_or("dtype", DType::Int64)?;
            boxed(move |ctx| {
                let op = "StatelessRandomBinomial";
                let shape = shape_input(ctx, 0, op, dtype)?;
                let gen = from_seed(ctx.input(1)?)?;
                let (counts, probs) = (ctx.input(2)?, ctx.input(3)?);
                let b = broadcast_shapes(counts.dims(), probs.dims()).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "counts and probs must have compatible batch dimensions: {} vs. {}",
                        dims_text(counts),
                        dims_text(probs)
                    ))
                })?;
                let per = if shape.num_elements() == 0 {
                    0
                } else {
                    samples_per(&shape, b.dims(), op, "counts and probs (broadcast)")?
                };
                let v = binomial_values(&gen, &shape, counts, probs, b.dims(), per)?;
                ctx.output(from_f64s(shape, v, dtype)?);
                Ok(())
            })
        }),
    );
    reg(
        "StatelessParameterizedTruncatedNormal",
        factory(|_| {
            boxed(|ctx| {
                let op = "StatelessParameterizedTruncatedNormal";
                let dtype = ctx.input(2)?.dtype();
                let shape = shape_input(ctx, 0, op, dtype)?;
                let gen = from_seed(ctx.input(1)?)?;
                let params: Vec<Tensor> = (2..6)
                    .map(|i| ctx.input(i).cloned())
                    .collect::<Result<_>>()?;
                let mut b = Shape::new(&[]);
                for p in &params {
                    b = broadcast_shapes(b.dims(), p.dims()).ok_or_else(|| {
                        Error::invalid_argument(format!(
                            "{op}: means, stddevs, minvals, maxvals must have compatible batch dimensions: {}",
                            params.iter().map(dims_text).collect::<Vec<_>>().join(" vs. ")
                        ))
                    })?;
                }
                if shape.num_elements() == 0 {
                    ctx.output(Tensor::zeros(dtype, shape));
                    return Ok(());
                }
                let per = samples_per(&shape, b.dims(), op, "the parameters (broadcast)")?;
                let idx: Vec<Vec<usize>> = params
                    .iter()
                    .map(|p| broadcast_index(p.dims(), b.dims()))
                    .collect();
                let vals: Vec<Vec<f64>> = params
                    .iter()
                    .map(|p| p.to_f64_vec())
                    .collect::<Result<_>>()?;
                let nb = b.num_elements();
                let v: Vec<f64> = if dtype == DType::Float64 {
                    parameterized_truncated_normal::<f64>(&gen, nb, per, |k| TruncParams {
                        mean: vals[0][idx[0][k]],
                        stddev: vals[1][idx[1][k]],
                        minval: vals[2][idx[2][k]],
                        maxval: vals[3][idx[3][k]],
                    })?
                } else {
                    parameterized_truncated_normal::<f32>(&gen, nb, per, |k| TruncParams {
                        mean: vals[0][idx[0][k]] as f32,
                        stddev: vals[1][idx[1][k]] as f32,
                        minval: vals[2][idx[2][k]] as f32,
                        maxval: vals[3][idx[3][k]] as f32,
                    })?
                    .into_iter()
                    .map(|x| x as f64)
                    .collect()
                };
                ctx.output(from_f64s(shape, v, dtype)?);
                Ok(())
            })
        }),
    );
    reg(
        "RngReadAndSkip",
        factory(|_| {
            boxed(|ctx| {
                let alg = ctx.input(1)?.scalar_i64()?;
                let delta = ctx.input(2)?.scalar_i64()? as u64;
                let var = ctx.input_ref(0)?.clone();
                let old = advance_state(&var, alg, |_| delta.wrapping_mul(256))?;
                ctx.output(old);
                Ok(())
            })
        }),
    );
    reg(
        "StatefulRandomBinomial",
        factory(|init| {
            let dtype = init.node.attrs.dtype_or("dtype", DType::Int64)?;
            boxed(move |ctx| {
                let op = "StatefulRandomBinomial";
                let alg = ctx.input(1)?.scalar_i64()?;
                let shape = shape_input(ctx, 2, op, dtype)?;
                let (counts, probs) = (ctx.input(3)?.clone(), ctx.input(4)?.clone());
                let b = broadcast_shapes(counts.dims(), probs.dims()).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "counts and probs must have compatible batch dimensions: {} vs. {}",
                        dims_text(&counts),
                        dims_text(&probs)
                    ))
                })?;
                let per = if shape.num_elements() == 0 {
                    1
                } else {
                    samples_per(&shape, b.dims(), op, "counts and probs (broadcast)")?
                };
                let num_batches = b.num_elements() as u64;
                let var = ctx.input_ref(0)?.clone();
                // TensorFlow reserves 256 * num_batches * 2 * 100 * (samples + 3) / 4 blocks.
                let old = advance_state(&var, alg, |_| {
                    num_batches * 2 * 100 * (per as u64 + 3) / 4 * 256
                })?;
                let s = old.to_i64_vec()?;
                let gen = PhiloxRandom::from_key_counter(s[2] as u64, [s[0] as u64, s[1] as u64]);
                let v = binomial_values(&gen, &shape, &counts, &probs, b.dims(), per)?;
                ctx.output(from_f64s(shape, v, dtype)?);
                Ok(())
            })
        }),
    );
    reg(
        "RandomIndexShuffle",
        factory(|init| {
            let rounds = init.node.attrs.int_or("rounds", 4)?;
            boxed(move |ctx| {
                let (index, seed, max_index) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
                ensure!(
                    seed.num_elements() == 3,
                    invalid_argument,
                    "RandomIndexShuffle: seed must have 3 elements, got shape {}",
                    dims_text(seed)
                );
                let s = seed.to_i64_vec()?;
                let m = max_index.to_i64_vec()?;
                ensure!(
                    m.len() == 1,
                    invalid_argument,
                    "RandomIndexShuffle: max_index must be a scalar"
                );
                let v: Vec<i64> = index
                    .to_i64_vec()?
                    .into_iter()
                    .map(|i| {
                        index_shuffle(
                            i as u64,
                            [s[0] as u64, s[1] as u64, s[2] as u64],
                            m[0] as u64,
                            rounds as u32,
                        ) as i64
                    })
                    .collect();
                let t = Tensor::from_vec(index.shape().clone(), v)?;
                ctx.output(ferroflow_tensor::kernels::elementwise::cast(
                    &t,
                    index.dtype(),
                )?);
                Ok(())
            })
        }),
    );
}

/// Binomial samples for `shape` (`[samples..., batch...]`), TensorFlow's
/// output order and per-output generator offsets.
fn binomial_values(
    gen: &PhiloxRandom,
    shape: &Shape,
    counts: &Tensor,
    probs: &Tensor,
    batch_dims: &[usize],
    per: usize,
) -> Result<Vec<f64>> {
    let num_batches: usize = batch_dims.iter().product();
    let ic = broadcast_index(counts.dims(), batch_dims);
    let ip = broadcast_index(probs.dims(), batch_dims);
    let (cv, pv) = (counts.to_f64_vec()?, probs.to_f64_vec()?);
    let narrow = narrower(counts.dtype());
    let n = shape.num_elements();
    let mut v = vec![0f64; n];
    for (pos, slot) in v.iter_mut().enumerate() {
        let (sample, batch) = (pos / num_batches, pos % num_batches);
        let out_idx = (batch * per + sample) as u64;
        *slot = binomial_sample(gen, out_idx, cv[ic[batch]], pv[ip[batch]], narrow);
    }
    Ok(v)
}

/// Reads a Generator's int64 state `[counter_lo, counter_hi, key]`, moves
/// its 128-bit counter on by `blocks(old)`, and returns the old state.
fn advance_state(
    var: &crate::resources::Variable,
    alg: i64,
    blocks: impl Fn(&[i64]) -> u64,
) -> Result<Tensor> {
    if alg != ALG_PHILOX && alg != ALG_AUTO_SELECT {
        bail!(invalid_argument, "Unsupported algorithm id: {alg}");
    }
    let mut guard = var.lock();
    let cur = guard.as_ref().ok_or_else(|| var.uninitialized())?.clone();
    if cur.dtype() != DType::Int64 || cur.rank() != 1 {
        bail!(
            invalid_argument,
            "RNG state must be a 1-D int64 variable, got {} of shape {}",
            cur.dtype(),
            dims_text(&cur)
        );
    }
    let s = cur.to_i64_vec()?;
    if s.len() < 3 {
        bail!(
            invalid_argument,
            "For the Philox algorithm, the size of state must be at least 3; got {}",
            s.len()
        );
    }
    let ctr = (s[0] as u64 as u128) | ((s[1] as u64 as u128) << 64);
    let next = ctr.wrapping_add(blocks(&s) as u128);
    let mut ns = s.clone();
    ns[0] = next as u64 as i64;
    ns[1] = (next >> 64) as u64 as i64;
    *guard = Some(Tensor::vector(ns));
    Ok(Tensor::vector(s[..3].to_vec()))
}

/// A bijection of `[0, max_index]` keyed by `seed`: a Feistel network over
/// the smallest even number of bits covering the range, with Philox as the
/// round function and cycle-walking back into range.
fn index_shuffle(index: u64, seed: [u64; 3], max_index: u64, rounds: u32) -> u64 {
    if max_index == 0 {
        return 0;
    }
    let index = index.min(max_index);
    let bits = (64 - max_index.leading_zeros()).max(2).div_ceil(2) * 2;
    let half = bits / 2;
    let mask = (1u64 << half) - 1;
    let key = [
        seed[0] as u32 ^ (seed[2] as u32),
        (seed[1] as u32) ^ ((seed[2] >> 32) as u32),
    ];
    let mut x = index;
    loop {
        let (mut l, mut r) = (x >> half, x & mask);
        for round in 0..rounds.max(1) {
            let f = philox4x32_10(
                [r as u32, (r >> 32) as u32, round, (seed[0] >> 32) as u32],
                key,
            )[0] as u64
                & mask;
            let nl = r;
            r = l ^ f;
            l = nl;
        }
        x = (l << half) | r;
        if x <= max_index {
            return x;
        }
    }
}
