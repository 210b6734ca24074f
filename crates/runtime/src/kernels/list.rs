//! Kernels of the list ops under `tf.TensorArray` (see the graph crate's
//! `ops/list.rs`). Lists are values: an op that changes one takes its input
//! and updates it in place when nothing else holds it (`Arc::make_mut`),
//! else a copy of its element handles. Messages follow TF1's TensorArray.
//!
//! TF1's TensorArray (a list made by a node with a `tensor_array_name`)
//! refuses a write to an element already read, and, with
//! `clear_after_read`, which frees an element when it is read, a second
//! read. Such a list carries a record of the elements read ([`ListReads`]),
//! shared by all its versions; gradient functions that re-run forward reads
//! and writes skip it (see `control_flow::replaying`).

use super::boxed;
use crate::kernel::{factory, KernelFactory, KernelInit, ListReads, OpContext, TensorList, Value};
use ferroflow_graph::{AttrsExt, PartialShape};
use ferroflow_tensor::kernels::{array, elementwise::add_n};
use ferroflow_tensor::{bail, ensure, DType, Error, Result, Shape, Tensor};
use std::sync::Arc;

/// What the list ops of one node know from its attributes.
#[derive(Clone)]
struct Spec {
    dtype: DType,
    element_shape: PartialShape,
    dynamic_size: bool,
    infer_shape: bool,
    /// Elements never written read as zeros (lists of gradients).
    zeros_if_absent: bool,
    /// A list this node makes refuses a second read of an element.
    clear_after_read: bool,
    /// A list this node makes is a TF1 TensorArray's: it records reads.
    tracks_reads: bool,
    /// A second write to an element adds to it (TF1's gradient arrays).
    aggregate: bool,
    /// The name of a list this node makes, in error messages (attribute
    /// `tensor_array_name`, else the node's name).
    name: Arc<str>,
}

impl Spec {
    fn of(init: &KernelInit<'_>) -> Result<Spec> {
        let a = &init.node.attrs;
        Ok(Spec {
            dtype: a.dtype_or("element_dtype", DType::Float32)?,
            element_shape: a.shape("element_shape")?,
            dynamic_size: a.bool_or("dynamic_size", false)?,
            infer_shape: a.bool_or("infer_shape", true)?,
            zeros_if_absent: a.bool_or("zeros_if_absent", false)?,
            clear_after_read: a.bool_or("clear_after_read", false)?,
            tracks_reads: a.contains_key("tensor_array_name"),
            aggregate: a.bool_or("multiple_writes_aggregate", false)?,
            name: a.str_or("tensor_array_name", &init.node.name)?.into(),
        })
    }

    /// The list as declared, with no elements.
    fn empty(&self, size: usize) -> TensorList {
        TensorList {
            items: vec![None; size],
            element_shape: self.element_shape.to_shape(),
            reads: self.new_reads(),
        }
    }

    /// The read record of a list this node makes, if it is a TF1
    /// TensorArray's or clears after reads.
    fn new_reads(&self) -> Option<Arc<ListReads>> {
        (self.clear_after_read || self.tracks_reads).then(|| {
            Arc::new(ListReads {
                name: self.name.to_string(),
                clears: self.clear_after_read,
                ..ListReads::default()
            })
        })
    }

    /// Element `i`, or zeros where the list allows absent elements.
    fn read(&self, list: &TensorList, i: i64) -> Result<Tensor> {
        let n = list.items.len();
        let k = usize::try_from(i).ok().filter(|&k| k < n).ok_or_else(|| {
            Error::invalid_argument(format!(
                "Tried to read from index {i} but array size is: {n}"
            ))
        })?;
        let value = self.element(list, i, k)?;
        note_read(list, k)?;
        Ok(value)
    }

    /// Element `k` (index `i` as given), or zeros where allowed.
    fn element(&self, list: &TensorList, i: i64, k: usize) -> Result<Tensor> {
        match &list.items[k] {
            Some(t) => Ok(t.clone()),
            // An element never written reads as zeros once the element shape
            // is known, as in TensorFlow (and always in lists of gradients).
            None if self.zeros_if_absent || self.known_shape(list).is_some() => self.zeros(list),
            None => Err(Error::invalid_argument(format!(
                "Could not read from TensorArray index {i}.  Furthermore, the element shape is not \
                 fully defined: {}.  It is possible you are working with a resizeable TensorArray \
                 and stop_gradients is not allowing the gradients to be written.  If you set the \
                 full element_shape property on the forward TensorArray, the proper all-zeros \
                 tensor will be returned instead of incurring this error.",
                self.element_shape
            ))),
        }
    }

