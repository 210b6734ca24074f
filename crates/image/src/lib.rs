//! ferroflow's `tf.image`: the image codecs and image ops TF1 input
//! pipelines use, as graph ops with runtime kernels (and gradients where
//! TensorFlow has them), with TensorFlow's op names, attributes, pixels and
//! error messages.
//!
//! * [`codec`]: JPEG, PNG, GIF and BMP decoding and encoding, WebP and JPEG
//!   XL decoding, on byte buffers, with the limits that refuse decompression
//!   bombs; [`codec_ops`] wraps them as `DecodeJpeg`, `EncodePng`,
//!   `DecodeWebP`, `DecodeImage`, ...
//! * [`resize`]: `ResizeBilinear`, `ResizeNearestNeighbor`, `ResizeBicubic`,
//!   `ResizeArea` and their gradients.
//! * [`color`]: `RGBToHSV`, `HSVToRGB`, `AdjustContrastv2`, `AdjustHue`,
//!   `AdjustSaturation`.
//! * [`boxes`]: non-max suppression, `CropAndResize`, bounding-box drawing
//!   and sampling, glimpses.
//! * [`patches`]: `ExtractImagePatches` and its gradient.
//! * [`proposals`]: `GenerateBoundingBoxProposals` (decode, clip, filter and
//!   suppress detector box proposals).
//!
//! Everything else in `tf.image` (flips, crops, pads, dtype conversion,
//! standardization, ...) is a composition of core ops, built in Python as
//! TensorFlow builds it. [`register`] installs every op, kernel and
//! gradient.

pub mod boxes;
pub mod codec;
pub mod codec_ops;
pub mod color;
pub mod patches;
mod pixels;
pub mod proposals;
pub mod resize;

use std::sync::Once;

/// Registers the image ops, their kernels and gradients (idempotent).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        boxes::register();
        codec_ops::register();
        color::register();
        patches::register();
        proposals::register();
        resize::register();
    });
}
