//! The codec ops, with TensorFlow's names, inputs, attributes, defaults,
//! shape functions and error messages: `DecodeJpeg`, `DecodeAndCropJpeg`,
//! `ExtractJpegShape`, `EncodeJpeg`, `EncodeJpegVariableQuality`,
//! `DecodePng`, `EncodePng`, `DecodeGif`, `DecodeBmp`, `DecodeWebP`,
//! `DecodeJxl` and `DecodeImage`.
//!
//! As in TensorFlow 2.x, every decode op sniffs its input and decodes any
//! supported format (`decode_png` of a JPEG works); the op only decides the
//! output's rank, its dtype and which formats it refuses (`DecodeBmp`
//! decodes BMPs only, `DecodeAndCropJpeg` JPEGs only). A WebP decodes
//! through any op, always to `[frames, height, width, channels]` except in
//! `DecodeImage` with `expand_animations=False`, and a JPEG XL always to
//! its first frame, `[height, width, channels]`, as TensorFlow's kernel
//! does.

use ferroflow_graph::{AttrValue, AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, KernelFactory, OpContext};
use ferroflow_tensor::{bail, ensure, DType, Error, Result, Tensor};

use crate::codec::{self, bmp, gif, jpeg, jxl, png, webp, Format, Image, Pixels};

/// Registers the codec ops and kernels (idempotent).
pub(crate) fn register() {
    ferroflow_runtime::register_ops(op_defs(), kernels());
}

/// The graph-level definitions of the codec ops.
pub fn op_defs() -> Vec<OpDef> {
    vec![
        OpDef::new("DecodeJpeg", &["contents"], infer_decode_3d),
        OpDef::new(
            "DecodeAndCropJpeg",
            &["contents", "crop_window"],
            infer_decode_and_crop,
        ),
        OpDef::new("DecodePng", &["contents"], infer_decode_3d),
        OpDef::new("DecodeBmp", &["contents"], infer_decode_3d),
        OpDef::new("DecodeGif", &["contents"], infer_decode_gif),
        OpDef::new("DecodeImage", &["contents"], infer_decode_image),
        OpDef::new("DecodeWebP", &["contents"], infer_decode_webp),
        OpDef::new("DecodeJxl", &["contents"], infer_decode_3d),
        OpDef::new("ExtractJpegShape", &["contents"], infer_extract_shape),
        OpDef::new("EncodeJpeg", &["image"], infer_encode_jpeg),
        OpDef::new(
            "EncodeJpegVariableQuality",
            &["images", "quality"],
            infer_encode_jpeg,
        ),
        OpDef::new("EncodePng", &["image"], infer_encode_png),
    ]
}

fn kernels() -> Vec<(&'static str, KernelFactory)> {
    let mut v: Vec<(&'static str, KernelFactory)> = [
        "DecodeJpeg",
        "DecodeAndCropJpeg",
        "DecodePng",
        "DecodeBmp",
        "DecodeGif",
        "DecodeImage",
        "DecodeWebP",
        "DecodeJxl",
    ]
    .into_iter()
    .map(|op| (op, decode_factory(op)))
    .collect();
    v.push((
        "ExtractJpegShape",
        factory(|init| {
            let out = init.node.attrs.dtype_or("output_type", DType::Int32)?;
            ensure!(
                matches!(out, DType::Int32 | DType::Int64),
                invalid_argument,
                "output_type must be int32 or int64, got {out}"
            );
            Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                let c = ctx.input(0)?;
                ensure!(
                    c.rank() == 0,
                    invalid_argument,
                    "contents must be scalar, got shape {}",
                    c.shape()
                );
                let data = &scalar_bytes(c)?;
                let [h, w, ch] = jpeg::shape(data)?;
                let dims = [h as i64, w as i64, ch as i64];
                let t = if out == DType::Int32 {
                    Tensor::vector(dims.iter().map(|&d| d as i32).collect::<Vec<_>>())
                } else {
                    Tensor::vector(dims.to_vec())
                };
                ctx.output(t);
                Ok(())
            }))
        }),
    ));
    v.push(("EncodeJpeg", encode_jpeg_factory(false)));
    v.push(("EncodeJpegVariableQuality", encode_jpeg_factory(true)));
    v.push((
        "EncodePng",
        factory(|init| {
            let compression = init.node.attrs.int_or("compression", -1)?;
            if !(-1..=9).contains(&compression) {
                bail!(
                    invalid_argument,
                    "compression should be in [-1,9], got {compression}"
                );
            }
            Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                let out = encode_png(ctx.input(0)?, compression as i32)?;
                ctx.output(out);
                Ok(())
            }))
        }),
    ));
    v
}

