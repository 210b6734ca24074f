//! PNG decoding and encoding (the `png` crate) with TensorFlow's channel
//! and bit-depth conversions (libpng's transformations as TensorFlow sets
//! them up).
//!
//! Decoding: palette images become RGB (RGBA with a `tRNS` chunk), gray
//! images of 1, 2 or 4 bits are scaled to 8, 8-bit samples read as 16-bit
//! are `v * 257`, 16-bit samples read as 8-bit keep their high byte, color
//! read as gray uses libpng's fixed-point `0.299 R + 0.587 G + 0.114 B`
//! (coefficients 9797, 19234, 3737 of 32768), gray read as color is
//! replicated, an unwanted alpha is dropped, and a missing one is the
//! largest value of the file's bit depth (TensorFlow's libpng filler: 15
//! for a 4-bit palette image, 1 for a 1-bit gray one).

use std::io::Cursor;

use ferroflow_tensor::{bail, ensure, Error, Result};

use super::{check_size, Image, Pixels, MAX_IMAGE_BYTES};

/// libpng's `rgb_to_gray` weights for TensorFlow's (0.299, 0.587) setting.
const RC: u32 = 9797;
const GC: u32 = 19234;
const BC: u32 = 32768 - RC - GC;

fn invalid(data: &[u8]) -> Error {
    Error::invalid_argument(format!("Invalid PNG data, size {}", data.len()))
}

/// Refuses the palette chunks the `png` crate (0.18) panics on while
/// expanding a palette: a `PLTE` whose length is not a multiple of 3 (libpng
/// rejects it too) and a `tRNS` with more entries than the palette (libpng
/// drops the extra ones with a warning; refused here). Found by fuzzing.
fn check_palette(data: &[u8]) -> Result<()> {
    let mut at = 8; // after the signature
    let mut palette_entries = None;
    while at + 8 <= data.len() {
        let len = u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]) as usize;
        let kind = &data[at + 4..at + 8];
        match kind {
            b"PLTE" => {
                ensure!(
                    len.is_multiple_of(3),
                    invalid_argument,
                    "Invalid PNG data: palette of {len} bytes is not a multiple of 3"
                );
                palette_entries = Some(len / 3);
            }
            b"tRNS" => {
                if let Some(n) = palette_entries {
                    if len > n {
                        bail!(
                            invalid_argument,
                            "Invalid PNG data: {len} transparency entries for a palette of {n}"
                        );
                    }
                }
            }
            b"IDAT" | b"IEND" => return Ok(()),
            _ => {}
        }
        at = match at.checked_add(12).and_then(|a| a.checked_add(len)) {
            Some(next) => next,
            None => return Ok(()),
        };
    }
    Ok(())
}

