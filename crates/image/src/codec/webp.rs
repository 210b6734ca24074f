//! WebP decoding with TensorFlow's semantics (`DecodeWebP`, and WebP inside
//! every decode op): still images decode to RGB or RGBA (RGBA when the file
//! says it has alpha, the rule of libwebp's `WebPGetFeatures`), animations to
//! RGBA frames composited on the canvas the way libwebp's animation decoder
//! (`WebPAnimDecoder`, which TensorFlow uses) composites them.
//!
//! The bitstreams (lossy VP8 with its alpha plane, lossless VP8L) are decoded
//! by the pure-Rust `image-webp` crate. The container is read here: the
//! header that decides the output shape (before any pixel is allocated, with
//! [`check_size`]), and for animations every `ANMF` frame, which is handed to
//! `image-webp` as a still image of its own and then placed on the canvas.
//! Compositing follows libwebp rather than `image-webp`'s own animation
//! support: the canvas starts transparent black (the `ANIM` background color
//! is ignored), a frame disposed to the background leaves a transparent
//! rectangle, and alpha blending uses libwebp's integer formula, including
//! its rule of not blending over a rectangle just disposed.

use std::io::Cursor;

use ferroflow_tensor::{Error, Result};

use super::{check_size, Image, Pixels, MAX_IMAGE_BYTES};

/// TensorFlow's message when the header cannot be read.
pub const HEADER_ERROR: &str = "Failed to decode WebP header.";
/// TensorFlow's message when a still image's pixels cannot be decoded.
pub const IMAGE_ERROR: &str = "Failed to decode WebP image.";

/// Whether `data` is a WebP file as TensorFlow's format sniffing sees it:
/// `RIFF`, four size bytes, `WEBP`, and more than 12 bytes in all.
pub fn is_webp(data: &[u8]) -> bool {
    data.len() > 12 && data.starts_with(b"RIFF") && &data[8..12] == b"WEBP"
}

/// What the header says: the canvas size, 3 or 4 channels (alpha or not) and
/// whether the file is an animation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// 4 when the image has alpha, else 3.
    pub channels: usize,
    /// Whether the file is an animation (`VP8X` with the animation flag).
    pub animated: bool,
}

fn u24(b: &[u8]) -> usize {
    usize::from(b[0]) | usize::from(b[1]) << 8 | usize::from(b[2]) << 16
}

fn u32le(b: &[u8]) -> usize {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize
}

/// One chunk of a RIFF container: its four-character code and payload.
struct Chunk<'a> {
    tag: [u8; 4],
    payload: &'a [u8],
}

/// The chunks in `data` (a sequence of chunk headers and payloads, padded
/// to even sizes). A chunk that claims more bytes than there are ends the
/// walk with an error, or, when `partial`, is the last chunk, cut short
/// (reading a header needs only the start of the bitstream, as libwebp's
/// `WebPGetFeatures` does on incomplete data).
struct Chunks<'a> {
    data: &'a [u8],
    pos: usize,
    partial: bool,
}

impl<'a> Iterator for Chunks<'a> {
    type Item = std::result::Result<Chunk<'a>, ()>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.data.len() {
            return None;
        }
        let rest = &self.data[self.pos..];
        if rest.len() < 8 {
            self.pos = self.data.len();
            return Some(Err(()));
        }
        let tag = [rest[0], rest[1], rest[2], rest[3]];
        let size = u32le(&rest[4..8]);
        let Some(payload) = rest.get(8..8usize.saturating_add(size)) else {
            self.pos = self.data.len();
            return Some(if self.partial {
                Ok(Chunk {
                    tag,
                    payload: &rest[8..],
                })
            } else {
                Err(())
            });
        };
        self.pos = self
            .pos
            .saturating_add(8)
            .saturating_add(size)
            .saturating_add(size & 1);
        Some(Ok(Chunk { tag, payload }))
    }
}

/// The chunks after `RIFF....WEBP`, limited to the RIFF size when the
/// file is longer than it says.
fn riff_chunks(data: &[u8], partial: bool) -> std::result::Result<Chunks<'_>, ()> {
    if !is_webp(data) {
        return Err(());
    }
    let riff = u32le(&data[4..8]);
    if riff < 12 {
        return Err(());
    }
    let end = data.len().min(riff.saturating_add(8));
    Ok(Chunks {
        data: &data[12..end],
        pos: 0,
        partial,
    })
}