// ------------------------------------------------------------------ decoding

/// One decode op's configuration (TensorFlow's `DecodeImageV2Op`).
#[derive(Clone)]
struct DecodeConfig {
    op: &'static str,
    channels: usize,
    dtype: DType,
    expand_animations: bool,
    jpeg: jpeg::DecodeOptions,
}

fn decode_factory(op: &'static str) -> KernelFactory {
    factory(move |init| {
        let cfg = decode_config(op, &init.node.attrs)?;
        Ok(Box::new(move |ctx: &mut OpContext<'_>| {
            let crop = if cfg.op == "DecodeAndCropJpeg" {
                Some(ctx.input(1)?.clone())
            } else {
                None
            };
            let out = decode_contents(&cfg, ctx.input(0)?, crop.as_ref())?;
            ctx.output(out);
            Ok(())
        }))
    })
}

fn decode_config(op: &'static str, attrs: &ferroflow_graph::Attrs) -> Result<DecodeConfig> {
    let mut jpeg = jpeg::DecodeOptions::default();
    if op == "DecodeJpeg" || op == "DecodeAndCropJpeg" {
        let ratio = attrs.int_or("ratio", 1)?;
        ensure!(
            matches!(ratio, 1 | 2 | 4 | 8),
            invalid_argument,
            "ratio must be 1, 2, 4, or 8, got {ratio}"
        );
        jpeg.ratio = ratio as u32;
        jpeg.fancy_upscaling = attrs.bool_or("fancy_upscaling", true)?;
        jpeg.try_recover_truncated = attrs.bool_or("try_recover_truncated", false)?;
        jpeg.acceptable_fraction = attrs.float_or("acceptable_fraction", 1.0)? as f32;
        jpeg.dct_method = jpeg::DctMethod::parse(&attrs.str_or("dct_method", "")?)?;
    }
    let mut dtype = DType::UInt8;
    let mut expand_animations = true;
    if op == "DecodePng" || op == "DecodeImage" {
        dtype = attrs.dtype_or("dtype", DType::UInt8)?;
        if op == "DecodePng" {
            ensure!(
                matches!(dtype, DType::UInt8 | DType::UInt16),
                invalid_argument,
                "`dtype` for `DecodePng` must be unit8, unit16 but got: {dtype}"
            );
        } else {
            ensure!(
                matches!(dtype, DType::UInt8 | DType::UInt16 | DType::Float32),
                invalid_argument,
                "`dtype` for `DecodeImage` must be unit8, unit16, float but got: {dtype}"
            );
            expand_animations = attrs.bool_or("expand_animations", true)?;
        }
    }
    let channels = if op == "DecodeGif" {
        3
    } else {
        let c = attrs.int_or("channels", 0)?;
        ensure!(
            matches!(c, 0 | 1 | 3 | 4),
            invalid_argument,
            "`channels` must be 0, 1, 3 or 4 but got {c}"
        );
        c as usize
    };
    Ok(DecodeConfig {
        op,
        channels,
        dtype,
        expand_animations,
        jpeg,
    })
}

fn scalar_bytes(t: &Tensor) -> Result<Vec<u8>> {
    let s = t.as_slice::<Vec<u8>>().map_err(|_| {
        Error::invalid_argument(format!("contents must be a string, got {}", t.dtype()))
    })?;
    Ok(s.first().cloned().unwrap_or_default())
}

fn decode_contents(cfg: &DecodeConfig, contents: &Tensor, crop: Option<&Tensor>) -> Result<Tensor> {
    ensure!(
        contents.rank() == 0,
        invalid_argument,
        "`contents` must be scalar but got shape{}",
        contents.shape()
    );
    let s = contents
        .as_slice::<Vec<u8>>()
        .map_err(|_| Error::invalid_argument("`contents` must be a string"))?;
    decode_bytes(cfg, &s[0], crop)
}

