//! JPEG decoding and encoding with libjpeg-turbo's code (the MozJPEG fork,
//! statically linked, built from C without SIMD), driven the way TensorFlow
//! drives libjpeg-turbo, so the pixels are TensorFlow's.
//!
//! TensorFlow's default `dct_method` (`""`) is `INTEGER_FAST` (libjpeg's
//! `JDCT_IFAST`); `INTEGER_ACCURATE` is `JDCT_ISLOW`. Truncated input is
//! handled as TensorFlow does: without `try_recover_truncated` the decode
//! stops at the first missing scanline and succeeds only if at least
//! `acceptable_fraction` of the rows were read (the rest are black); with
//! it, a fake end-of-image marker is inserted and missing rows repeat the
//! last good one.
//!
//! libjpeg reports fatal errors through a callback that must not return;
//! ours unwinds (`resume_unwind`, no panic hook, no message) out of the C
//! code (compiled with `-fexceptions`) back to [`catch_unwind`], which turns
//! it into `InvalidArgument`.

use std::ffi::{c_int, c_long};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use ferroflow_tensor::{bail, ensure, Error, Result};
use mozjpeg_sys as sys;

use super::{check_size, Image};

/// TensorFlow's message for any JPEG that fails to decode.
pub const DECODE_FAILED: &str = "jpeg::Uncompress failed. Invalid JPEG data or crop window.";

/// libjpeg's inverse DCT choice (`dct_method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DctMethod {
    /// `JDCT_IFAST`: TensorFlow's default (`""` and `"INTEGER_FAST"`).
    #[default]
    IntegerFast,
    /// `JDCT_ISLOW` (`"INTEGER_ACCURATE"`).
    IntegerAccurate,
}

impl DctMethod {
    /// Parses TensorFlow's `dct_method` attribute.
    pub fn parse(s: &str) -> Result<DctMethod> {
        match s {
            "" | "INTEGER_FAST" => Ok(DctMethod::IntegerFast),
            "INTEGER_ACCURATE" => Ok(DctMethod::IntegerAccurate),
            _ => Err(Error::invalid_argument(
                "dct_method must be one of {'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}",
            )),
        }
    }
}

/// A crop window in output pixels (`DecodeAndCropJpeg`'s
/// `[y, x, height, width]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crop {
    /// First row.
    pub y: i64,
    /// First column.
    pub x: i64,
    /// Rows.
    pub height: i64,
    /// Columns.
    pub width: i64,
}

/// Options of [`decode`], with TensorFlow's defaults.
#[derive(Clone, Debug)]
pub struct DecodeOptions {
    /// 0 (as stored, CMYK becomes RGB), 1 or 3.
    pub channels: usize,
    /// Downscale by 1, 2, 4 or 8 while decoding.
    pub ratio: u32,
    /// libjpeg's "fancy" (smooth) chroma upsampling.
    pub fancy_upscaling: bool,
    /// Decode truncated files, repeating the last row read.
    pub try_recover_truncated: bool,
    /// The fraction of rows that must be read for a truncated file to be
    /// accepted.
    pub acceptable_fraction: f32,
    /// The inverse DCT.
    pub dct_method: DctMethod,
    /// Decode only this window (`DecodeAndCropJpeg`).
    pub crop: Option<Crop>,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            channels: 0,
            ratio: 1,
            fancy_upscaling: true,
            try_recover_truncated: false,
            acceptable_fraction: 1.0,
            dct_method: DctMethod::IntegerFast,
            crop: None,
        }
    }
}

/// The unwinding payload of a libjpeg fatal error.
struct JpegError(String);

