//! The node builder: adds nodes to a graph under a name scope, with the small op helpers the
//! gradient functions and the facade crate's `GraphBuilder` share.

use crate::{AttrValue, Graph, NodeId, NodeSpec, Output};
use ferroflow_tensor::{DType, Result, Tensor};

/// Builds nodes into `graph`, each named `<scope>/<name>` (made unique).
pub struct Builder<'g> {
    pub graph: &'g mut Graph,
    scope: String,
    /// Nodes every created node must wait for (the caller's control context).
    pub control: Vec<NodeId>,
}

impl<'g> Builder<'g> {
    pub fn new(graph: &'g mut Graph, scope: &str) -> Builder<'g> {
        Builder {
            graph,
            scope: scope.trim_end_matches('/').to_string(),
            control: Vec::new(),
        }
    }

    /// The current scope (no trailing slash).
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// Runs `f` with `name` appended to the scope (uniquified once).
    pub fn with_scope<R>(&mut self, name: &str, f: impl FnOnce(&mut Builder<'_>) -> R) -> R {
        let full = self.graph.unique_name(&self.join(name), true);
        let saved = std::mem::replace(&mut self.scope, full);
        let r = f(self);
        self.scope = saved;
        r
    }

    /// `name` under the current scope (not yet made unique).
    pub fn join(&self, name: &str) -> String {
        if self.scope.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.scope)
        }
    }

    /// Adds a node; returns its id.
    pub fn node(
        &mut self,
        op: &str,
        inputs: &[Output],
        attrs: Vec<(&str, AttrValue)>,
    ) -> Result<NodeId> {
        self.node_named(op, op, inputs, attrs)
    }

    /// Adds a node named `<scope>/<name>` (made unique); returns its id.
    pub fn node_named(
        &mut self,
        op: &str,
        name: &str,
        inputs: &[Output],
        attrs: Vec<(&str, AttrValue)>,
    ) -> Result<NodeId> {
        let name = self.graph.unique_name(&self.join(name), true);
        let mut spec = NodeSpec::new(op, &name).inputs(inputs.iter().copied());
        for (k, v) in attrs {
            spec = spec.attr(k, v);
        }
        spec.control_inputs = self.control.clone();
        self.graph.add_node(spec)
    }

    /// Adds a node and returns its first output.
    pub fn op(
        &mut self,
        op: &str,
        inputs: &[Output],
        attrs: Vec<(&str, AttrValue)>,
    ) -> Result<Output> {
        Ok(Output::new(self.node(op, inputs, attrs)?, 0))
    }

    pub fn dtype(&self, o: Output) -> DType {
        self.graph.output(o).dtype
    }

    pub fn constant(&mut self, t: Tensor) -> Result<Output> {
        let d = t.dtype();
        let name = self.graph.unique_name(&self.join("Const"), true);
        let mut spec = NodeSpec::new("Const", &name)
            .attr("value", AttrValue::Tensor(t))
            .attr("dtype", AttrValue::Type(d));
        spec.control_inputs = self.control.clone();
        Ok(Output::new(self.graph.add_node(spec)?, 0))
    }

    pub fn const_i32(&mut self, v: Vec<i32>) -> Result<Output> {
        self.constant(Tensor::vector(v))
    }

    pub fn scalar_i32(&mut self, v: i32) -> Result<Output> {
        self.constant(Tensor::scalar(v))
    }

    /// A scalar of `dtype` holding `v`.
    pub fn scalar(&mut self, dtype: DType, v: f64) -> Result<Output> {
        let t = ferroflow_tensor::kernels::elementwise::cast(&Tensor::scalar(v), dtype)?;
        self.constant(t)
    }

    pub fn shape(&mut self, x: Output) -> Result<Output> {
        self.op(
            "Shape",
            &[x],
            vec![("out_type", AttrValue::Type(DType::Int32))],
        )
    }

    pub fn size(&mut self, x: Output) -> Result<Output> {
        self.op(
            "Size",
            &[x],
            vec![("out_type", AttrValue::Type(DType::Int32))],
        )
    }

