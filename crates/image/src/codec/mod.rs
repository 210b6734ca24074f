//! Image codecs on byte buffers (filled in by the codec work).
