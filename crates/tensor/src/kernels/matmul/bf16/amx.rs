//! bfloat16 products on AMX tiles (`tdpbf16ps`, Sapphire Rapids and later).
//!
//! A tile register holds 16 rows of 64 bytes. One `tdpbf16ps` adds the
//! product of a 16 x 16-pair tile of `a` (16 output rows, 32 depth
//! elements) and a 16-pair x 16 tile of `b` (32 depth elements, 16 output
//! columns) into a 16 x 16 tile of float32 sums: 8,192 multiply-adds per
//! instruction. A block of the output is 32 x 32 (four sum tiles, two
//! tiles of `a`, two of `b`: all eight registers), computed over the whole
//! depth before it is rounded to bfloat16, so, as with the vector kernels,
//! every output element is one chain of float32 sums over the depth in a
//! fixed order and the bits do not depend on how blocks are spread over
//! threads.
//!
//! Operands are packed into depth pairs (`u32`, low half the even depth
//! element) padded to whole tiles: `a` row-major per 32-row block
//! (`[row][pair]`), `b` pair-major per 32-column panel (`[pair][column]`).
//! Linux hands out the tile state only on request
//! (`arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`); [`available`]
//! asks once per process.

use half::bf16;

use super::super::{Mat, SendPtr};
use super::{pair, raw, run_tasks, PARALLEL_MIN_MACS};

/// Rows of the output one block computes (two tiles).
const BM: usize = 32;
/// Columns of the output one block computes (two tiles).
const BN: usize = 32;
/// Depth pairs one tile step consumes (64 bytes per tile row).
const KP_STEP: usize = 16;
/// Row blocks one task computes against one column panel.
const ROW_BLOCKS_PER_TASK: usize = 4;

/// Whether this CPU has AMX-TILE and AMX-BF16 and the kernel lets this
/// process use the tile registers (asked once per process).
pub fn available() -> bool {
    static OK: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *OK.get_or_init(|| cpu_has_amx_bf16() && os_grants_tiles())
}

