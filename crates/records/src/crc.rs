//! CRC-32C (Castagnoli) and the "masked" form TensorFlow stores in TFRecord
//! frames and checkpoint files.
//!
//! A CRC stored next to the data it covers is masked so that computing the
//! CRC of a buffer that itself contains CRCs stays well distributed: rotate
//! right by 15 bits, then add `0xA282EAD8` (mod 2^32).

const MASK_DELTA: u32 = 0xa282_ead8;

/// The unmasked CRC-32C of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// Masks a CRC for storage.
pub fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverts [`mask`].
pub fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

/// The masked CRC-32C of `data`, as stored in a TFRecord frame.
pub fn masked_crc32c(data: &[u8]) -> u32 {
    mask(crc32c(data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // RFC 3720 B.4 test vector: 32 bytes of zeros.
        assert_eq!(crc32c(&[0u8; 32]), 0x8a91_36aa);
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
    }

    #[test]
    fn mask_round_trips() {
        for crc in [0u32, 1, 0xdead_beef, u32::MAX, 0x8000_0000] {
            assert_eq!(unmask(mask(crc)), crc);
        }
        assert_ne!(mask(0x1234_5678), 0x1234_5678);
    }
}
