//! `SaveV2`, `RestoreV2` and `MergeV2Checkpoints`: TensorFlow's checkpoint
//! ops, with its input names, attributes, semantics and error classes.

use crate::codec::dtype_string;
use crate::reader::BundleReader;
use crate::slice::{parse_shape_and_slice, TensorSlice};
use crate::writer::{merge_bundles, save, MergeOptions, SaveItem};
use ferroflow_graph::{AttrValue, Attrs, AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, KernelFactory, OpContext};
use ferroflow_tensor::{bail, ensure, DType, Error, Result, Tensor};
use std::path::{Path, PathBuf};

fn expect_string(ctx: &InferContext, i: usize) -> Result<()> {
    ctx.expect_dtype(i, &[DType::String]).map(|_| ())
}

fn infer_save(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    if ctx.num_inputs() < 3 {
        bail!(
            value,
            "'{}' (SaveV2) needs prefix, tensor_names and shape_and_slices inputs",
            ctx.name
        );
    }
    for i in 0..3 {
        expect_string(ctx, i)?;
    }
    ctx.expect_rank(0, 0)?;
    ctx.expect_rank(1, 1)?;
    ctx.expect_rank(2, 1)?;
    let n = ctx.num_inputs() - 3;
    for i in 1..3 {
        if let Some(d) = ctx.shape(i).dim(0) {
            if d != n {
                return Err(ctx.shape_error(format!(
                    "Dimension 0 in both shapes must be equal, but are {d} and {n}"
                )));
            }
        }
    }
    if let Some(AttrValue::TypeList(dtypes)) = ctx.attrs().get("dtypes") {
        let got: Vec<DType> = (3..ctx.num_inputs()).map(|i| ctx.dtype(i)).collect();
        ensure!(
            *dtypes == got,
            type_error,
            "'{}' (SaveV2): attribute dtypes {dtypes:?} does not match the tensors' dtypes {got:?}",
            ctx.name
        );
    }
    Ok(Vec::new())
}

fn restore_dtypes(a: &Attrs) -> Result<Vec<DType>> {
    match a.get("dtypes") {
        Some(AttrValue::TypeList(v)) => Ok(v.clone()),
        None => Err(Error::value(
            "RestoreV2 needs the attribute 'dtypes' (list(type))",
        )),
        Some(other) => Err(Error::type_error(format!(
            "RestoreV2's attribute 'dtypes' must be a list of types, got {other:?}"
        ))),
    }
}

fn infer_restore(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ensure!(
        ctx.num_inputs() == 3,
        value,
        "'{}' (RestoreV2) takes prefix, tensor_names and shape_and_slices",
        ctx.name
    );
    for i in 0..3 {
        expect_string(ctx, i)?;
    }
    ctx.expect_rank(0, 0)?;
    ctx.expect_rank(1, 1)?;
    ctx.expect_rank(2, 1)?;
    let dtypes = restore_dtypes(ctx.attrs())?;
    let n = dtypes.len();
    for i in 1..3 {
        if let Some(d) = ctx.shape(i).dim(0) {
            if d != n {
                return Err(ctx.shape_error(format!(
                    "Dimension 0 in both shapes must be equal, but are {d} and {n}"
                )));
            }
        }
    }
    // Slices given as constants fix the output shapes, as in TensorFlow.
    let specs = ctx
        .const_value(2)
        .and_then(|t| t.as_slice::<Vec<u8>>().ok().map(<[Vec<u8>]>::to_vec));
    Ok(dtypes
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            let shape = specs
                .as_ref()
                .and_then(|s| s.get(i))
                .filter(|s| !s.is_empty())
                .and_then(|s| std::str::from_utf8(s).ok())
                .and_then(|s| parse_shape_and_slice(s).ok())
                .map(|p| PartialShape::from_i64(Some(&p.slice_shape)))
                .unwrap_or_else(PartialShape::unknown);
            OutputInfo::new(d, shape)
        })
        .collect())
}

fn infer_merge(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ensure!(
        ctx.num_inputs() == 2,
        value,
        "'{}' (MergeV2Checkpoints) takes checkpoint_prefixes and destination_prefix",
        ctx.name
    );
    expect_string(ctx, 0)?;
    expect_string(ctx, 1)?;
    ctx.expect_rank(0, 1)?;
    ctx.expect_rank(1, 0)?;
    Ok(Vec::new())
}

/// The graph-level definitions of the checkpoint ops.
pub fn op_defs() -> Vec<OpDef> {
    vec![
        OpDef::new(
            "SaveV2",
            &["prefix", "tensor_names", "shape_and_slices", "tensors*"],
            infer_save,
        )
        .stateful(),
        OpDef::new(
            "RestoreV2",
            &["prefix", "tensor_names", "shape_and_slices"],
            infer_restore,
        )
        .stateful(),
        OpDef::new(
            "MergeV2Checkpoints",
            &["checkpoint_prefixes", "destination_prefix"],
            infer_merge,
        )
        .stateful(),
    ]
}

fn to_path(bytes: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
    }
}

fn strings<'a>(t: &'a Tensor, what: &str) -> Result<&'a [Vec<u8>]> {
    t.as_slice::<Vec<u8>>()
        .map_err(|_| Error::invalid_argument(format!("Input {what} must be a string tensor")))
}

fn scalar_string(t: &Tensor, what: &str) -> Result<PathBuf> {
    match strings(t, what)? {
        [s] => Ok(to_path(s)),
        v => Err(Error::invalid_argument(format!(
            "Input {what} should have a single element, got {}.",
            v.len()
        ))),
    }
}

