//! Plans run `MatMul -> BiasAdd/AddV2 -> Relu` as one fused product
//! (crates/runtime/src/plan/fusion.rs). Fetching a chain's middle value keeps
//! it apart, so each test compares a fused run with an unfused one of the
//! same graph, bit for bit.

use ferroflow::train::Optimizer;
use ferroflow::{AttrValue, DType, GraphBuilder, NodeId, Output, PartialShape, Session, Tensor};

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            ((i as u32 ^ seed).wrapping_mul(2_654_435_761) >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        })
        .collect()
}

fn bits(t: &Tensor) -> Vec<u32> {
    t.as_slice::<f32>()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

fn matmul(g: &mut GraphBuilder, x: Output, w: Output, ta: bool, tb: bool) -> Output {
    let node = g
        .add(
            "MatMul",
            "MatMul",
            &[x, w],
            vec![
                ("T", AttrValue::Type(DType::Float32)),
                ("transpose_a", AttrValue::Bool(ta)),
                ("transpose_b", AttrValue::Bool(tb)),
            ],
        )
        .unwrap();
    Output::new(node, 0)
}

fn bias_add(g: &mut GraphBuilder, x: Output, b: Output) -> Output {
    let node = g
        .add(
            "BiasAdd",
            "BiasAdd",
            &[x, b],
            vec![("T", AttrValue::Type(DType::Float32))],
        )
        .unwrap();
    Output::new(node, 0)
}

/// How the bias joins the product.
#[derive(Clone, Copy, Debug)]
enum Join {
    BiasAdd,
    AddAfter,
    AddBefore,
}

#[test]
fn fused_dense_layers_give_the_unfused_bits() {
    let (m, k, n) = (37, 70, 45);
    for join in [Join::BiasAdd, Join::AddAfter, Join::AddBefore] {
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            for relu in [false, true] {
                let mut g = GraphBuilder::new();
                let x = g
                    .placeholder(
                        DType::Float32,
                        PartialShape::from_dims(vec![None, None]),
                        "x",
                    )
                    .unwrap();
                let w_dims = if tb { [n, k] } else { [k, n] };
                let w = g
                    .constant(Tensor::from_vec(w_dims, data(k * n, 3)).unwrap(), "w")
                    .unwrap();
                let b = g
                    .constant(Tensor::from_vec([n], data(n, 5)).unwrap(), "b")
                    .unwrap();
                let mm = matmul(&mut g, x, w, ta, tb);
                let sum = match join {
                    Join::BiasAdd => bias_add(&mut g, mm, b),
                    Join::AddAfter => g.add_v2(mm, b).unwrap(),
                    Join::AddBefore => g.add_v2(b, mm).unwrap(),
                };
                let y = if relu { g.relu(sum).unwrap() } else { sum };
                let sess = Session::new(g.graph());
                // NaN, infinities and signed zeros reach the bias add and relu.
                let mut xs = data(m * k, 11);
                xs[3] = f32::NAN;
                xs[k + 1] = f32::INFINITY;
                xs[2 * k] = -0.0;
                let x_dims = if ta { [k, m] } else { [m, k] };
                let feed = || vec![(x, Tensor::from_vec(x_dims, xs.clone()).unwrap())];
                let plan = sess.inner().prepare(&[x], &[y], &[]).unwrap();
                assert_eq!(plan.fused_layers(), 1);
                let fused = sess.run(feed(), &[y], &[]).unwrap();
                let apart = sess.run(feed(), &[y, mm, sum], &[]).unwrap();
                let what = format!("{join:?} ta={ta} tb={tb} relu={relu}");
                assert_eq!(bits(&fused[0]), bits(&apart[0]), "{what}");
                assert_eq!(fused[0].dims(), &[m, n], "{what}");
                // And against a plain reference for the finite rows.
                let want = reference(&xs, &data(k * n, 3), &data(n, 5), (m, k, n), (ta, tb), relu);
                let got = fused[0].as_slice::<f32>().unwrap();
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        g == w
                            || (g.is_nan() && w.is_nan())
                            || (g - w).abs() <= 1e-4 * (1.0 + w.abs()),
                        "{what}: element {i}: {g} vs {w}"
                    );
                }
            }
        }
    }
}

