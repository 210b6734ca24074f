//! Scalar loops: a `While` whose loop variables are all scalars runs its
//! condition and body as register code over plain numbers.
//!
//! A loop of scalars (a counter, a running sum, a float recurrence; the
//! counter and bound every `while_loop` carries) spends nearly all its time
//! in the executor, not in arithmetic: two plan calls per iteration, a
//! tensor allocation and a broadcasting plan per op. [`ScalarFunction`]
//! compiles a function once, when the loop's kernel is built, into
//! straight-line code over registers holding one number each. The `While`
//! kernel runs the whole loop so ([`ScalarLoop`]) when every loop variable
//! is a scalar of its argument's dtype and no gradient records the
//! iterations; otherwise, when only the condition computes on scalars (a
//! counter against a bound, next to TensorArrays and tensors: `map_fn`,
//! `dynamic_rnn`), it evaluates the condition so and the body with its plan.
//!
//! Every op computes what its tensor kernel computes on one element (both
//! call the element functions of `ferroflow_tensor::kernels::elementwise`,
//! so results are bit-identical), and integer division by zero fails as the
//! kernel does. A function with any other op, a stateful op, a non-scalar
//! constant or a dtype other than float32/64, int32/64 and bool is not
//! compiled, and its loop runs its plans.

use super::math::{BINARY_OPS, UNARY_OPS};
use crate::check_numerics::CHECK_NUMERICS_ATTR;
use crate::kernel::Value;
use ferroflow_graph::{AttrValue, Function, NodeId, Output};
use ferroflow_tensor::kernels::elementwise::{
    compare_element, float_element, float_unary_element, int_element, int_unary_element, BinaryOp,
    UnaryOp,
};
use ferroflow_tensor::kernels::scalar::{Float, Scalar};
use ferroflow_tensor::{DType, Error, Result, Tensor};
use smallvec::SmallVec;

/// One number in a register.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Num {
    F32(f32),
    F64(f64),
    I32(i32),
    I64(i64),
    Bool(bool),
}

impl Num {
    /// The value of a scalar tensor of a supported dtype.
    fn of_tensor(t: &Tensor) -> Option<Num> {
        if t.rank() != 0 {
            return None;
        }
        Some(match t.dtype() {
            DType::Float32 => Num::F32(t.as_slice::<f32>().ok()?[0]),
            DType::Float64 => Num::F64(t.as_slice::<f64>().ok()?[0]),
            DType::Int32 => Num::I32(t.as_slice::<i32>().ok()?[0]),
            DType::Int64 => Num::I64(t.as_slice::<i64>().ok()?[0]),
            DType::Bool => Num::Bool(t.as_slice::<bool>().ok()?[0]),
            _ => return None,
        })
    }

    fn dtype(self) -> DType {
        match self {
            Num::F32(_) => DType::Float32,
            Num::F64(_) => DType::Float64,
            Num::I32(_) => DType::Int32,
            Num::I64(_) => DType::Int64,
            Num::Bool(_) => DType::Bool,
        }
    }

    /// A placeholder of `dtype` (an argument's register before a call).
    fn zero(dtype: DType) -> Option<Num> {
        Some(match dtype {
            DType::Float32 => Num::F32(0.0),
            DType::Float64 => Num::F64(0.0),
            DType::Int32 => Num::I32(0),
            DType::Int64 => Num::I64(0),
            DType::Bool => Num::Bool(false),
            _ => return None,
        })
    }

    fn tensor(self) -> Tensor {
        match self {
            Num::F32(v) => Tensor::scalar(v),
            Num::F64(v) => Tensor::scalar(v),
            Num::I32(v) => Tensor::scalar(v),
            Num::I64(v) => Tensor::scalar(v),
            Num::Bool(v) => Tensor::scalar(v),
        }
    }

    /// TensorFlow's truth value of a scalar predicate: a bool as it is, a
    /// number when nonzero (NaN included).
    fn truth(self) -> bool {
        match self {
            Num::Bool(b) => b,
            Num::F32(v) => v != 0.0,
            Num::F64(v) => v != 0.0,
            Num::I32(v) => v != 0,
            Num::I64(v) => v != 0,
        }
    }
}

