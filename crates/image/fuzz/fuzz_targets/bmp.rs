//! BMP decoding to every channel count must return, never crash, on any
//! input.
#![no_main]

use ferroflow_image::codec::bmp;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for channels in [0, 1, 3, 4] {
        if let Ok(img) = bmp::decode(data, channels) {
            assert_eq!(img.pixels.len(), img.height * img.width * img.channels);
        }
    }
});
