//! Inputs the fuzz targets (`crates/image/fuzz`) once crashed on: each must
//! now decode or fail with a typed error, through every entry point.

use ferroflow_image::codec::{decode_image, png, DecodeImageOptions};

const PNG_PLTE_49_BYTES: &[u8] = include_bytes!("fuzz_regressions/png_plte_49_bytes.bin");

#[test]
fn png_palette_not_a_multiple_of_three_is_refused() {
    // The fuzz target's first byte picks the options; the PNG follows it.
    let body = &PNG_PLTE_49_BYTES[1..];
    for channels in [0, 1, 3, 4] {
        for sixteen in [false, true] {
            let err = png::decode(body, channels, sixteen).unwrap_err();
            assert!(err.to_string().contains("palette"), "{err}");
        }
    }
    let opts = DecodeImageOptions {
        channels: 4,
        ..Default::default()
    };
    assert!(decode_image(body, &opts).is_err());
}

/// A chunk as the file holds it (the CRC is not checked before the palette is).
fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = (data.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    out.extend_from_slice(&[0; 4]);
    out
}

#[test]
fn png_transparency_longer_than_the_palette_is_refused() {
    let mut file = b"\x89PNG\r\n\x1a\n".to_vec();
    // 2x2, 8-bit indexed.
    file.extend(chunk(b"IHDR", &[0, 0, 0, 2, 0, 0, 0, 2, 8, 3, 0, 0, 0]));
    file.extend(chunk(b"PLTE", &[0; 9]));
    file.extend(chunk(b"tRNS", &[0; 5]));
    file.extend(chunk(b"IDAT", &[]));
    let err = png::decode(&file, 4, false).unwrap_err();
    assert!(err.to_string().contains("transparency"), "{err}");
}
