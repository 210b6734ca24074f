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
    /// The quantized types (`qint8`, `quint8`, `qint32`, `qint16`,
    /// `quint16`): graph edges carry them, their run-time tensors are stored
    /// as the integer type of the same width ([`DType::storage`]).
    QInt8 = 11,
    QUInt8 = 12,
    QInt32 = 13,
    BFloat16 = 14,
    QInt16 = 15,
    QUInt16 = 16,
    UInt16 = 17,
    /// Two `f64`s, real then imaginary (`DT_COMPLEX128`).
    Complex128 = 18,
    Float16 = 19,
    /// A handle to a resource (a queue, a reader, an iterator): graph edges
    /// only. Its run-time value is a `Value::Resource`, never a tensor.
    Resource = 20,
    /// An opaque value (a dataset): graph edges only, like `Resource`.
    Variant = 21,
    UInt32 = 22,
    UInt64 = 23,
}

impl DType {
    /// Every dtype a tensor can hold, in enum order (not the handle types
    /// [`DType::Resource`] and [`DType::Variant`]).
    pub const ALL: [DType; 16] = [
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
        DType::UInt32,
        DType::UInt64,
    ];

    /// The quantized dtypes, in enum order.
    pub const QUANTIZED: [DType; 5] = [
        DType::QInt8,
        DType::QUInt8,
        DType::QInt32,
        DType::QInt16,
        DType::QUInt16,
    ];

    /// Looks a dtype up by TensorFlow's enum value. Reference types
    /// (`value + 100`) map to their base type.
    pub fn from_enum(value: i32) -> Option<DType> {
        let base = if value > 100 { value - 100 } else { value };
        match base {
            20 => Some(DType::Resource),
            21 => Some(DType::Variant),
            _ => DType::ALL
                .iter()
                .chain(&DType::QUANTIZED)
                .copied()
                .find(|d| *d as i32 == base),
        }
    }

    /// The dtype a tensor of this dtype is stored as: the integer type of
    /// the same width for a quantized dtype, else itself.
    pub fn storage(self) -> DType {
        match self {
            DType::QInt8 => DType::Int8,
            DType::QUInt8 => DType::UInt8,
            DType::QInt16 => DType::Int16,
            DType::QUInt16 => DType::UInt16,
            DType::QInt32 => DType::Int32,
            d => d,
        }
    }

    /// `qint8`, `quint8`, `qint16`, `quint16` or `qint32`.
    pub fn is_quantized(self) -> bool {
        DType::QUANTIZED.contains(&self)
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
            DType::UInt32 => "uint32",
            DType::UInt64 => "uint64",
            DType::Float16 => "float16",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
            DType::QInt8 => "qint8",
            DType::QUInt8 => "quint8",
            DType::QInt16 => "qint16",
            DType::QUInt16 => "quint16",
            DType::QInt32 => "qint32",
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
            "uint32" => DType::UInt32,
            "uint64" => DType::UInt64,
            "bool" => DType::Bool,
            "string" => DType::String,
            "complex64" => DType::Complex64,
            "complex128" => DType::Complex128,
            "qint8" => DType::QInt8,
            "quint8" => DType::QUInt8,
            "qint16" => DType::QInt16,
            "quint16" => DType::QUInt16,
            "qint32" => DType::QInt32,
            "resource" => DType::Resource,
            "variant" => DType::Variant,
            _ => return None,
        })
    }

    /// Size of one element in bytes; `None` for strings.
    pub fn size(self) -> Option<usize> {
        Some(match self {
            DType::Complex128 => 16,
            DType::Float64 | DType::Int64 | DType::UInt64 | DType::Complex64 => 8,
            DType::Float32 | DType::Int32 | DType::UInt32 | DType::QInt32 => 4,
            DType::Float16 | DType::BFloat16 | DType::Int16 | DType::UInt16 => 2,
            DType::QInt16 | DType::QUInt16 => 2,
            DType::Int8 | DType::UInt8 | DType::Bool | DType::QInt8 | DType::QUInt8 => 1,
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
            DType::Int8
                | DType::Int16
                | DType::Int32
                | DType::Int64
                | DType::UInt8
                | DType::UInt16
                | DType::UInt32
                | DType::UInt64
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
        matches!(
            self,
            DType::UInt8 | DType::UInt16 | DType::UInt32 | DType::UInt64
        )
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
        assert_eq!(DType::from_enum(7), Some(DType::String));
        assert_eq!(DType::Complex64.size(), Some(8));
        assert_eq!(DType::Complex128.real_dtype(), DType::Float64);
        assert_eq!(DType::from_enum(11), Some(DType::QInt8));
        assert_eq!(DType::from_enum(16), Some(DType::QUInt16));
        assert_eq!(DType::QInt32.storage(), DType::Int32);
        assert_eq!(DType::QUInt8.size(), Some(1));
        assert_eq!(DType::from_enum(22), Some(DType::UInt32));
        assert_eq!(DType::from_enum(123), Some(DType::UInt64));
        assert_eq!(DType::UInt32.size(), Some(4));
        assert_eq!(DType::UInt64.size(), Some(8));
        assert!(DType::UInt64.is_unsigned() && DType::UInt32.is_integer());
    }

    #[test]
    fn names_round_trip() {
        for d in DType::ALL.into_iter().chain(DType::QUANTIZED) {
            assert_eq!(DType::from_name(d.name()), Some(d));
            assert_eq!(DType::from_enum(d.as_enum()), Some(d));
        }
    }
}