unsafe extern "C-unwind" fn error_exit(cinfo: &mut sys::jpeg_common_struct) {
    let buf = [0u8; 80];
    // SAFETY: `err` is the error manager libjpeg was set up with.
    unsafe {
        if let Some(format) = (*cinfo.err).format_message {
            format(cinfo, &buf);
        }
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    resume_unwind(Box::new(JpegError(
        String::from_utf8_lossy(&buf[..end]).into_owned(),
    )));
}

unsafe extern "C-unwind" fn emit_message(cinfo: &mut sys::jpeg_common_struct, level: c_int) {
    if level < 0 {
        // SAFETY: as above.
        unsafe { (*cinfo.err).num_warnings += 1 };
    }
}

unsafe extern "C-unwind" fn output_message(_cinfo: &mut sys::jpeg_common_struct) {}

fn error_manager() -> Box<sys::jpeg_error_mgr> {
    // SAFETY: the struct is plain data; jpeg_std_error fills every field.
    let mut err: Box<sys::jpeg_error_mgr> = Box::new(unsafe { std::mem::zeroed() });
    unsafe { sys::jpeg_std_error(&mut err) };
    err.error_exit = Some(error_exit);
    err.emit_message = Some(emit_message);
    err.output_message = Some(output_message);
    err
}

/// A memory source with TensorFlow's end-of-data rules.
#[repr(C)]
struct MemSource {
    mgr: sys::jpeg_source_mgr,
    data: *const u8,
    recover: bool,
    fake_eois: u32,
    /// Where the last call with bytes still buffered found the buffer,
    /// and how many such calls in a row found it there.
    stalled_at: *const u8,
    stalls: u32,
}

static FAKE_EOI: [u8; 2] = [0xFF, 0xD9];

/// How many fake end markers one decode may be fed before reading past
/// the end is an error.
const MAX_FAKE_EOIS: u32 = 64;

/// How many calls in a row may find unread bytes at the same place.
const MAX_STALLS: u32 = 1000;

unsafe extern "C-unwind" fn init_source(_cinfo: &mut sys::jpeg_decompress_struct) {}

unsafe extern "C-unwind" fn fill_input_buffer(
    cinfo: &mut sys::jpeg_decompress_struct,
) -> sys::boolean {
    // SAFETY: `src` is our MemSource (set in `Decompressor::new`).
    let src = unsafe { &mut *(cinfo.src as *mut MemSource) };
    if src.mgr.bytes_in_buffer == 0 && src.mgr.next_input_byte == src.data {
        fatal(cinfo, "Empty JPEG input");
    } else if src.mgr.bytes_in_buffer > 0 {
        // Asked for more while data remains (a corrupt stream): TensorFlow
        // suspends, or with `try_recover_truncated` returns TRUE with the
        // same bytes, which libjpeg takes up again. That can repeat forever
        // on some corrupt files, so after many calls that find the buffer
        // where the last one left it, reading fails.
        if !src.recover {
            return 0;
        }
        if src.stalled_at == src.mgr.next_input_byte {
            src.stalls += 1;
            if src.stalls > MAX_STALLS {
                fatal(cinfo, "Corrupt JPEG data: no progress");
            }
        } else {
            src.stalled_at = src.mgr.next_input_byte;
            src.stalls = 0;
        }
        return 1;
    } else if src.recover && src.fake_eois < MAX_FAKE_EOIS {
        // Truncated: pretend the file ends here (a warning, like libjpeg's
        // own source managers); again each time libjpeg asks, as in
        // TensorFlow, but a bounded number of times.
        // SAFETY: the error manager is ours.
        unsafe { (*cinfo.common.err).num_warnings += 1 };
        src.fake_eois += 1;
        src.mgr.next_input_byte = FAKE_EOI.as_ptr();
        src.mgr.bytes_in_buffer = 2;
        return 1;
    } else if src.recover {
        fatal(cinfo, "Input file read error");
    }
    0
}

unsafe extern "C-unwind" fn skip_input_data(cinfo: &mut sys::jpeg_decompress_struct, n: c_long) {
    if n <= 0 {
        return;
    }
    // SAFETY: as in `fill_input_buffer`.
    let src = unsafe { &mut *(cinfo.src as *mut MemSource) };
    let n = n as usize;
    if n > src.mgr.bytes_in_buffer {
        src.mgr.next_input_byte = src
            .mgr
            .next_input_byte
            .wrapping_add(src.mgr.bytes_in_buffer);
        src.mgr.bytes_in_buffer = 0;
        // SAFETY: libjpeg's own callback contract.
        unsafe { fill_input_buffer(cinfo) };
    } else {
        src.mgr.bytes_in_buffer -= n;
        // SAFETY: within the buffer.
        src.mgr.next_input_byte = unsafe { src.mgr.next_input_byte.add(n) };
    }
}

unsafe extern "C-unwind" fn term_source(_cinfo: &mut sys::jpeg_decompress_struct) {}

fn fatal(_cinfo: &mut sys::jpeg_decompress_struct, msg: &str) -> ! {
    resume_unwind(Box::new(JpegError(msg.to_string())))
}

/// A libjpeg decompressor over a byte slice, destroyed on drop.
struct Decompressor {
    cinfo: Box<sys::jpeg_decompress_struct>,
    _err: Box<sys::jpeg_error_mgr>,
    _src: Box<MemSource>,
}

impl Decompressor {
    fn new(data: &[u8], recover: bool) -> Decompressor {
        let mut err = error_manager();
        // SAFETY: zeroed is the documented initial state before
        // jpeg_create_decompress; the boxes keep every pointer stable.
        let mut cinfo: Box<sys::jpeg_decompress_struct> = Box::new(unsafe { std::mem::zeroed() });
        cinfo.common.err = &mut *err;
        unsafe { sys::jpeg_create_decompress(&mut *cinfo) };
        let mut src = Box::new(MemSource {
            mgr: sys::jpeg_source_mgr {
                next_input_byte: data.as_ptr(),
                bytes_in_buffer: data.len(),
                init_source: Some(init_source),
                fill_input_buffer: Some(fill_input_buffer),
                skip_input_data: Some(skip_input_data),
                resync_to_restart: Some(sys::jpeg_resync_to_restart),
                term_source: Some(term_source),
            },
            data: data.as_ptr(),
            recover,
            fake_eois: 0,
            stalled_at: std::ptr::null(),
            stalls: 0,
        });
        cinfo.src = &mut src.mgr;
        Decompressor {
            cinfo,
            _err: err,
            _src: src,
        }
    }
}

impl Drop for Decompressor {
    fn drop(&mut self) {
        // SAFETY: created in `new`; destroy never calls error_exit.
        unsafe { sys::jpeg_destroy_decompress(&mut self.cinfo) };
    }
}

/// Runs `f`, turning a libjpeg fatal error into `Err(message)`.
fn guarded<T>(f: impl FnOnce() -> T) -> std::result::Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| match payload.downcast::<JpegError>() {
        Ok(e) => e.0,
        Err(other) => resume_unwind(other),
    })
}

