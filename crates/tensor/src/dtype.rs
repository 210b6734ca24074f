//! Element types, numbered exactly like TensorFlow's `DataType` enum.
//!
//! The numbers matter beyond this crate: checkpoints, GraphDefs and event
//! files all store the enum value, so they must be TensorFlow's.

use std::fmt;

/// The element type of a tensor.
///
/// `as i32` gives TensorFlow's `DataType` enum value (`DT_FLOAT = 1`, ...).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i32)]
pub enum DType {
    Float32 = 1,
    Float64 = 2,
    Int32 = 3,
    UInt8 = 4,
    Int16 = 5,
    Int8 = 6,
    String = 7,
    /// Two `f32`s, real then imaginary (`DT_COMPLEX64`).
    Complex64 = 8,
    Int64 = 9,
    Bool = 10,
    BFloat16 = 14,
    UInt16 = 17,
    /// Two `f64`s, real then imaginary (`DT_COMPLEX128`).
    Complex128 = 18,
    Float16 = 19,
    /// A handle to a resource (a queue, a reader, an iterator): graph edges
    /// only. Its run-time value is a `Value::Resource`, never a tensor.
    Resource = 20,
    /// An opaque value (a dataset): graph edges only, like `Resource`.
    Variant = 21,
}

impl DType {
    /// Every dtype a tensor can hold, in enum order (not the handle types
    /// [`DType::Resource`] and [`DType::Variant`]).
    pub const ALL: [DType; 14] = [
        DType::Float32,
        DType::Float64,
        DType::Int32,
        DType::UInt8,
        DType::Int16,
        DType::Int8,
        DType::String,
        DType::Complex64,
        DType::Int64,
        DType::Bool,
        DType::BFloat16,
        DType::UInt16,
        DType::Complex128,
        DType::Float16,
    ];

    /// Looks a dtype up by TensorFlow's enum value. Reference types
    /// (`value + 100`) map to their base type.
    pub fn from_enum(value: i32) -> Option<DType> {
        let base = if value > 100 { value - 100 } else { value };
        match base {
            20 => Some(DType::Resource),
            21 => Some(DType::Variant),
            _ => DType::ALL.iter().copied().find(|d| *d as i32 == base),
        }
    }

    /// TensorFlow's enum value.
    pub fn as_enum(self) -> i32 {
        self as i32
    }

    /// The Python-facing name (`float32`, `int64`, `string`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::Int32 => "int32",
            DType::UInt8 => "uint8",
            DType::Int16 => "int16",
            DType::Int8 => "int8",
            DType::String => "string",
            DType::Int64 => "int64",
            DType::Bool => "bool",
            DType::BFloat16 => "bfloat16",
            DType::UInt16 => "uint16",
            DType::Float16 => "float16",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
            DType::Resource => "resource",
            DType::Variant => "variant",
        }
    }

    /// Looks a dtype up by its Python-facing name; accepts TF's aliases
    /// (`float`, `double`, `half`).
    pub fn from_name(name: &str) -> Option<DType> {
        Some(match name {
            "float32" | "float" => DType::Float32,
            "float64" | "double" => DType::Float64,
            "float16" | "half" => DType::Float16,
            "bfloat16" => DType::BFloat16,
            "int8" => DType::Int8,
            "int16" => DType::Int16,
            "int32" => DType::Int32,
            "int64" => DType::Int64,
            "uint8" => DType::UInt8,
            "uint16" => DType::UInt16,
            "bool" => DType::Bool,
            "string" => DType::String,
            "complex64" => DType::Complex64,
            "complex128" => DType::Complex128,
            "resource" => DType::Resource,
            "variant" => DType::Variant,
            _ => return None,
        })
    }

    /// Size of one element in bytes; `None` for strings.
    pub fn size(self) -> Option<usize> {
        Some(match self {
            DType::Complex128 => 16,
            DType::Float64 | DType::Int64 | DType::Complex64 => 8,
            DType::Float32 | DType::Int32 => 4,
            DType::Float16 | DType::BFloat16 | DType::Int16 | DType::UInt16 => 2,
            DType::Int8 | DType::UInt8 | DType::Bool => 1,
            DType::String | DType::Resource | DType::Variant => return None,
        })
    }

    pub fn is_floating(self) -> bool {
        matches!(
            self,
            DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64
        )
    }

    pub fn is_integer(self) -> bool {
        matches!(
            self,
            DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64 | DType::UInt8 | DType::UInt16
        )
    }

    /// `complex64` or `complex128`.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::Complex64 | DType::Complex128)
    }

    /// The real type of a complex dtype's parts (`float32` for `complex64`,
    /// `float64` for `complex128`); other dtypes map to themselves.
    pub fn real_dtype(self) -> DType {
        match self {
            DType::Complex64 => DType::Float32,
            DType::Complex128 => DType::Float64,
            d => d,
        }
    }

    pub fn is_unsigned(self) -> bool {
        matches!(self, DType::UInt8 | DType::UInt16)
    }

    /// A handle type: its values are not tensors.
    pub fn is_handle(self) -> bool {
        matches!(self, DType::Resource | DType::Variant)
    }

    /// Numbers that arithmetic applies to (floating, integer or complex).
    pub fn is_numeric(self) -> bool {
        self.is_floating() || self.is_integer() || self.is_complex()
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_values_are_tensorflows() {
        assert_eq!(DType::Float32 as i32, 1);
        assert_eq!(DType::Int64 as i32, 9);
        assert_eq!(DType::BFloat16 as i32, 14);
        assert_eq!(DType::Float16 as i32, 19);
        assert_eq!(DType::from_enum(101), Some(DType::Float32));
        assert_eq!(DType::from_enum(8), Some(DType::Complex64));
        assert_eq!(DType::from_enum(118), Some(DType::Complex128));
        assert_eq!(DType::from_enum(11), None);
        assert_eq!(DType::Complex64.size(), Some(8));
        assert_eq!(DType::Complex128.real_dtype(), DType::Float64);
    }

    #[test]
    fn names_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::from_name(d.name()), Some(d));
            assert_eq!(DType::from_enum(d.as_enum()), Some(d));
        }
    }
}