    /// The element shape, when the list or the op's declaration knows it.
    fn known_shape(&self, list: &TensorList) -> Option<Shape> {
        list.element_shape
            .clone()
            .or_else(|| self.element_shape.to_shape())
    }

    fn zeros(&self, list: &TensorList) -> Result<Tensor> {
        let shape = self.known_shape(list).ok_or_else(|| {
            Error::invalid_argument(
                "an element of a list of gradients is zero, but the element shape is unknown",
            )
        })?;
        Ok(Tensor::zeros(self.dtype, shape))
    }

    /// Writes `value` at `i`, growing a dynamic list.
    fn write(&self, list: &mut TensorList, i: i64, value: Tensor) -> Result<()> {
        let n = list.items.len();
        let k = usize::try_from(i).map_err(|_| {
            Error::invalid_argument(format!("Tried to write to index {i} but it is negative"))
        })?;
        if k >= n {
            ensure!(
                self.dynamic_size,
                invalid_argument,
                "Tried to write to index {i} but array is not resizeable and size is: {n}"
            );
            list.items.resize(k + 1, None);
        }
        ensure!(
            value.dtype() == self.dtype,
            invalid_argument,
            "TensorArray dtype is {} but Op is trying to write dtype {}",
            self.dtype.name(),
            value.dtype().name()
        );
        if self.infer_shape {
            match &list.element_shape {
                Some(s) if s != value.shape() => {
                    bail!(
                        invalid_argument,
                        "Could not write to TensorArray index {i} because the value shape is {} \
                         which is incompatible with the TensorArray's inferred element shape: {s} \
                         (consider setting infer_shape=False).",
                        value.shape()
                    )
                }
                Some(_) => {}
                None => {
                    ensure!(
                        self.element_shape.is_compatible_with_shape(value.shape()),
                        invalid_argument,
                        "Could not write to TensorArray index {i} because the value shape is \
                             {} which is incompatible with the TensorArray's element shape: {}",
                        value.shape(),
                        self.element_shape
                    );
                    list.element_shape = Some(value.shape().clone());
                }
            }
        }
        let prefix = match &list.reads {
            Some(reads) => format!("TensorArray {}: ", reads.name),
            None => String::new(),
        };
        if let Some(reads) = list
            .reads
            .as_ref()
            .filter(|_| !super::control_flow::replaying())
        {
            ensure!(
                !reads.read.lock().get(k).copied().unwrap_or(false),
                invalid_argument,
                "{prefix}Could not write to TensorArray index {i} because it has already been read."
            );
        }
        match list.items[k].take() {
            Some(prev) if self.aggregate => {
                list.items[k] = Some(add_n(vec![prev, value])?);
            }
            Some(prev) => {
                list.items[k] = Some(prev);
                bail!(
                    invalid_argument,
                    "{prefix}Could not write to TensorArray index {i} because it has already been \
                     written to."
                );
            }
            None => list.items[k] = Some(value),
        }
        Ok(())
    }

    /// The elements stacked along a new first axis.
    fn stack(&self, list: &TensorList, indices: impl Iterator<Item = i64>) -> Result<Tensor> {
        let items = indices
            .map(|i| self.read(list, i))
            .collect::<Result<Vec<_>>>()?;
        if items.is_empty() {
            let s = list
                .element_shape
                .clone()
                .or_else(|| self.element_shape.to_shape())
                .ok_or_else(|| {
                    Error::unimplemented(format!(
                        "TensorArray has size zero, but element shape {} is not fully defined. \
                         Currently only static shapes are supported when packing zero-size \
                         TensorArrays.",
                        self.element_shape
                    ))
                })?;
            let mut dims = vec![0];
            dims.extend_from_slice(s.dims());
            return Ok(Tensor::zeros(self.dtype, dims));
        }
        array::stack(&items, 0)
    }
}

/// Notes a read of element `k`: a list with a read record refuses a
/// second read, with TF1's message. Gradient functions re-running the
/// forward reads (which already ran) do not count.
fn note_read(list: &TensorList, k: usize) -> Result<()> {
    let Some(reads) = &list.reads else {
        return Ok(());
    };
    if super::control_flow::replaying() {
        return Ok(());
    }
    let mut read = reads.read.lock();
    if read.len() <= k {
        read.resize(k + 1, false);
    }
    if std::mem::replace(&mut read[k], true) && reads.clears {
        bail!(
            invalid_argument,
            "TensorArray {}: Could not read index {k} twice because it was cleared after a \
             previous read (perhaps try setting clear_after_read = false?).",
            reads.name
        );
    }
    Ok(())
}

