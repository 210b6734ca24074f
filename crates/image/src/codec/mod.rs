//! Image codecs on byte buffers: JPEG (libjpeg-turbo's code, as TensorFlow
//! uses), PNG, GIF, BMP, WebP and JPEG XL (decoding), with TensorFlow's
//! decoding semantics.
//!
//! Every decoder reads the image's header first and refuses an image whose
//! decoded pixels would exceed [`MAX_IMAGE_BYTES`] *before* allocating them,
//! so a small file that declares a huge image (a "decompression bomb") costs
//! nothing. Errors are `InvalidArgument` with TensorFlow's message where it
//! has one; no input makes a decoder panic.
//!
//! [`decode_image`] sniffs the format from the first bytes the way
//! TensorFlow's `DecodeImage` kernel does (JPEG `\xff\xd8\xff`, PNG's
//! signature, `GIF8`, `BM`, `RIFF....WEBP`, JPEG XL's `FF 0A` or container).

pub mod bmp;
pub mod gif;
pub mod jpeg;
pub mod jxl;
pub mod png;
pub mod webp;

use ferroflow_tensor::{bail, ensure, Error, Result};

/// The largest decoded image (all frames together, in bytes of pixel data)
/// any decoder here produces: 2^29 bytes (512 MiB), TensorFlow's limit for
/// JPEG (`total_size >= 1 << 29` is refused). Larger images are refused from
/// their header, before any pixel memory is allocated.
pub const MAX_IMAGE_BYTES: u64 = 1 << 29;

/// Pixel samples of a decoded image: 8-bit, or 16-bit (PNG only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pixels {
    /// 8-bit samples.
    U8(Vec<u8>),
    /// 16-bit samples (PNG decoded with `dtype=uint16`).
    U16(Vec<u16>),
}

impl Pixels {
    /// The number of samples.
    pub fn len(&self) -> usize {
        match self {
            Pixels::U8(v) => v.len(),
            Pixels::U16(v) => v.len(),
        }
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A decoded image (or stack of animation frames): `frames` images of
/// `height` x `width` pixels of `channels` interleaved samples each, rows
/// top to bottom, in `pixels` (`frames * height * width * channels`
/// samples).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Number of frames (1 except for animated GIFs).
    pub frames: usize,
    /// Rows.
    pub height: usize,
    /// Columns.
    pub width: usize,
    /// Samples per pixel (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA).
    pub channels: usize,
    /// The samples.
    pub pixels: Pixels,
}

impl Image {
    /// An 8-bit single-frame image.
    pub fn new_u8(height: usize, width: usize, channels: usize, data: Vec<u8>) -> Image {
        Image {
            frames: 1,
            height,
            width,
            channels,
            pixels: Pixels::U8(data),
        }
    }

    /// The 8-bit samples, if the image is 8-bit.
    pub fn as_u8(&self) -> Option<&[u8]> {
        match &self.pixels {
            Pixels::U8(v) => Some(v),
            Pixels::U16(_) => None,
        }
    }

    /// The 16-bit samples, if the image is 16-bit.
    pub fn as_u16(&self) -> Option<&[u16]> {
        match &self.pixels {
            Pixels::U16(v) => Some(v),
            Pixels::U8(_) => None,
        }
    }
}

/// The image formats [`sniff`] recognizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// JPEG (`\xff\xd8\xff`).
    Jpeg,
    /// PNG (`\x89PNG\r\n\x1a\n`).
    Png,
    /// GIF (`GIF8`).
    Gif,
    /// BMP (`BM`).
    Bmp,
    /// WebP (`RIFF`, four size bytes, `WEBP`, and more after it).
    WebP,
    /// JPEG XL (a codestream's `FF 0A`, or the container's signature box).
    Jxl,
}

/// TensorFlow's error for bytes that match no supported format.
pub const UNKNOWN_FORMAT: &str =
    "Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required.";

/// Classifies `data` by its first bytes, in TensorFlow's order (JPEG, PNG,
/// GIF, BMP, WebP, JPEG XL); `None` for anything else.
pub fn sniff(data: &[u8]) -> Option<Format> {
    if data.starts_with(b"\xff\xd8\xff") {
        Some(Format::Jpeg)
    } else if data.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(Format::Png)
    } else if data.starts_with(b"GIF8") {
        Some(Format::Gif)
    } else if data.starts_with(b"BM") {
        Some(Format::Bmp)
    } else if webp::is_webp(data) {
        Some(Format::WebP)
    } else if jxl::is_jxl(data) {
        Some(Format::Jxl)
    } else {
        None
    }
}

/// Whether `data` starts like a JPEG (`tf.io.is_jpeg`).
pub fn is_jpeg(data: &[u8]) -> bool {
    data.starts_with(b"\xff\xd8\xff")
}

/// Options of [`decode_image`].
#[derive(Clone, Debug)]
pub struct DecodeImageOptions {
    /// 0 (as stored), 1, 3 or 4.
    pub channels: usize,
    /// Decode PNGs to 16-bit samples (other formats stay 8-bit).
    pub png_16bit: bool,
    /// Decode every frame of an animated GIF (else only the first).
    pub all_frames: bool,
    /// JPEG options (`channels` above overrides the JPEG's).
    pub jpeg: jpeg::DecodeOptions,
}

