//! The facade's ten optimizers against every case recorded from real TensorFlow 2.21
//! (`tests/fixtures/golden/optimizers/*.json` + `.npz`, the team's golden set): the gradients
//! of each step are fed to `apply_gradients`, and the variable, slot and non-slot values after
//! every step, the slot names and the order in which variables are created must be
//! TensorFlow's. Every case, argument, shape and value comes from the fixtures.

mod common;

use common::{assert_close, fixture, read_json, read_npz, Array};
use ferroflow::train::{
    get_or_create_global_step, Adadelta, Adagrad, AdagradDA, Adam, Config, Ftrl, Grad,
    GradientDescent, Hyper, Momentum, Optimizer, ProximalAdagrad, ProximalGradientDescent, RMSProp,
};
use ferroflow::{DType, GraphBuilder, Output, PartialShape, Session, Tensor};
use serde_json::Value as Json;
use std::collections::BTreeMap;

fn dtype_of(name: &str) -> DType {
    match name {
        "float16" => DType::Float16,
        "float32" => DType::Float32,
        "float64" => DType::Float64,
        "int32" => DType::Int32,
        "int64" => DType::Int64,
        other => panic!("dtype {other}"),
    }
}

/// The constructor arguments named in `hyperparameters_passed_as` as tensors of the case dtype.
fn tensor_args(spec: &Json) -> Vec<String> {
    let Some(text) = spec["hyperparameters_passed_as"]["tensors"].as_str() else {
        return Vec::new();
    };
    let list = text.split_once("for").unwrap().1;
    list.split('\'')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The optimizer of a case, from its API name and constructor kwargs.
fn optimizer(g: &mut GraphBuilder, spec: &Json, dtype: DType, step: Option<Output>) -> Optimizer {
    let as_tensors = tensor_args(spec);
    let kwargs = spec["constructor_kwargs"].as_object().unwrap();
    let mut h = |key: &str| -> Option<Hyper> {
        let v = kwargs.get(key)?.as_f64().unwrap();
        Some(if as_tensors.iter().any(|k| k == key) {
            let t = ferroflow::kernels::elementwise::cast(&Tensor::scalar(v), dtype).unwrap();
            Hyper::Tensor(g.constant(t, key).unwrap())
        } else {
            Hyper::Value(v)
        })
    };
    let f = |key: &str| kwargs.get(key).map(|v| v.as_f64().unwrap());
    let b = |key: &str| kwargs.get(key).is_some_and(|v| v.as_bool().unwrap());
    let lr = h("learning_rate").unwrap();
    let api = spec["api"].as_str().unwrap().rsplit('.').next().unwrap();
    let config: Config = match api {
        "GradientDescentOptimizer" => GradientDescent::new(lr).into(),
        "MomentumOptimizer" => Momentum::new(lr, h("momentum").unwrap())
            .use_nesterov(b("use_nesterov"))
            .into(),
        "AdamOptimizer" => {
            let mut c = Adam::new(lr);
            if let Some(v) = h("beta1") {
                c = c.beta1(v);
            }
            if let Some(v) = h("beta2") {
                c = c.beta2(v);
            }
            if let Some(v) = h("epsilon") {
                c = c.epsilon(v);
            }
            c.into()
        }
        "AdagradOptimizer" => {
            let mut c = Adagrad::new(lr);
            if let Some(v) = f("initial_accumulator_value") {
                c = c.initial_accumulator_value(v);
            }
            c.into()
        }
        "AdagradDAOptimizer" => {
            let mut c = AdagradDA::new(lr, step.expect("AdagradDA needs the global step"));
            if let Some(v) = h("l1_regularization_strength") {
                c = c.l1_regularization_strength(v);
            }
            if let Some(v) = h("l2_regularization_strength") {
                c = c.l2_regularization_strength(v);
            }
            c.into()
        }
        "AdadeltaOptimizer" => {
            let mut c = Adadelta::new(lr);
            if let Some(v) = h("rho") {
                c = c.rho(v);
            }
            if let Some(v) = h("epsilon") {
                c = c.epsilon(v);
            }
            c.into()
        }
        "RMSPropOptimizer" => {
            let mut c = RMSProp::new(lr).centered(b("centered"));
            if let Some(v) = h("decay") {
                c = c.decay(v);
            }
            if let Some(v) = h("momentum") {
                c = c.momentum(v);
            }
            if let Some(v) = h("epsilon") {
                c = c.epsilon(v);
            }
            c.into()
        }
        "FtrlOptimizer" => {
            let mut c = Ftrl::new(lr);
            if let Some(v) = h("learning_rate_power") {
                c = c.learning_rate_power(v);
            }
            if let Some(v) = f("initial_accumulator_value") {
                c = c.initial_accumulator_value(v);
            }
            if let Some(v) = h("l1_regularization_strength") {
                c = c.l1_regularization_strength(v);
            }
            if let Some(v) = h("l2_regularization_strength") {
                c = c.l2_regularization_strength(v);
            }
            if let Some(v) = h("l2_shrinkage_regularization_strength") {
                c = c.l2_shrinkage_regularization_strength(v);
            }
            if let Some(v) = f("beta") {
                c = c.beta(v);
            }
            c.into()
        }
        "ProximalGradientDescentOptimizer" => {
            let mut c = ProximalGradientDescent::new(lr);
            if let Some(v) = h("l1_regularization_strength") {
                c = c.l1_regularization_strength(v);
            }
            if let Some(v) = h("l2_regularization_strength") {
                c = c.l2_regularization_strength(v);
            }
            c.into()
        }
        "ProximalAdagradOptimizer" => {
            let mut c = ProximalAdagrad::new(lr);
            if let Some(v) = f("initial_accumulator_value") {
                c = c.initial_accumulator_value(v);
            }
            if let Some(v) = h("l1_regularization_strength") {
                c = c.l1_regularization_strength(v);
            }
            if let Some(v) = h("l2_regularization_strength") {
                c = c.l2_regularization_strength(v);
            }
            c.into()
        }
        other => panic!("optimizer {other}"),
    };
    let known: &[&str] = &[
        "learning_rate",
        "momentum",
        "use_nesterov",
        "beta1",
        "beta2",
        "epsilon",
        "initial_accumulator_value",
        "l1_regularization_strength",
        "l2_regularization_strength",
        "rho",
        "decay",
        "centered",
        "learning_rate_power",
        "l2_shrinkage_regularization_strength",
        "beta",
    ];
    for k in kwargs.keys() {
        assert!(known.contains(&k.as_str()), "argument {k} not passed on");
    }
    Optimizer::new(config)
}

fn values(t: &Tensor) -> Vec<f64> {
    t.to_f64_vec().unwrap()
}

fn run_case(case: &str) {
    let dir = fixture("golden/optimizers");
    let spec = read_json(&dir.join(format!("{case}.json")));
    let data: BTreeMap<String, Array> = read_npz(&dir.join(format!("{case}.npz")));
    let dtype = dtype_of(spec["dtype"].as_str().unwrap());
    let (mut rtol, atol) = match dtype {
        DType::Float32 => (1e-5, 1e-6),
        DType::Float64 => (1e-10, 1e-12),
        _ => (5e-2, 1e-3),
    };
    if dtype == DType::Float32
        && spec["constructor_kwargs"]["learning_rate_power"]
            .as_f64()
            .is_some_and(|p| p != -0.5)
    {
        // TensorFlow's Ftrl uses Eigen's vectorised pow, about 1 ulp from libm's.
        rtol = 5e-5;
    }
    let sparse = spec["mode"] == "sparse";
    let mut g = GraphBuilder::new();
    let mut vars = Vec::new();
    for v in spec["variables"].as_array().unwrap() {
        let key = v["key"].as_str().unwrap();
        let init = data[&format!("init.{key}")].tensor_as(dtype);
        vars.push(g.variable(v["tf_name"].as_str().unwrap(), init).unwrap());
    }
    let created: Vec<&str> = spec["global_variables_in_creation_order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["tf_name"].as_str().unwrap())
        .collect();
    let step = created
        .contains(&"global_step")
        .then(|| get_or_create_global_step(&mut g).unwrap());
    let mut opt = optimizer(&mut g, &spec, dtype, step.map(|s| s.value));
    let mut feeds = Vec::new();
    let mut pairs = Vec::new();
    for (v, h) in spec["variables"].as_array().unwrap().iter().zip(&vars) {
        let shape: Vec<usize> = v["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        if sparse {
            let mut rows = vec![None];
            rows.extend(shape[1..].iter().map(|&d| Some(d)));
            let values = g
                .placeholder(dtype, PartialShape::from_dims(rows), "values")
                .unwrap();
            let idx_dtype = dtype_of(spec["indices_dtype"].as_str().unwrap_or("int32"));
            let indices = g
                .placeholder(idx_dtype, PartialShape::from_dims(vec![None]), "indices")
                .unwrap();
            let dims: Vec<i32> = shape.iter().map(|&d| d as i32).collect();
            let dense_shape = g.constant(Tensor::vector(dims), "dense_shape").unwrap();
            pairs.push((
                Some(Grad::Sparse {
                    values,
                    indices,
                    dense_shape,
                }),
                *h,
            ));
            feeds.push(vec![values, indices]);
        } else {
            let dims = shape.iter().map(|&d| Some(d)).collect();
            let grad = g
                .placeholder(dtype, PartialShape::from_dims(dims), "grad")
                .unwrap();
            pairs.push((Some(Grad::Dense(grad)), *h));
            feeds.push(vec![grad]);
        }
    }
    let train = opt.apply_gradients(&mut g, &pairs, step.as_ref()).unwrap();

    // Names: the slots, the non-slot variables and the creation order are TensorFlow's.
    let mut slot_names: Vec<String> = spec["slot_names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    slot_names.sort();
    assert_eq!(opt.get_slot_names(), slot_names, "{case}: slot names");
    let name_of = |g: &GraphBuilder, o: Output| g.graph().read().node(o.node).name.clone();
    for (v, h) in spec["variables"].as_array().unwrap().iter().zip(&vars) {
        for (slot, tf_name) in v["slots"].as_object().unwrap() {
            let s = opt.get_slot(&g, h, slot).unwrap();
            assert_eq!(
                name_of(&g, s.var),
                tf_name.as_str().unwrap(),
                "{case}: slot {slot}"
            );
        }
    }
    let names: Vec<String> = g
        .global_variables()
        .iter()
        .map(|v| name_of(&g, v.var))
        .collect();
    assert_eq!(names, created, "{case}: variables in creation order");
    let nonslot: Vec<(String, Output)> = spec["non_slot_variables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let name = n["tf_name"].as_str().unwrap();
            (
                n["key"].as_str().unwrap().to_string(),
                g.output_by_name(&format!("{name}:0")).unwrap(),
            )
        })
        .collect();

    let init = g.global_variables_initializer().unwrap();
    let sess = Session::new(g.graph());
    sess.run(vec![], &[], &[init]).unwrap();
    let steps = spec["steps"].as_u64().unwrap();
    for k in 0..=steps {
        if k > 0 {
            let mut feed = Vec::new();
            for (v, f) in spec["variables"].as_array().unwrap().iter().zip(&feeds) {
                let key = v["key"].as_str().unwrap();
                if sparse {
                    feed.push((
                        f[0],
                        data[&format!("step{k}.grad_values.{key}")].tensor_as(dtype),
                    ));
                    feed.push((f[1], data[&format!("step{k}.grad_indices.{key}")].tensor()));
                } else {
                    feed.push((f[0], data[&format!("step{k}.grad.{key}")].tensor_as(dtype)));
                }
            }
            sess.run(feed, &[], &[train]).unwrap();
        }
        for (v, h) in spec["variables"].as_array().unwrap().iter().zip(&vars) {
            let key = v["key"].as_str().unwrap();
            let got = sess.run(vec![], &[h.value], &[]).unwrap();
            let want = &data[&format!("step{k}.var.{key}")];
            assert_eq!(got[0].dims(), want.shape.as_slice());
            assert_close(
                &values(&got[0]),
                &want.values,
                rtol,
                atol,
                &format!("{case} var step {k}"),
            );
            for slot in v["slots"].as_object().unwrap().keys() {
                let s = opt.get_slot(&g, h, slot).unwrap();
                let got = sess.run(vec![], &[s.value], &[]).unwrap();
                let want = &data[&format!("step{k}.slot.{slot}.{key}")];
                assert_close(
                    &values(&got[0]),
                    &want.values,
                    rtol,
                    atol,
                    &format!("{case} slot {slot} step {k}"),
                );
            }
        }
        for (key, t) in &nonslot {
            let got = sess.run(vec![], &[*t], &[]).unwrap();
            let want = &data[&format!("step{k}.nonslot.{key}")];
            assert_close(
                &values(&got[0]),
                &want.values,
                rtol,
                atol,
                &format!("{case} {key} step {k}"),
            );
        }
        if let (Some(s), Some(want)) = (step, data.get(&format!("step{k}.global_step"))) {
            let got = sess.run(vec![], &[s.value], &[]).unwrap();
            assert_eq!(
                values(&got[0]),
                want.values,
                "{case}: global step after {k} steps"
            );
        }
    }
}

#[test]
fn every_recorded_optimizer_case() {
    let dir = fixture("golden/optimizers");
    let mut cases: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".json")?;
            (stem != "index").then(|| stem.to_string())
        })
        .collect();
    cases.sort();
    assert!(cases.len() >= 40, "found only {} cases", cases.len());
    let apis: std::collections::BTreeSet<String> = cases
        .iter()
        .map(|c| {
            read_json(&dir.join(format!("{c}.json")))["api"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(apis.len(), 10, "all ten optimizers are recorded: {apis:?}");
    for case in &cases {
        run_case(case);
    }
}

#[test]
fn constructor_checks_and_errors_are_tensorflows() {
    let mut g = GraphBuilder::new();
    let w = g.variable("w", Tensor::vector(vec![1.0f32, 2.0])).unwrap();
    let two = g.constant(Tensor::scalar(2.0f32), "two").unwrap();
    let sq = g.mul(w.value, two).unwrap();
    let loss = g.reduce_sum(sq, &[0], false).unwrap();
    let err = Optimizer::new(Adagrad::new(0.1).initial_accumulator_value(0.0))
        .minimize(&mut g, loss, None, None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "initial_accumulator_value must be positive: 0"
    );
    let err = Optimizer::new(Ftrl::new(0.1).learning_rate_power(0.5))
        .minimize(&mut g, loss, None, None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "learning_rate_power 0.500000 needs to be negative or zero"
    );
    let err = Optimizer::new(Ftrl::new(0.1).l1_regularization_strength(-1.0))
        .minimize(&mut g, loss, None, None)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("l1_regularization_strength -1.000000 needs to be positive or zero"),
        "{err}"
    );
    // A loss that does not depend on the variables.
    let c = g.constant(Tensor::scalar(1.0f32), "c").unwrap();
    let err = Optimizer::adam(0.1)
        .minimize(&mut g, c, Some(&[w]), None)
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("No gradients provided for any variable"),
        "{err}"
    );
    // An integer loss.
    let i = g.constant(Tensor::scalar(1i32), "i").unwrap();
    let err = Optimizer::adam(0.1)
        .minimize(&mut g, i, Some(&[w]), None)
        .unwrap_err();
    assert!(
        err.to_string().starts_with("Invalid type int32 for i:0"),
        "{err}"
    );
    // No variables at all.
    let mut empty = GraphBuilder::new();
    let c = empty.constant(Tensor::scalar(1.0f32), "c").unwrap();
    let err = Optimizer::adam(0.1)
        .minimize(&mut empty, c, None, None)
        .unwrap_err();
    assert_eq!(err.to_string(), "No variables to optimize.");
    // AdagradDA's step must be int64.
    let step32 = g.constant(Tensor::scalar(1i32), "step32").unwrap();
    let err = Optimizer::new(AdagradDA::new(0.1, step32))
        .minimize(&mut g, loss, Some(&[w]), None)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("'global_step' of 'ApplyAdagradDA'"),
        "{err}"
    );
}

