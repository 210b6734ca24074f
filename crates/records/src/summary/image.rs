//! Image summaries: pixel conversion and PNG encoding.

use ferroflow_tensor::f16;

use crate::{Error, Result};

/// Default `bad_color` of TF1 image summaries (opaque red).
pub const DEFAULT_BAD_COLOR: [u8; 4] = [255, 0, 0, 255];

/// The shape of an image batch, `[batch, height, width, channels]`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ImageShape {
    pub batch: usize,
    pub height: usize,
    pub width: usize,
    pub channels: usize,
}

impl ImageShape {
    /// Checks a `[batch, height, width, channels]` shape (channels 1-4, sizes
    /// that fit TensorFlow's int32 limits).
    pub fn new(dims: &[usize]) -> Result<ImageShape> {
        let &[batch, height, width, channels] = dims else {
            return Err(Error::invalid_argument(format!(
                "Tensor must be 4-D [batch, height, width, channels], not {dims:?}"
            )));
        };
        if !(1..=4).contains(&channels) {
            return Err(Error::invalid_argument(format!(
                "Tensor must be 4-D with last dim 1, 2, 3 or 4, not {dims:?}"
            )));
        }
        let fits = |v: usize| v < i32::MAX as usize;
        let hw = height.checked_mul(width);
        let size = hw.and_then(|hw| hw.checked_mul(channels));
        if !fits(batch) || !fits(height) || !fits(width) || !size.is_some_and(fits) {
            return Err(Error::invalid_argument(format!(
                "image dimensions are too large: {dims:?}"
            )));
        }
        Ok(ImageShape {
            batch,
            height,
            width,
            channels,
        })
    }

    /// Elements in one image.
    pub fn image_len(&self) -> usize {
        self.height * self.width * self.channels
    }

    /// Elements in the batch, if it fits in `usize`.
    pub fn len(&self) -> Option<usize> {
        self.batch.checked_mul(self.image_len())
    }

    /// Whether the batch holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    pub(crate) fn check_data(&self, len: usize) -> Result<()> {
        if self.len() != Some(len) {
            return Err(Error::invalid_argument(format!(
                "image data has {len} values, shape {:?} needs {:?}",
                [self.batch, self.height, self.width, self.channels],
                self.len()
            )));
        }
        Ok(())
    }
}

/// Encodes 8-bit pixels (`height * width * channels`, row-major, channels
/// 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA) as PNG.
pub fn encode_png(pixels: &[u8], height: usize, width: usize, channels: usize) -> Result<Vec<u8>> {
    let color = match channels {
        1 => png::ColorType::Grayscale,
        2 => png::ColorType::GrayscaleAlpha,
        3 => png::ColorType::Rgb,
        4 => png::ColorType::Rgba,
        c => {
            return Err(Error::invalid_argument(format!(
                "PNG images need 1 to 4 channels, not {c}"
            )))
        }
    };
    if height
        .checked_mul(width)
        .and_then(|n| n.checked_mul(channels))
        != Some(pixels.len())
    {
        return Err(Error::invalid_argument(format!(
            "{} pixel values for a {height}x{width}x{channels} image",
            pixels.len()
        )));
    }
    let (h, w) = match (u32::try_from(height), u32::try_from(width)) {
        (Ok(h), Ok(w)) if h > 0 && w > 0 => (h, w),
        _ => {
            return Err(Error::invalid_argument(format!(
                "cannot encode a {height}x{width} image as PNG"
            )))
        }
    };
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(color);
    encoder.set_depth(png::BitDepth::Eight);
    let png_err = |e: png::EncodingError| Error::internal(format!("PNG encoding failed: {e}"));
    let mut writer = encoder.write_header().map_err(png_err)?;
    writer.write_image_data(pixels).map_err(png_err)?;
    writer.finish().map_err(png_err)?;
    Ok(out)
}

/// A floating-point pixel type TF1 image summaries accept.
pub trait FloatPixel: Copy {
    /// The value as `f32` (TensorFlow computes the range in float).
    fn to_f32(self) -> f32;
    /// `(self * scale + offset)` in the pixel's own precision, cast to `u8`.
    fn affine_to_u8(self, scale: f32, offset: f32) -> u8;
}

impl FloatPixel for f32 {
    fn to_f32(self) -> f32 {
        self
    }
    fn affine_to_u8(self, scale: f32, offset: f32) -> u8 {
        (self * scale + offset) as u8
    }
}

impl FloatPixel for f64 {
    fn to_f32(self) -> f32 {
        self as f32
    }
    fn affine_to_u8(self, scale: f32, offset: f32) -> u8 {
        (self * scale as f64 + offset as f64) as u8
    }
}

impl FloatPixel for f16 {
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
    fn affine_to_u8(self, scale: f32, offset: f32) -> u8 {
        // Half arithmetic rounds to half after each operation.
        let scale = f16::from_f32(scale);
        let offset = f16::from_f32(offset);
        let product = f16::from_f32(f16::to_f32(self) * f16::to_f32(scale));
        let sum = f16::from_f32(f16::to_f32(product) + f16::to_f32(offset));
        f16::to_f32(sum) as u8
    }
}