/// The shape `[height, width, channels]` of a JPEG, from its header
/// (`ExtractJpegShape`).
pub fn shape(data: &[u8]) -> Result<[usize; 3]> {
    let bad = || Error::invalid_argument(format!("Invalid JPEG data, size {}", data.len()));
    if data.is_empty() {
        return Err(bad());
    }
    let mut d = Decompressor::new(data, false);
    let cinfo = &mut *d.cinfo;
    guarded(|| unsafe {
        sys::jpeg_read_header(cinfo, 1);
        sys::jpeg_calc_output_dimensions(cinfo);
        [
            cinfo.output_height as usize,
            cinfo.output_width as usize,
            cinfo.output_components as usize,
        ]
    })
    .map_err(|_| bad())
}

/// Decodes a JPEG with TensorFlow's `DecodeJpeg` semantics.
pub fn decode(data: &[u8], opts: &DecodeOptions) -> Result<Image> {
    ensure!(
        matches!(opts.ratio, 1 | 2 | 4 | 8),
        invalid_argument,
        "ratio must be 1, 2, 4, or 8, got {}",
        opts.ratio
    );
    ensure!(
        matches!(opts.channels, 0 | 1 | 3),
        invalid_argument,
        "channels must be 0, 1 or 3 for JPEG, got {}",
        opts.channels
    );
    if data.is_empty() {
        bail!(invalid_argument, "Input is empty.");
    }
    let mut d = Decompressor::new(data, opts.try_recover_truncated);
    let cinfo = &mut *d.cinfo;
    let outcome = guarded(|| unsafe { decode_low(cinfo, data, opts) });
    match outcome {
        Ok(Ok(image)) => Ok(image),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(Error::invalid_argument(DECODE_FAILED)),
    }
}

