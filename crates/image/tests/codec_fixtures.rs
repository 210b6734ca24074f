//! The codecs on the TensorFlow-made fixture files
//! (tests/fixtures/image_codecs): every file decodes to its known shape, and
//! every truncation and many single-byte corruptions of every file decode
//! or fail with an error, never a panic. Pixel equality with TensorFlow is
//! checked by tests/python/test_image_codecs.py.

use std::path::PathBuf;

use ferroflow_image::codec::{self, decode_image, jpeg, DecodeImageOptions, Format};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/image_codecs")
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

const FILES: [(&str, Format, [usize; 4]); 14] = [
    ("444.jpg", Format::Jpeg, [1, 33, 47, 3]),
    ("422.jpg", Format::Jpeg, [1, 33, 47, 3]),
    ("420.jpg", Format::Jpeg, [1, 33, 47, 3]),
    ("420_progressive.jpg", Format::Jpeg, [1, 33, 47, 3]),
    ("gray.jpg", Format::Jpeg, [1, 33, 47, 1]),
    ("cmyk.jpg", Format::Jpeg, [1, 33, 47, 3]),
    ("rgb8.png", Format::Png, [1, 33, 47, 3]),
    ("ga8.png", Format::Png, [1, 33, 47, 2]),
    ("palette_trns.png", Format::Png, [1, 33, 47, 4]),
    ("gray1bit.png", Format::Png, [1, 33, 47, 1]),
    ("anim.gif", Format::Gif, [3, 33, 47, 3]),
    ("offset.gif", Format::Gif, [2, 5, 6, 3]),
    ("rgba32.bmp", Format::Bmp, [1, 33, 47, 4]),
    ("rgb24_topdown.bmp", Format::Bmp, [1, 33, 47, 3]),
];

#[test]
fn fixtures_decode_to_their_shapes() {
    for (name, format, [f, h, w, c]) in FILES {
        let (got, img) = decode_image(&read(name), &DecodeImageOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got, format, "{name}");
        assert_eq!(
            (img.frames, img.height, img.width, img.channels),
            (f, h, w, c),
            "{name}"
        );
        assert_eq!(img.pixels.len(), f * h * w * c, "{name}");
    }
    assert_eq!(jpeg::shape(&read("420.jpg")).unwrap(), [33, 47, 3]);
    assert!(codec::is_jpeg(&read("gray.jpg")));
}

/// Whether a (corrupted) JPEG header now declares a huge image: such files
/// decode (as in TensorFlow, up to the 2^29-byte limit) but slowly, so the
/// sweep skips them.
fn huge(data: &[u8]) -> bool {
    codec::sniff(data) == Some(Format::Jpeg)
        && jpeg::shape(data).is_ok_and(|[h, w, _]| h * w > 1 << 20)
}

#[test]
fn truncations_and_corruptions_never_panic() {
    let opts = [
        DecodeImageOptions::default(),
        DecodeImageOptions {
            channels: 1,
            png_16bit: true,
            all_frames: false,
            jpeg: jpeg::DecodeOptions {
                try_recover_truncated: true,
                ratio: 2,
                fancy_upscaling: false,
                ..Default::default()
            },
        },
    ];
    for (name, _, _) in FILES {
        let data = read(name);
        let step = (data.len() / 200).max(1);
        for n in (0..data.len()).step_by(step) {
            for o in &opts {
                let _ = decode_image(&data[..n], o);
            }
        }
        let mut bad = data.clone();
        for i in (0..data.len()).step_by(step) {
            bad[i] ^= 0x5A;
            if huge(&bad) {
                bad[i] = data[i];
                continue;
            }
            for o in &opts {
                if let Ok((_, img)) = decode_image(&bad, o) {
                    assert_eq!(
                        img.pixels.len(),
                        img.frames * img.height * img.width * img.channels
                    );
                }
            }
            bad[i] = data[i];
        }
    }
}
