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
