//! FarmHash's 64-bit fingerprint (`farmhash::Fingerprint64`, the `farmhashna`
//! variant), which TensorFlow uses to hash strings in `SparseCross` (and
//! `to_hash_bucket_fast`). Written from the published algorithm; the golden
//! tests compare hashed crosses of strings of every length class with
//! TensorFlow's.

const K0: u64 = 0xc3a5_c85c_97cb_3127;
const K1: u64 = 0xb492_b66f_be98_f273;
const K2: u64 = 0x9ae1_6a3b_2f90_404f;

fn fetch64(s: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"))
}

fn fetch32(s: &[u8], i: usize) -> u64 {
    u64::from(u32::from_le_bytes(s[i..i + 4].try_into().expect("4 bytes")))
}

fn rotate(v: u64, shift: u32) -> u64 {
    v.rotate_right(shift)
}

fn shift_mix(v: u64) -> u64 {
    v ^ (v >> 47)
}

fn hash_len16(u: u64, v: u64, mul: u64) -> u64 {
    let mut a = (u ^ v).wrapping_mul(mul);
    a ^= a >> 47;
    let mut b = (v ^ a).wrapping_mul(mul);
    b ^= b >> 47;
    b.wrapping_mul(mul)
}

fn hash_len0to16(s: &[u8]) -> u64 {
    let len = s.len();
    if len >= 8 {
        let mul = K2.wrapping_add(len as u64 * 2);
        let a = fetch64(s, 0).wrapping_add(K2);
        let b = fetch64(s, len - 8);
        let c = rotate(b, 37).wrapping_mul(mul).wrapping_add(a);
        let d = rotate(a, 25).wrapping_add(b).wrapping_mul(mul);
        return hash_len16(c, d, mul);
    }
    if len >= 4 {
        let mul = K2.wrapping_add(len as u64 * 2);
        let a = fetch32(s, 0);
        return hash_len16((len as u64).wrapping_add(a << 3), fetch32(s, len - 4), mul);
    }
    if len > 0 {
        let (a, b, c) = (s[0], s[len >> 1], s[len - 1]);
        let y = u32::from(a).wrapping_add(u32::from(b) << 8);
        let z = (len as u32).wrapping_add(u32::from(c) << 2);
        return shift_mix(u64::from(y).wrapping_mul(K2) ^ u64::from(z).wrapping_mul(K0))
            .wrapping_mul(K2);
    }
    K2
}

fn hash_len17to32(s: &[u8]) -> u64 {
    let len = s.len();
    let mul = K2.wrapping_add(len as u64 * 2);
    let a = fetch64(s, 0).wrapping_mul(K1);
    let b = fetch64(s, 8);
    let c = fetch64(s, len - 8).wrapping_mul(mul);
    let d = fetch64(s, len - 16).wrapping_mul(K2);
    hash_len16(
        rotate(a.wrapping_add(b), 43)
            .wrapping_add(rotate(c, 30))
            .wrapping_add(d),
        a.wrapping_add(rotate(b.wrapping_add(K2), 18))
            .wrapping_add(c),
        mul,
    )
}

fn hash_len33to64(s: &[u8]) -> u64 {
    let len = s.len();
    let mul = K2.wrapping_add(len as u64 * 2);
    let a = fetch64(s, 0).wrapping_mul(K2);
    let b = fetch64(s, 8);
    let c = fetch64(s, len - 8).wrapping_mul(mul);
    let d = fetch64(s, len - 16).wrapping_mul(K2);
    let y = rotate(a.wrapping_add(b), 43)
        .wrapping_add(rotate(c, 30))
        .wrapping_add(d);
    let z = hash_len16(
        y,
        a.wrapping_add(rotate(b.wrapping_add(K2), 18))
            .wrapping_add(c),
        mul,
    );
    let e = fetch64(s, 16).wrapping_mul(mul);
    let f = fetch64(s, 24);
    let g = y.wrapping_add(fetch64(s, len - 32)).wrapping_mul(mul);
    let h = z.wrapping_add(fetch64(s, len - 24)).wrapping_mul(mul);
    hash_len16(
        rotate(e.wrapping_add(f), 43)
            .wrapping_add(rotate(g, 30))
            .wrapping_add(h),
        e.wrapping_add(rotate(f.wrapping_add(a), 18))
            .wrapping_add(g),
        mul,
    )
}

fn weak_hash_len32_with_seeds(s: &[u8], i: usize, mut a: u64, mut b: u64) -> (u64, u64) {
    let (w, x, y, z) = (
        fetch64(s, i),
        fetch64(s, i + 8),
        fetch64(s, i + 16),
        fetch64(s, i + 24),
    );
    a = a.wrapping_add(w);
    b = rotate(b.wrapping_add(a).wrapping_add(z), 21);
    let c = a;
    a = a.wrapping_add(x).wrapping_add(y);
    b = b.wrapping_add(rotate(a, 44));
    (a.wrapping_add(z), b.wrapping_add(c))
}

