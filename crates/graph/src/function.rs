//! Graph functions: the bodies of control-flow ops.
//!
//! A [`Function`] is a graph of its own with argument nodes (`_Arg`) and
//! outputs. Control-flow ops name their functions by attribute (`If`'s
//! `then_branch`/`else_branch`, `While`'s `cond`/`body`); the functions live
//! in the library of the graph that holds the op ([`Graph::function`]), and a
//! function's own graph carries the functions nested inside it, so a graph
//! together with its library is self-contained.

use crate::graph::{Graph, NodeId, Output};
use ferroflow_tensor::{Error, Result};
use std::sync::Arc;

/// A function: its graph, the `_Arg` outputs it takes and the outputs it gives.
#[derive(Clone, Debug)]
pub struct Function {
    pub graph: Graph,
    /// One per argument, in order: the output of an `_Arg` node.
    pub args: Vec<Output>,
    /// The results, in order (an argument may be returned as it is).
    pub outputs: Vec<Output>,
    /// Nodes with side effects that run on every call even when no output
    /// depends on them (stateful ops: assignments, asserts, prints).
    pub control_outputs: Vec<NodeId>,
}

impl Function {
    /// A function over `graph`, checking that every argument is an `_Arg`
    /// output and collecting the stateful nodes as control outputs.
    pub fn new(graph: Graph, args: Vec<Output>, outputs: Vec<Output>) -> Result<Function> {
        for &a in &args {
            match graph.get(a.node) {
                Some(n) if n.op == "_Arg" && a.index == 0 => {}
                _ => {
                    return Err(Error::invalid_argument(format!(
                        "function argument {}:{} is not an _Arg node",
                        a.node, a.index
                    )))
                }
            }
        }
        for &o in &outputs {
            if graph.get(o.node).is_none_or(|n| o.index >= n.outputs.len()) {
                return Err(Error::invalid_argument(format!(
                    "function output {}:{} is not in its graph",
                    o.node, o.index
                )));
            }
        }
        let control_outputs = graph
            .nodes()
            .iter()
            .filter(|n| n.op != "_Arg" && crate::ops::lookup(&n.op).is_some_and(|d| d.stateful))
            .map(|n| n.id)
            .collect();
        Ok(Function {
            graph,
            args,
            outputs,
            control_outputs,
        })
    }

    /// Whether output `i` is argument `i` passed through unchanged (a loop
    /// invariant of a `While` body).
    pub fn passes_through(&self, i: usize) -> bool {
        self.outputs.get(i).is_some() && self.outputs.get(i) == self.args.get(i)
    }
}

impl Graph {
    /// Adds a function to this graph's library, with the functions of its
    /// own library (those nested inside it). Names must be unique.
    pub fn add_function(&mut self, name: &str, f: Function) -> Result<()> {
        if self.functions.contains_key(name) {
            return Err(Error::value(format!(
                "a function named '{name}' is already in the graph's library"
            )));
        }
        for (k, v) in &f.graph.functions {
            self.functions.entry(k.clone()).or_insert_with(|| v.clone());
        }
        self.functions.insert(name.to_string(), Arc::new(f));
        Ok(())
    }

    /// A function of this graph's library.
    pub fn function(&self, name: &str) -> Result<&Arc<Function>> {
        self.functions.get(name).ok_or_else(|| {
            Error::not_found(format!("function '{name}' is not in the graph's library"))
        })
    }

    /// The names of the library's functions, sorted.
    pub fn function_names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.functions.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// A library-wide unique function name starting with `base`.
    pub fn unique_function_name(&self, base: &str) -> String {
        if !self.functions.contains_key(base) {
            return base.to_string();
        }
        (1..)
            .map(|i| format!("{base}_{i}"))
            .find(|n| !self.functions.contains_key(n))
            .expect("some suffix is free")
    }
}
