//! Entry points of the cargo-fuzz targets (`crates/dist/fuzz`): the two
//! parsers a task runs on bytes from the network. Not a stable API.

use crate::server::{compile_registration, ps_op_allowlist};
use crate::wire::{decode_frame, write_frame};
use crate::TaskId;
use ferroflow_records::graph_def::GraphDef;
use ferroflow_runtime::SessionState;
use prost::Message;
use std::sync::Arc;

/// Decodes `data` as one frame ([`decode_frame`]: errors are fine, panics
/// are not). A frame that decodes is written again, and that encoding must
/// decode to the same request and encode to the same bytes. Returns how many
/// tensors the frame held.
pub fn frame(data: &[u8]) -> usize {
    let Ok(Some((env, tensors))) = decode_frame(data) else {
        return 0;
    };
    let mut first = Vec::new();
    write_frame(&mut first, env.clone(), &tensors).expect("writing to memory cannot fail");
    let (again, tensors_again) = decode_frame(&first)
        .expect("a written frame decodes")
        .expect("a written frame is not empty");
    assert_eq!(again.body, env.body, "the request changed on a round trip");
    assert_eq!(tensors_again.len(), tensors.len());
    let mut second = Vec::new();
    write_frame(&mut second, again, &tensors_again).expect("writing to memory cannot fail");
    assert!(
        first == second,
        "a frame encodes differently after a round trip"
    );
    tensors.len()
}