/// The body of [`decode`]; libjpeg errors unwind out of it.
///
/// # Safety
/// `cinfo` is a freshly created decompressor with a memory source.
unsafe fn decode_low(
    cinfo: &mut sys::jpeg_decompress_struct,
    data: &[u8],
    opts: &DecodeOptions,
) -> Result<Image> {
    let failed = || Error::invalid_argument(DECODE_FAILED);
    unsafe { sys::jpeg_read_header(cinfo, 1) };
    let components = match opts.channels {
        0 => (cinfo.num_components as usize).min(3),
        c => c,
    };
    let cmyk = matches!(
        cinfo.jpeg_color_space,
        sys::J_COLOR_SPACE::JCS_CMYK | sys::J_COLOR_SPACE::JCS_YCCK
    );
    cinfo.out_color_space = match components {
        1 => sys::J_COLOR_SPACE::JCS_GRAYSCALE,
        3 if cmyk => sys::J_COLOR_SPACE::JCS_CMYK,
        3 => sys::J_COLOR_SPACE::JCS_RGB,
        _ => return Err(failed()),
    };
    cinfo.do_fancy_upsampling = opts.fancy_upscaling as sys::boolean;
    cinfo.scale_num = 1;
    cinfo.scale_denom = opts.ratio;
    cinfo.dct_method = match opts.dct_method {
        DctMethod::IntegerFast => sys::J_DCT_METHOD::JDCT_IFAST,
        DctMethod::IntegerAccurate => sys::J_DCT_METHOD::JDCT_ISLOW,
    };
    unsafe { sys::jpeg_calc_output_dimensions(cinfo) };
    let (out_h, out_w) = (cinfo.output_height as u64, cinfo.output_width as u64);
    if out_h == 0 || out_w == 0 {
        return Err(failed());
    }
    check_size(
        "JPEG",
        1,
        out_h,
        out_w,
        cinfo.num_components.max(1) as u64,
        1,
    )?;
    if unsafe { sys::jpeg_start_decompress(cinfo) } == 0 {
        return Err(failed());
    }

    let (mut target_h, mut target_w) = (cinfo.output_height, cinfo.output_width);
    let mut skipped = 0u32;
    if let Some(c) = opts.crop {
        let valid = c.width > 0
            && c.height > 0
            && c.x >= 0
            && c.y >= 0
            && c.y + c.height <= i64::from(cinfo.output_height)
            && c.x + c.width <= i64::from(cinfo.output_width);
        if !valid {
            return Err(failed());
        }
        target_h = c.height as u32;
        target_w = c.width as u32;
        let mut crop_x = c.x as u32;
        let mut crop_w = c.width as u32;
        unsafe { sys::jpeg_crop_scanline(cinfo, &mut crop_x, &mut crop_w) };
        skipped = unsafe { sys::jpeg_skip_scanlines(cinfo, c.y as u32) };
        if skipped != c.y as u32 {
            return Err(failed());
        }
    }

    let stride = target_w as usize * components;
    let height = target_h as usize;
    let mut out = vec![0u8; stride * height];
    let realign = target_w != cinfo.output_width;
    let use_cmyk = cinfo.out_color_space == sys::J_COLOR_SPACE::JCS_CMYK;
    let line_comps = if use_cmyk { 4 } else { components };
    let mut temp = if use_cmyk || realign {
        vec![0u8; cinfo.output_width as usize * line_comps]
    } else {
        Vec::new()
    };
    let align = (cinfo.output_width - target_w) as usize * line_comps;
    let adobe = use_cmyk && has_adobe_marker(data);
    let max_lines = skipped + target_h;
    let mut height_read = height;
    let mut row = 0usize;
    while cinfo.output_scanline < max_lines {
        let dst = &mut out[row * stride..(row + 1) * stride];
        let n = if use_cmyk || realign {
            let mut p = temp.as_mut_ptr();
            let n = unsafe { sys::jpeg_read_scanlines(cinfo, &mut p, 1) };
            if n > 0 {
                let src = &temp[align..];
                if use_cmyk {
                    for (o, px) in dst.chunks_exact_mut(3).zip(src.chunks_exact(4)) {
                        let (c, m, y, k) = (
                            u32::from(px[0]),
                            u32::from(px[1]),
                            u32::from(px[2]),
                            u32::from(px[3]),
                        );
                        let rgb = if adobe {
                            [k * c / 255, k * m / 255, k * y / 255]
                        } else {
                            [
                                (255 - k) * (255 - c) / 255,
                                (255 - k) * (255 - m) / 255,
                                (255 - k) * (255 - y) / 255,
                            ]
                        };
                        o[0] = rgb[0] as u8;
                        o[1] = rgb[1] as u8;
                        o[2] = rgb[2] as u8;
                    }
                } else {
                    dst.copy_from_slice(&src[..stride]);
                }
            }
            n
        } else {
            let mut p = dst.as_mut_ptr();
            unsafe { sys::jpeg_read_scanlines(cinfo, &mut p, 1) }
        };
        if n == 0 {
            if opts.try_recover_truncated {
                for r in row..height {
                    if r == 0 {
                        out[..stride].fill(0);
                    } else {
                        out.copy_within((r - 1) * stride..r * stride, r * stride);
                    }
                }
                cinfo.output_scanline = max_lines;
            } else {
                height_read = row;
            }
            break;
        }
        row += 1;
    }
    let complete = height_read == height;
    if opts.crop.is_some() && cinfo.output_scanline < cinfo.output_height && complete {
        unsafe {
            sys::jpeg_skip_scanlines(cinfo, cinfo.output_height - cinfo.output_scanline);
        }
    }
    let expected = if use_cmyk { 4 } else { components };
    let bad_param = cinfo.output_components as usize != expected;
    if complete && !bad_param {
        unsafe { sys::jpeg_finish_decompress(cinfo) };
    } else {
        unsafe { sys::jpeg_abort_decompress(cinfo) };
    }
    if bad_param {
        return Err(failed());
    }
    let fraction = if height == 0 {
        1.0
    } else {
        height_read as f32 / height as f32
    };
    if fraction < opts.acceptable_fraction.min(1.0) {
        return Err(failed());
    }
    // Rows past the last one read stay black (zero).
    Ok(Image::new_u8(height, target_w as usize, components, out))
}