/// One instruction; registers are indices into the register file.
enum Instr {
    Unary {
        op: UnaryOp,
        x: u32,
        out: u32,
        node: u32,
    },
    Binary {
        op: BinaryOp,
        x: u32,
        y: u32,
        out: u32,
        node: u32,
    },
}

fn float_binary<T: Float>(op: BinaryOp, x: T, y: T, num: fn(T) -> Num) -> Option<Num> {
    match compare_element(op, x, y) {
        Some(b) => Some(Num::Bool(b)),
        None => float_element(op, x, y).map(num),
    }
}

fn int_binary<T: Scalar>(op: BinaryOp, x: T, y: T, num: fn(T) -> Num) -> Result<Option<Num>> {
    use BinaryOp::*;
    if let Some(b) = compare_element(op, x, y) {
        return Ok(Some(Num::Bool(b)));
    }
    if matches!(op, Div | FloorDiv | FloorMod | TruncateMod) && y == T::zero() {
        return Err(Error::invalid_argument("Integer division by zero"));
    }
    Ok(int_element(op, x, y).map(num))
}

/// `op` on two numbers of one dtype; `Ok(None)` when the tensor kernel
/// does not compute it here (the function is then not compiled).
fn binary(op: BinaryOp, x: Num, y: Num) -> Result<Option<Num>> {
    use Num::*;
    Ok(match (x, y) {
        (F32(a), F32(b)) => float_binary(op, a, b, F32),
        (F64(a), F64(b)) => float_binary(op, a, b, F64),
        (I32(a), I32(b)) => return int_binary(op, a, b, I32),
        (I64(a), I64(b)) => return int_binary(op, a, b, I64),
        (Bool(a), Bool(b)) => match op {
            BinaryOp::LogicalAnd => Some(Bool(a & b)),
            BinaryOp::LogicalOr => Some(Bool(a | b)),
            BinaryOp::Equal => Some(Bool(a == b)),
            BinaryOp::NotEqual => Some(Bool(a != b)),
            _ => None,
        },
        _ => None,
    })
}

/// `op` on one number; `None` where the function is not compiled.
fn unary(op: UnaryOp, x: Num) -> Option<Num> {
    use Num::*;
    match x {
        F32(v) => float_unary_element(op, v).map(F32),
        F64(v) => float_unary_element(op, v).map(F64),
        I32(v) => int_unary_element(op, v).map(I32),
        I64(v) => int_unary_element(op, v).map(I64),
        Bool(v) => (op == UnaryOp::LogicalNot).then_some(Bool(!v)),
    }
}

/// A function over scalars compiled into register code.
pub(crate) struct ScalarFunction {
    /// Per argument, its dtype, or `None` for a dtype registers cannot
    /// hold (allowed only for arguments no op reads).
    arg_dtypes: Vec<Option<DType>>,
    /// The arguments an op or a result reads.
    used_args: Vec<usize>,
    /// The register file before a call: the arguments' placeholders (the
    /// first registers), the constants, then one register per op result.
    registers: Vec<Num>,
    code: Vec<Instr>,
    /// The register of each result.
    outputs: Vec<u32>,
    /// Node names, for errors (indexed by the instructions' `node`).
    names: Vec<String>,
}

/// Ops that return their input unchanged.
fn is_identity(op: &str) -> bool {
    matches!(op, "Identity" | "Snapshot" | "StopGradient")
}