    pub fn rank(&mut self, x: Output) -> Result<Output> {
        self.op("Rank", &[x], vec![])
    }

    pub fn reshape(&mut self, x: Output, shape: Output) -> Result<Output> {
        self.op("Reshape", &[x, shape], vec![])
    }

    pub fn binary(&mut self, op: &str, a: Output, b: Output) -> Result<Output> {
        self.op(op, &[a, b], vec![])
    }

    pub fn add(&mut self, a: Output, b: Output) -> Result<Output> {
        self.binary("AddV2", a, b)
    }

    pub fn sub(&mut self, a: Output, b: Output) -> Result<Output> {
        self.binary("Sub", a, b)
    }

    pub fn mul(&mut self, a: Output, b: Output) -> Result<Output> {
        self.binary("Mul", a, b)
    }

    pub fn div(&mut self, a: Output, b: Output) -> Result<Output> {
        self.binary("RealDiv", a, b)
    }

    pub fn unary(&mut self, op: &str, x: Output) -> Result<Output> {
        self.op(op, &[x], vec![])
    }

    pub fn neg(&mut self, x: Output) -> Result<Output> {
        self.unary("Neg", x)
    }

    pub fn cast(&mut self, x: Output, to: DType) -> Result<Output> {
        if self.dtype(x) == to {
            return Ok(x);
        }
        let from = self.dtype(x);
        self.op(
            "Cast",
            &[x],
            vec![
                ("DstT", AttrValue::Type(to)),
                ("SrcT", AttrValue::Type(from)),
                ("Truncate", AttrValue::Bool(false)),
            ],
        )
    }

    pub fn sum(&mut self, x: Output, axes: Output, keep_dims: bool) -> Result<Output> {
        self.op(
            "Sum",
            &[x, axes],
            vec![("keep_dims", AttrValue::Bool(keep_dims))],
        )
    }

    /// Zeros shaped like `x` (for a list: a list of as many absent elements).
    pub fn zeros_like(&mut self, x: Output) -> Result<Output> {
        if self.graph.output(x).is_list {
            return self.unary("ListZerosLike", x);
        }
        self.unary("ZerosLike", x)
    }

    pub fn ones_like(&mut self, x: Output) -> Result<Output> {
        self.unary("OnesLike", x)
    }

    pub fn transpose(&mut self, x: Output, perm: Output) -> Result<Output> {
        self.op("Transpose", &[x, perm], vec![])
    }

    pub fn matmul(&mut self, a: Output, b: Output, ta: bool, tb: bool) -> Result<Output> {
        self.op(
            "MatMul",
            &[a, b],
            vec![
                ("transpose_a", AttrValue::Bool(ta)),
                ("transpose_b", AttrValue::Bool(tb)),
            ],
        )
    }

    pub fn fill(&mut self, dims: Output, value: Output) -> Result<Output> {
        self.op("Fill", &[dims, value], vec![])
    }

    pub fn tile(&mut self, x: Output, multiples: Output) -> Result<Output> {
        self.op("Tile", &[x, multiples], vec![])
    }

    pub fn concat(&mut self, values: &[Output], axis: Output) -> Result<Output> {
        let mut inputs = values.to_vec();
        inputs.push(axis);
        self.op(
            "ConcatV2",
            &inputs,
            vec![("N", AttrValue::Int(values.len() as i64))],
        )
    }

    pub fn pack(&mut self, values: &[Output], axis: i64) -> Result<Output> {
        self.op(
            "Pack",
            values,
            vec![
                ("axis", AttrValue::Int(axis)),
                ("N", AttrValue::Int(values.len() as i64)),
            ],
        )
    }

    /// Element `i` of a 1-D tensor, as a scalar (`-1`: the last).
    pub fn element(&mut self, v: Output, i: i32) -> Result<Output> {
        let b = self.const_i32(vec![i])?;
        let e = self.const_i32(vec![i + 1])?;
        let s = self.const_i32(vec![1])?;
        // [-1, 0) is empty: the last element needs an open end.
        let end_mask = i64::from(i == -1);
        self.op(
            "StridedSlice",
            &[v, b, e, s],
            vec![
                ("shrink_axis_mask", AttrValue::Int(1)),
                ("end_mask", AttrValue::Int(end_mask)),
            ],
        )
    }