/// Feeds `data[1..]` to RegisterGraph's work (decode, op allowlist, import,
/// name resolution, compiling the run signature) as a client's `GraphDef`.
/// The first byte picks the options: bit 0 applies the parameter-server op
/// allowlist; bits 1-4 feed the first node's output 0, fetch the last node's
/// output 0, fetch its output 1 and run the first node as a target (names
/// taken from the decoded graph, so they usually resolve). Returns whether
/// the graph registered; must never panic.
pub fn register_graph(data: &[u8]) -> bool {
    let Some((&selector, graph_def)) = data.split_first() else {
        return false;
    };
    let nodes: Vec<String> = GraphDef::decode(graph_def)
        .map(|d| d.node.into_iter().map(|n| n.name).collect())
        .unwrap_or_default();
    let (first, last) = match (nodes.first(), nodes.last()) {
        (Some(f), Some(l)) => (f.clone(), l.clone()),
        _ => (String::new(), String::new()),
    };
    let pick = |bit: u8, name: String| -> Vec<String> {
        if selector & (1 << bit) != 0 {
            vec![name]
        } else {
            Vec::new()
        }
    };
    let feeds = pick(1, format!("{first}:0"));
    let mut fetches = pick(2, format!("{last}:0"));
    fetches.extend(pick(3, format!("{last}:1")));
    let targets = pick(4, first);
    let allowlist = (selector & 1 != 0).then(ps_op_allowlist);
    compile_registration(
        &Arc::new(SessionState::default()),
        &TaskId::new("ps", 0),
        allowlist.as_ref(),
        graph_def,
        &feeds,
        &fetches,
        &targets,
    )
    .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Body, Envelope, RunGraph};
    use ferroflow_tensor::Tensor;

    #[test]
    fn the_fuzz_entry_points_accept_good_and_bad_input() {
        let mut buf = Vec::new();
        let env = Envelope::new(Body::RunGraph(RunGraph {
            handle: 1,
            step_id: 2,
            timeout_ms: 3,
            incarnation: 4,
        }));
        let ts = [
            Tensor::from_vec([2], vec![1.5f32, f32::NAN]).unwrap(),
            Tensor::from_vec([1], vec![b"x".to_vec()]).unwrap(),
        ];
        write_frame(&mut buf, env, &ts).unwrap();
        assert_eq!(frame(&buf), 2);
        assert_eq!(frame(&buf[..buf.len() - 1]), 0);
        assert_eq!(frame(&[]), 0);

        // A Const node, fetched (bit 2) under the ps allowlist (bit 0).
        let mut g = ferroflow_graph::Graph::new();
        let c = ferroflow_graph::NodeSpec::new("Const", "c")
            .attr(
                "dtype",
                ferroflow_graph::AttrValue::Type(ferroflow_tensor::DType::Float32),
            )
            .attr(
                "value",
                ferroflow_graph::AttrValue::Tensor(Tensor::scalar(1.0f32)),
            );
        g.add_node(c).unwrap();
        let def = ferroflow_records::graph_def::graph_def(&g, 0, false, 0).encode_to_vec();
        let with = |selector: u8| [&[selector][..], &def].concat();
        assert!(register_graph(&with(0b101)));
        // Output 1 of a Const does not exist.
        assert!(!register_graph(&with(0b1000)));
        assert!(!register_graph(&[0, 0xff, 0xff]));
        assert!(!register_graph(&[]));
    }

    /// Writes seed inputs for the fuzz targets into
    /// `$FERROFLOW_FUZZ_SEEDS/frame` and `.../register_graph`: a frame of
    /// every request and reply (tensors of several dtypes) and a variable
    /// graph's `GraphDef` under each option byte. Run explicitly:
    /// `FERROFLOW_FUZZ_SEEDS=crates/dist/fuzz/corpus cargo test -p
    /// ferroflow-dist --lib write_fuzz_seeds -- --ignored`.
    #[test]
    #[ignore]
    fn write_fuzz_seeds() {
        use crate::wire::*;
        use ferroflow_graph::{AttrValue, Graph, NodeSpec, Output, PartialShape};
        use ferroflow_tensor::DType;
        let dir = std::path::PathBuf::from(std::env::var("FERROFLOW_FUZZ_SEEDS").unwrap());
        let write = |target: &str, name: &str, bytes: &[u8]| {
            let d = dir.join(target);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(name), bytes).unwrap();
        };

        let mut g = Graph::new();
        let add = |g: &mut Graph,
                   op: &str,
                   name: &str,
                   inputs: &[Output],
                   attrs: Vec<(&str, AttrValue)>| {
            let mut spec = NodeSpec::new(op, name).inputs(inputs.iter().copied());
            for (k, v) in attrs {
                spec = spec.attr(k, v);
            }
            Output::new(g.add_node(spec).unwrap(), 0)
        };
        let f32_2 = || {
            vec![
                ("dtype", AttrValue::Type(DType::Float32)),
                (
                    "shape",
                    AttrValue::Shape(PartialShape::from_dims(vec![Some(2)])),
                ),
            ]
        };
        let v = add(&mut g, "VariableV2", "v", &[], f32_2());
        let x = add(&mut g, "Placeholder", "x", &[], f32_2());
        let init = Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap();
        let c = add(
            &mut g,
            "Const",
            "v/initial_value",
            &[],
            vec![
                ("dtype", AttrValue::Type(DType::Float32)),
                ("value", AttrValue::Tensor(init)),
            ],
        );
        add(&mut g, "Assign", "v/Assign", &[v, c], vec![]);
        let read = add(&mut g, "Identity", "v/read", &[v], vec![]);
        let y = add(&mut g, "Mul", "y", &[read, x], vec![]);
        add(&mut g, "AssignAdd", "update", &[v, y], vec![]);
        let def = ferroflow_records::graph_def::graph_def(&g, 0, false, 0).encode_to_vec();
        for selector in [0u8, 0b00110, 0b10111, 0b01000] {
            write(
                "register_graph",
                &format!("variable_{selector:02x}"),
                &[&[selector][..], &def].concat(),
            );
        }

        let frames: Vec<(&str, Body, Vec<Tensor>)> = vec![
            (
                "hello",
                Body::Hello(Hello {
                    protocol_version: PROTOCOL_VERSION,
                    token: b"token".to_vec(),
                }),
                vec![],
            ),
            (
                "welcome",
                Body::Welcome(Welcome {
                    incarnation: 0x1234_5678_9abc_def0,
                    job: "ps".into(),
                    task: 0,
                    cluster_json: r#"{"ps":["127.0.0.1:2222"]}"#.into(),
                }),
                vec![],
            ),
            (
                "failure",
                Body::Failure(Failure {
                    code: 16,
                    message: "no".into(),
                }),
                vec![],
            ),
            (
                "register_graph",
                Body::RegisterGraph(RegisterGraph {
                    graph_def: def.clone(),
                    feeds: vec!["x:0".into()],
                    fetches: vec!["y:0".into()],
                    targets: vec!["update".into()],
                    incarnation: 7,
                }),
                vec![],
            ),
            (
                "registered",
                Body::Registered(Registered { handle: 3 }),
                vec![],
            ),
            (
                "run_graph",
                Body::RunGraph(RunGraph {
                    handle: 3,
                    step_id: 9,
                    timeout_ms: 1000,
                    incarnation: 7,
                }),
                vec![
                    Tensor::from_vec([2, 2], vec![1.0f32, -2.0, 3.5, f32::INFINITY]).unwrap(),
                    Tensor::from_vec([3], vec![1i64, -2, 3]).unwrap(),
                    Tensor::from_vec([2], vec![true, false]).unwrap(),
                    Tensor::from_vec([3], vec![b"ab".to_vec(), Vec::new(), b"xyz".to_vec()])
                        .unwrap(),
                    Tensor::scalar(2.5f64),
                    Tensor::from_vec([0, 3], Vec::<i32>::new()).unwrap(),
                    Tensor::zeros(DType::Float16, [3]),
                    Tensor::zeros(DType::Complex64, [2]),
                    Tensor::zeros(DType::UInt8, [5]),
                ],
            ),
            (
                "ran_graph",
                Body::RanGraph(RanGraph {}),
                vec![Tensor::from_vec([2], vec![4.0f32, 10.0]).unwrap()],
            ),
            (
                "deregister",
                Body::DeregisterGraph(DeregisterGraph { handle: 3 }),
                vec![],
            ),
            ("shutdown", Body::Shutdown(Shutdown {}), vec![]),
            ("ack", Body::Ack(Ack {}), vec![]),
        ];
        for (name, body, tensors) in frames {
            let mut buf = Vec::new();
            write_frame(&mut buf, Envelope::new(body), &tensors).unwrap();
            assert!(frame(&buf) == tensors.len());
            write("frame", name, &buf);
        }
    }
}