/// Decodes one image with `cfg`'s op semantics.
fn decode_bytes(cfg: &DecodeConfig, input: &[u8], crop: Option<&Tensor>) -> Result<Tensor> {
    if input.is_empty() {
        bail!(invalid_argument, "Input is empty.");
    }
    let op = cfg.op;
    let format =
        codec::sniff(input).ok_or_else(|| Error::invalid_argument(codec::UNKNOWN_FORMAT))?;
    let wrong_op = |name: &str| -> Error {
        if op == "DecodeAndCropJpeg" {
            Error::invalid_argument(format!(
                "DecodeAndCropJpeg operation can run on JPEG only, but detected {name}."
            ))
        } else {
            Error::invalid_argument(format!(
                "Trying to decode {name} format using DecodeBmp op. Use `decode_{}` or `decode_image` instead.",
                name.to_lowercase()
            ))
        }
    };
    let (image, four_d) = match format {
        Format::Jpeg => {
            ensure!(
                cfg.channels != 4,
                invalid_argument,
                "JPEG does not support 4 channels"
            );
            let mut opts = cfg.jpeg.clone();
            opts.channels = cfg.channels;
            if op == "DecodeAndCropJpeg" {
                opts.crop = Some(crop_window(crop)?);
            } else if op == "DecodeBmp" {
                return Err(wrong_op("JPEG"));
            }
            (jpeg::decode(input, &opts)?, op == "DecodeGif")
        }
        Format::Png => {
            if op == "DecodeBmp" || op == "DecodeAndCropJpeg" {
                return Err(wrong_op("PNG"));
            }
            (
                png::decode(input, cfg.channels, cfg.dtype != DType::UInt8)?,
                op == "DecodeGif",
            )
        }
        Format::Gif => {
            if cfg.channels != 0 && cfg.channels != 3 {
                bail!(
                    invalid_argument,
                    "channels must be 0 or 3 for GIF, got {}",
                    cfg.channels
                );
            }
            if op == "DecodeBmp" || op == "DecodeAndCropJpeg" {
                return Err(wrong_op("GIF"));
            }
            let img = gif::decode(input, cfg.expand_animations)?;
            let four_d = match op {
                "DecodePng" | "DecodeJpeg" => {
                    ensure!(
                        img.frames == 1,
                        invalid_argument,
                        "Got {} frames, but animated gifs can only be decoded by \
                             tf.io.decode_gif or tf.io.decode_image",
                        img.frames
                    );
                    false
                }
                _ => op == "DecodeGif" || cfg.expand_animations,
            };
            (img, four_d)
        }
        Format::Bmp => {
            ensure!(
                cfg.channels != 1,
                invalid_argument,
                "`channels` must be 0, 3 or 4 for BMP, but got 1"
            );
            if op != "DecodeBmp" && op != "DecodeImage" {
                if op == "DecodeAndCropJpeg" {
                    return Err(wrong_op("BMP"));
                }
                bail!(
                    invalid_argument,
                    "Trying to decode BMP format using a wrong op. Use `decode_bmp` or \
                     `decode_image` instead. Op used: {op}"
                );
            }
            (bmp::decode(input, cfg.channels)?, false)
        }
        Format::WebP => {
            ensure!(
                cfg.dtype == DType::UInt8,
                invalid_argument,
                "WebP only supports uint8 for dtype"
            );
            webp::check_channels(input, cfg.channels)?;
            let expand = op != "DecodeImage" || cfg.expand_animations;
            (webp::decode(input, expand)?, expand)
        }
        Format::Jxl => {
            ensure!(
                cfg.dtype == DType::UInt8,
                invalid_argument,
                "JXL only supports uint8 for dtype"
            );
            let h = jxl::header(input)?;
            ensure!(
                cfg.channels == 0 || cfg.channels == h.channels,
                invalid_argument,
                "Number of channels requested does not match input"
            );
            (jxl::decode(input)?, false)
        }
    };
    image_tensor(image, four_d, cfg.dtype)
}

