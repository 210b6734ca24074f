//! The facade's learning-rate schedules against the values real TensorFlow 2.21 computed in
//! graph mode (`tests/fixtures/golden/lr_schedules`, the team's golden set): each recorded case
//! is built from its manifest entry and evaluated at every recorded step through a fed int64
//! global step. The random `noisy_linear_cosine_decay` is not in the facade.

mod common;

use common::{assert_close, fixture, read_json, read_npz};
use ferroflow::train::{
    cosine_decay, cosine_decay_restarts, exponential_decay, inverse_time_decay,
    linear_cosine_decay, natural_exp_decay, piecewise_constant, polynomial_decay, Hyper,
};
use ferroflow::{Code, DType, GraphBuilder, Output, PartialShape, Session, Tensor};
use serde_json::Value as Json;

/// A keyword argument: a number, or `{"float64": x}` for `tf.constant(x, tf.float64)`.
fn hyper(g: &mut GraphBuilder, kwargs: &Json, key: &str, default: f64) -> Hyper {
    match &kwargs[key] {
        Json::Null => Hyper::Value(default),
        Json::Object(m) => {
            let (dtype, v) = m.iter().next().unwrap();
            assert_eq!(dtype, "float64");
            Hyper::Tensor(
                g.constant(Tensor::scalar(v.as_f64().unwrap()), key)
                    .unwrap(),
            )
        }
        v => Hyper::Value(v.as_f64().unwrap()),
    }
}

fn build(g: &mut GraphBuilder, case: &Json, step: Output) -> Output {
    let kw = &case["kwargs"];
    let api = case["api"].as_str().unwrap().rsplit('.').next().unwrap();
    let mut h = |k: &str, d: f64| hyper(g, kw, k, d);
    let lr = h("learning_rate", f64::NAN);
    let staircase = kw["staircase"].as_bool().unwrap_or(false);
    match api {
        "exponential_decay" => {
            let (ds, rate) = (h("decay_steps", 0.0), h("decay_rate", 0.0));
            exponential_decay(g, lr, step, ds, rate, staircase)
        }
        "natural_exp_decay" => {
            let (ds, rate) = (h("decay_steps", 0.0), h("decay_rate", 0.0));
            natural_exp_decay(g, lr, step, ds, rate, staircase)
        }
        "inverse_time_decay" => {
            let (ds, rate) = (h("decay_steps", 0.0), h("decay_rate", 0.0));
            inverse_time_decay(g, lr, step, ds, rate, staircase)
        }
        "polynomial_decay" => {
            let (ds, end, power) = (
                h("decay_steps", 0.0),
                h("end_learning_rate", 0.0001),
                h("power", 1.0),
            );
            let cycle = kw["cycle"].as_bool().unwrap_or(false);
            polynomial_decay(g, lr, step, ds, end, power, cycle)
        }
        "cosine_decay" => {
            let (ds, alpha) = (h("decay_steps", 0.0), h("alpha", 0.0));
            cosine_decay(g, lr, step, ds, alpha)
        }
        "cosine_decay_restarts" => {
            let first = h("first_decay_steps", 0.0);
            let (t, m, alpha) = (h("t_mul", 2.0), h("m_mul", 1.0), h("alpha", 0.0));
            cosine_decay_restarts(g, lr, step, first, t, m, alpha)
        }
        "linear_cosine_decay" => {
            let ds = h("decay_steps", 0.0);
            let (p, alpha, beta) = (h("num_periods", 0.5), h("alpha", 0.0), h("beta", 0.001));
            linear_cosine_decay(g, lr, step, ds, p, alpha, beta)
        }
        "piecewise_constant" => {
            let bounds: Vec<i64> = kw["boundaries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b.as_i64().unwrap())
                .collect();
            let values: Vec<Hyper> = kw["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| Hyper::Value(v.as_f64().unwrap()))
                .collect();
            piecewise_constant(g, step, &bounds, &values)
        }
        other => panic!("schedule {other}"),
    }
    .unwrap()
}

#[test]
fn every_recorded_schedule() {
    let dir = fixture("golden/lr_schedules");
    let meta = read_json(&dir.join("lr_schedules.json"));
    let data = read_npz(&dir.join("lr_schedules.npz"));
    assert_eq!(meta["global_step_placeholder_dtype"], "int64");
    let steps: Vec<i64> = meta["global_steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_i64().unwrap())
        .collect();
    let mut checked = 0;
    for case in meta["cases"].as_array().unwrap() {
        if case["random"].as_bool().unwrap_or(false) {
            continue;
        }
        let name = case["case"].as_str().unwrap();
        let mut g = GraphBuilder::new();
        let step = g
            .placeholder(DType::Int64, PartialShape::scalar(), "global_step")
            .unwrap();
        let lr = build(&mut g, case, step);
        let dtype = match case["output_dtype"].as_str().unwrap() {
            "float32" => DType::Float32,
            "float64" => DType::Float64,
            other => panic!("{other}"),
        };
        assert_eq!(g.dtype(lr), dtype, "{name}");
        let rtol = if dtype == DType::Float32 { 1e-6 } else { 1e-12 };
        let sess = Session::new(g.graph());
        let got: Vec<f64> = steps
            .iter()
            .map(|&s| {
                sess.run(vec![(step, Tensor::scalar(s))], &[lr], &[])
                    .unwrap()[0]
                    .scalar_f64()
                    .unwrap()
            })
            .collect();
        let want = &data[case["npz_key"].as_str().unwrap()];
        assert_close(&got, &want.values, rtol, 0.0, name);
        checked += 1;
    }
    assert!(checked >= 17, "only {checked} cases");
}

#[test]
fn schedules_take_tensors_and_check_their_arguments() {
    let mut g = GraphBuilder::new();
    let step = g
        .placeholder(DType::Int64, PartialShape::scalar(), "step")
        .unwrap();
    // A fed decay rate is not folded: the plain form.
    let rate = g
        .placeholder(DType::Float32, PartialShape::scalar(), "rate")
        .unwrap();
    let lr = exponential_decay(&mut g, 0.5, step, 4.0, rate, false).unwrap();
    assert_eq!(g.graph().read().node(lr.node).name, "ExponentialDecay");
    let sess = Session::new(g.graph());
    let out = sess
        .run(
            vec![(step, Tensor::scalar(8i64)), (rate, Tensor::scalar(0.5f32))],
            &[lr],
            &[],
        )
        .unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[0.125]);

    let err = piecewise_constant(&mut g, step, &[1, 2], &[Hyper::Value(1.0)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "The length of boundaries should be 1 less than the length of values"
    );
    let lr64 = g.constant(Tensor::scalar(0.1f64), "lr64").unwrap();
    let err = cosine_decay(&mut g, lr64, step, 10.0, 0.0).unwrap_err();
    assert!(
        err.to_string().contains("does not match type float32"),
        "{err}"
    );
    let err = polynomial_decay(&mut g, lr64, step, 10.0, 0.0001, 1.0, true).unwrap_err();
    assert!(matches!(err, ferroflow::Error::Type(_)), "{err}");
    assert_eq!(err.code(), None::<Code>);
}
