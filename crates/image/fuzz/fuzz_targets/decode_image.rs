//! `DecodeImage`'s sniffing and dispatch must return, never crash, on any
//! input (the first byte picks channels, depth and animation handling).
#![no_main]

use ferroflow_image::codec::{decode_image, DecodeImageOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (sel, body) = match data {
        [s, rest @ ..] => (*s, rest),
        [] => (0, data),
    };
    let opts = DecodeImageOptions {
        channels: [0, 1, 3, 4][usize::from(sel & 3)],
        png_16bit: sel & 4 != 0,
        all_frames: sel & 8 != 0,
        ..Default::default()
    };
    if let Ok((_, img)) = decode_image(body, &opts) {
        assert_eq!(
            img.pixels.len(),
            img.frames * img.height * img.width * img.channels
        );
    }
});