#[test]
fn minimize_names_the_graph_as_tensorflow_and_reuses_slots() {
    let mut g = GraphBuilder::new();
    let w = g
        .variable("dense/kernel", Tensor::vector(vec![1.0f32, -2.0]))
        .unwrap();
    let sq = g.mul(w.value, w.value).unwrap();
    let loss = g.reduce_sum(sq, &[0], false).unwrap();
    let step = get_or_create_global_step(&mut g).unwrap();
    assert_eq!(get_or_create_global_step(&mut g).unwrap().var, step.var);
    let mut opt = Optimizer::adam(0.1);
    let train = opt.minimize(&mut g, loss, None, Some(&step)).unwrap();
    let graph = g.graph();
    {
        let graph = graph.read();
        // With a global step the train op is the step's increment, named after the scope.
        assert_eq!(graph.node(train).name, "Adam");
        assert_eq!(graph.node(train).op, "AssignAdd");
        for name in [
            "dense/kernel/Adam",
            "dense/kernel/Adam_1",
            "dense/kernel/Adam/Initializer/zeros",
            "beta1_power",
            "beta2_power",
            "Adam/learning_rate",
            "Adam/beta1",
            "Adam/update",
            "global_step/Initializer/zeros",
        ] {
            assert!(graph.node_by_name(name).is_some(), "no node {name}");
        }
        assert_eq!(
            graph.node(graph.node_by_name("Adam/update").unwrap()).op,
            "ApplyFused"
        );
    }
    // A second minimize reuses the slots under a new scope.
    let train2 = opt.minimize(&mut g, loss, None, None).unwrap();
    assert_eq!(graph.read().node(train2).name, "Adam_1");
    assert_eq!(opt.variables(&g).len(), 4);
    let init = g.global_variables_initializer().unwrap();
    let sess = Session::new(g.graph());
    sess.run(vec![], &[], &[init]).unwrap();
    for _ in 0..3 {
        sess.run(vec![], &[], &[train]).unwrap();
    }
    let out = sess.run(vec![], &[step.value], &[]).unwrap();
    assert_eq!(out[0].as_slice::<i64>().unwrap(), &[3]);
}