/// Options of [`encode`], with TensorFlow's `EncodeJpeg` defaults.
#[derive(Clone, Debug)]
pub struct EncodeOptions {
    /// 0-100 (0 is treated as 1, like libjpeg).
    pub quality: i32,
    /// Progressive scans.
    pub progressive: bool,
    /// Optimal Huffman tables.
    pub optimize_size: bool,
    /// 4:2:0 chroma subsampling (else 4:4:4).
    pub chroma_downsampling: bool,
    /// JFIF density unit: 0 none, 1 dots per inch, 2 dots per cm.
    pub density_unit: u8,
    /// Horizontal density.
    pub x_density: u16,
    /// Vertical density.
    pub y_density: u16,
    /// XMP metadata, written as an APP1 marker when not empty.
    pub xmp_metadata: Vec<u8>,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            quality: 95,
            progressive: false,
            optimize_size: false,
            chroma_downsampling: true,
            density_unit: 1,
            x_density: 300,
            y_density: 300,
            xmp_metadata: Vec::new(),
        }
    }
}

/// A destination that appends to a `Vec`.
#[repr(C)]
struct VecDest {
    mgr: sys::jpeg_destination_mgr,
    out: Vec<u8>,
    chunk: Vec<u8>,
}

unsafe extern "C-unwind" fn init_destination(cinfo: &mut sys::jpeg_compress_struct) {
    // SAFETY: `dest` is our VecDest.
    let d = unsafe { &mut *(cinfo.dest as *mut VecDest) };
    d.mgr.next_output_byte = d.chunk.as_mut_ptr();
    d.mgr.free_in_buffer = d.chunk.len();
}

