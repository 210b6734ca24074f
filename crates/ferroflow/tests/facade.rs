//! End-to-end tests of the Rust API: build, run, feed, fetch, variables.

use ferroflow::{Code, DType, GraphBuilder, PartialShape, Session, Tensor};

#[test]
fn matmul_relu_sum() {
    let mut g = GraphBuilder::new();
    let x = g
        .placeholder(
            DType::Float32,
            PartialShape::from_dims(vec![None, Some(3)]),
            "x",
        )
        .unwrap();
    let w = g
        .constant(
            Tensor::from_vec([3, 2], vec![1.0f32, -1.0, 2.0, 0.5, -3.0, 1.0]).unwrap(),
            "w",
        )
        .unwrap();
    let (y, s) = g.with_name_scope("layer", |g| {
        let h = g.matmul(x, w, false, false).unwrap();
        let y = g.relu(h).unwrap();
        let s = g.reduce_sum(y, &[0, 1], false).unwrap();
        (y, s)
    });
    assert_eq!(g.graph().read().node(y.node).name, "layer/Relu");
    let sess = Session::new(g.graph());
    let xv = Tensor::from_vec([2, 3], vec![1.0f32, 2.0, 3.0, 0.0, 1.0, 0.0]).unwrap();
    let out = sess.run(vec![(x, xv)], &[y, s], &[]).unwrap();
    // Row 0: [1+4-9, -1+1+3] = [-4, 3] -> relu [0, 3]; row 1: [2, 0.5].
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[0.0, 3.0, 2.0, 0.5]);
    assert_eq!(out[1].as_slice::<f32>().unwrap(), &[5.5]);
}

#[test]
fn variables_update_in_place_and_report_uninitialized_reads() {
    let mut g = GraphBuilder::new();
    let v = g.variable("counter", Tensor::scalar(1.0f32)).unwrap();
    let one = g.constant(Tensor::scalar(2.0f32), "two").unwrap();
    let inc = g.assign_add(v.var, one).unwrap();
    let sess = Session::new(g.graph());
    let err = sess.run(vec![], &[v.value], &[]).unwrap_err();
    assert_eq!(err.code(), Some(Code::FailedPrecondition));
    assert!(
        err.to_string().contains("uninitialized value counter"),
        "{err}"
    );
    sess.run(vec![], &[], &[v.initializer]).unwrap();
    for _ in 0..3 {
        sess.run(vec![], &[], &[inc.node]).unwrap();
    }
    let out = sess.run(vec![], &[v.value], &[]).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[7.0]);
}

#[test]
fn missing_feed_and_bad_shape_are_errors() {
    let mut g = GraphBuilder::new();
    let x = g
        .placeholder(DType::Float32, PartialShape::from_dims(vec![Some(2)]), "x")
        .unwrap();
    let y = g.relu(x).unwrap();
    let sess = Session::new(g.graph());
    let err = sess.run(vec![], &[y], &[]).unwrap_err();
    assert_eq!(err.code(), Some(Code::InvalidArgument));
    assert!(
        err.to_string()
            .contains("You must feed a value for placeholder tensor 'x'"),
        "{err}"
    );
    let err = sess
        .run(vec![(x, Tensor::vector(vec![1.0f32; 3]))], &[y], &[])
        .unwrap_err();
    assert!(
        err.to_string().contains("Cannot feed value of shape (3,)"),
        "{err}"
    );
    assert!(err.to_string().contains("'(2,)'"), "{err}");
}

#[test]
fn concurrent_runs_share_one_session() {
    let mut g = GraphBuilder::new();
    let v = g.variable("v", Tensor::scalar(0i64)).unwrap();
    let one = g.constant(Tensor::scalar(1i64), "one").unwrap();
    let inc = g.assign_add(v.var, one).unwrap();
    let sess = std::sync::Arc::new(Session::new(g.graph()));
    sess.run(vec![], &[], &[v.initializer]).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let s = sess.clone();
            std::thread::spawn(move || {
                for _ in 0..250 {
                    s.run(vec![], &[], &[inc.node]).unwrap();
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let out = sess.run(vec![], &[v.value], &[]).unwrap();
    assert_eq!(out[0].as_slice::<i64>().unwrap(), &[1000]);
}

#[test]
fn one_op_plans_are_remembered_per_target_and_forgotten_on_close() {
    let mut g = GraphBuilder::new();
    let v = g.variable("counter", Tensor::scalar(1.0f32)).unwrap();
    let one = g.constant(Tensor::scalar(1.0f32), "one").unwrap();
    let inc = g.assign_add(v.var, one).unwrap();
    let sess = Session::new(g.graph());
    let rt = sess.inner();
    let init = rt.prepare_target(v.initializer).unwrap();
    let step = rt.prepare_target(inc.node).unwrap();
    assert!(std::sync::Arc::ptr_eq(
        &step,
        &rt.prepare_target(inc.node).unwrap()
    ));
    // Switching targets gives each its own plan, the general cache's.
    let again = rt.prepare_target(v.initializer).unwrap();
    assert!(std::sync::Arc::ptr_eq(&init, &again));
    assert!(!std::sync::Arc::ptr_eq(&init, &step));
    rt.run_plan(&init, vec![]).unwrap();
    for _ in 0..3 {
        let p = rt.prepare_target(inc.node).unwrap();
        rt.run_plan(&p, vec![]).unwrap();
    }
    let out = sess.run(vec![], &[v.value], &[]).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[4.0]);
    rt.close();
    match rt.prepare_target(inc.node) {
        Err(e) => assert_eq!(e.code(), Some(Code::Cancelled)),
        Ok(_) => panic!("a closed session handed out a plan"),
    }
}
