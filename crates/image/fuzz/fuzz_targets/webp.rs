//! WebP decoding (still images, and animations all frames or the first)
//! must return, never crash, on any input; a decoded image has the size its
//! header promised.
#![no_main]

use ferroflow_image::codec::webp;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let header = webp::header(data);
    for all in [true, false] {
        if let Ok(img) = webp::decode(data, all) {
            let h = header.as_ref().expect("decoded without a header");
            assert_eq!((img.height, img.width), (h.height, h.width));
            assert_eq!(img.channels, if h.animated { 4 } else { h.channels });
            assert_eq!(
                img.pixels.len(),
                img.frames * img.height * img.width * img.channels
            );
        }
    }
});
