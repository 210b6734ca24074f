//! CRC-32C and TensorFlow's "masked" form, in which every checksum in a
//! bundle is stored (rotate right by 15 bits, add `0xA282EAD8`).

const MASK_DELTA: u32 = 0xa282_ead8;

/// Masks a CRC for storage.
pub fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverts [`mask`].
pub fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

/// The CRC of `A ‖ data` given `crc = CRC(A)`.
pub fn crc32c_extend(crc: u32, data: &[u8]) -> u32 {
    crc32c::crc32c_append(crc, data)
}

/// CRC-32C of a large buffer, computed in parallel 4 MiB pieces and
/// combined (the hardware instruction runs at ~10 GB/s per core, so only
/// tensors of tens of MB gain from it).
pub fn crc32c_par(data: &[u8]) -> u32 {
    const PIECE: usize = 4 << 20;
    if data.len() < 4 * PIECE || ferroflow_tensor::team::threads() < 2 {
        return crc32c::crc32c(data);
    }
    use rayon::prelude::*;
    let parts: Vec<(u32, usize)> = data
        .par_chunks(PIECE)
        .map(|c| (crc32c::crc32c(c), c.len()))
        .collect();
    parts.into_iter().fold(0u32, |acc, (crc, len)| {
        crc32c::crc32c_combine(acc, crc, len)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(mask(0), 0xa282_ead8);
        for c in [0u32, 1, 0xdead_beef, u32::MAX] {
            assert_eq!(unmask(mask(c)), c);
        }
        assert_eq!(
            crc32c_extend(crc32c::crc32c(b"1234"), b"56789"),
            0xe306_9283
        );
    }

    #[test]
    fn parallel_crc_matches() {
        let data: Vec<u8> = (0..(20usize << 20)).map(|i| (i * 31 % 251) as u8).collect();
        assert_eq!(crc32c_par(&data), crc32c::crc32c(&data));
    }
}
