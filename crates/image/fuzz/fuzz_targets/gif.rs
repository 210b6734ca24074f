//! GIF decoding (all frames or the first) must return, never crash, on any
//! input.
#![no_main]

use ferroflow_image::codec::gif;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for all in [true, false] {
        if let Ok(img) = gif::decode(data, all) {
            assert_eq!(img.pixels.len(), img.frames * img.height * img.width * 3);
        }
    }
});