/// The VP8 key-frame header's size (`None` if it is not one).
fn vp8_size(p: &[u8]) -> Option<(usize, usize)> {
    if p.len() < 10 || p[0] & 1 != 0 || p[3..6] != [0x9d, 0x01, 0x2a] {
        return None;
    }
    let w = usize::from(u16::from_le_bytes([p[6], p[7]]) & 0x3fff);
    let h = usize::from(u16::from_le_bytes([p[8], p[9]]) & 0x3fff);
    Some((w, h))
}

/// The VP8L header's size and alpha hint (`None` if it is not one).
fn vp8l_info(p: &[u8]) -> Option<(usize, usize, bool)> {
    if p.len() < 5 || p[0] != 0x2f {
        return None;
    }
    let bits = u32::from_le_bytes([p[1], p[2], p[3], p[4]]);
    if bits >> 29 != 0 {
        return None;
    }
    let w = (bits & 0x3fff) as usize + 1;
    let h = ((bits >> 14) & 0x3fff) as usize + 1;
    Some((w, h, (bits >> 28) & 1 == 1))
}

/// Reads the header the way libwebp's `WebPGetFeatures` does: the size from
/// `VP8X` (checked against the bitstream of a still image), or from the
/// `VP8`/`VP8L` bitstream header; alpha from the `VP8L` header, or from the
/// `VP8X` flag or an `ALPH` chunk for lossy images.
pub fn header(data: &[u8]) -> Result<Header> {
    header_inner(data).ok_or_else(|| Error::invalid_argument(HEADER_ERROR))
}

fn header_inner(data: &[u8]) -> Option<Header> {
    let mut chunks = riff_chunks(data, true).ok()?;
    let first = chunks.next()?.ok()?;
    let (mut canvas, mut alpha) = (None, false);
    let mut chunk = first;
    if &chunk.tag == b"VP8X" {
        let p = chunk.payload;
        if p.len() != 10 {
            return None;
        }
        let (w, h) = (u24(&p[4..7]) + 1, u24(&p[7..10]) + 1);
        if (w as u64) * (h as u64) >= 1 << 32 {
            return None;
        }
        alpha = p[0] & 0x10 != 0;
        if p[0] & 0x02 != 0 {
            return Some(Header {
                width: w,
                height: h,
                channels: if alpha { 4 } else { 3 },
                animated: true,
            });
        }
        canvas = Some((w, h));
        // Optional chunks up to the bitstream; an ALPH chunk means alpha.
        loop {
            chunk = chunks.next()?.ok()?;
            match &chunk.tag {
                b"VP8 " | b"VP8L" => break,
                b"ALPH" => alpha = true,
                _ => {}
            }
        }
    }
    let (w, h) = match &chunk.tag {
        b"VP8 " => vp8_size(chunk.payload)?,
        b"VP8L" => {
            let (w, h, a) = vp8l_info(chunk.payload)?;
            alpha = a;
            (w, h)
        }
        _ => return None,
    };
    if canvas.is_some_and(|c| c != (w, h)) || w == 0 || h == 0 {
        return None;
    }
    Some(Header {
        width: w,
        height: h,
        channels: if alpha { 4 } else { 3 },
        animated: false,
    })
}

/// Decodes a still WebP with `image-webp` to `channels` (3 or 4) samples
/// per pixel.
fn decode_still(data: &[u8], width: usize, height: usize, channels: usize) -> Option<Vec<u8>> {
    let mut dec = image_webp::WebPDecoder::new(Cursor::new(data)).ok()?;
    dec.set_memory_limit(MAX_IMAGE_BYTES as usize);
    let (w, h) = dec.dimensions();
    if (w as usize, h as usize) != (width, height) {
        return None;
    }
    let native = if dec.has_alpha() { 4 } else { 3 };
    let mut buf = vec![0u8; dec.output_buffer_size()?];
    dec.read_image(&mut buf).ok()?;
    Some(match (native, channels) {
        (a, b) if a == b => buf,
        (4, 3) => buf
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect(),
        _ => buf
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
    })
}

/// A still image's bytes as `image-webp` should see them: an extended
/// file whose `ALPH` chunk the flags do not announce gets the alpha flag
/// (libwebp decodes that alpha, `image-webp` would skip it).
fn with_alpha_flag(data: &[u8]) -> Option<Vec<u8>> {
    let mut chunks = riff_chunks(data, false).ok()?;
    let first = chunks.next()?.ok()?;
    if &first.tag != b"VP8X" || first.payload.first()? & 0x10 != 0 {
        return None;
    }
    let has_alph = chunks
        .map_while(|c| c.ok())
        .take_while(|c| &c.tag != b"VP8 " && &c.tag != b"VP8L")
        .any(|c| &c.tag == b"ALPH");
    if !has_alph {
        return None;
    }
    let mut copy = data.to_vec();
    copy[20] |= 0x10; // 12 (RIFF header) + 8 (VP8X chunk header)
    Some(copy)
}