    /// `select(cond, x, y)` with broadcasting.
    pub fn select(&mut self, cond: Output, x: Output, y: Output) -> Result<Output> {
        self.op("SelectV2", &[cond, x, y], vec![])
    }

    /// The sum of `x` over the axes that broadcasting added or stretched,
    /// reshaped to `shape` (how a broadcast input receives its gradient).
    pub fn sum_to_shape(&mut self, grad: Output, axes: Output, shape: Output) -> Result<Output> {
        let s = self.sum(grad, axes, false)?;
        self.reshape(s, shape)
    }

    /// Gradients of `a op b` reduced back to each input's shape.
    ///
    /// As TensorFlow 2.21's `SmartBroadcastGradientArgs`: when the static
    /// shapes tell which axes each input was broadcast along, an input with
    /// none (and the output's rank) keeps its gradient as it is and the other
    /// is summed over its axes; otherwise `BroadcastGradientArgs` decides at
    /// run time for both.
    pub fn broadcast_reduce(
        &mut self,
        ga: Output,
        gb: Output,
        a: Output,
        b: Output,
    ) -> Result<(Output, Output)> {
        let sa = self.graph.output(a).shape.clone();
        let sb = self.graph.output(b).shape.clone();
        // Same, fully known shapes: nothing to reduce.
        if sa.is_fully_defined() && sa == sb {
            return Ok((ga, gb));
        }
        let shape_a = self.shape(a)?;
        let shape_b = self.shape(b)?;
        if let Some((axes_a, axes_b)) = static_reduction_axes(&sa, &sb) {
            let (ra, rb) = (sa.rank().unwrap_or(0), sb.rank().unwrap_or(0));
            let ga = if !axes_a.is_empty() || ra < rb {
                let axes = self.const_i32(axes_a)?;
                let s = self.sum(ga, axes, true)?;
                self.reshape(s, shape_a)?
            } else {
                ga
            };
            let gb = if !axes_b.is_empty() || rb < ra {
                let axes = self.const_i32(axes_b)?;
                let s = self.sum(gb, axes, true)?;
                self.reshape(s, shape_b)?
            } else {
                gb
            };
            return Ok((ga, gb));
        }
        let args = self.node("BroadcastGradientArgs", &[shape_a, shape_b], vec![])?;
        let ra = self.sum_to_shape(ga, Output::new(args, 0), shape_a)?;
        let rb = self.sum_to_shape(gb, Output::new(args, 1), shape_b)?;
        Ok((ra, rb))
    }
}

/// The axes (of the broadcast result) each operand of a broadcasting binary
/// op was broadcast along, when the static shapes decide it (TensorFlow's
/// `_InferGradientReductionAxes`): a dimension of 1 against one that is not
/// 1 was broadcast; an unknown dimension otherwise leaves it to run time
/// (None), as does an unknown rank.
fn static_reduction_axes(
    a: &crate::PartialShape,
    b: &crate::PartialShape,
) -> Option<(Vec<i32>, Vec<i32>)> {
    let (da, db) = (a.dims()?, b.dims()?);
    let rank = da.len().max(db.len());
    let (mut axes_a, mut axes_b) = (Vec::new(), Vec::new());
    for axis in 0..rank {
        let dim = |d: &[Option<usize>]| {
            if axis < rank - d.len() {
                Some(1)
            } else {
                d[axis - (rank - d.len())]
            }
        };
        let (x, y) = (dim(da), dim(db));
        if x == Some(1) && y != Some(1) {
            axes_a.push(axis as i32);
        } else if y == Some(1) && x != Some(1) {
            axes_b.push(axis as i32);
        } else if x.is_none() || y.is_none() {
            return None;
        }
    }
    Some((axes_a, axes_b))
}
