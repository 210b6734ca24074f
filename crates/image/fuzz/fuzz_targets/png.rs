//! PNG decoding to every channel count and both depths must return, never
//! crash, on any input.
#![no_main]

use ferroflow_image::codec::png;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (sel, body) = match data {
        [s, rest @ ..] => (*s, rest),
        [] => (0, data),
    };
    let channels = [0, 1, 3, 4][usize::from(sel & 3)];
    if let Ok(img) = png::decode(body, channels, sel & 4 != 0) {
        assert_eq!(img.pixels.len(), img.height * img.width * img.channels);
    }
});