/// Takes input `i` as a list to change.
fn take_list(ctx: &mut OpContext<'_>, i: usize) -> Result<Arc<TensorList>> {
    match ctx.take_value(i) {
        Value::List(l) => Ok(l),
        _ => Err(Error::invalid_argument(format!(
            "input {i} of {} is not a TensorArray's flow",
            ctx.node
        ))),
    }
}

fn output_list(ctx: &mut OpContext<'_>, l: TensorList) {
    ctx.output_value(Value::List(Arc::new(l)));
}

fn list_kernel<F>(f: F) -> KernelFactory
where
    F: Fn(&Spec, &mut OpContext<'_>) -> Result<()> + Send + Sync + Copy + 'static,
{
    factory(move |init| {
        let spec = Spec::of(init)?;
        boxed(move |ctx| f(&spec, ctx))
    })
}

fn index_list(t: &Tensor) -> Result<Vec<i64>> {
    if t.rank() > 1 {
        bail!(
            invalid_argument,
            "indices must be a scalar or vector, got shape {}",
            t.shape()
        );
    }
    t.to_i64_vec()
}

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "ListReserve",
        list_kernel(|spec, ctx| {
            let n = ctx.input(0)?.scalar_i64()?;
            let n = usize::try_from(n).map_err(|_| {
                Error::invalid_argument(format!("TensorArray size must be >= 0, got {n}"))
            })?;
            output_list(ctx, spec.empty(n));
            Ok(())
        }),
    );
    reg(
        "ListFromTensor",
        list_kernel(|spec, ctx| {
            let x = ctx.input(0)?;
            ensure!(
                x.rank() != 0,
                invalid_argument,
                "TensorArray.unstack needs a value of rank >= 1, got a scalar"
            );
            let mut l = spec.empty(0);
            l.element_shape = Some(Shape::from(x.dims()[1..].to_vec()));
            l.items = array::unstack(x, 0)?.into_iter().map(Some).collect();
            output_list(ctx, l);
            Ok(())
        }),
    );
    reg(
        "ListSplit",
        list_kernel(|spec, ctx| {
            let x = ctx.input(0)?;
            let lengths = ctx.input(1)?.to_i64_vec()?;
            let sizes = lengths
                .iter()
                .map(|&l| usize::try_from(l))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|_| Error::invalid_argument("TensorArray.split lengths must be >= 0"))?;
            ensure!(
                x.rank() != 0,
                invalid_argument,
                "TensorArray.split needs a value of rank >= 1, got a scalar"
            );
            let total: usize = sizes.iter().sum();
            ensure!(
                total == x.dims()[0],
                invalid_argument,
                "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is \
                 {total} and value's shape is: {}",
                x.shape()
            );
            let parts = array::split(x, 0, &sizes)?;
            let mut l = spec.empty(parts.len());
            l.element_shape = None;
            if spec.tracks_reads {
                // A TF1 TensorArray's split writes its pieces one by one: with infer_shape, pieces
                // of different lengths fail, as in TF1.
                for (i, part) in parts.into_iter().enumerate() {
                    spec.write(&mut l, i as i64, part)?;
                }
            } else {
                // A gradient's list: pieces of any lengths.
                l.items = parts.into_iter().map(Some).collect();
            }
            output_list(ctx, l);
            Ok(())
        }),
    );
    reg(
        "ListSetItem",
        list_kernel(|spec, ctx| {
            let i = ctx.input(1)?.scalar_i64()?;
            let value = ctx.take_input(2)?;
            let mut l = take_list(ctx, 0)?;
            spec.write(Arc::make_mut(&mut l), i, value)?;
            ctx.output_value(Value::List(l));
            Ok(())
        }),
    );
    reg(
        "ListScatter",
        list_kernel(|spec, ctx| {
            let indices = index_list(ctx.input(1)?)?;
            let rows = array::unstack(ctx.input(2)?, 0)?;
            ensure!(
                rows.len() == indices.len(),
                invalid_argument,
                "TensorArray.scatter: {} indices but the value has {} rows",
                indices.len(),
                rows.len()
            );
            let mut l = take_list(ctx, 0)?;
            if !spec.dynamic_size {
                // TF1 checks the largest index against a fixed size first
                // (an unstack of too many rows fails here).
                let size = l.items.len();
                if let Some(&max) = indices.iter().max().filter(|&&m| m >= size as i64) {
                    bail!(
                        invalid_argument,
                        "Max scatter index must be < array size ({max} vs. {size})"
                    );
                }
            }
            let m = Arc::make_mut(&mut l);
            for (i, row) in indices.into_iter().zip(rows) {
                spec.write(m, i, row)?;
            }
            ctx.output_value(Value::List(l));
            Ok(())
        }),
    );
    reg(
        "ListGetItem",
        list_kernel(|spec, ctx| {
            let i = ctx.input(1)?.scalar_i64()?;
            let t = spec.read(ctx.input_list(0)?, i)?;
            ctx.output(t);
            Ok(())
        }),
    );
    reg(
        "ListStack",
        list_kernel(|spec, ctx| {
            let l = ctx.input_list(0)?;
            let t = spec.stack(l, 0..l.items.len() as i64)?;
            ctx.output(t);
            Ok(())
        }),
    );
    reg(
        "ListGather",
        list_kernel(|spec, ctx| {
            let indices = index_list(ctx.input(1)?)?;
            let t = spec.stack(ctx.input_list(0)?, indices.into_iter())?;
            ctx.output(t);
            Ok(())
        }),
    );
    reg(
        "ListConcat",
        list_kernel(|spec, ctx| {
            let l = ctx.input_list(0)?;
            let items = (0..l.items.len() as i64)
                .map(|i| spec.read(l, i))
                .collect::<Result<Vec<_>>>()?;
            let lengths: Vec<i64> = items
                .iter()
                .map(|t| t.dims().first().map_or(1, |&d| d as i64))
                .collect();
            let t = if items.is_empty() {
                let rest = spec
                    .element_shape
                    .dims()
                    .and_then(|d| d.get(1..).map(<[_]>::to_vec))
                    .and_then(|d| d.into_iter().collect::<Option<Vec<_>>>())
                    .ok_or_else(|| {
                        Error::unimplemented(
                            "TensorArray has size zero, but element_shape_except0 <unknown> is not \
                             fully defined. Currently only static shapes are supported when \
                             concatenating zero-size TensorArrays.",
                        )
                    })?;
                let mut dims = vec![0];
                dims.extend(rest);
                Tensor::zeros(spec.dtype, dims)
            } else {
                array::concat(&items, 0)?
            };
            ctx.output(t);
            ctx.output(Tensor::vector(lengths));
            Ok(())
        }),
    );
    reg(
        "ListSize",
        list_kernel(|_, ctx| {
            let n = ctx.input_list(0)?.items.len();
            ctx.output(Tensor::scalar(n as i32));
            Ok(())
        }),
    );
    reg(
        "ListZerosLike",
        list_kernel(|spec, ctx| {
            let l = ctx.input_list(0)?;
            let z = TensorList {
                items: vec![None; l.items.len()],
                element_shape: l.element_shape.clone(),
                reads: spec.new_reads(),
            };
            output_list(ctx, z);
            Ok(())
        }),
    );
    reg(
        "ListAddN",
        list_kernel(|_, ctx| {
            let lists: Vec<Arc<TensorList>> = (0..ctx.num_inputs())
                .map(|i| take_list(ctx, i))
                .collect::<Result<_>>()?;
            let len = lists.iter().map(|l| l.items.len()).max().unwrap_or(0);
            let mut out = TensorList {
                items: Vec::with_capacity(len),
                element_shape: lists.iter().find_map(|l| l.element_shape.clone()),
                reads: None,
            };
            for k in 0..len {
                let present: Vec<Tensor> = lists
                    .iter()
                    .filter_map(|l| l.items.get(k).cloned().flatten())
                    .collect();
                out.items.push(match present.len() {
                    0 => None,
                    1 => present.into_iter().next(),
                    _ => Some(add_n(present)?),
                });
            }
            output_list(ctx, out);
            Ok(())
        }),
    );
    reg(
        "ListOneHot",
        list_kernel(|_, ctx| {
            let len = ctx.input_list(0)?.items.len();
            let idx = ctx.input(1)?;
            let (indices, rows) = if idx.rank() == 0 {
                (vec![idx.scalar_i64()?], vec![ctx.input(2)?.clone()])
            } else {
                (index_list(idx)?, array::unstack(ctx.input(2)?, 0)?)
            };
            let mut out = TensorList {
                items: vec![None; len],
                element_shape: rows.first().map(|r| r.shape().clone()),
                reads: None,
            };
            for (i, row) in indices.into_iter().zip(rows) {
                let k = usize::try_from(i)
                    .ok()
                    .filter(|&k| k < len)
                    .ok_or_else(|| Error::internal(format!("gradient index {i} out of range")))?;
                out.items[k] = Some(match out.items[k].take() {
                    Some(prev) => add_n(vec![prev, row])?,
                    None => row,
                });
            }
            output_list(ctx, out);
            Ok(())
        }),
    );
}