fn vector_of(t: &Tensor, what: &str, n: usize) -> Result<Vec<Vec<u8>>> {
    let v = strings(t, what)?;
    if t.rank() != 1 || v.len() != n {
        bail!(
            invalid_argument,
            "Expected {n} elements in {what}, but got a tensor of shape {}",
            t.shape()
        );
    }
    Ok(v.to_vec())
}

fn utf8<'a>(s: &'a [u8], what: &str) -> Result<&'a str> {
    std::str::from_utf8(s)
        .map_err(|_| Error::invalid_argument(format!("{what} is not valid UTF-8: {s:?}")))
}

/// TensorFlow's save kernels create the prefix's directory, but only that one
/// level (`Env::CreateDir`): a missing grandparent is NotFound, which the
/// Saver turns into "Parent directory of ... doesn't exist". The writer itself
/// creates every missing level, so the ops check first.
fn check_parent_creatable(prefix: &Path) -> Result<()> {
    let Some(dir) = prefix.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(());
    };
    if dir.is_dir() {
        return Ok(());
    }
    match dir.parent().filter(|g| !g.as_os_str().is_empty()) {
        Some(grand) if !grand.is_dir() => Err(Error::not_found(format!(
            "{}; No such file or directory",
            dir.display()
        ))),
        _ => Ok(()),
    }
}

fn save_kernel(ctx: &mut OpContext<'_>) -> Result<()> {
    let n = ctx.num_inputs() - 3;
    let prefix = scalar_string(ctx.input(0)?, "prefix")?;
    let names = vector_of(ctx.input(1)?, "tensor_names", n)?;
    let specs = vector_of(ctx.input(2)?, "shape_and_slices", n)?;
    let tensors: Vec<&Tensor> = (0..n).map(|i| ctx.input(3 + i)).collect::<Result<_>>()?;
    let mut items = Vec::with_capacity(n);
    for i in 0..n {
        let slice = if specs[i].is_empty() {
            None
        } else {
            let p = parse_shape_and_slice(utf8(&specs[i], "shape_and_slice")?)?;
            Some((p.full_shape, p.slice))
        };
        items.push(SaveItem {
            name: &names[i],
            tensor: tensors[i],
            slice,
        });
    }
    check_parent_creatable(&prefix)?;
    save(&prefix, &items)
}

fn restore_kernel(ctx: &mut OpContext<'_>, dtypes: &[DType]) -> Result<()> {
    let n = dtypes.len();
    let prefix = scalar_string(ctx.input(0)?, "prefix")?;
    let names = vector_of(ctx.input(1)?, "tensor_names", n)?;
    let specs = vector_of(ctx.input(2)?, "shape_and_slices", n)?;
    let reader = BundleReader::open(&prefix)?;
    let missing: Vec<String> = names
        .iter()
        .filter(|k| !reader.contains(k))
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .collect();
    match missing.as_slice() {
        [] => {}
        [one] => {
            bail!(
                not_found,
                "Key {one} not found in checkpoint {}",
                prefix.display()
            )
        }
        many => {
            bail!(
                not_found,
                "Keys {} not found in checkpoint {}",
                many.join(", "),
                prefix.display()
            )
        }
    }
    let mut mismatched = Vec::new();
    let mut slices: Vec<Option<TensorSlice>> = Vec::with_capacity(n);
    for i in 0..n {
        let name = String::from_utf8_lossy(&names[i]);
        let (stored, full_shape) = reader.dtype_and_shape(&names[i])?;
        if stored != dtypes[i].as_enum() {
            mismatched.push(format!(
                "tensor_name = {name}; expected dtype {} does not equal original dtype {}",
                dtype_string(dtypes[i].as_enum()),
                dtype_string(stored)
            ));
        }
        slices.push(if specs[i].is_empty() {
            None
        } else {
            let p = parse_shape_and_slice(utf8(&specs[i], "shape_and_slice")?)?;
            ensure!(
                p.full_shape == full_shape,
                invalid_argument,
                "tensor_name = {name}; shape in shape_and_slice spec {:?} does not match the \
                     shape stored in checkpoint: {full_shape:?}",
                p.full_shape
            );
            Some(p.slice)
        });
    }
    if !mismatched.is_empty() {
        return Err(Error::invalid_argument(mismatched.join("\n")));
    }
    let requests: Vec<(&[u8], Option<&TensorSlice>)> = names
        .iter()
        .zip(&slices)
        .map(|(k, s)| (k.as_slice(), s.as_ref()))
        .collect();
    for t in reader.read_many(&requests)? {
        ctx.output(t);
    }
    Ok(())
}

fn merge_kernel(ctx: &mut OpContext<'_>, options: MergeOptions) -> Result<()> {
    let inputs = ctx.input(0)?;
    let prefixes: Vec<PathBuf> = strings(inputs, "checkpoint_prefixes")?
        .iter()
        .map(|p| to_path(p))
        .collect();
    let dest = scalar_string(ctx.input(1)?, "destination_prefix")?;
    check_parent_creatable(&dest)?;
    merge_bundles(&prefixes, &dest, options)
}

/// The kernels of the checkpoint ops.
pub fn kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![
        ("SaveV2", factory(|_| Ok(Box::new(save_kernel)))),
        (
            "RestoreV2",
            factory(|init| {
                let dtypes = restore_dtypes(&init.node.attrs)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    restore_kernel(ctx, &dtypes)
                }))
            }),
        ),
        (
            "MergeV2Checkpoints",
            factory(|init| {
                let a = &init.node.attrs;
                let options = MergeOptions {
                    delete_old_dirs: a.bool_or("delete_old_dirs", true)?,
                    allow_missing_files: a.bool_or("allow_missing_files", false)?,
                };
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    merge_kernel(ctx, options)
                }))
            }),
        ),
    ]
}