impl Default for DecodeImageOptions {
    fn default() -> Self {
        DecodeImageOptions {
            channels: 0,
            png_16bit: false,
            all_frames: true,
            jpeg: jpeg::DecodeOptions::default(),
        }
    }
}

/// Decodes a JPEG, PNG, GIF, BMP, WebP or JPEG XL, sniffed from its first
/// bytes, with TensorFlow's per-format channel rules (JPEG 0/1/3, GIF 0/3,
/// BMP 0/3/4, PNG 0/1/3/4, WebP 0 or the file's own 3/4, animations 0/4,
/// JPEG XL 0 or the file's own).
pub fn decode_image(data: &[u8], opts: &DecodeImageOptions) -> Result<(Format, Image)> {
    if data.is_empty() {
        bail!(invalid_argument, "Input is empty.");
    }
    let format = sniff(data).ok_or_else(|| Error::invalid_argument(UNKNOWN_FORMAT))?;
    let image = match format {
        Format::Jpeg => {
            ensure!(
                opts.channels != 4,
                invalid_argument,
                "JPEG does not support 4 channels"
            );
            let mut j = opts.jpeg.clone();
            j.channels = opts.channels;
            jpeg::decode(data, &j)?
        }
        Format::Png => png::decode(data, opts.channels, opts.png_16bit)?,
        Format::Gif => {
            if opts.channels != 0 && opts.channels != 3 {
                bail!(
                    invalid_argument,
                    "channels must be 0 or 3 for GIF, got {}",
                    opts.channels
                );
            }
            gif::decode(data, opts.all_frames)?
        }
        Format::Bmp => bmp::decode(data, opts.channels)?,
        Format::WebP => {
            webp::check_channels(data, opts.channels)?;
            webp::decode(data, opts.all_frames)?
        }
        Format::Jxl => {
            let h = jxl::header(data)?;
            ensure!(
                opts.channels == 0 || opts.channels == h.channels,
                invalid_argument,
                "Number of channels requested does not match input"
            );
            jxl::decode(data)?
        }
    };
    Ok((format, image))
}

/// Refuses an image of `frames * height * width * channels` samples of
/// `sample_bytes` bytes each when that exceeds [`MAX_IMAGE_BYTES`].
pub(crate) fn check_size(
    what: &str,
    frames: u64,
    height: u64,
    width: u64,
    channels: u64,
    sample_bytes: u64,
) -> Result<()> {
    let total = frames
        .checked_mul(height)
        .and_then(|n| n.checked_mul(width))
        .and_then(|n| n.checked_mul(channels))
        .and_then(|n| n.checked_mul(sample_bytes));
    match total {
        Some(n) if n < MAX_IMAGE_BYTES => Ok(()),
        _ => Err(Error::invalid_argument(format!(
            "{what} image too large: {frames} frame(s) of {width} by {height} pixels \
             x {channels} channels exceeds the limit of {MAX_IMAGE_BYTES} bytes"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_like_tensorflow() {
        assert_eq!(sniff(b"\xff\xd8\xff\xe0"), Some(Format::Jpeg));
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\nxx"), Some(Format::Png));
        assert_eq!(sniff(b"GIF89a"), Some(Format::Gif));
        assert_eq!(sniff(b"BM...."), Some(Format::Bmp));
        assert_eq!(sniff(b"\xff\xd8"), None);
        assert_eq!(sniff(b"RIFF"), None);
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBP"), None);
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPV"), Some(Format::WebP));
        assert!(is_jpeg(b"\xff\xd8\xff"));
        assert!(!is_jpeg(b"\xff\xd8"));
    }

    #[test]
    fn decode_image_errors() {
        let e = decode_image(b"", &DecodeImageOptions::default()).unwrap_err();
        assert!(e.to_string().contains("Input is empty."));
        let e = decode_image(b"hello world", &DecodeImageOptions::default()).unwrap_err();
        assert!(e.to_string().contains("Unknown image file format"));
        let opts = DecodeImageOptions {
            channels: 4,
            ..Default::default()
        };
        let e = decode_image(b"\xff\xd8\xff\xe0", &opts).unwrap_err();
        assert!(e.to_string().contains("JPEG does not support 4 channels"));
        let opts = DecodeImageOptions {
            channels: 1,
            ..Default::default()
        };
        let e = decode_image(b"GIF89a", &opts).unwrap_err();
        assert!(e
            .to_string()
            .contains("channels must be 0 or 3 for GIF, got 1"));
    }

    #[test]
    fn size_limit() {
        assert!(check_size("PNG", 1, 100, 100, 3, 1).is_ok());
        assert!(check_size("PNG", 1, 100_000, 100_000, 3, 1).is_err());
        assert!(check_size("PNG", u64::MAX, 2, 2, 2, 2).is_err());
    }
}
