//! JPEG XL decoding must return, never crash, on any input; a decoded image
//! has the size and channels its header promised.
#![no_main]

use ferroflow_image::codec::jxl;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let header = jxl::header(data);
    if let Ok(img) = jxl::decode(data) {
        let h = header.expect("decoded without a header");
        assert_eq!(
            (img.height, img.width, img.channels),
            (h.height, h.width, h.channels)
        );
        assert_eq!(img.pixels.len(), img.height * img.width * img.channels);
    }
});