/// `farmhash::Fingerprint64(s)`.
pub(crate) fn fingerprint64(s: &[u8]) -> u64 {
    let len = s.len();
    if len <= 16 {
        return hash_len0to16(s);
    }
    if len <= 32 {
        return hash_len17to32(s);
    }
    if len <= 64 {
        return hash_len33to64(s);
    }
    const SEED: u64 = 81;
    let mut x = SEED;
    let mut y = SEED.wrapping_mul(K1).wrapping_add(113);
    let mut z = shift_mix(y.wrapping_mul(K2).wrapping_add(113)).wrapping_mul(K2);
    let mut v = (0u64, 0u64);
    let mut w = (0u64, 0u64);
    x = x.wrapping_mul(K2).wrapping_add(fetch64(s, 0));
    // Whole 64-byte blocks, leaving 1 to 64 bytes; then the last 64 bytes again.
    let end = ((len - 1) / 64) * 64;
    let last64 = len - 64;
    let mut p = 0;
    while p != end {
        x = rotate(
            x.wrapping_add(y)
                .wrapping_add(v.0)
                .wrapping_add(fetch64(s, p + 8)),
            37,
        )
        .wrapping_mul(K1);
        y = rotate(y.wrapping_add(v.1).wrapping_add(fetch64(s, p + 48)), 42).wrapping_mul(K1);
        x ^= w.1;
        y = y.wrapping_add(v.0).wrapping_add(fetch64(s, p + 40));
        z = rotate(z.wrapping_add(w.0), 33).wrapping_mul(K1);
        v = weak_hash_len32_with_seeds(s, p, v.1.wrapping_mul(K1), x.wrapping_add(w.0));
        w = weak_hash_len32_with_seeds(
            s,
            p + 32,
            z.wrapping_add(w.1),
            y.wrapping_add(fetch64(s, p + 16)),
        );
        std::mem::swap(&mut z, &mut x);
        p += 64;
    }
    let mul = K1.wrapping_add((z & 0xff) << 1);
    let p = last64;
    w.0 = w.0.wrapping_add(((len - 1) & 63) as u64);
    v.0 = v.0.wrapping_add(w.0);
    w.0 = w.0.wrapping_add(v.0);
    x = rotate(
        x.wrapping_add(y)
            .wrapping_add(v.0)
            .wrapping_add(fetch64(s, p + 8)),
        37,
    )
    .wrapping_mul(mul);
    y = rotate(y.wrapping_add(v.1).wrapping_add(fetch64(s, p + 48)), 42).wrapping_mul(mul);
    x ^= w.1.wrapping_mul(9);
    y = y
        .wrapping_add(v.0.wrapping_mul(9))
        .wrapping_add(fetch64(s, p + 40));
    z = rotate(z.wrapping_add(w.0), 33).wrapping_mul(mul);
    v = weak_hash_len32_with_seeds(s, p, v.1.wrapping_mul(mul), x.wrapping_add(w.0));
    w = weak_hash_len32_with_seeds(
        s,
        p + 32,
        z.wrapping_add(w.1),
        y.wrapping_add(fetch64(s, p + 16)),
    );
    std::mem::swap(&mut z, &mut x);
    hash_len16(
        hash_len16(v.0, w.0, mul)
            .wrapping_add(shift_mix(y).wrapping_mul(K0))
            .wrapping_add(z),
        hash_len16(v.1, w.1, mul).wrapping_add(x),
        mul,
    )
}

/// The multiplier of CityHash's 128-to-64-bit mix (`Hash128to64`).
const KMUL: u64 = 0x9ddf_ea08_eb38_2d69;

fn hash128_to_64(low: u64, high: u64) -> u64 {
    hash_len16(low, high, KMUL)
}

/// CityHash's `CityMurmur`: the 128-bit hash of inputs shorter than 128 bytes.
fn city_murmur(s: &[u8], seed: (u64, u64)) -> (u64, u64) {
    let len = s.len();
    let (mut a, mut b) = seed;
    let mut c;
    let mut d;
    if len <= 16 {
        a = shift_mix(a.wrapping_mul(K1)).wrapping_mul(K1);
        c = b.wrapping_mul(K1).wrapping_add(hash_len0to16(s));
        d = shift_mix(a.wrapping_add(if len >= 8 { fetch64(s, 0) } else { c }));
    } else {
        c = hash128_to_64(fetch64(s, len - 8).wrapping_add(K1), a);
        d = hash128_to_64(
            b.wrapping_add(len as u64),
            c.wrapping_add(fetch64(s, len - 16)),
        );
        a = a.wrapping_add(d);
        // 16-byte steps while more than 16 bytes remain unread (at least one).
        let mut p = 0;
        let mut left = len as i64 - 16;
        loop {
            a ^= shift_mix(fetch64(s, p).wrapping_mul(K1)).wrapping_mul(K1);
            a = a.wrapping_mul(K1);
            b ^= a;
            c ^= shift_mix(fetch64(s, p + 8).wrapping_mul(K1)).wrapping_mul(K1);
            c = c.wrapping_mul(K1);
            d ^= c;
            p += 16;
            left -= 16;
            if left <= 0 {
                break;
            }
        }
    }
    let a = hash128_to_64(a, c);
    let b = hash128_to_64(d, b);
    (a ^ b, hash128_to_64(b, a))
}