fn reference(
    x: &[f32],
    w: &[f32],
    b: &[f32],
    (m, k, n): (usize, usize, usize),
    (ta, tb): (bool, bool),
    relu: bool,
) -> Vec<f32> {
    let mut out = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f64;
            for p in 0..k {
                let xv = if ta { x[p * m + i] } else { x[i * k + p] };
                let wv = if tb { w[j * k + p] } else { w[p * n + j] };
                acc += xv as f64 * wv as f64;
            }
            let v = acc as f32 + b[j];
            out[i * n + j] = if relu && !(v > 0.0 || v.is_nan()) {
                0.0
            } else {
                v
            };
        }
    }
    out
}

/// A bias produced after the product in graph order (an op built later)
/// keeps the chain apart, and the plan still runs.
#[test]
fn a_bias_computed_after_the_product_is_left_alone() {
    let mut g = GraphBuilder::new();
    let x = g
        .constant(Tensor::from_vec([2, 3], data(6, 1)).unwrap(), "x")
        .unwrap();
    let w = g
        .constant(Tensor::from_vec([3, 4], data(12, 2)).unwrap(), "w")
        .unwrap();
    let mm = matmul(&mut g, x, w, false, false);
    let b0 = g
        .constant(Tensor::from_vec([4], data(4, 3)).unwrap(), "b0")
        .unwrap();
    let b = g.relu(b0).unwrap();
    let y = g.add_v2(mm, b).unwrap();
    let y = g.relu(y).unwrap();
    let sess = Session::new(g.graph());
    let plan = sess.inner().prepare(&[], &[y], &[]).unwrap();
    assert_eq!(plan.fused_layers(), 0);
    let fused = sess.run(vec![], &[y], &[]).unwrap();
    let apart = sess.run(vec![], &[y, mm], &[]).unwrap();
    assert_eq!(bits(&fused[0]), bits(&apart[0]));
}

/// A few Adam steps of a two-layer network: fused and unfused plans train
/// to the same bits.
#[test]
fn training_through_fused_layers_gives_the_unfused_bits() {
    let train = |keep_apart: bool| -> Vec<Vec<u32>> {
        let mut g = GraphBuilder::new();
        let x = g
            .constant(Tensor::from_vec([16, 12], data(16 * 12, 1)).unwrap(), "x")
            .unwrap();
        let mut vars = Vec::new();
        let mut middles = Vec::new();
        let mut h = x;
        for (i, (fan_in, fan_out)) in [(12usize, 20usize), (20, 3)].into_iter().enumerate() {
            let w = g
                .variable(
                    "w",
                    Tensor::from_vec([fan_in, fan_out], data(fan_in * fan_out, 7 + i as u32))
                        .unwrap(),
                )
                .unwrap();
            let b = g
                .variable("b", Tensor::from_vec([fan_out], data(fan_out, 9)).unwrap())
                .unwrap();
            let mm = matmul(&mut g, h, w.value, false, false);
            // AddV2's gradient reads the product's shape (a Shape op), which
            // leaves it fusable; BiasAdd's reads nothing of it.
            let sum = if i == 0 {
                g.add_v2(mm, b.value).unwrap()
            } else {
                bias_add(&mut g, mm, b.value)
            };
            middles.push(mm);
            h = if i == 0 { g.relu(sum).unwrap() } else { sum };
            vars.push(w);
            vars.push(b);
        }
        let labels = g
            .constant(
                Tensor::vector((0..16).map(|i| i % 3).collect::<Vec<i32>>()),
                "labels",
            )
            .unwrap();
        let xent = g.sparse_softmax_cross_entropy(h, labels).unwrap();
        let loss = g.reduce_mean(xent).unwrap();
        let mut opt = Optimizer::adam(0.05);
        let step = opt.minimize(&mut g, loss, Some(&vars), None).unwrap();
        let sess = Session::new(g.graph());
        let mut init: Vec<NodeId> = vars.iter().map(|v| v.initializer).collect();
        init.extend(opt.initializers(&g));
        sess.run(vec![], &[], &init).unwrap();
        let fetches = if keep_apart { middles } else { vec![] };
        let plan = sess.inner().prepare(&[], &fetches, &[step]).unwrap();
        assert_eq!(plan.fused_layers(), if keep_apart { 0 } else { 2 });
        for _ in 0..4 {
            sess.run(vec![], &fetches, &[step]).unwrap();
        }
        let values: Vec<Output> = vars.iter().map(|v| v.value).collect();
        sess.run(vec![], &values, &[])
            .unwrap()
            .iter()
            .map(bits)
            .collect()
    };
    assert_eq!(train(false), train(true));
}