/// One `ANMF` frame: its rectangle on the canvas, how it is blended and
/// disposed, and its bitstream chunks.
struct Frame<'a> {
    x: usize,
    y: usize,
    width: usize,
    height: usize,
    blend: bool,
    dispose_background: bool,
    alph: Option<&'a [u8]>,
    /// `true` for `VP8L`, `false` for `VP8 `.
    lossless: bool,
    bitstream: &'a [u8],
}

impl Frame<'_> {
    /// Whether the frame may hold transparent pixels (libwebp's
    /// `has_alpha` of a frame: an `ALPH` chunk, or the `VP8L` hint).
    fn has_alpha(&self) -> bool {
        if self.lossless {
            vp8l_info(self.bitstream).is_some_and(|(_, _, a)| a)
        } else {
            self.alph.is_some()
        }
    }

    fn covers(&self, w: usize, h: usize) -> bool {
        self.x == 0 && self.y == 0 && self.width == w && self.height == h
    }

    fn contains(&self, x: usize, y: usize) -> bool {
        x >= self.x && x < self.x + self.width && y >= self.y && y < self.y + self.height
    }

    /// The frame as a still WebP file of its own.
    fn as_still(&self) -> Vec<u8> {
        fn push_chunk(out: &mut Vec<u8>, tag: &[u8; 4], payload: &[u8]) {
            out.extend_from_slice(tag);
            out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            out.extend_from_slice(payload);
            if payload.len() % 2 == 1 {
                out.push(0);
            }
        }
        let mut out = Vec::with_capacity(self.bitstream.len() + 64);
        out.extend_from_slice(b"RIFF\0\0\0\0WEBP");
        if let (Some(alph), false) = (self.alph, self.lossless) {
            let mut vp8x = [0u8; 10];
            vp8x[0] = 0x10;
            vp8x[4..7].copy_from_slice(&((self.width - 1) as u32).to_le_bytes()[..3]);
            vp8x[7..10].copy_from_slice(&((self.height - 1) as u32).to_le_bytes()[..3]);
            push_chunk(&mut out, b"VP8X", &vp8x);
            push_chunk(&mut out, b"ALPH", alph);
        }
        let tag = if self.lossless { b"VP8L" } else { b"VP8 " };
        push_chunk(&mut out, tag, self.bitstream);
        let riff = (out.len() - 8) as u32;
        out[4..8].copy_from_slice(&riff.to_le_bytes());
        out
    }

    /// The frame's pixels as RGBA.
    fn decode(&self) -> Option<Vec<u8>> {
        let still = self.as_still();
        let h = header_inner(&still)?;
        if (h.width, h.height) != (self.width, self.height) {
            return None;
        }
        decode_still(&still, self.width, self.height, 4)
    }
}

/// The frames of an animation (after checking the `ANIM` chunk is there
/// and every frame lies inside the canvas).
fn frames(data: &[u8], cw: usize, ch: usize) -> std::result::Result<Vec<Frame<'_>>, String> {
    let bad = || "failed to decode WebP Animation".to_string();
    let mut out = Vec::new();
    let mut anim = false;
    for c in riff_chunks(data, false).map_err(|_| bad())? {
        let c = c.map_err(|_| bad())?;
        match &c.tag {
            b"ANIM" => anim = c.payload.len() >= 6,
            b"ANMF" => {
                let p = c.payload;
                if p.len() < 16 || !anim {
                    return Err(bad());
                }
                let mut f = Frame {
                    x: 2 * u24(&p[0..3]),
                    y: 2 * u24(&p[3..6]),
                    width: u24(&p[6..9]) + 1,
                    height: u24(&p[9..12]) + 1,
                    blend: p[15] & 0x02 == 0,
                    dispose_background: p[15] & 0x01 != 0,
                    alph: None,
                    lossless: false,
                    bitstream: &[],
                };
                if f.x + f.width > cw || f.y + f.height > ch {
                    return Err(bad());
                }
                let mut found = false;
                for s in (Chunks {
                    data: &p[16..],
                    pos: 0,
                    partial: false,
                }) {
                    let s = s.map_err(|_| bad())?;
                    match &s.tag {
                        b"ALPH" if f.alph.is_none() => f.alph = Some(s.payload),
                        b"VP8 " | b"VP8L" => {
                            f.lossless = &s.tag == b"VP8L";
                            f.bitstream = s.payload;
                            found = true;
                            break;
                        }
                        _ => {}
                    }
                }
                if !found {
                    return Err(bad());
                }
                out.push(f);
            }
            _ => {}
        }
    }
    if out.is_empty() {
        return Err(bad());
    }
    Ok(out)
}