/// CityHash v1.1's `CityHash128WithSeed`; returns (low, high).
fn city_hash128_with_seed(s: &[u8], seed: (u64, u64)) -> (u64, u64) {
    if s.len() < 128 {
        return city_murmur(s, seed);
    }
    let (mut x, mut y) = seed;
    let mut z = (s.len() as u64).wrapping_mul(K1);
    let mut v = (0u64, 0u64);
    let mut w = (0u64, 0u64);
    v.0 = rotate(y ^ K1, 49)
        .wrapping_mul(K1)
        .wrapping_add(fetch64(s, 0));
    v.1 = rotate(v.0, 42).wrapping_mul(K1).wrapping_add(fetch64(s, 8));
    w.0 = rotate(y.wrapping_add(z), 35)
        .wrapping_mul(K1)
        .wrapping_add(x);
    w.1 = rotate(x.wrapping_add(fetch64(s, 88)), 53).wrapping_mul(K1);
    let mut p = 0;
    let mut len = s.len();
    // The 64-byte round, twice per 128-byte chunk.
    let round = |p: usize,
                 x: &mut u64,
                 y: &mut u64,
                 z: &mut u64,
                 v: &mut (u64, u64),
                 w: &mut (u64, u64)| {
        *x = rotate(
            x.wrapping_add(*y)
                .wrapping_add(v.0)
                .wrapping_add(fetch64(s, p + 8)),
            37,
        )
        .wrapping_mul(K1);
        *y = rotate(y.wrapping_add(v.1).wrapping_add(fetch64(s, p + 48)), 42).wrapping_mul(K1);
        *x ^= w.1;
        *y = y.wrapping_add(v.0).wrapping_add(fetch64(s, p + 40));
        *z = rotate(z.wrapping_add(w.0), 33).wrapping_mul(K1);
        *v = weak_hash_len32_with_seeds(s, p, v.1.wrapping_mul(K1), x.wrapping_add(w.0));
        *w = weak_hash_len32_with_seeds(
            s,
            p + 32,
            z.wrapping_add(w.1),
            y.wrapping_add(fetch64(s, p + 16)),
        );
        std::mem::swap(z, x);
    };
    loop {
        round(p, &mut x, &mut y, &mut z, &mut v, &mut w);
        round(p + 64, &mut x, &mut y, &mut z, &mut v, &mut w);
        p += 128;
        len -= 128;
        if len < 128 {
            break;
        }
    }
    x = x.wrapping_add(rotate(v.0.wrapping_add(z), 49).wrapping_mul(K0));
    y = y.wrapping_mul(K0).wrapping_add(rotate(w.1, 37));
    z = z.wrapping_mul(K0).wrapping_add(rotate(w.0, 27));
    w.0 = w.0.wrapping_mul(9);
    v.0 = v.0.wrapping_mul(K0);
    // Up to four 32-byte chunks from the end of what is left.
    let mut tail_done = 0;
    while tail_done < len {
        tail_done += 32;
        let at = p + len - tail_done;
        y = rotate(x.wrapping_add(y), 42)
            .wrapping_mul(K0)
            .wrapping_add(v.1);
        w.0 = w.0.wrapping_add(fetch64(s, at + 16));
        x = x.wrapping_mul(K0).wrapping_add(w.0);
        z = z.wrapping_add(w.1).wrapping_add(fetch64(s, at));
        w.1 = w.1.wrapping_add(v.0);
        v = weak_hash_len32_with_seeds(s, at, v.0.wrapping_add(z), v.1);
        v.0 = v.0.wrapping_mul(K0);
    }
    x = hash128_to_64(x, v.0);
    y = hash128_to_64(y.wrapping_add(z), w.0);
    (
        hash128_to_64(x.wrapping_add(v.1), w.1).wrapping_add(y),
        hash128_to_64(x.wrapping_add(w.1), y.wrapping_add(v.1)),
    )
}

/// `farmhash::Fingerprint128(s)` (CityHash128 v1.1) as (low, high): the
/// fingerprint TensorFlow's `SdcaFprint` gives example ids.
pub(crate) fn fingerprint128(s: &[u8]) -> (u64, u64) {
    if s.len() >= 16 {
        city_hash128_with_seed(&s[16..], (fetch64(s, 0), fetch64(s, 8).wrapping_add(K0)))
    } else {
        city_hash128_with_seed(s, (K0, K1))
    }
}
