//! JPEG XL decoding with TensorFlow's semantics (`DecodeJxl`, and JPEG XL
//! inside every decode op): the first displayed frame, 8 bits per sample,
//! with the file's own channels (gray 1, gray+alpha 2, RGB 3, RGBA 4),
//! oriented as the header says. The bitstream is decoded by the pure-Rust
//! `jxl-oxide` crate; TensorFlow uses libjxl.
//!
//! The header is read first and an image whose 8-bit pixels would exceed
//! [`MAX_IMAGE_BYTES`] is refused before decoding; the decoder's own
//! allocations (32-bit float planes while it works) are capped by an
//! allocation tracker.

use std::io::Cursor;

use ferroflow_tensor::{Error, Result};
use jxl_oxide::{AllocTracker, InitializeResult, JxlImage, JxlThreadPool, PixelFormat};

use super::{check_size, Image, MAX_IMAGE_BYTES};

/// TensorFlow's message when the header cannot be read.
pub const HEADER_ERROR: &str = "Failed to decode JXL header";
/// TensorFlow's message when the pixels cannot be decoded.
pub const IMAGE_ERROR: &str = "Failed to decode JXL image";

/// The ISO BMFF container's signature box.
const CONTAINER: &[u8] = b"\0\0\0\x0cJXL \r\n\x87\n";

/// Whether `data` starts like a JPEG XL codestream (`FF 0A`) or container,
/// as libjxl's signature check (which TensorFlow's sniffing uses) says.
pub fn is_jxl(data: &[u8]) -> bool {
    data.starts_with(&[0xff, 0x0a]) || data.starts_with(CONTAINER)
}

/// What the header says: oriented size and the channels TensorFlow gives
/// (color channels, plus one if there is alpha).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Columns (after orientation).
    pub width: usize,
    /// Rows (after orientation).
    pub height: usize,
    /// 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA).
    pub channels: usize,
}

fn header_of(image: &JxlImage) -> Option<Header> {
    // CMYK (a black extra channel) has no TensorFlow layout: refused.
    let channels = match image.pixel_format() {
        PixelFormat::Cmyk | PixelFormat::Cmyka => return None,
        f => f.channels(),
    };
    Some(Header {
        width: image.width() as usize,
        height: image.height() as usize,
        channels,
    })
}

/// Reads the header (size and channels) without decoding any frame.
pub fn header(data: &[u8]) -> Result<Header> {
    let fail = || Error::invalid_argument(HEADER_ERROR);
    let mut uninit = JxlImage::builder()
        .pool(JxlThreadPool::none())
        .build_uninit();
    uninit.feed_bytes(data).map_err(|_| fail())?;
    match uninit.try_init() {
        Ok(InitializeResult::Initialized(image)) => header_of(&image).ok_or_else(fail),
        _ => Err(fail()),
    }
}

/// Decodes the first frame to 8-bit samples, [`Header::channels`] per
/// pixel.
pub fn decode(data: &[u8]) -> Result<Image> {
    let h = header(data)?;
    check_size(
        "JPEG XL",
        1,
        h.height as u64,
        h.width as u64,
        h.channels as u64,
        1,
    )?;
    let fail = || Error::invalid_argument(IMAGE_ERROR);
    // The decoder works on f32 planes (4 bytes a sample) plus scratch.
    let tracker = AllocTracker::with_limit(8 * MAX_IMAGE_BYTES as usize);
    let image = JxlImage::builder()
        .alloc_tracker(tracker)
        .read(Cursor::new(data))
        .map_err(|_| fail())?;
    // jxl-oxide renders what it has of a truncated file; libjxl fails.
    if !image.is_loading_done() || image.num_loaded_keyframes() == 0 {
        return Err(fail());
    }
    let render = image.render_frame(0).map_err(|_| fail())?;
    let mut stream = render.stream();
    if stream.channels() as usize != h.channels
        || (stream.width() as usize, stream.height() as usize) != (h.width, h.height)
    {
        return Err(fail());
    }
    let mut px = vec![0u8; h.height * h.width * h.channels];
    if stream.write_to_buffer(&mut px) != px.len() {
        return Err(fail());
    }
    Ok(Image::new_u8(h.height, h.width, h.channels, px))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing_and_bad_input() {
        assert!(is_jxl(b"\xff\x0a\x00"));
        assert!(is_jxl(CONTAINER));
        assert!(!is_jxl(b"\xff\xd8\xff"));
        assert!(!is_jxl(&CONTAINER[..11]));
        for bad in [&b"\xff\x0a"[..], b"\xff\x0a\xff\xff\xff\xff", CONTAINER] {
            let e = decode(bad).unwrap_err().to_string();
            assert!(e.contains(HEADER_ERROR), "{e}");
        }
    }
}
