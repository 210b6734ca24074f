//! Node attributes (TensorFlow's `AttrValue`).

use crate::shape::PartialShape;
use ferroflow_tensor::{DType, Error, Result, Tensor};

/// One attribute value of a node.
#[derive(Clone, Debug)]
pub enum AttrValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(Vec<u8>),
    Type(DType),
    Shape(PartialShape),
    Tensor(Tensor),
    IntList(Vec<i64>),
    FloatList(Vec<f64>),
    BoolList(Vec<bool>),
    TypeList(Vec<DType>),
    ShapeList(Vec<PartialShape>),
    StrList(Vec<Vec<u8>>),
}

impl AttrValue {
    fn kind(&self) -> &'static str {
        match self {
            AttrValue::Int(_) => "int",
            AttrValue::Float(_) => "float",
            AttrValue::Bool(_) => "bool",
            AttrValue::Str(_) => "string",
            AttrValue::Type(_) => "type",
            AttrValue::Shape(_) => "shape",
            AttrValue::Tensor(_) => "tensor",
            AttrValue::IntList(_) => "list(int)",
            AttrValue::FloatList(_) => "list(float)",
            AttrValue::BoolList(_) => "list(bool)",
            AttrValue::TypeList(_) => "list(type)",
            AttrValue::ShapeList(_) => "list(shape)",
            AttrValue::StrList(_) => "list(string)",
        }
    }
}

/// The attributes of a node, by name.
pub type Attrs = std::collections::BTreeMap<String, AttrValue>;

fn wrong(name: &str, want: &str, got: Option<&AttrValue>) -> Error {
    match got {
        None => Error::value(format!("missing attribute '{name}' ({want})")),
        Some(v) => Error::type_error(format!(
            "attribute '{name}' must be {want}, got {}",
            v.kind()
        )),
    }
}

/// Typed access to attributes.
pub trait AttrsExt {
    fn int(&self, name: &str) -> Result<i64>;
    fn int_or(&self, name: &str, default: i64) -> Result<i64>;
    fn float(&self, name: &str) -> Result<f64>;
    fn float_or(&self, name: &str, default: f64) -> Result<f64>;
    fn bool_or(&self, name: &str, default: bool) -> Result<bool>;
    fn dtype(&self, name: &str) -> Result<DType>;
    fn dtype_or(&self, name: &str, default: DType) -> Result<DType>;
    fn shape(&self, name: &str) -> Result<PartialShape>;
    fn tensor(&self, name: &str) -> Result<&Tensor>;
    fn str_or(&self, name: &str, default: &str) -> Result<String>;
    fn ints(&self, name: &str) -> Result<Vec<i64>>;
    /// A required string (a function name, say).
    fn string(&self, name: &str) -> Result<String>;
    /// A list of dtypes (empty when absent).
    fn dtypes(&self, name: &str) -> Result<Vec<DType>>;
    /// A list of shapes (empty when absent).
    fn shapes(&self, name: &str) -> Result<Vec<PartialShape>>;
    /// A list of bools (empty when absent).
    fn bools(&self, name: &str) -> Result<Vec<bool>>;
}

impl AttrsExt for Attrs {
    fn int(&self, name: &str) -> Result<i64> {
        match self.get(name) {
            Some(AttrValue::Int(v)) => Ok(*v),
            other => Err(wrong(name, "an int", other)),
        }
    }
    fn int_or(&self, name: &str, default: i64) -> Result<i64> {
        if self.contains_key(name) {
            self.int(name)
        } else {
            Ok(default)
        }
    }
    fn float(&self, name: &str) -> Result<f64> {
        match self.get(name) {
            Some(AttrValue::Float(v)) => Ok(*v),
            Some(AttrValue::Int(v)) => Ok(*v as f64),
            other => Err(wrong(name, "a float", other)),
        }
    }
    fn float_or(&self, name: &str, default: f64) -> Result<f64> {
        if self.contains_key(name) {
            self.float(name)
        } else {
            Ok(default)
        }
    }
    fn bool_or(&self, name: &str, default: bool) -> Result<bool> {
        match self.get(name) {
            None => Ok(default),
            Some(AttrValue::Bool(v)) => Ok(*v),
            other => Err(wrong(name, "a bool", other)),
        }
    }
    fn dtype(&self, name: &str) -> Result<DType> {
        match self.get(name) {
            Some(AttrValue::Type(v)) => Ok(*v),
            other => Err(wrong(name, "a dtype", other)),
        }
    }
    fn dtype_or(&self, name: &str, default: DType) -> Result<DType> {
        if self.contains_key(name) {
            self.dtype(name)
        } else {
            Ok(default)
        }
    }
    fn shape(&self, name: &str) -> Result<PartialShape> {
        match self.get(name) {
            Some(AttrValue::Shape(v)) => Ok(v.clone()),
            None => Ok(PartialShape::unknown()),
            other => Err(wrong(name, "a shape", other)),
        }
    }
    fn tensor(&self, name: &str) -> Result<&Tensor> {
        match self.get(name) {
            Some(AttrValue::Tensor(v)) => Ok(v),
            other => Err(wrong(name, "a tensor", other)),
        }
    }
    fn str_or(&self, name: &str, default: &str) -> Result<String> {
        match self.get(name) {
            None => Ok(default.to_string()),
            Some(AttrValue::Str(v)) => Ok(String::from_utf8_lossy(v).into_owned()),
            other => Err(wrong(name, "a string", other)),
        }
    }
    fn ints(&self, name: &str) -> Result<Vec<i64>> {
        match self.get(name) {
            Some(AttrValue::IntList(v)) => Ok(v.clone()),
            None => Ok(Vec::new()),
            other => Err(wrong(name, "a list of ints", other)),
        }
    }
    fn string(&self, name: &str) -> Result<String> {
        match self.get(name) {
            Some(AttrValue::Str(v)) => Ok(String::from_utf8_lossy(v).into_owned()),
            other => Err(wrong(name, "a string", other)),
        }
    }
    fn dtypes(&self, name: &str) -> Result<Vec<DType>> {
        match self.get(name) {
            Some(AttrValue::TypeList(v)) => Ok(v.clone()),
            None => Ok(Vec::new()),
            Some(AttrValue::IntList(v)) if v.is_empty() => Ok(Vec::new()),
            other => Err(wrong(name, "a list of dtypes", other)),
        }
    }
    fn shapes(&self, name: &str) -> Result<Vec<PartialShape>> {
        match self.get(name) {
            Some(AttrValue::ShapeList(v)) => Ok(v.clone()),
            None => Ok(Vec::new()),
            Some(AttrValue::IntList(v)) if v.is_empty() => Ok(Vec::new()),
            other => Err(wrong(name, "a list of shapes", other)),
        }
    }
    fn bools(&self, name: &str) -> Result<Vec<bool>> {
        match self.get(name) {
            Some(AttrValue::BoolList(v)) => Ok(v.clone()),
            None => Ok(Vec::new()),
            Some(AttrValue::IntList(v)) if v.is_empty() => Ok(Vec::new()),
            other => Err(wrong(name, "a list of bools", other)),
        }
    }
}
