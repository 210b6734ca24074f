//! GIF decoding (the `gif` crate) composited the way TensorFlow's
//! `DecodeGif` does: every frame is the logical screen (RGB); a frame starts
//! as a copy of the previous one (the first as black), and its pixels
//! overwrite it except where they use the frame's transparent color index.
//! Disposal methods are ignored, as in TensorFlow.

use std::io::Cursor;
use std::num::NonZeroU64;

use ferroflow_tensor::{Error, Result};

use super::{check_size, Image, MAX_IMAGE_BYTES};

struct RawFrame {
    left: usize,
    top: usize,
    width: usize,
    height: usize,
    transparent: Option<u8>,
    palette: Option<Vec<u8>>,
    indices: Vec<u8>,
}

/// Decodes every frame of a GIF (`all_frames`), or only the first, to
/// `[frames, height, width, 3]` RGB.
pub fn decode(data: &[u8], all_frames: bool) -> Result<Image> {
    let fail = |msg: String| {
        Error::invalid_argument(format!("Invalid GIF data (size {}), {msg}", data.len()))
    };
    let mut opts = gif::DecodeOptions::new();
    opts.set_color_output(gif::ColorOutput::Indexed);
    opts.set_memory_limit(gif::MemoryLimit::Bytes(
        NonZeroU64::new(MAX_IMAGE_BYTES).expect("nonzero"),
    ));
    let mut decoder = opts
        .read_info(Cursor::new(data))
        .map_err(|e| fail(format!("failed to open gif file: {e}")))?;
    let (sw, sh) = (usize::from(decoder.width()), usize::from(decoder.height()));
    let global = decoder.global_palette().map(<[u8]>::to_vec);
    let mut frames: Vec<RawFrame> = Vec::new();
    let mut stored = 0u64;
    loop {
        let frame = match decoder.read_next_frame() {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return Err(fail(format!("failed to slurp gif file: {e}"))),
        };
        stored += frame.buffer.len() as u64;
        if stored >= MAX_IMAGE_BYTES {
            return Err(fail("frames exceed the size limit".into()));
        }
        check_size("GIF", frames.len() as u64 + 1, sh as u64, sw as u64, 3, 1)?;
        frames.push(RawFrame {
            left: usize::from(frame.left),
            top: usize::from(frame.top),
            width: usize::from(frame.width),
            height: usize::from(frame.height),
            transparent: frame.transparent,
            palette: frame.palette.clone(),
            indices: frame.buffer.to_vec(),
        });
    }
    if frames.is_empty() {
        return Err(fail("gif file does not contain any image".into()));
    }
    if sw == 0 || sh == 0 {
        return Err(fail("gif image has zero width or height".into()));
    }
    let n = if all_frames { frames.len() } else { 1 };
    let plane = sh * sw * 3;
    let mut out = vec![0u8; n * plane];
    for (k, f) in frames.iter().take(n).enumerate() {
        if k > 0 {
            out.copy_within((k - 1) * plane..k * plane, k * plane);
        }
        let dst = &mut out[k * plane..(k + 1) * plane];
        let palette = f
            .palette
            .as_deref()
            .or(global.as_deref())
            .ok_or_else(|| fail("missing color map".into()))?;
        let colors = palette.len() / 3;
        let right = (f.left + f.width).min(sw);
        let bottom = (f.top + f.height).min(sh);
        for y in f.top.min(sh)..bottom {
            for x in f.left.min(sw)..right {
                let idx = f.indices[(y - f.top) * f.width + (x - f.left)];
                if Some(idx) == f.transparent {
                    continue;
                }
                let idx = usize::from(idx);
                if idx >= colors {
                    return Err(fail(format!(
                        "found color index {idx} outside of color map range {colors}"
                    )));
                }
                let o = (y * sw + x) * 3;
                dst[o..o + 3].copy_from_slice(&palette[idx * 3..idx * 3 + 3]);
            }
        }
    }
    Ok(Image::new_u8(sh, sw, 3, out)).map(|mut img| {
        img.frames = n;
        img
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2x2, two-frame GIF: frame 1 red/green/blue/white, frame 2 covers
    /// the top-left pixel with black (its local table) and leaves the rest
    /// transparent (index 3).
    fn two_frames() -> Vec<u8> {
        let global = [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255];
        let mut out = Vec::new();
        {
            let mut enc = gif::Encoder::new(&mut out, 2, 2, &global).unwrap();
            let f1 = gif::Frame {
                width: 2,
                height: 2,
                buffer: vec![0, 1, 2, 3].into(),
                ..Default::default()
            };
            enc.write_frame(&f1).unwrap();
            let f2 = gif::Frame {
                width: 2,
                height: 2,
                transparent: Some(3),
                palette: Some(vec![0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9, 9]),
                buffer: vec![0, 3, 3, 3].into(),
                ..Default::default()
            };
            enc.write_frame(&f2).unwrap();
        }
        out
    }

    #[test]
    fn composites_like_tensorflow() {
        let img = decode(&two_frames(), true).unwrap();
        assert_eq!(
            (img.frames, img.height, img.width, img.channels),
            (2, 2, 2, 3)
        );
        let px = img.as_u8().unwrap();
        assert_eq!(&px[..12], &[255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]);
        assert_eq!(&px[12..], &[0, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]);
        let first = decode(&two_frames(), false).unwrap();
        assert_eq!(first.frames, 1);
        assert_eq!(first.as_u8().unwrap(), &px[..12]);
    }

    #[test]
    fn rejects_bad_input() {
        let g = two_frames();
        for n in [0, 6, 10, 13, 20, 30] {
            assert!(decode(&g[..n], true).is_err(), "prefix {n}");
        }
        let e = decode(b"GIF89axxxxxxxxxxxxxxxxxxxxxxxxxxxx", true).unwrap_err();
        assert!(
            e.to_string().starts_with("Invalid GIF data (size 34)"),
            "{e}"
        );
    }
}