fn crop_window(t: Option<&Tensor>) -> Result<jpeg::Crop> {
    let t = t.ok_or_else(|| Error::invalid_argument("DecodeAndCropJpeg needs a crop_window"))?;
    ensure!(
        t.rank() == 1,
        invalid_argument,
        "crop_window must be 1-D, got shape {}",
        t.shape()
    );
    ensure!(
        t.dims()[0] == 4,
        invalid_argument,
        "crop_size must have four elements {}",
        t.shape()
    );
    let v: Vec<i64> = match t.dtype() {
        DType::Int32 => t.as_slice::<i32>()?.iter().map(|&x| i64::from(x)).collect(),
        DType::Int64 => t.as_slice::<i64>()?.to_vec(),
        d => {
            bail!(invalid_argument, "crop_window must be int32, got {d}")
        }
    };
    Ok(jpeg::Crop {
        y: v[0],
        x: v[1],
        height: v[2],
        width: v[3],
    })
}

/// The decoded image as a tensor of `dtype`: 8-bit samples become uint16
/// as `v * 256` and float as `v / 255`; 16-bit (PNG) samples become float
/// as `v / 65535`, as TensorFlow's decode kernels convert.
fn image_tensor(image: Image, four_d: bool, dtype: DType) -> Result<Tensor> {
    let mut dims = vec![image.height, image.width, image.channels];
    if four_d || image.frames != 1 {
        dims.insert(0, image.frames);
    }
    match (image.pixels, dtype) {
        (Pixels::U8(v), DType::UInt8) => Tensor::from_vec(dims, v),
        (Pixels::U8(v), DType::UInt16) => Tensor::from_vec(
            dims,
            v.into_iter()
                .map(|x| u16::from(x) * 256)
                .collect::<Vec<_>>(),
        ),
        (Pixels::U8(v), DType::Float32) => {
            let scale = (1.0f64 / 255.0) as f32;
            Tensor::from_vec(
                dims,
                v.into_iter()
                    .map(|x| f32::from(x) * scale)
                    .collect::<Vec<_>>(),
            )
        }
        (Pixels::U16(v), DType::UInt16) => Tensor::from_vec(dims, v),
        (Pixels::U16(v), DType::Float32) => {
            let scale = (1.0f64 / 65535.0) as f32;
            Tensor::from_vec(
                dims,
                v.into_iter()
                    .map(|x| f32::from(x) * scale)
                    .collect::<Vec<_>>(),
            )
        }
        (Pixels::U16(v), DType::UInt8) => Tensor::from_vec(
            dims,
            v.into_iter().map(|x| (x >> 8) as u8).collect::<Vec<_>>(),
        ),
        (_, d) => Err(Error::invalid_argument(format!(
            "unsupported decode dtype {d}"
        ))),
    }
}

// ------------------------------------------------------------------ encoding

fn shape_text(t: &Tensor) -> String {
    format!(
        "[{}]",
        t.dims()
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(",")
    )
}

fn encode_jpeg_factory(variable_quality: bool) -> KernelFactory {
    factory(move |init| {
        let a = &init.node.attrs;
        let format = a.str_or("format", "")?;
        ensure!(
            matches!(format.as_str(), "" | "grayscale" | "rgb"),
            invalid_argument,
            "format must be one of '', 'grayscale', 'rgb', got '{format}'"
        );
        let quality = a.int_or("quality", 95)?;
        if !variable_quality && !(0..=100).contains(&quality) {
            bail!(
                invalid_argument,
                "quality must be in [0,100], got {quality}"
            );
        }
        let density_unit = match a.str_or("density_unit", "in")?.as_str() {
            "in" => 1,
            "cm" => 2,
            other => {
                bail!(
                    invalid_argument,
                    "density_unit must be 'in' or 'cm', got '{other}'"
                )
            }
        };
        let xmp = match a.get("xmp_metadata") {
            Some(AttrValue::Str(v)) => v.clone(),
            _ => Vec::new(),
        };
        let base = jpeg::EncodeOptions {
            quality: quality as i32,
            progressive: a.bool_or("progressive", false)?,
            optimize_size: a.bool_or("optimize_size", false)?,
            chroma_downsampling: a.bool_or("chroma_downsampling", true)?,
            density_unit,
            x_density: a.int_or("x_density", 300)?.clamp(0, 65535) as u16,
            y_density: a.int_or("y_density", 300)?.clamp(0, 65535) as u16,
            xmp_metadata: xmp,
        };
        Ok(Box::new(move |ctx: &mut OpContext<'_>| {
            let image = ctx.input(0)?;
            let mut opts = base.clone();
            if variable_quality {
                let q = ctx.input(1)?;
                ensure!(
                    q.rank() == 0,
                    invalid_argument,
                    "quality must be a scalar: {}",
                    shape_text(q)
                );
                let q = q.scalar_i64()?;
                if !(0..=100).contains(&q) {
                    bail!(invalid_argument, "quality must be in [0,100], got {q}");
                }
                opts.quality = q as i32;
            }
            ensure!(
                image.rank() == 3,
                invalid_argument,
                "image must be 3-dimensional{}",
                shape_text(image)
            );
            let d = image.dims();
            let channels = d[2];
            match format.as_str() {
                "grayscale" if channels != 1 => {
                    bail!(
                        invalid_argument,
                        "format grayscale expects 1 channel, got {}",
                        shape_text(image)
                    )
                }
                "rgb" if channels != 3 => {
                    bail!(
                        invalid_argument,
                        "format rgb expects 3 channels, got {}",
                        shape_text(image)
                    )
                }
                _ if channels != 1 && channels != 3 => {
                    bail!(
                        invalid_argument,
                        "image must have 1 or 3 channels, got {}",
                        shape_text(image)
                    )
                }
                _ => {}
            }
            let px = image.as_slice::<u8>().map_err(|_| {
                Error::invalid_argument(format!("image must be uint8, got {}", image.dtype()))
            })?;
            let bytes = jpeg::encode(px, d[0], d[1], channels, &opts)?;
            ctx.output(Tensor::scalar(bytes));
            Ok(())
        }))
    })
}

