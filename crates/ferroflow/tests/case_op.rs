//! `Case` from Rust: three branch functions built by hand, picked by an
//! index fed at run time (out of range: the last branch, as in TensorFlow),
//! and the gradient, both the `CaseGrad` of a Case that keeps what its
//! branch's gradient reads and the recomputing `Case` of one without.

use ferroflow::{AttrValue, DType, Graph, NodeSpec, Output, PartialShape, Session, Tensor};
use ferroflow_graph::Function;
use parking_lot::RwLock;
use std::sync::Arc;

fn node(g: &mut Graph, spec: NodeSpec) -> Output {
    Output::new(g.add_node(spec).unwrap(), 0)
}

/// An `_Arg` or a `Placeholder` of `dtype` and `shape`.
fn input(g: &mut Graph, op: &str, name: &str, dtype: DType, shape: PartialShape) -> Output {
    let dtype_attr = if op == "_Arg" { "T" } else { "dtype" };
    node(
        g,
        NodeSpec::new(op, name)
            .attr(dtype_attr, AttrValue::Type(dtype))
            .attr("shape", AttrValue::Shape(shape)),
    )
}

/// A branch `x -> op(x, x)` (or `op(x)` for a unary op).
fn branch(op: &str, unary: bool) -> Function {
    let mut g = Graph::new();
    let x = input(&mut g, "_Arg", "x", DType::Float64, PartialShape::scalar());
    let inputs = if unary { vec![x] } else { vec![x, x] };
    let y = node(&mut g, NodeSpec::new(op, "y").inputs(inputs));
    Function::new(g, vec![x], vec![y]).unwrap()
}

/// `Case(i, x)` over x*x, exp(x), x+x, and its gradient with respect to x.
fn case_graph(history: bool) -> (Arc<RwLock<Graph>>, Output, Output, Output, Output) {
    let mut g = Graph::new();
    g.add_function("square", branch("Mul", false)).unwrap();
    g.add_function("exp", branch("Exp", true)).unwrap();
    g.add_function("twice", branch("AddV2", false)).unwrap();
    // The index's shape is left unknown, so a vector can be fed (and refused).
    let i = input(
        &mut g,
        "Placeholder",
        "i",
        DType::Int32,
        PartialShape::unknown(),
    );
    let x = input(
        &mut g,
        "Placeholder",
        "x",
        DType::Float64,
        PartialShape::scalar(),
    );
    let names = ["square", "exp", "twice"].map(|s| s.as_bytes().to_vec());
    let case = g
        .add_node(
            NodeSpec::new("Case", "case")
                .inputs([i, x])
                .attr("branches", AttrValue::StrList(names.to_vec()))
                .attr("Tout", AttrValue::TypeList(vec![DType::Float64]))
                .attr(
                    "output_shapes",
                    AttrValue::ShapeList(vec![PartialShape::scalar()]),
                )
                .attr("_history", AttrValue::Bool(history)),
        )
        .unwrap();
    // The result, then (with a history) what the taken branch kept.
    assert_eq!(g.node(case).outputs.len(), 1 + usize::from(history));
    let y = Output::new(case, 0);
    let grads = ferroflow_autodiff::gradients(
        &mut g,
        &[y],
        &[x],
        &[],
        &ferroflow_autodiff::Options {
            scope: "gradients".into(),
            ..Default::default()
        },
    )
    .unwrap();
    let Some(ferroflow_autodiff::Grad::Dense(dx)) = grads[0] else {
        panic!("expected a dense gradient, got {:?}", grads[0]);
    };
    (Arc::new(RwLock::new(g)), i, x, y, dx)
}

fn check(history: bool) {
    let (g, i, x, y, dx) = case_graph(history);
    let sess = Session::new(g.clone());
    let xv = 0.7f64;
    let square = (xv * xv, 2.0 * xv);
    let exp = (xv.exp(), xv.exp());
    let twice = (2.0 * xv, 2.0);
    for (index, (want_y, want_dx)) in [
        (0, square),
        (1, exp),
        (2, twice),
        (3, twice),
        (-1, twice),
        (i32::MAX, twice),
    ] {
        let out = sess
            .run(
                vec![(i, Tensor::scalar(index)), (x, Tensor::scalar(xv))],
                &[y, dx],
                &[],
            )
            .unwrap();
        let (got_y, got_dx) = (out[0].scalar_f64().unwrap(), out[1].scalar_f64().unwrap());
        assert!((got_y - want_y).abs() < 1e-12, "index {index}: y {got_y}");
        assert!(
            (got_dx - want_dx).abs() < 1e-12,
            "index {index}: dx {got_dx}"
        );
    }
    let graph = g.read();
    let grad_op = if history { "CaseGrad" } else { "Case" };
    let grad = graph
        .nodes()
        .iter()
        .find(|n| n.op == grad_op && n.name != "case")
        .unwrap();
    if history {
        // exp's gradient reads exp(x): it asked the forward Case to keep it.
        let Some(AttrValue::StrList(savings)) = grad.attrs.get("branch_savings") else {
            panic!("no branch_savings on {grad:?}");
        };
        assert!(!savings[1].is_empty());
    } else {
        assert!(matches!(
            grad.attrs.get("_gradient"),
            Some(AttrValue::Bool(true))
        ));
    }
}

#[test]
fn case_picks_a_branch_and_its_gradient_keeps_what_it_reads() {
    check(true);
}

#[test]
fn case_without_history_recomputes_for_its_gradient() {
    check(false);
}

#[test]
fn case_index_must_be_a_scalar() {
    let (g, i, x, y, _) = case_graph(false);
    let sess = Session::new(g);
    let err = sess
        .run(
            vec![
                (i, Tensor::vector(vec![1i32, 2])),
                (x, Tensor::scalar(1.0f64)),
            ],
            &[y],
            &[],
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("branch_index must be a scalar"),
        "{err}"
    );
}
