//! BMP decoding with TensorFlow's `DecodeBmp` semantics: uncompressed
//! 8-, 24- and 32-bit pixels only, read from the offset in the file header,
//! rows padded to 4 bytes, bottom-up unless the height is negative; BGR(A)
//! becomes RGB(A); 8-bit pixels are read as gray (no palette lookup). The
//! file must be exactly header + rows long, as TensorFlow requires.

use ferroflow_tensor::{Error, Result};

use super::Image;

fn le_i32(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Decodes a BMP to `channels` (0 = as stored, 3 or 4) 8-bit samples.
pub fn decode(data: &[u8], channels: usize) -> Result<Image> {
    let bad = |m: String| Error::invalid_argument(m);
    if channels == 1 || !matches!(channels, 0 | 3 | 4) {
        return Err(bad(format!(
            "`channels` must be 0, 3 or 4 for BMP, but got {channels}"
        )));
    }
    if data.len() < 32 {
        return Err(bad(format!(
            "Incomplete bmp content, requires at least 32 bytes to find the header size, \
             width, height, and bpp, got {} bytes",
            data.len()
        )));
    }
    let header_size = le_i32(data, 10);
    let width = le_i32(data, 18);
    let height = le_i32(data, 22);
    let bpp = i16::from_le_bytes([data[28], data[29]]);
    let img_c = i64::from(bpp / 8);
    if !matches!(img_c, 1 | 3 | 4) {
        return Err(bad(format!(
            "Number of channels inherent in the image must be 1, 3 or 4, was {img_c}"
        )));
    }
    let out_c = if channels == 0 {
        img_c as usize
    } else {
        channels
    };
    if width <= 0 {
        return Err(bad("Width must be positive".into()));
    }
    if height == 0 {
        return Err(bad("Height must be nonzero".into()));
    }
    if header_size < 0 {
        return Err(bad("header size must be nonnegative".into()));
    }
    let (w, abs_h) = (i64::from(width), i64::from(height).abs());
    if w * abs_h >= i64::from(i32::MAX / 8) {
        return Err(bad(
            "Total possible pixel bytes must be less than 2^30".into()
        ));
    }
    let row = (img_c * w + 3) / 4 * 4;
    let diff = data.len() as i64 - i64::from(header_size) - row * abs_h;
    if diff != 0 {
        return Err(bad(format!(
            "Input size should match (header_size + row_size * abs_height) but they differ by {diff}"
        )));
    }
    let top_down = height < 0;
    let (w, h, row, img_c) = (w as usize, abs_h as usize, row as usize, img_c as usize);
    let pixels = &data[header_size as usize..];
    let mut out = vec![0u8; h * w * out_c];
    for (i, dst_row) in out.chunks_exact_mut(w * out_c).enumerate() {
        let src_row = if top_down { i } else { h - 1 - i };
        let src = &pixels[src_row * row..src_row * row + w * img_c];
        for (d, s) in dst_row.chunks_exact_mut(out_c).zip(src.chunks_exact(img_c)) {
            match img_c {
                1 => d[..3.min(out_c)].fill(s[0]),
                _ => {
                    d[0] = s[2];
                    d[1] = s[1];
                    d[2] = s[0];
                }
            }
            if out_c == 4 {
                d[3] = if img_c == 4 { s[3] } else { 255 };
            }
        }
    }
    Ok(Image::new_u8(h, w, out_c, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BMP with a 54-byte header and the given rows (already padded).
    fn bmp(width: i32, height: i32, bpp: i16, rows: &[u8]) -> Vec<u8> {
        let mut b = b"BM".to_vec();
        b.extend((54 + rows.len() as u32).to_le_bytes());
        b.extend([0; 4]);
        b.extend(54u32.to_le_bytes());
        b.extend(40u32.to_le_bytes());
        b.extend(width.to_le_bytes());
        b.extend(height.to_le_bytes());
        b.extend(1u16.to_le_bytes());
        b.extend(bpp.to_le_bytes());
        b.extend([0; 24]);
        b.extend(rows);
        b
    }

    #[test]
    fn bottom_up_top_down_and_alpha() {
        // 2x2 24-bit: bottom row first, BGR, rows padded to 8 bytes.
        let rows = [1, 2, 3, 4, 5, 6, 0, 0, 7, 8, 9, 10, 11, 12, 0, 0];
        let img = decode(&bmp(2, 2, 24, &rows), 0).unwrap();
        assert_eq!(
            img.as_u8().unwrap(),
            &[9, 8, 7, 12, 11, 10, 3, 2, 1, 6, 5, 4]
        );
        let img = decode(&bmp(2, -2, 24, &rows), 4).unwrap();
        assert_eq!(
            img.as_u8().unwrap(),
            &[3, 2, 1, 255, 6, 5, 4, 255, 9, 8, 7, 255, 12, 11, 10, 255]
        );
        let rows32 = [1, 2, 3, 4];
        let img = decode(&bmp(1, 1, 32, &rows32), 0).unwrap();
        assert_eq!(img.as_u8().unwrap(), &[3, 2, 1, 4]);
        let img = decode(&bmp(1, 1, 32, &rows32), 3).unwrap();
        assert_eq!(img.as_u8().unwrap(), &[3, 2, 1]);
    }

    #[test]
    fn tensorflow_errors() {
        let rows = [1, 2, 3, 0];
        let good = bmp(1, 1, 24, &rows);
        assert!(decode(&good, 1)
            .unwrap_err()
            .to_string()
            .contains("must be 0, 3 or 4 for BMP"));
        assert!(decode(&good[..20], 0)
            .unwrap_err()
            .to_string()
            .contains("at least 32 bytes"));
        let e = decode(&good[..good.len() - 1], 0).unwrap_err();
        assert!(e.to_string().contains("differ by -1"), "{e}");
        assert!(decode(&bmp(1, 1, 16, &rows), 0).is_err());
        assert!(decode(&bmp(0, 1, 24, &rows), 0).is_err());
        assert!(decode(&bmp(1, 0, 24, &rows), 0).is_err());
        assert!(decode(&bmp(100_000, 100_000, 24, &rows), 0).is_err());
        assert!(decode(&bmp(i32::MAX, -1, 32, &rows), 0).is_err());
    }
}