/// libwebp's blend of a non-premultiplied `src` pixel over `dst` (its
/// integer approximation, kept exactly so pixels match).
fn blend_pixel(src: &[u8], dst: &[u8]) -> [u8; 4] {
    let sa = u32::from(src[3]);
    if sa == 0 {
        return [dst[0], dst[1], dst[2], dst[3]];
    }
    let dfa = (u32::from(dst[3]) * (256 - sa)) >> 8;
    let ba = sa + dfa;
    let scale = (1u32 << 24) / ba;
    let ch = |k: usize| (((u32::from(src[k]) * sa + u32::from(dst[k]) * dfa) * scale) >> 24) as u8;
    [ch(0), ch(1), ch(2), ba as u8]
}

/// Decodes an animation: every frame (`all_frames`) or the first, each the
/// whole canvas as RGBA.
fn decode_animation(data: &[u8], h: &Header, all_frames: bool) -> Result<Image> {
    let fail =
        |why: String| Error::invalid_argument(format!("Failed to decode WebP Animation: {why}"));
    let (cw, chh) = (h.width, h.height);
    let frames = frames(data, cw, chh).map_err(fail)?;
    let n = if all_frames { frames.len() } else { 1 };
    check_size("WebP", n as u64, chh as u64, cw as u64, 4, 1)?;
    let plane = cw * chh * 4;
    let mut out = vec![0u8; n * plane];
    let mut canvas = vec![0u8; plane];
    // The canvas after the previous frame's disposal.
    let mut disposed = vec![0u8; plane];
    let mut prev: Option<(&Frame<'_>, bool)> = None;
    for (k, f) in frames.iter().take(n).enumerate() {
        let key = match prev {
            None => true,
            Some((p, p_key)) => {
                ((!f.has_alpha() || !f.blend) && f.covers(cw, chh))
                    || (p.dispose_background && (p.covers(cw, chh) || p_key))
            }
        };
        if key {
            canvas.fill(0);
        } else {
            canvas.copy_from_slice(&disposed);
        }
        let px = f
            .decode()
            .ok_or_else(|| fail(format!("failed to decode frame: {k}")))?;
        for row in 0..f.height {
            let at = ((f.y + row) * cw + f.x) * 4;
            canvas[at..at + f.width * 4].copy_from_slice(&px[row * f.width * 4..][..f.width * 4]);
        }
        if let (Some((p, _)), true, false) = (prev, f.blend, key) {
            for row in 0..f.height {
                let y = f.y + row;
                for x in f.x..f.x + f.width {
                    if p.dispose_background && p.contains(x, y) {
                        continue;
                    }
                    let at = (y * cw + x) * 4;
                    if canvas[at + 3] != 255 {
                        let b = blend_pixel(&canvas[at..at + 4], &disposed[at..at + 4]);
                        canvas[at..at + 4].copy_from_slice(&b);
                    }
                }
            }
        }
        out[k * plane..(k + 1) * plane].copy_from_slice(&canvas);
        disposed.copy_from_slice(&canvas);
        if f.dispose_background {
            for row in 0..f.height {
                let at = ((f.y + row) * cw + f.x) * 4;
                disposed[at..at + f.width * 4].fill(0);
            }
        }
        prev = Some((f, key));
    }
    Ok(Image {
        frames: n,
        height: chh,
        width: cw,
        channels: 4,
        pixels: Pixels::U8(out),
    })
}

/// Checks a request for `channels` (0 = the file's own) against TensorFlow's
/// rules for WebP, with its messages: 3 or 4 channels, the file's own count,
/// and RGBA for an animation. Returns the file's header.
pub fn check_channels(data: &[u8], channels: usize) -> Result<Header> {
    ferroflow_tensor::ensure!(
        matches!(channels, 0 | 3 | 4),
        invalid_argument,
        "WebP only supports 3 or 4 channels"
    );
    let h = header(data)?;
    ferroflow_tensor::ensure!(
        channels == 0 || channels == h.channels,
        invalid_argument,
        "Number of channels requested does not match input"
    );
    ferroflow_tensor::ensure!(
        !h.animated || channels != 3,
        invalid_argument,
        "WebP Animation must be 4 channel RGBA"
    );
    Ok(h)
}

/// Decodes a WebP: a still image to one frame of [`Header::channels`]
/// samples per pixel, an animation to all its frames (`all_frames`) or the
/// first, as RGBA.
pub fn decode(data: &[u8], all_frames: bool) -> Result<Image> {
    let h = header(data)?;
    if h.animated {
        return decode_animation(data, &h, all_frames);
    }
    check_size(
        "WebP",
        1,
        h.height as u64,
        h.width as u64,
        h.channels as u64,
        1,
    )?;
    let fixed = with_alpha_flag(data);
    let px = decode_still(
        fixed.as_deref().unwrap_or(data),
        h.width,
        h.height,
        h.channels,
    )
    .ok_or_else(|| Error::invalid_argument(IMAGE_ERROR))?;
    Ok(Image::new_u8(h.height, h.width, h.channels, px))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lossless 2x1 image (made by image-webp's encoder).
    fn lossless(alpha: bool) -> Vec<u8> {
        let (px, color): (Vec<u8>, _) = if alpha {
            (
                vec![1, 2, 3, 4, 250, 251, 252, 0],
                image_webp::ColorType::Rgba8,
            )
        } else {
            (vec![1, 2, 3, 250, 251, 252], image_webp::ColorType::Rgb8)
        };
        let mut out = Vec::new();
        image_webp::WebPEncoder::new(&mut out)
            .encode(&px, 2, 1, color)
            .unwrap();
        out
    }

    #[test]
    fn still_lossless_round_trip() {
        let d = lossless(false);
        assert!(is_webp(&d));
        let h = header(&d).unwrap();
        assert_eq!(
            (h.width, h.height, h.channels, h.animated),
            (2, 1, 3, false)
        );
        let img = decode(&d, true).unwrap();
        assert_eq!(img.as_u8().unwrap(), &[1, 2, 3, 250, 251, 252]);
        let img = decode(&lossless(true), true).unwrap();
        assert_eq!(img.channels, 4);
        assert_eq!(img.as_u8().unwrap(), &[1, 2, 3, 4, 250, 251, 252, 0]);
    }

    #[test]
    fn bad_input_is_an_error() {
        let d = lossless(false);
        assert!(!is_webp(&d[..12]));
        for cut in [13, 20, 25, d.len() - 1] {
            assert!(decode(&d[..cut], true).is_err(), "cut at {cut}");
        }
        // A lossless still image declaring 16384 x 16384 RGBA (1 GiB).
        let bits: u32 = 16383 | 16383 << 14 | 1 << 28;
        let mut huge = b"RIFF\x1a\0\0\0WEBPVP8L\x0d\0\0\0\x2f".to_vec();
        huge.extend_from_slice(&bits.to_le_bytes());
        huge.extend_from_slice(&[0; 9]);
        let e = decode(&huge, true).unwrap_err().to_string();
        assert!(e.contains("too large"), "{e}");
        // An animation on a 16384 x 16384 canvas with one small frame.
        let mut anim = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\x12\0\0\0\xff\x3f\0\xff\x3f\0".to_vec();
        anim.extend_from_slice(b"ANIM\x06\0\0\0\0\0\0\0\0\0");
        let frame = &d[12..];
        anim.extend_from_slice(b"ANMF");
        anim.extend_from_slice(&(16 + frame.len() as u32).to_le_bytes());
        anim.extend_from_slice(&[0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 100, 0, 0, 0]);
        anim.extend_from_slice(frame);
        let riff = (anim.len() - 8) as u32;
        anim[4..8].copy_from_slice(&riff.to_le_bytes());
        let e = decode(&anim, true).unwrap_err().to_string();
        assert!(e.contains("too large"), "{e}");
        anim[24..30].copy_from_slice(&[1, 0, 0, 0, 0, 0]);
        let img = decode(&anim, true).unwrap();
        assert_eq!(
            (img.frames, img.height, img.width, img.channels),
            (1, 1, 2, 4)
        );
        assert_eq!(img.as_u8().unwrap(), &[1, 2, 3, 255, 250, 251, 252, 255]);
    }

    #[test]
    fn blend_matches_libwebp_formula() {
        // Opaque over anything keeps the source; transparent keeps dst.
        assert_eq!(blend_pixel(&[9, 8, 7, 0], &[1, 2, 3, 4]), [1, 2, 3, 4]);
        // Over a transparent destination libwebp's scale loses one unit.
        assert_eq!(blend_pixel(&[100, 50, 1, 3], &[0, 0, 0, 0]), [99, 49, 0, 3]);
        // Half over opaque: dst factor (255 * 128) >> 8 = 127.
        let b = blend_pixel(&[200, 0, 0, 128], &[0, 200, 0, 255]);
        assert_eq!(b[3], 255);
        assert_eq!(b[0], (((200 * 128) * ((1u32 << 24) / 255)) >> 24) as u8);
    }
}