/// Decodes a PNG to `channels` (0 = as stored, else 1, 3 or 4) samples of
/// 8 bits, or 16 bits with `sixteen_bit`.
pub fn decode(data: &[u8], channels: usize, sixteen_bit: bool) -> Result<Image> {
    ensure!(
        matches!(channels, 0 | 1 | 3 | 4),
        invalid_argument,
        "`channels` must be 0, 1, 3 or 4 but got {channels}"
    );
    let init_failed = || Error::invalid_argument("Invalid PNG. Failed to initialize decoder.");
    check_palette(data)?;
    let mut decoder = png::Decoder::new(Cursor::new(data));
    decoder.set_transformations(png::Transformations::EXPAND);
    // IHDR first: refuse huge images before the decoder allocates rows.
    decoder.set_limits(png::Limits { bytes: 1 << 20 });
    let (width, height, depth) = match decoder.read_header_info() {
        Ok(info) => (info.width, info.height, info.bit_depth as u32),
        Err(_) => return Err(init_failed()),
    };
    if width == 0
        || height == 0
        || width >= 1 << 27
        || height >= 1 << 27
        || u64::from(width) * u64::from(height) >= 1 << 29
    {
        bail!(
            invalid_argument,
            "PNG size too large for int: {width} by {height}"
        );
    }
    decoder.set_limits(png::Limits {
        bytes: MAX_IMAGE_BYTES as usize,
    });
    let mut reader = decoder.read_info().map_err(|_| init_failed())?;
    let (color, has_trns) = {
        let info = reader.info();
        (info.color_type, info.trns.is_some())
    };
    let native = match color {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        png::ColorType::Indexed => {
            if has_trns {
                4
            } else {
                3
            }
        }
    };
    let out_c = if channels == 0 { native } else { channels };
    let sample = if sixteen_bit { 2 } else { 1 };
    check_size(
        "PNG",
        1,
        u64::from(height),
        u64::from(width),
        out_c as u64,
        sample,
    )?;
    let size = reader.output_buffer_size().ok_or_else(|| invalid(data))?;
    let mut buf = vec![0u8; size];
    let info = reader.next_frame(&mut buf).map_err(|_| invalid(data))?;
    let (w, h) = (info.width as usize, info.height as usize);
    let src_c = info.color_type.samples();
    let src16 = info.bit_depth == png::BitDepth::Sixteen;
    let line = info.line_size;
    // Every sample as a 16-bit value in the source's depth.
    let get = |y: usize, x: usize, c: usize| -> u32 {
        if src16 {
            let i = y * line + (x * src_c + c) * 2;
            u32::from(u16::from_be_bytes([buf[i], buf[i + 1]]))
        } else {
            u32::from(buf[y * line + x * src_c + c])
        }
    };
    // A missing alpha is filled with the largest value of the file's
    // original bit depth, as TensorFlow asks libpng (so a 4-bit palette
    // image read as RGBA gets alpha 15).
    let max = if src16 {
        0xFFFF
    } else {
        (1u32 << depth.min(8)) - 1
    };
    let n = h * w * out_c;
    let mut out16: Vec<u16> = Vec::new();
    let mut out8: Vec<u8> = Vec::new();
    if sixteen_bit {
        out16.reserve_exact(n);
    } else {
        out8.reserve_exact(n);
    }
    let src_gray = src_c <= 2;
    let src_alpha = src_c == 2 || src_c == 4;
    let mut px = [0u32; 4];
    for y in 0..h {
        for x in 0..w {
            // Gather in the output's channel layout, in source depth.
            let k = if out_c <= 2 {
                px[0] = if src_gray {
                    get(y, x, 0)
                } else {
                    let (r, g, b) = (get(y, x, 0), get(y, x, 1), get(y, x, 2));
                    if r == g && r == b {
                        r
                    } else if src16 {
                        (RC * r + GC * g + BC * b + 16384) >> 15
                    } else {
                        (RC * r + GC * g + BC * b) >> 15
                    }
                };
                if out_c == 2 {
                    px[1] = if src_alpha { get(y, x, src_c - 1) } else { max };
                }
                out_c
            } else {
                if src_gray {
                    let v = get(y, x, 0);
                    px[..3].fill(v);
                } else {
                    for (c, p) in px.iter_mut().take(3).enumerate() {
                        *p = get(y, x, c);
                    }
                }
                if out_c == 4 {
                    px[3] = if src_alpha { get(y, x, src_c - 1) } else { max };
                }
                out_c
            };
            for &v in &px[..k] {
                match (sixteen_bit, src16) {
                    (true, true) => out16.push(v as u16),
                    (true, false) => out16.push((v * 257) as u16),
                    (false, true) => out8.push((v >> 8) as u8),
                    (false, false) => out8.push(v as u8),
                }
            }
        }
    }
    let pixels = if sixteen_bit {
        Pixels::U16(out16)
    } else {
        Pixels::U8(out8)
    };
    Ok(Image {
        frames: 1,
        height: h,
        width: w,
        channels: out_c,
        pixels,
    })
}