unsafe extern "C-unwind" fn empty_output_buffer(
    cinfo: &mut sys::jpeg_compress_struct,
) -> sys::boolean {
    // SAFETY: as above.
    let d = unsafe { &mut *(cinfo.dest as *mut VecDest) };
    d.out.extend_from_slice(&d.chunk);
    d.mgr.next_output_byte = d.chunk.as_mut_ptr();
    d.mgr.free_in_buffer = d.chunk.len();
    1
}

unsafe extern "C-unwind" fn term_destination(cinfo: &mut sys::jpeg_compress_struct) {
    // SAFETY: as above.
    let d = unsafe { &mut *(cinfo.dest as *mut VecDest) };
    let used = d.chunk.len() - d.mgr.free_in_buffer;
    d.out.extend_from_slice(&d.chunk[..used]);
}

struct Compressor {
    cinfo: Box<sys::jpeg_compress_struct>,
    _err: Box<sys::jpeg_error_mgr>,
}

impl Drop for Compressor {
    fn drop(&mut self) {
        // SAFETY: created by `encode`.
        unsafe { sys::jpeg_destroy_compress(&mut self.cinfo) };
    }
}

/// Encodes `height x width x channels` 8-bit pixels (1 = grayscale, 3 =
/// RGB) as a baseline (or progressive) JFIF JPEG with libjpeg-turbo's
/// standard settings (no MozJPEG trellis or scan optimizations).
pub fn encode(
    pixels: &[u8],
    height: usize,
    width: usize,
    channels: usize,
    opts: &EncodeOptions,
) -> Result<Vec<u8>> {
    ensure!(
        matches!(channels, 1 | 3),
        invalid_argument,
        "image must have 1 or 3 channels, got {channels}"
    );
    ensure!(
        pixels.len() == height * width * channels,
        invalid_argument,
        "pixel buffer does not match the image shape"
    );
    if !(0..=100).contains(&opts.quality) {
        bail!(
            invalid_argument,
            "quality must be in [0,100], got {}",
            opts.quality
        );
    }
    if height == 0 || width == 0 || (height as u64) * (width as u64) >= (1 << 29) {
        bail!(internal, "JPEG encoding failed");
    }
    if width > 65500 || height > 65500 {
        bail!(
            invalid_argument,
            "JPEG images are at most 65500 pixels on a side, got {width} by {height}"
        );
    }
    let mut err = error_manager();
    // SAFETY: zeroed, then jpeg_create_compress; the boxes keep pointers
    // stable for the compressor's lifetime.
    let mut cinfo: Box<sys::jpeg_compress_struct> = Box::new(unsafe { std::mem::zeroed() });
    cinfo.common.err = &mut *err;
    unsafe { sys::jpeg_create_compress(&mut *cinfo) };
    let mut comp = Compressor { cinfo, _err: err };
    let mut dest = Box::new(VecDest {
        mgr: sys::jpeg_destination_mgr {
            next_output_byte: std::ptr::null_mut(),
            free_in_buffer: 0,
            init_destination: Some(init_destination),
            empty_output_buffer: Some(empty_output_buffer),
            term_destination: Some(term_destination),
        },
        out: Vec::new(),
        chunk: vec![0u8; (height * width * channels).clamp(1024, 1 << 20)],
    });
    let cinfo = &mut *comp.cinfo;
    cinfo.dest = &mut dest.mgr;
    let result = guarded(|| unsafe {
        cinfo.image_width = width as u32;
        cinfo.image_height = height as u32;
        cinfo.input_components = channels as c_int;
        cinfo.in_color_space = if channels == 1 {
            sys::J_COLOR_SPACE::JCS_GRAYSCALE
        } else {
            sys::J_COLOR_SPACE::JCS_RGB
        };
        // libjpeg-turbo's behaviour, not MozJPEG's: must precede set_defaults.
        sys::jpeg_c_set_int_param(
            cinfo,
            sys::J_INT_PARAM::JINT_COMPRESS_PROFILE,
            sys::JINT_COMPRESS_PROFILE_VALUE::JCP_FASTEST as c_int,
        );
        sys::jpeg_set_defaults(cinfo);
        cinfo.optimize_coding = opts.optimize_size as sys::boolean;
        cinfo.density_unit = opts.density_unit;
        cinfo.X_density = opts.x_density;
        cinfo.Y_density = opts.y_density;
        sys::jpeg_set_quality(cinfo, opts.quality, 1);
        if opts.progressive {
            sys::jpeg_simple_progression(cinfo);
        }
        if !opts.chroma_downsampling {
            let comps =
                std::slice::from_raw_parts_mut(cinfo.comp_info, cinfo.num_components as usize);
            for c in comps {
                c.h_samp_factor = 1;
                c.v_samp_factor = 1;
            }
        }
        sys::jpeg_start_compress(cinfo, 1);
        if !opts.xmp_metadata.is_empty() {
            let mut packet = b"http://ns.adobe.com/xap/1.0/\0".to_vec();
            packet.extend_from_slice(&opts.xmp_metadata);
            if packet.len() > 65533 {
                resume_unwind(Box::new(JpegError("xmp_metadata is too long".into())));
            }
            sys::jpeg_write_marker(cinfo, 0xE1, packet.as_ptr(), packet.len() as u32);
        }
        let stride = width * channels;
        while (cinfo.next_scanline as usize) < height {
            let r = cinfo.next_scanline as usize;
            let row = pixels[r * stride..].as_ptr();
            let rows = [row];
            sys::jpeg_write_scanlines(cinfo, rows.as_ptr(), 1);
        }
        sys::jpeg_finish_compress(cinfo);
    });
    match result {
        Ok(()) => Ok(std::mem::take(&mut dest.out)),
        Err(msg) => Err(Error::internal(format!("JPEG encoding failed: {msg}"))),
    }
}