impl ScalarFunction {
    /// Compiles `f`, or `None` when it is not a function of scalars only
    /// (see the module docs). Arguments nothing reads may be of any type
    /// (a loop condition reads the counter, not the TensorArrays).
    pub(crate) fn compile(f: &Function) -> Option<ScalarFunction> {
        if !f.control_outputs.is_empty() {
            return None;
        }
        let graph = &f.graph;
        let mut needed = vec![false; graph.len()];
        let mut stack: Vec<NodeId> = f.outputs.iter().map(|o| o.node).collect();
        while let Some(n) = stack.pop() {
            if std::mem::replace(&mut needed[n], true) {
                continue;
            }
            let node = graph.node(n);
            stack.extend(node.inputs.iter().map(|o| o.node));
            stack.extend(node.control_inputs.iter().copied());
        }
        let mut registers = Vec::new();
        let mut reg_of: std::collections::HashMap<Output, u32> = Default::default();
        let arg_dtypes: Vec<Option<DType>> = f
            .args
            .iter()
            .map(|&a| {
                let dtype = graph.output(a).dtype;
                Num::zero(dtype).map(|_| dtype)
            })
            .collect();
        for (&a, dtype) in f.args.iter().zip(&arg_dtypes) {
            reg_of.insert(a, registers.len() as u32);
            registers.push(dtype.and_then(Num::zero).unwrap_or(Num::Bool(false)));
        }
        let mut code = Vec::new();
        let mut names = Vec::new();
        for id in crate::plan::execution_order(graph, &needed, |_| false) {
            let node = graph.node(id);
            if node.op == "_Arg" {
                // Arguments have their registers; one not among `args`
                // cannot be given a value.
                reg_of.contains_key(&Output::new(id, 0)).then_some(())?;
                continue;
            }
            if node.attrs.contains_key(CHECK_NUMERICS_ATTR) || node.outputs.len() != 1 {
                return None;
            }
            let out = Output::new(id, 0);
            let input = |i: usize| node.inputs.get(i).and_then(|o| reg_of.get(o).copied());
            if node.op == "Const" {
                let value = match node.attrs.get("value") {
                    Some(AttrValue::Tensor(t)) => Num::of_tensor(t)?,
                    _ => return None,
                };
                reg_of.insert(out, registers.len() as u32);
                registers.push(value);
                continue;
            }
            if is_identity(&node.op) && node.inputs.len() == 1 {
                reg_of.insert(out, input(0)?);
                continue;
            }
            let dtype = graph.output(out).dtype;
            let placeholder = Num::zero(dtype)?;
            let instr = if let Some(&(_, op)) = UNARY_OPS.iter().find(|(n, _)| *n == node.op) {
                let x = input(0)?;
                // The op must exist for the dtype and keep it.
                let r = unary(op, registers[x as usize])?;
                (node.inputs.len() == 1 && r.dtype() == dtype).then_some(())?;
                Instr::Unary {
                    op,
                    x,
                    out: registers.len() as u32,
                    node: names.len() as u32,
                }
            } else if let Some(&(_, op)) = BINARY_OPS.iter().find(|(n, _)| *n == node.op) {
                let (x, y) = (input(0)?, input(1)?);
                let (a, b) = (registers[x as usize], registers[y as usize]);
                // Probe with ones, which no op refuses.
                let one = |n: Num| match n {
                    Num::F32(_) => Num::F32(1.0),
                    Num::F64(_) => Num::F64(1.0),
                    Num::I32(_) => Num::I32(1),
                    Num::I64(_) => Num::I64(1),
                    Num::Bool(_) => Num::Bool(true),
                };
                let r = binary(op, one(a), one(b)).ok()??;
                (node.inputs.len() == 2 && r.dtype() == dtype).then_some(())?;
                Instr::Binary {
                    op,
                    x,
                    y,
                    out: registers.len() as u32,
                    node: names.len() as u32,
                }
            } else {
                return None;
            };
            reg_of.insert(out, registers.len() as u32);
            registers.push(placeholder);
            names.push(node.name.clone());
            code.push(instr);
        }
        let outputs = f
            .outputs
            .iter()
            .map(|o| reg_of.get(o).copied())
            .collect::<Option<Vec<_>>>()?;
        let num_args = f.args.len() as u32;
        let mut read: Vec<u32> = outputs.clone();
        for instr in &code {
            match *instr {
                Instr::Unary { x, .. } => read.push(x),
                Instr::Binary { x, y, .. } => read.extend([x, y]),
            }
        }
        read.retain(|&r| r < num_args);
        read.sort_unstable();
        read.dedup();
        let used_args: Vec<usize> = read.into_iter().map(|r| r as usize).collect();
        if used_args.iter().any(|&i| arg_dtypes[i].is_none()) {
            return None;
        }
        Some(ScalarFunction {
            arg_dtypes,
            used_args,
            registers,
            code,
            outputs,
            names,
        })
    }

    /// The dtype of argument `i`, if registers can hold it.
    fn arg_dtype(&self, i: usize) -> Option<DType> {
        self.arg_dtypes[i]
    }