/// Encodes `height x width x channels` (1-4) samples as a PNG, 8- or
/// 16-bit as given; `compression` is zlib's level, -1 (default, 6) to 9.
pub fn encode(
    pixels: &Pixels,
    height: usize,
    width: usize,
    channels: usize,
    compression: i32,
) -> Result<Vec<u8>> {
    if !(1..=4).contains(&channels) {
        bail!(
            invalid_argument,
            "image must have 1, 2, 3, or 4 channels, got {channels}"
        );
    }
    if !(-1..=9).contains(&compression) {
        bail!(
            invalid_argument,
            "compression should be in [-1,9], got {compression}"
        );
    }
    ensure!(
        pixels.len() == height * width * channels,
        invalid_argument,
        "pixel buffer does not match the image shape"
    );
    if height == 0 || width == 0 || height > u32::MAX as usize || width > u32::MAX as usize {
        bail!(internal, "PNG encoding failed");
    }
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width as u32, height as u32);
        enc.set_color(match channels {
            1 => png::ColorType::Grayscale,
            2 => png::ColorType::GrayscaleAlpha,
            3 => png::ColorType::Rgb,
            _ => png::ColorType::Rgba,
        });
        let bytes: Vec<u8>;
        let data: &[u8] = match pixels {
            Pixels::U8(v) => {
                enc.set_depth(png::BitDepth::Eight);
                v
            }
            Pixels::U16(v) => {
                enc.set_depth(png::BitDepth::Sixteen);
                bytes = v.iter().flat_map(|s| s.to_be_bytes()).collect();
                &bytes
            }
        };
        let level = if compression < 0 {
            6
        } else {
            compression as u8
        };
        enc.set_deflate_compression(if level == 0 {
            png::DeflateCompression::NoCompression
        } else {
            png::DeflateCompression::Level(level)
        });
        let fail = |e: png::EncodingError| Error::internal(format!("PNG encoding failed: {e}"));
        let mut writer = enc.write_header().map_err(fail)?;
        writer.write_image_data(data).map_err(fail)?;
        writer.finish().map_err(fail)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(h: usize, w: usize, c: usize) -> Vec<u8> {
        (0..h * w * c).map(|i| (i * 37 % 251) as u8).collect()
    }

    #[test]
    fn round_trips_exactly() {
        for c in 1..=4 {
            let px = Pixels::U8(sample(5, 7, c));
            let bytes = encode(&px, 5, 7, c, -1).unwrap();
            let img = decode(&bytes, 0, false).unwrap();
            assert_eq!((img.height, img.width, img.channels), (5, 7, c));
            assert_eq!(img.pixels, px);
        }
        let v16: Vec<u16> = (0..5 * 7 * 3).map(|i| (i * 2731) as u16).collect();
        let bytes = encode(&Pixels::U16(v16.clone()), 5, 7, 3, 9).unwrap();
        assert_eq!(
            decode(&bytes, 0, true).unwrap().pixels,
            Pixels::U16(v16.clone())
        );
        let eight = decode(&bytes, 0, false).unwrap();
        let want: Vec<u8> = v16.iter().map(|v| (v >> 8) as u8).collect();
        assert_eq!(eight.pixels, Pixels::U8(want));
    }

    #[test]
    fn channel_conversions() {
        let rgb = vec![10u8, 20, 30, 200, 200, 200];
        let bytes = encode(&Pixels::U8(rgb), 1, 2, 3, 0).unwrap();
        let g = decode(&bytes, 1, false).unwrap();
        assert_eq!(
            g.pixels,
            Pixels::U8(vec![((RC * 10 + GC * 20 + BC * 30) >> 15) as u8, 200])
        );
        let rgba = decode(&bytes, 4, false).unwrap();
        assert_eq!(
            rgba.pixels,
            Pixels::U8(vec![10, 20, 30, 255, 200, 200, 200, 255])
        );
        let wide = decode(&bytes, 3, true).unwrap();
        assert_eq!(wide.as_u16().unwrap()[0], 10 * 257);
    }

    #[test]
    fn errors_and_bombs() {
        let bytes = encode(&Pixels::U8(sample(16, 16, 3)), 16, 16, 3, 6).unwrap();
        assert!(decode(&bytes[..bytes.len() / 2], 0, false).is_err());
        assert!(decode(&bytes[..20], 0, false).is_err());
        assert!(decode(b"\x89PNG\r\n\x1a\ngarbage", 0, false).is_err());
        assert!(decode(&bytes, 2, false).is_err());
        // A header declaring 100000 x 100000 RGB.
        let mut bomb = bytes[..8].to_vec();
        let mut ihdr = b"IHDR".to_vec();
        ihdr.extend(100_000u32.to_be_bytes());
        ihdr.extend(100_000u32.to_be_bytes());
        ihdr.extend([8, 2, 0, 0, 0]);
        bomb.extend(13u32.to_be_bytes());
        bomb.extend(&ihdr);
        bomb.extend(crc32(&ihdr).to_be_bytes());
        let e = decode(&bomb, 0, false).unwrap_err();
        assert!(
            e.to_string()
                .contains("PNG size too large for int: 100000 by 100000"),
            "{e}"
        );
        assert!(encode(&Pixels::U8(vec![0; 5]), 1, 1, 5, 0).is_err());
        assert!(encode(&Pixels::U8(vec![0; 3]), 1, 1, 3, 10).is_err());
    }

    fn crc32(data: &[u8]) -> u32 {
        let mut crc = 0xFFFF_FFFFu32;
        for &b in data {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
}