/// Whether the JPEG has an Adobe APP14 marker before its first scan (which
/// tells libjpeg, and TensorFlow's CMYK conversion, that CMYK is inverted).
fn has_adobe_marker(data: &[u8]) -> bool {
    let mut i = 2;
    while i + 4 <= data.len() {
        if data[i] != 0xFF {
            return false;
        }
        let marker = data[i + 1];
        if marker == 0xFF {
            i += 1;
            continue;
        }
        if marker == 0xDA || marker == 0xD9 {
            return false;
        }
        let len = usize::from(u16::from_be_bytes([data[i + 2], data[i + 3]]));
        if marker == 0xEE && len >= 14 && data.get(i + 4..i + 9) == Some(b"Adobe") {
            return true;
        }
        i += 2 + len;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A smooth image: red rises left to right, green top to bottom.
    fn gradient(h: usize, w: usize) -> Vec<u8> {
        (0..h * w * 3)
            .map(|i| {
                let (p, c) = (i / 3, i % 3);
                let (y, x) = (p / w, p % w);
                match c {
                    0 => (x * 255 / w) as u8,
                    1 => (y * 255 / h) as u8,
                    _ => 128,
                }
            })
            .collect()
    }

    #[test]
    fn round_trip_rgb_and_gray() {
        let px = gradient(24, 40);
        let bytes = encode(&px, 24, 40, 3, &EncodeOptions::default()).unwrap();
        assert!(is_jpeg_bytes(&bytes));
        assert_eq!(shape(&bytes).unwrap(), [24, 40, 3]);
        let img = decode(&bytes, &DecodeOptions::default()).unwrap();
        assert_eq!((img.height, img.width, img.channels), (24, 40, 3));
        let max = img
            .as_u8()
            .unwrap()
            .iter()
            .zip(&px)
            .map(|(a, b)| (i32::from(*a) - i32::from(*b)).abs())
            .max()
            .unwrap();
        assert!(max <= 24, "max difference {max}");
        let gray: Vec<u8> = px.iter().step_by(3).copied().collect();
        let bytes = encode(&gray, 24, 40, 1, &EncodeOptions::default()).unwrap();
        let img = decode(&bytes, &DecodeOptions::default()).unwrap();
        assert_eq!(img.channels, 1);
        let img3 = decode(
            &bytes,
            &DecodeOptions {
                channels: 3,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(img3.channels, 3);
    }

    fn is_jpeg_bytes(b: &[u8]) -> bool {
        super::super::is_jpeg(b)
    }

    #[test]
    fn ratio_crop_and_options() {
        let px = gradient(64, 48);
        let opts = EncodeOptions {
            progressive: true,
            optimize_size: true,
            chroma_downsampling: false,
            xmp_metadata: b"<x/>".to_vec(),
            ..Default::default()
        };
        let bytes = encode(&px, 64, 48, 3, &opts).unwrap();
        assert!(bytes.windows(4).any(|w| w == b"<x/>"));
        for ratio in [2, 4, 8] {
            let img = decode(
                &bytes,
                &DecodeOptions {
                    ratio,
                    ..Default::default()
                },
            )
            .unwrap();
            assert_eq!(img.height, 64 / ratio as usize);
        }
        let full = decode(&bytes, &DecodeOptions::default()).unwrap();
        let crop = Crop {
            y: 5,
            x: 7,
            height: 20,
            width: 13,
        };
        let img = decode(
            &bytes,
            &DecodeOptions {
                crop: Some(crop),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!((img.height, img.width), (20, 13));
        let f = full.as_u8().unwrap();
        for r in 0..20 {
            let a = &img.as_u8().unwrap()[r * 39..(r + 1) * 39];
            let b = &f[((r + 5) * 48 + 7) * 3..((r + 5) * 48 + 20) * 3];
            assert_eq!(a, b, "row {r}");
        }
        let bad = Crop {
            y: 50,
            x: 0,
            height: 20,
            width: 10,
        };
        let e = decode(
            &bytes,
            &DecodeOptions {
                crop: Some(bad),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("Invalid JPEG data or crop window"));
    }

    #[test]
    fn truncated_and_corrupt() {
        // Noise, so that the entropy-coded rows (not the tables) fill the
        // file and half of it holds about half of the rows.
        let px: Vec<u8> = (0..64 * 64 * 3u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        let bytes = encode(&px, 64, 64, 3, &EncodeOptions::default()).unwrap();
        let half = &bytes[..bytes.len() / 2];
        assert!(decode(half, &DecodeOptions::default()).is_err());
        let rec = decode(
            half,
            &DecodeOptions {
                try_recover_truncated: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!((rec.height, rec.width), (64, 64));
        let part = decode(
            half,
            &DecodeOptions {
                acceptable_fraction: 0.1,
                ..Default::default()
            },
        )
        .unwrap();
        // The rows never read are black.
        assert!(part.as_u8().unwrap()[64 * 63 * 3..].iter().all(|&v| v == 0));
        for n in [0, 1, 3, 10, 20, 100] {
            let _ = decode(&bytes[..n.min(bytes.len())], &DecodeOptions::default());
            let _ = shape(&bytes[..n.min(bytes.len())]);
        }
        let mut garbage = b"\xff\xd8\xff".to_vec();
        garbage.extend(std::iter::repeat_n(b'x', 100));
        let e = decode(&garbage, &DecodeOptions::default()).unwrap_err();
        assert!(e.to_string().contains(DECODE_FAILED));
        assert!(shape(&garbage).is_err());
        let e = decode(
            &bytes,
            &DecodeOptions {
                ratio: 3,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("ratio must be 1, 2, 4, or 8, got 3"));
    }

    #[test]
    fn encode_errors() {
        assert!(encode(&[0; 8], 2, 2, 2, &EncodeOptions::default()).is_err());
        let q = EncodeOptions {
            quality: 101,
            ..Default::default()
        };
        assert!(encode(&[0; 12], 2, 2, 3, &q).is_err());
        assert!(encode(&[], 0, 2, 3, &EncodeOptions::default()).is_err());
        let q0 = EncodeOptions {
            quality: 0,
            ..Default::default()
        };
        assert!(encode(&[7; 12], 2, 2, 3, &q0).is_ok());
    }
}
