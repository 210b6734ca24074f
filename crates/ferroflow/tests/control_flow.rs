//! Control flow from Rust: a `While` over a function built by hand, run by
//! the session, and its gradient (`WhileGrad`), with and without the saved
//! forward values.

use ferroflow::{AttrValue, DType, Graph, NodeSpec, Output, PartialShape, Session, Tensor};
use ferroflow_graph::Function;
use parking_lot::RwLock;
use std::sync::Arc;

fn arg(g: &mut Graph, name: &str, dtype: DType) -> Output {
    let id = g
        .add_node(
            NodeSpec::new("_Arg", name)
                .attr("T", AttrValue::Type(dtype))
                .attr("shape", AttrValue::Shape(PartialShape::scalar())),
        )
        .unwrap();
    Output::new(id, 0)
}

fn constant(g: &mut Graph, name: &str, t: Tensor) -> Output {
    let dtype = t.dtype();
    let id = g
        .add_node(
            NodeSpec::new("Const", name)
                .attr("value", AttrValue::Tensor(t))
                .attr("dtype", AttrValue::Type(dtype)),
        )
        .unwrap();
    Output::new(id, 0)
}

fn op(g: &mut Graph, op: &str, name: &str, inputs: &[Output]) -> Output {
    let id = g
        .add_node(NodeSpec::new(op, name).inputs(inputs.iter().copied()))
        .unwrap();
    Output::new(id, 0)
}

/// `(i, y, x) -> i < n` and `(i, y, x) -> (i + 1, y * exp(x), x)`: y = exp(n x).
fn power_loop(n: i32) -> (Arc<RwLock<Graph>>, Output, Output, Output) {
    let mut cond = Graph::new();
    let ci = arg(&mut cond, "i", DType::Int32);
    let cy = arg(&mut cond, "y", DType::Float64);
    let cx = arg(&mut cond, "x", DType::Float64);
    let limit = constant(&mut cond, "n", Tensor::scalar(n));
    let less = op(&mut cond, "Less", "less", &[ci, limit]);
    let cond = Function::new(cond, vec![ci, cy, cx], vec![less]).unwrap();

    let mut body = Graph::new();
    let bi = arg(&mut body, "i", DType::Int32);
    let by = arg(&mut body, "y", DType::Float64);
    let bx = arg(&mut body, "x", DType::Float64);
    let one = constant(&mut body, "one", Tensor::scalar(1i32));
    let next_i = op(&mut body, "AddV2", "next_i", &[bi, one]);
    let e = op(&mut body, "Exp", "exp", &[bx]);
    let next_y = op(&mut body, "Mul", "next_y", &[by, e]);
    let body = Function::new(body, vec![bi, by, bx], vec![next_i, next_y, bx]).unwrap();

    let mut g = Graph::new();
    g.add_function("cond", cond).unwrap();
    g.add_function("body", body).unwrap();
    let x = {
        let id = g
            .add_node(
                NodeSpec::new("Placeholder", "x")
                    .attr("dtype", AttrValue::Type(DType::Float64))
                    .attr("shape", AttrValue::Shape(PartialShape::scalar())),
            )
            .unwrap();
        Output::new(id, 0)
    };
    let i0 = constant(&mut g, "i0", Tensor::scalar(0i32));
    let y0 = constant(&mut g, "y0", Tensor::scalar(1.0f64));
    let w = g
        .add_node(
            NodeSpec::new("While", "loop")
                .inputs([i0, y0, x])
                .attr("cond", AttrValue::Str(b"cond".to_vec()))
                .attr("body", AttrValue::Str(b"body".to_vec()))
                .attr("_history", AttrValue::Bool(true)),
        )
        .unwrap();
    // Loop outputs, then one history output per loop variable.
    assert_eq!(g.node(w).outputs.len(), 6);
    let y = Output::new(w, 1);
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
    (Arc::new(RwLock::new(g)), x, y, dx)
}

#[test]
fn while_loop_and_its_gradient_run_in_rust() {
    let (g, x, y, dx) = power_loop(5);
    let sess = Session::new(g.clone());
    let out = sess
        .run(vec![(x, Tensor::scalar(0.3f64))], &[y, dx], &[])
        .unwrap();
    let (yv, dv) = (out[0].scalar_f64().unwrap(), out[1].scalar_f64().unwrap());
    assert!((yv - 1.5f64.exp()).abs() < 1e-12, "{yv}");
    assert!((dv - 5.0 * 1.5f64.exp()).abs() < 1e-12, "{dv}");
    // The gradient reads exp(x) of each iteration: it asked the loop to
    // keep it rather than recompute it.
    let graph = g.read();
    let grad = graph.nodes().iter().find(|n| n.op == "WhileGrad").unwrap();
    assert!(grad.attrs.contains_key("saving_body"));
    assert!(graph
        .function_names()
        .iter()
        .any(|n| n.starts_with("body_grad")));
}

#[test]
fn zero_iterations_pass_the_gradient_through() {
    let (g, x, y, dx) = power_loop(0);
    let out = Session::new(g)
        .run(vec![(x, Tensor::scalar(3.0f64))], &[y, dx], &[])
        .unwrap();
    assert_eq!(out[0].scalar_f64().unwrap(), 1.0);
    assert_eq!(out[1].scalar_f64().unwrap(), 0.0);
}

#[test]
fn loops_round_trip_through_tensorflows_graph_def() {
    use ferroflow_records::graph_def::{attr_value::Value, tf_graph_def, GraphDef};
    use ferroflow_records::graph_import::{import_graph_def, ImportOptions};
    use prost::Message;

    ferroflow::register_all();
    let (g, _, _, dx) = power_loop(5);
    let dx_name = g.read().node(dx.node).name.clone();
    let bytes = tf_graph_def(&g.read(), 0, true, 27)
        .unwrap()
        .encode_to_vec();
    let def = GraphDef::decode(bytes.as_slice()).unwrap();
    // The loop's bodies are FunctionDefs, named by `func` attrs; nodes inside them read
    // `node:output_arg:k` and carry TensorFlow's type attrs.
    let library = def.library.as_ref().unwrap();
    let body = library
        .function
        .iter()
        .find(|f| f.signature.as_ref().unwrap().name == "body")
        .unwrap();
    let next_y = body.node_def.iter().find(|n| n.name == "next_y").unwrap();
    assert_eq!(next_y.input, ["arg_1", "exp:y:0"]);
    assert_eq!(next_y.attr["T"].value, Some(Value::Type(2)));
    assert_eq!(body.ret["output_2"], "arg_2");
    let node = def.node.iter().find(|n| n.name == "loop").unwrap();
    assert!(matches!(&node.attr["body"].value, Some(Value::Func(f)) if f.name == "body"));

    let mut imported = Graph::new();
    let ids = import_graph_def(&mut imported, &def, &ImportOptions::default()).unwrap();
    let (x, y) = (Output::new(ids["x"], 0), Output::new(ids["loop"], 1));
    let dx = Output::new(ids[&dx_name], dx.index);
    let sess = Session::new(Arc::new(RwLock::new(imported)));
    let out = sess
        .run(vec![(x, Tensor::scalar(0.3f64))], &[y, dx], &[])
        .unwrap();
    assert!((out[0].scalar_f64().unwrap() - 1.5f64.exp()).abs() < 1e-12);
    assert!((out[1].scalar_f64().unwrap() - 5.0 * 1.5f64.exp()).abs() < 1e-12);
}