fn encode_png(image: &Tensor, compression: i32) -> Result<Tensor> {
    if image.rank() < 3 {
        bail!(
            invalid_argument,
            "images must be at least rank 3{}",
            shape_text(image)
        );
    }
    let d = image.dims();
    let r = d.len();
    let (h, w, c) = (d[r - 3], d[r - 2], d[r - 1]);
    if !(1..=4).contains(&c) {
        bail!(
            invalid_argument,
            "image must have 1, 2, 3, or 4 channels, got {c}"
        );
    }
    let batch_dims = d[..r - 3].to_vec();
    let batch: usize = batch_dims.iter().product();
    let per = h * w * c;
    let mut out = Vec::with_capacity(batch);
    let mut failed = Vec::new();
    for b in 0..batch {
        let pixels = match image.dtype() {
            DType::UInt8 => Pixels::U8(image.as_slice::<u8>()?[b * per..(b + 1) * per].to_vec()),
            DType::UInt16 => Pixels::U16(image.as_slice::<u16>()?[b * per..(b + 1) * per].to_vec()),
            t => {
                bail!(invalid_argument, "image must be uint8 or uint16, got {t}")
            }
        };
        match png::encode(&pixels, h, w, c, compression) {
            Ok(bytes) => out.push(bytes),
            Err(_) => {
                failed.push(b.to_string());
                out.push(Vec::new());
            }
        }
    }
    ensure!(
        failed.is_empty(),
        internal,
        "PNG encoding failed at the following flattened batch indices: {}",
        failed.join(", ")
    );
    Tensor::from_vec(batch_dims, out)
}

// ----------------------------------------------------------------- inference

fn expect_scalar_string(ctx: &InferContext, what: &str) -> Result<()> {
    ctx.expect_dtype(0, &[DType::String])?;
    if let Some(r) = ctx.shape(0).rank() {
        if r != 0 {
            return Err(ctx.shape_error(format!("Shape must be rank 0 but is rank {r} ({what})")));
        }
    }
    Ok(())
}

fn channels_dim(ctx: &InferContext) -> Result<Option<usize>> {
    let c = ctx.int_or("channels", 0)?;
    Ok(if c > 0 { Some(c as usize) } else { None })
}

fn infer_decode_3d(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_scalar_string(ctx, "contents")?;
    let dtype = ctx.type_or("dtype", DType::UInt8)?;
    Ok(vec![OutputInfo::new(
        dtype,
        PartialShape::from_dims(vec![None, None, channels_dim(ctx)?]),
    )])
}

fn infer_decode_and_crop(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_scalar_string(ctx, "contents")?;
    let (mut h, mut w) = (None, None);
    if let Some(v) = ctx.const_ints(1) {
        if v.len() == 4 {
            h = usize::try_from(v[2]).ok();
            w = usize::try_from(v[3]).ok();
        }
    }
    Ok(vec![OutputInfo::new(
        DType::UInt8,
        PartialShape::from_dims(vec![h, w, channels_dim(ctx)?]),
    )])
}