/// TF1's conversion of one float image (`hw` pixels of `depth` channels) to
/// 8 bits: over the pixels whose channels are all finite, if the minimum is
/// negative, scale by `127 / max(|min|, |max|)` and add 128, else scale by
/// `255 / max`; a scale whose range is below 1e-6 becomes 0. Pixels with a
/// non-finite channel get `bad_color`.
pub fn normalize_float_image<T: FloatPixel>(
    values: &[T],
    depth: usize,
    bad_color: &[u8],
) -> Vec<u8> {
    if depth == 0 {
        return Vec::new();
    }
    let finite = |px: &[T]| px.iter().all(|v| v.to_f32().is_finite());
    let mut min = f32::INFINITY;
    let mut max = -f32::INFINITY;
    for px in values.chunks_exact(depth).filter(|px| finite(px)) {
        for v in px {
            min = min.min(v.to_f32());
            max = max.max(v.to_f32());
        }
    }
    const ZERO_THRESHOLD: f32 = 1e-6;
    let (scale, offset) = if min < 0.0 {
        let m = min.abs().max(max.abs());
        (if m < ZERO_THRESHOLD { 0.0 } else { 127.0 / m }, 128.0)
    } else {
        (
            if max < ZERO_THRESHOLD {
                0.0
            } else {
                255.0 / max
            },
            0.0,
        )
    };
    let mut out = Vec::with_capacity(values.len());
    for px in values.chunks_exact(depth) {
        if finite(px) {
            out.extend(px.iter().map(|v| v.affine_to_u8(scale, offset)));
        } else {
            out.extend((0..depth).map(|c| bad_color.get(c).copied().unwrap_or(0)));
        }
    }
    out
}

/// TF1 conversion of a float image batch, each image normalized on its own
/// (see [`normalize_float_image`]).
pub fn normalize_float_images<T: FloatPixel>(
    values: &[T],
    shape: ImageShape,
    bad_color: &[u8],
) -> Result<Vec<u8>> {
    shape.check_data(values.len())?;
    if bad_color.len() < shape.channels {
        return Err(Error::invalid_argument(format!(
            "bad_color has {} channels, the images have {}",
            bad_color.len(),
            shape.channels
        )));
    }
    let per_image = shape.image_len();
    if per_image == 0 {
        return Ok(Vec::new());
    }
    Ok(values
        .chunks_exact(per_image)
        .flat_map(|img| normalize_float_image(img, shape.channels, bad_color))
        .collect())
}

/// `tf.image.convert_image_dtype(x, tf.uint8, saturate=True)` for float
/// input, as TF2 image summaries use: `x * 255.5` (in the input's
/// precision), clamped to `[0, 255]`, truncated.
pub fn convert_f32_to_u8(values: &[f32]) -> Vec<u8> {
    values
        .iter()
        .map(|&v| (v * 255.5).clamp(0.0, 255.0) as u8)
        .collect()
}

/// [`convert_f32_to_u8`] for float64 input.
pub fn convert_f64_to_u8(values: &[f64]) -> Vec<u8> {
    values
        .iter()
        .map(|&v| (v * 255.5).clamp(0.0, 255.0) as u8)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_round_trip() {
        let pixels: Vec<u8> = (0..2 * 3 * 4).map(|v| (v * 10) as u8).collect();
        let png_bytes = encode_png(&pixels, 2, 3, 4).unwrap();
        assert_eq!(&png_bytes[..8], b"\x89PNG\r\n\x1a\n");
        let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (3, 2));
        assert_eq!(&buf[..info.buffer_size()], &pixels[..]);
        assert!(encode_png(&pixels, 2, 3, 5).is_err());
        assert!(encode_png(&pixels[1..], 2, 3, 4).is_err());
    }

    #[test]
    fn tf1_normalization() {
        // Non-negative: scaled by 255 / max.
        assert_eq!(
            normalize_float_image(&[0.0f32, 0.5, 1.0], 1, &DEFAULT_BAD_COLOR),
            vec![0, 127, 255]
        );
        // Negative values: centred on 128, scaled by 127 / max|x|.
        assert_eq!(
            normalize_float_image(&[-1.0f32, 0.0, 0.5], 1, &DEFAULT_BAD_COLOR),
            vec![1, 128, 191]
        );
        // Non-finite pixels take bad_color and are ignored for the range.
        assert_eq!(
            normalize_float_image(&[f32::NAN, 0.0, 0.0, 2.0, 1.0, 1.0], 3, &DEFAULT_BAD_COLOR),
            vec![255, 0, 0, 255, 127, 127]
        );
        // An all-zero image stays black.
        assert_eq!(
            normalize_float_image(&[0.0f64; 3], 1, &DEFAULT_BAD_COLOR),
            vec![0; 3]
        );
    }

    #[test]
    fn convert_saturates() {
        assert_eq!(
            convert_f32_to_u8(&[-1.0, 0.0, 0.5, 1.0, 2.0]),
            vec![0, 0, 127, 255, 255]
        );
    }

    #[test]
    fn shape_checks() {
        assert!(ImageShape::new(&[1, 2, 3]).is_err());
        assert!(ImageShape::new(&[1, 2, 3, 5]).is_err());
        let s = ImageShape::new(&[2, 2, 3, 1]).unwrap();
        assert!(s.check_data(12).is_ok());
        assert!(s.check_data(11).is_err());
    }
}