    /// The truth of the function's first result (a loop condition) on
    /// `args`, or `None` when an argument it reads is not a scalar of its
    /// dtype. `regs` is scratch space.
    pub(crate) fn truth(&self, args: &[Value], regs: &mut Vec<Num>) -> Option<Result<bool>> {
        regs.clone_from(&self.registers);
        for &i in &self.used_args {
            match args.get(i)? {
                Value::Tensor(t) => match Num::of_tensor(t) {
                    Some(x) if Some(x.dtype()) == self.arg_dtypes[i] => regs[i] = x,
                    _ => return None,
                },
                _ => return None,
            }
        }
        let &first = self.outputs.first()?;
        Some(self.run(regs).map(|()| regs[first as usize].truth()))
    }

    /// Runs the code on `regs` (a copy of `registers` with the arguments
    /// set).
    fn run(&self, regs: &mut [Num]) -> Result<()> {
        for instr in &self.code {
            let (out, result, node) = match *instr {
                Instr::Unary { op, x, out, node } => (out, Ok(unary(op, regs[x as usize])), node),
                Instr::Binary {
                    op,
                    x,
                    y,
                    out,
                    node,
                } => (out, binary(op, regs[x as usize], regs[y as usize]), node),
            };
            let name = || self.names[node as usize].as_str();
            match result {
                Ok(Some(v)) => regs[out as usize] = v,
                Ok(None) => {
                    return Err(Error::internal("a scalar op lost its dtype").at_node(name()))
                }
                Err(e) => return Err(e.into_runtime().at_node(name())),
            }
        }
        Ok(())
    }
}

/// A `While` loop's condition and body, both compiled.
pub(crate) struct ScalarLoop {
    cond: ScalarFunction,
    body: ScalarFunction,
}

impl ScalarLoop {
    /// Compiles a loop whose condition returns one value and whose body
    /// returns as many values, of the same dtypes, as it takes.
    pub(crate) fn compile(cond: &Function, body: &Function) -> Option<ScalarLoop> {
        let n = body.args.len();
        let (cond, body) = (
            ScalarFunction::compile(cond)?,
            ScalarFunction::compile(body)?,
        );
        let agree = cond.outputs.len() == 1
            && body.outputs.len() == n
            && cond.arg_dtypes.len() == n
            && (0..n).all(|i| {
                body.arg_dtype(i).is_some()
                    && cond.arg_dtype(i) == body.arg_dtype(i)
                    && Some(body.registers[body.outputs[i] as usize].dtype()) == body.arg_dtype(i)
            });
        agree.then_some(ScalarLoop { cond, body })
    }

    /// Runs the loop from `vars`, or returns them untouched when one is not
    /// a scalar of its argument's dtype.
    pub(crate) fn run(
        &self,
        vars: Vec<Value>,
    ) -> std::result::Result<Result<Vec<Value>>, Vec<Value>> {
        let mut values: SmallVec<[Num; 8]> = SmallVec::with_capacity(vars.len());
        for (i, v) in vars.iter().enumerate() {
            match v {
                Value::Tensor(t) => match Num::of_tensor(t) {
                    Some(x) if Some(x.dtype()) == self.body.arg_dtype(i) => values.push(x),
                    _ => return Err(vars),
                },
                _ => return Err(vars),
            }
        }
        Ok(self.iterate(values))
    }

    fn iterate(&self, mut values: SmallVec<[Num; 8]>) -> Result<Vec<Value>> {
        let n = values.len();
        let mut cond = self.cond.registers.clone();
        let mut body = self.body.registers.clone();
        loop {
            // (Every argument is a scalar here, read or not.)
            cond[..n].copy_from_slice(&values);
            self.cond.run(&mut cond)?;
            if !cond[self.cond.outputs[0] as usize].truth() {
                break;
            }
            body[..n].copy_from_slice(&values);
            self.body.run(&mut body)?;
            for (v, &r) in values.iter_mut().zip(&self.body.outputs) {
                *v = body[r as usize];
            }
        }
        Ok(values
            .into_iter()
            .map(|v| Value::Tensor(v.tensor()))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_tensor::kernels::elementwise;

    /// Edge values of each dtype: signed zeros, NaN, infinities, extremes.
    fn samples(dtype: DType) -> Vec<Num> {
        let floats = [
            0.0,
            -0.0,
            1.5,
            -2.25,
            7.0,
            -3.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e300,
            5e-324,
        ];
        let ints = [0i64, 1, -1, 7, -7, 3, i64::MAX, i64::MIN];
        match dtype {
            DType::Float32 => floats.iter().map(|&v| Num::F32(v as f32)).collect(),
            DType::Float64 => floats.iter().map(|&v| Num::F64(v)).collect(),
            DType::Int32 => ints
                .iter()
                .map(|&v| Num::I32(v.clamp(i32::MIN as i64, i32::MAX as i64) as i32))
                .collect(),
            DType::Int64 => ints.iter().map(|&v| Num::I64(v)).collect(),
            _ => vec![Num::Bool(false), Num::Bool(true)],
        }
    }

    const DTYPES: [DType; 5] = [
        DType::Float32,
        DType::Float64,
        DType::Int32,
        DType::Int64,
        DType::Bool,
    ];

    /// The same number, NaNs equal to each other.
    fn same(kernel: &Tensor, ours: Num) -> bool {
        match Num::of_tensor(kernel) {
            Some(Num::F32(a)) => {
                matches!(ours, Num::F32(b) if a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()))
            }
            Some(Num::F64(a)) => {
                matches!(ours, Num::F64(b) if a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()))
            }
            Some(k) => k == ours,
            None => false,
        }
    }