fn infer_decode_gif(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_scalar_string(ctx, "contents")?;
    Ok(vec![OutputInfo::new(
        DType::UInt8,
        PartialShape::from_dims(vec![None, None, None, Some(3)]),
    )])
}

fn infer_decode_image(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_scalar_string(ctx, "contents")?;
    let dtype = ctx.type_or("dtype", DType::UInt8)?;
    let shape = if ctx.bool_or("expand_animations", true)? {
        PartialShape::unknown()
    } else {
        PartialShape::from_dims(vec![None, None, channels_dim(ctx)?])
    };
    Ok(vec![OutputInfo::new(dtype, shape)])
}

fn infer_decode_webp(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_scalar_string(ctx, "contents")?;
    Ok(vec![OutputInfo::new(
        DType::UInt8,
        PartialShape::from_dims(vec![None, None, None, channels_dim(ctx)?]),
    )])
}

fn infer_extract_shape(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    expect_scalar_string(ctx, "contents")?;
    let t = ctx.type_or("output_type", DType::Int32)?;
    Ok(vec![OutputInfo::new(
        t,
        PartialShape::from_dims(vec![Some(3)]),
    )])
}

fn infer_encode_jpeg(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::UInt8])?;
    if let Some(r) = ctx.shape(0).rank() {
        if r != 3 {
            return Err(ctx.shape_error(format!("Shape must be rank 3 but is rank {r}")));
        }
    }
    Ok(vec![OutputInfo::new(DType::String, PartialShape::scalar())])
}

fn infer_encode_png(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::UInt8, DType::UInt16])?;
    let shape = match ctx.shape(0).dims() {
        Some(d) if d.len() < 3 => {
            return Err(ctx.shape_error(format!(
                "Shape must be at least rank 3 but is rank {}",
                d.len()
            )))
        }
        Some(d) => PartialShape::from_dims(d[..d.len() - 3].to_vec()),
        None => PartialShape::unknown(),
    };
    Ok(vec![OutputInfo::new(DType::String, shape)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(op: &'static str) -> DecodeConfig {
        decode_config(op, &ferroflow_graph::Attrs::default()).unwrap()
    }

    fn png_bytes() -> Vec<u8> {
        png::encode(&Pixels::U8(vec![1, 2, 3, 4, 5, 6]), 1, 2, 3, -1).unwrap()
    }

    #[test]
    fn op_semantics_follow_tensorflow() {
        let p = png_bytes();
        let t = decode_bytes(&cfg("DecodeJpeg"), &p, None).unwrap();
        assert_eq!(t.dims(), &[1, 2, 3]);
        let t = decode_bytes(&cfg("DecodeGif"), &p, None).unwrap();
        assert_eq!(t.dims(), &[1, 1, 2, 3]);
        let e = decode_bytes(&cfg("DecodeBmp"), &p, None).unwrap_err();
        assert!(e
            .to_string()
            .contains("Trying to decode PNG format using DecodeBmp op"));
        let e = decode_bytes(&cfg("DecodeAndCropJpeg"), &p, None).unwrap_err();
        assert!(e
            .to_string()
            .contains("can run on JPEG only, but detected PNG."));
        let mut f = cfg("DecodeImage");
        f.dtype = DType::Float32;
        let t = decode_bytes(&f, &p, None).unwrap();
        let v = t.as_slice::<f32>().unwrap();
        assert_eq!(v[0], (257.0f32) * (1.0f64 / 65535.0) as f32);
        assert!(decode_bytes(&cfg("DecodeImage"), b"", None).is_err());
    }

    #[test]
    fn encode_png_batches() {
        let img = Tensor::from_vec(vec![2, 1, 2, 1], vec![1u8, 2, 3, 4]).unwrap();
        let t = encode_png(&img, -1).unwrap();
        assert_eq!(t.dims(), &[2]);
        let bytes = t.as_slice::<Vec<u8>>().unwrap();
        let back = png::decode(&bytes[1], 0, false).unwrap();
        assert_eq!(back.as_u8().unwrap(), &[3, 4]);
        let flat = Tensor::from_vec(vec![2, 2], vec![1u8, 2, 3, 4]).unwrap();
        assert!(encode_png(&flat, -1).is_err());
    }
}
