//! JPEG decoding (every option, chosen by the first two bytes) and
//! header parsing must return, never crash, on any input.
#![no_main]

use ferroflow_image::codec::jpeg::{self, Crop, DctMethod, DecodeOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (opts, body) = match data {
        [a, b, rest @ ..] => {
            let crop = (a & 0x80 != 0).then(|| Crop {
                y: i64::from(b & 7),
                x: i64::from((b >> 3) & 7),
                height: i64::from(b >> 6) + 1,
                width: i64::from(a & 3) + 1,
            });
            let opts = DecodeOptions {
                channels: [0, 1, 3][usize::from(a % 3)],
                ratio: [1, 2, 4, 8][usize::from((a >> 2) & 3)],
                fancy_upscaling: a & 0x10 != 0,
                try_recover_truncated: a & 0x20 != 0,
                acceptable_fraction: if a & 0x40 != 0 { 0.5 } else { 1.0 },
                dct_method: if b & 1 != 0 {
                    DctMethod::IntegerAccurate
                } else {
                    DctMethod::IntegerFast
                },
                crop,
            };
            (opts, rest)
        }
        _ => (DecodeOptions::default(), data),
    };
    let _ = jpeg::shape(body);
    if let Ok(img) = jpeg::decode(body, &opts) {
        assert_eq!(img.pixels.len(), img.height * img.width * img.channels);
    }
});