#[cfg(target_arch = "x86_64")]
fn cpu_has_amx_bf16() -> bool {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    // CPUID leaf 7, EDX: bit 22 AMX-BF16, bit 24 AMX-TILE.
    if __cpuid(0).eax < 7 {
        return false;
    }
    let edx = __cpuid_count(7, 0).edx;
    edx & (1 << 22) != 0 && edx & (1 << 24) != 0
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_amx_bf16() -> bool {
    false
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn os_grants_tiles() -> bool {
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: a plain system call with integer arguments; it fails with
    // an error code where the kernel or CPU lacks AMX.
    unsafe {
        libc::syscall(
            libc::SYS_arch_prctl,
            ARCH_REQ_XCOMP_PERM,
            XFEATURE_XTILEDATA,
        ) == 0
    }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn os_grants_tiles() -> bool {
    false
}

/// The 64-byte operand of `ldtilecfg`: palette 1, every tile 16 rows of
/// 64 bytes.
#[repr(C, align(64))]
struct TileConfig {
    palette: u8,
    start_row: u8,
    reserved: [u8; 14],
    /// Bytes per row of each of the 16 possible tiles.
    colsb: [u16; 16],
    /// Rows of each of the 16 possible tiles.
    rows: [u8; 16],
}

impl TileConfig {
    fn eight_full_tiles() -> TileConfig {
        let mut cfg = TileConfig {
            palette: 1,
            start_row: 0,
            reserved: [0; 14],
            colsb: [0; 16],
            rows: [0; 16],
        };
        for t in 0..8 {
            cfg.colsb[t] = 64;
            cfg.rows[t] = 16;
        }
        cfg
    }
}

/// Holds the tile registers configured for the blocks of one task and
/// releases them when dropped (also when a task unwinds).
#[cfg(target_arch = "x86_64")]
struct Tiles;

#[cfg(target_arch = "x86_64")]
impl Tiles {
    /// # Safety
    /// [`available`] must have returned true.
    unsafe fn configure() -> Tiles {
        let cfg = TileConfig::eight_full_tiles();
        // SAFETY: the CPU has AMX and the process has permission (caller);
        // `cfg` is a valid, 64-byte aligned palette-1 configuration.
        unsafe {
            std::arch::asm!("ldtilecfg [{}]", in(reg) &cfg as *const TileConfig, options(nostack, readonly));
        }
        Tiles
    }
}

#[cfg(target_arch = "x86_64")]
impl Drop for Tiles {
    fn drop(&mut self) {
        // SAFETY: tiles were configured by `configure`.
        unsafe { std::arch::asm!("tilerelease", options(nostack, nomem)) };
    }
}

/// One 32 x 32 block of float32 sums into `out` (row-major, 32 columns)
/// from a packed row block `a` (`BM` rows of `kpp` pairs) and column
/// panel `b` (`kpp` rows of `BN` pairs), `kpp` a multiple of `KP_STEP`.
///
/// # Safety
/// Tiles must be configured ([`Tiles::configure`]); `a` must hold
/// `BM * kpp` pairs, `b` `kpp * BN`, `out` `BM * BN` floats.
#[cfg(target_arch = "x86_64")]
unsafe fn block(kpp: usize, a: *const u32, b: *const u32, out: *mut f32) {
    use std::arch::asm;
    let a_stride = kpp * 4;
    let b_stride = BN * 4;
    // SAFETY (whole function): every tile load reads 16 rows of 64 bytes
    // inside the packed operands (caller's sizes), every store writes 16
    // rows of 64 bytes inside `out`.
    unsafe {
        asm!(
            "tilezero tmm0",
            "tilezero tmm1",
            "tilezero tmm2",
            "tilezero tmm3",
            options(nostack, nomem)
        );
        for step in 0..kpp / KP_STEP {
            let a0 = a.add(step * KP_STEP);
            let a1 = a0.add(16 * kpp);
            let b0 = b.add(step * KP_STEP * BN);
            let b1 = b0.add(16);
            asm!(
                "tileloadd tmm4, [{a0} + {sa}*1]",
                "tileloadd tmm6, [{b0} + {sb}*1]",
                "tileloadd tmm7, [{b1} + {sb}*1]",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tileloadd tmm5, [{a1} + {sa}*1]",
                "tdpbf16ps tmm1, tmm4, tmm7",
                "tdpbf16ps tmm2, tmm5, tmm6",
                "tdpbf16ps tmm3, tmm5, tmm7",
                a0 = in(reg) a0,
                a1 = in(reg) a1,
                b0 = in(reg) b0,
                b1 = in(reg) b1,
                sa = in(reg) a_stride,
                sb = in(reg) b_stride,
                options(nostack, readonly)
            );
        }
        let stride = BN * 4;
        asm!(
            "tilestored [{c00} + {s}*1], tmm0",
            "tilestored [{c01} + {s}*1], tmm1",
            "tilestored [{c10} + {s}*1], tmm2",
            "tilestored [{c11} + {s}*1], tmm3",
            c00 = in(reg) out,
            c01 = in(reg) out.add(16),
            c10 = in(reg) out.add(16 * BN),
            c11 = in(reg) out.add(16 * BN + 16),
            s = in(reg) stride,
            options(nostack)
        );
    }
}

/// Which lines of an operand a packed block holds: `count` lanes (rows of
/// `a`, columns of `b`) from lane `first`, lane `i`'s depth element `l` at
/// `i * step + l * depth_step`.
struct Lanes {
    first: usize,
    count: usize,
    step: isize,
    depth_step: isize,
}

/// Packs `lanes` of `x` into depth pairs: pair `p` of lane `r` goes to
/// `out[r * strides.0 + p * strides.1]`; lanes past `count` and pairs past
/// the depth stay zero (`out` arrives zeroed). Walks whichever of depth
/// and lanes is contiguous in `x` innermost.
fn pack_pairs(out: &mut [u32], strides: (usize, usize), lanes: Lanes, k: usize, x: &[bf16]) {
    let (lane_stride, pair_stride) = strides;
    let at = |r: usize, l: usize| {
        let i = (lanes.first + r) as isize * lanes.step + l as isize * lanes.depth_step;
        x[i as usize].to_bits()
    };
    let pairs = k / 2;
    if lanes.depth_step == 1 {
        for r in 0..lanes.count {
            let start = ((lanes.first + r) as isize * lanes.step) as usize;
            let line = &x[start..start + k];
            for (p, two) in line.chunks_exact(2).enumerate() {
                out[r * lane_stride + p * pair_stride] = pair(two[0], two[1]);
            }
        }
    } else {
        for p in 0..pairs {
            for r in 0..lanes.count {
                out[r * lane_stride + p * pair_stride] =
                    u32::from(at(r, 2 * p)) | (u32::from(at(r, 2 * p + 1)) << 16);
            }
        }
    }
    if k % 2 == 1 {
        for r in 0..lanes.count {
            out[r * lane_stride + pairs * pair_stride] = u32::from(at(r, k - 1));
        }
    }
}

/// [`block`] in plain Rust, in `tdpbf16ps`'s documented order (per tile
/// step the even and odd products summed apart, then added to the sum):
/// runs the packing and blocking on CPUs without AMX, in tests.
fn block_emulated(kpp: usize, a: &[u32], b: &[u32], out: &mut [f32]) {
    let lo = |x: u32| f32::from_bits(x << 16);
    let hi = |x: u32| f32::from_bits(x & 0xffff_0000);
    for r in 0..BM {
        for j in 0..BN {
            let mut sum = 0f32;
            for step in 0..kpp / KP_STEP {
                let (mut even, mut odd) = (0f32, 0f32);
                for p in step * KP_STEP..(step + 1) * KP_STEP {
                    let (x, y) = (a[r * kpp + p], b[p * BN + j]);
                    even += lo(x) * lo(y);
                    odd += hi(x) * hi(y);
                }
                sum += even + odd;
            }
            out[r * BN + j] = sum;
        }
    }
}

/// `c = a @ b` (`m x k @ k x n`, `c` row-major) on AMX tiles (`hardware`)
/// or with each block emulated by [`block_emulated`] (tests, on any CPU):
/// float32 sums rounded once to bfloat16, blocks spread over the kernel
/// team. The caller ([`super::gemm`]) has checked the operands' extents and
/// that the product is not empty.
///
/// # Panics
/// If `hardware` is asked for and [`available`] is false.
#[allow(clippy::too_many_arguments)] // BLAS-style signature
pub(super) fn gemm(
    hardware: bool,
    m: usize,
    k: usize,
    n: usize,
    a: &[bf16],
    la: Mat,
    b: &[bf16],
    lb: Mat,
    c: &mut [bf16],
) {
    assert!(
        !hardware || available(),
        "AMX bf16 gemm on a CPU without AMX"
    );
    // Depth pairs, padded to whole tile steps with zero pairs (each adds
    // +0.0 to a sum, which changes nothing but the sign of an all-zero sum).
    let kpp = k.div_ceil(2).div_ceil(KP_STEP).max(1) * KP_STEP;
    let (row_blocks, panels) = (m.div_ceil(BM), n.div_ceil(BN));
    let parallel = m * n * k >= PARALLEL_MIN_MACS;
    let run = |count: usize, f: &(dyn Fn(usize) + Sync)| run_tasks(parallel, count, f);

    // a's rows are lanes of its row blocks (`[row][pair]`, lane stride
    // kpp); b's columns are lanes of its panels (`[pair][column]`, lane
    // stride 1, pair stride BN).
    let mut apack = vec![0u32; row_blocks * BM * kpp];
    let mut bpack = vec![0u32; panels * kpp * BN];
    {
        let ap = SendPtr(apack.as_mut_ptr());
        run(row_blocks, &|t| {
            // SAFETY: each task writes its own row block of `apack`.
            let out =
                unsafe { std::slice::from_raw_parts_mut(raw(ap).add(t * BM * kpp), BM * kpp) };
            let lanes = Lanes {
                first: t * BM,
                count: BM.min(m - t * BM),
                step: la.rs,
                depth_step: la.cs,
            };
            pack_pairs(out, (kpp, 1), lanes, k, a);
        });
        let bp = SendPtr(bpack.as_mut_ptr());
        run(panels, &|q| {
            // SAFETY: each task writes its own panel of `bpack`.
            let out =
                unsafe { std::slice::from_raw_parts_mut(raw(bp).add(q * kpp * BN), kpp * BN) };
            let lanes = Lanes {
                first: q * BN,
                count: BN.min(n - q * BN),
                step: lb.cs,
                depth_step: lb.rs,
            };
            pack_pairs(out, (1, BN), lanes, k, b);
        });
    }

    // Tasks: one column panel against up to ROW_BLOCKS_PER_TASK row
    // blocks (the panel is read from cache by each block in turn).
    let groups = row_blocks.div_ceil(ROW_BLOCKS_PER_TASK);
    let cp = SendPtr(c.as_mut_ptr());
    let (apack, bpack) = (&apack, &bpack);
    run(panels * groups, &|task| {
        let (q, g) = (task % panels, task / panels);
        let (j0, cols) = (q * BN, BN.min(n - q * BN));
        let mut sums = [0f32; BM * BN];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `available()` was asserted where `hardware` is set.
        let _tiles = hardware.then(|| unsafe { Tiles::configure() });
        let first = g * ROW_BLOCKS_PER_TASK;
        for t in first..(first + ROW_BLOCKS_PER_TASK).min(row_blocks) {
            let (ablock, bpanel) = (
                &apack[t * BM * kpp..(t + 1) * BM * kpp],
                &bpack[q * kpp * BN..(q + 1) * kpp * BN],
            );
            if hardware {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: tiles are configured; the packed block and panel
                // hold `BM * kpp` and `kpp * BN` pairs; `sums` holds BM x BN.
                unsafe {
                    block(kpp, ablock.as_ptr(), bpanel.as_ptr(), sums.as_mut_ptr())
                };
            } else {
                block_emulated(kpp, ablock, bpanel, &mut sums);
            }
            let (i0, rows) = (t * BM, BM.min(m - t * BM));
            for r in 0..rows {
                for (j, &s) in sums[r * BN..r * BN + cols].iter().enumerate() {
                    // SAFETY: `(i0 + r, j0 + j)` is inside `c`, and only this
                    // task writes this block.
                    unsafe { *raw(cp).add((i0 + r) * n + j0 + j) = bf16::from_f32(s) };
                }
            }
        }
    });
}