    #[test]
    fn binary_ops_compute_what_the_tensor_kernels_compute() {
        let mut checked = 0;
        for (name, op) in BINARY_OPS {
            for dtype in DTYPES {
                let values = samples(dtype);
                // Only the ops the compiler accepts (probed as it probes).
                let one = values.iter().copied().find(|v| match v {
                    Num::Bool(b) => *b,
                    Num::F32(v) => *v == 1.5,
                    Num::F64(v) => *v == 1.5,
                    Num::I32(v) => *v == 1,
                    Num::I64(v) => *v == 1,
                });
                let Some(one) = one else { continue };
                if !matches!(binary(op, one, one), Ok(Some(_))) {
                    continue;
                }
                for &x in &values {
                    for &y in &values {
                        let kernel = elementwise::binary(op, x.tensor(), y.tensor());
                        match (kernel, binary(op, x, y)) {
                            (Ok(k), Ok(Some(v))) => assert!(
                                same(&k, v),
                                "{name} {dtype}: {x:?}, {y:?}: kernel {k:?}, scalar {v:?}"
                            ),
                            (Err(_), Err(_)) => {}
                            (k, v) => {
                                panic!("{name} {dtype}: {x:?}, {y:?}: kernel {k:?}, scalar {v:?}")
                            }
                        }
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 3000, "only {checked} cases checked");
    }

    #[test]
    fn unary_ops_compute_what_the_tensor_kernels_compute() {
        let mut checked = 0;
        for (name, op) in UNARY_OPS {
            for dtype in DTYPES {
                for &x in &samples(dtype) {
                    let Some(v) = unary(op, x) else { continue };
                    let k = elementwise::unary(op, x.tensor()).unwrap();
                    assert!(
                        same(&k, v),
                        "{name} {dtype}: {x:?}: kernel {k:?}, scalar {v:?}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 100, "only {checked} cases checked");
    }

    fn arg(g: &mut ferroflow_graph::Graph, name: &str, dtype: DType) -> Output {
        use ferroflow_graph::{NodeSpec, PartialShape};
        let spec = NodeSpec::new("_Arg", name)
            .attr("T", AttrValue::Type(dtype))
            .attr("shape", AttrValue::Shape(PartialShape::scalar()));
        Output::new(g.add_node(spec).unwrap(), 0)
    }

    fn constant(g: &mut ferroflow_graph::Graph, name: &str, t: Tensor) -> Output {
        let spec = ferroflow_graph::NodeSpec::new("Const", name)
            .attr("dtype", AttrValue::Type(t.dtype()))
            .attr("value", AttrValue::Tensor(t));
        Output::new(g.add_node(spec).unwrap(), 0)
    }

    fn op(g: &mut ferroflow_graph::Graph, op: &str, name: &str, inputs: &[Output]) -> Output {
        let spec = ferroflow_graph::NodeSpec::new(op, name).inputs(inputs.iter().copied());
        Output::new(g.add_node(spec).unwrap(), 0)
    }

    /// `i < 10` and `(i, x) -> (i + 1, body_op(x, 0.5))`.
    fn counting_loop(body_op: &str, unary: bool) -> (Function, Function) {
        let mut c = ferroflow_graph::Graph::new();
        let (ci, cx) = (
            arg(&mut c, "i", DType::Int32),
            arg(&mut c, "x", DType::Float32),
        );
        let ten = constant(&mut c, "ten", Tensor::scalar(10i32));
        let less = op(&mut c, "Less", "less", &[ci, ten]);
        let cond = Function::new(c, vec![ci, cx], vec![less]).unwrap();
        let mut b = ferroflow_graph::Graph::new();
        let (bi, bx) = (
            arg(&mut b, "i", DType::Int32),
            arg(&mut b, "x", DType::Float32),
        );
        let one = constant(&mut b, "one", Tensor::scalar(1i32));
        let half = constant(&mut b, "half", Tensor::scalar(0.5f32));
        let next_i = op(&mut b, "AddV2", "next_i", &[bi, one]);
        let y = if unary {
            op(&mut b, body_op, "y", &[bx])
        } else {
            op(&mut b, body_op, "y", &[bx, half])
        };
        let body = Function::new(b, vec![bi, bx], vec![next_i, y]).unwrap();
        (cond, body)
    }

    #[test]
    fn a_loop_of_scalar_arithmetic_compiles_and_runs() {
        let (cond, body) = counting_loop("Mul", false);
        let lp = ScalarLoop::compile(&cond, &body).expect("compiles");
        let vars = vec![
            Value::Tensor(Tensor::scalar(0i32)),
            Value::Tensor(Tensor::scalar(3.0f32)),
        ];
        let out = lp.run(vars).expect("scalars").unwrap();
        let x = match &out[1] {
            Value::Tensor(t) => t.as_slice::<f32>().unwrap()[0],
            other => panic!("{other:?}"),
        };
        assert_eq!(x, 3.0 * 0.5f32.powi(10));
        // A loop variable of shape [1] is not a scalar: the plans run it.
        let vector = vec![
            Value::Tensor(Tensor::scalar(0i32)),
            Value::Tensor(
                Tensor::from_vec(ferroflow_tensor::Shape::new(&[1]), vec![3.0f32]).unwrap(),
            ),
        ];
        assert!(lp.run(vector).is_err());
    }

    #[test]
    fn transcendental_and_stateful_bodies_are_not_compiled() {
        let (cond, body) = counting_loop("Exp", true);
        assert!(ScalarLoop::compile(&cond, &body).is_none());
        let (cond, body) = counting_loop("Pow", false);
        assert!(ScalarLoop::compile(&cond, &body).is_none());
        let (cond, mut body) = counting_loop("Sub", false);
        assert!(ScalarLoop::compile(&cond, &body).is_some());
        body.control_outputs.push(0);
        assert!(ScalarLoop::compile(&cond, &body).is_none());
    }

    #[test]
    fn a_condition_on_a_counter_ignores_the_other_loop_variables() {
        let mut c = ferroflow_graph::Graph::new();
        let ci = arg(&mut c, "i", DType::Int32);
        let list = arg(&mut c, "list", DType::String);
        let ten = constant(&mut c, "ten", Tensor::scalar(10i32));
        let less = op(&mut c, "Less", "less", &[ci, ten]);
        let cond = Function::new(c, vec![ci, list], vec![less]).unwrap();
        let f = ScalarFunction::compile(&cond).expect("the string argument is not read");
        let mut regs = Vec::new();
        let other = Value::Tensor(
            Tensor::from_vec(ferroflow_tensor::Shape::new(&[2]), vec![1.0f32, 2.0]).unwrap(),
        );
        for (i, expect) in [(3i32, true), (10, false)] {
            let args = [Value::Tensor(Tensor::scalar(i)), other.clone()];
            assert_eq!(f.truth(&args, &mut regs).unwrap().unwrap(), expect);
        }
        // A counter that is not a scalar int32: the plan decides.
        let args = [Value::Tensor(Tensor::scalar(3i64)), other];
        assert!(f.truth(&args, &mut regs).is_none());
        // Returning the string argument reads it: not compiled.
        let mut c = ferroflow_graph::Graph::new();
        let ci = arg(&mut c, "i", DType::Int32);
        let list = arg(&mut c, "list", DType::String);
        let cond = Function::new(c, vec![ci, list], vec![list]).unwrap();
        assert!(ScalarFunction::compile(&cond).is_none());
    }
}
