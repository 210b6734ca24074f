//! An open-addressing index from byte strings to rows, built for batch
//! lookups in large vocabularies.
//!
//! Each slot (32 bytes, two per cache line) holds the key's hash, its row,
//! its length and, for keys of up to 16 bytes (most vocabulary words), the
//! bytes themselves, so a lookup usually touches one cache line of the
//! table; longer keys live in an arena. Batch lookups hash a block of keys
//! first and prefetch their slots, so the cache misses of a block overlap
//! instead of following one another (a `HashMap<Box<[u8]>, u32>` costs two
//! dependent misses per key: the bucket, then the boxed key).
//!
//! Linear probing; removed keys leave tombstones, dropped when the table
//! grows or is rebuilt.

use std::hash::BuildHasher;

use ferroflow_tensor::prefetch::prefetch_range;
use rustc_hash::FxBuildHasher;

const INLINE: usize = 16;
/// `row` of a removed key's slot.
const TOMBSTONE: u32 = u32::MAX;
/// Keys hashed and prefetched ahead of their probes.
const BLOCK: usize = 16;

#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Slot {
    /// The key's hash with the low bit set; 0 marks an empty slot.
    hash: u64,
    row: u32,
    len: u32,
    /// The key, or (longer keys) its offset in the arena.
    inline: [u8; INLINE],
}

/// See the module docs.
pub(crate) struct StrIndex {
    slots: Vec<Slot>,
    mask: usize,
    /// Live keys.
    len: usize,
    /// Live keys and tombstones.
    used: usize,
    arena: Vec<u8>,
}

impl Default for StrIndex {
    fn default() -> Self {
        StrIndex::with_capacity(0)
    }
}

fn hash_of(key: &[u8]) -> u64 {
    FxBuildHasher.hash_one(key) | 1
}

impl StrIndex {
    /// An empty index with room for `n` keys before it grows.
    pub(crate) fn with_capacity(n: usize) -> StrIndex {
        let cap = (n * 4 / 3 + 1).next_power_of_two().max(16);
        StrIndex {
            slots: vec![Slot::default(); cap],
            mask: cap - 1,
            len: 0,
            used: 0,
            arena: Vec::new(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn clear(&mut self) {
        *self = StrIndex::default();
    }

    /// Makes room for `more` keys.
    pub(crate) fn reserve(&mut self, more: usize) {
        if (self.used + more) * 4 > self.slots.len() * 3 {
            self.rebuild(self.len + more);
        }
    }

    fn key_of<'a>(&'a self, s: &'a Slot) -> &'a [u8] {
        let len = s.len as usize;
        if len <= INLINE {
            &s.inline[..len]
        } else {
            let at = u64::from_le_bytes(s.inline[..8].try_into().expect("8 bytes")) as usize;
            &self.arena[at..at + len]
        }
    }

    /// The slot holding `key` (hash `h`), or the empty slot ending its probe.
    fn probe(&self, key: &[u8], h: u64) -> (usize, bool) {
        let mut i = (h as usize) & self.mask;
        loop {
            let s = &self.slots[i];
            if s.hash == 0 {
                return (i, false);
            }
            if s.hash == h
                && s.row != TOMBSTONE
                && s.len as usize == key.len()
                && self.key_of(s) == key
            {
                return (i, true);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The row of `key`.
    #[cfg(test)]
    pub(crate) fn get(&self, key: &[u8]) -> Option<u32> {
        match self.probe(key, hash_of(key)) {
            (i, true) => Some(self.slots[i].row),
            _ => None,
        }
    }

    /// Writes the row of each of `keys` into `rows` (`u32::MAX` when
    /// absent), prefetching a block of slots ahead of its probes.
    pub(crate) fn get_many(&self, keys: &[Vec<u8>], rows: &mut [u32]) {
        let mut hashes = [0u64; BLOCK];
        for (kb, rb) in keys.chunks(BLOCK).zip(rows.chunks_mut(BLOCK)) {
            for (h, k) in hashes.iter_mut().zip(kb) {
                *h = hash_of(k);
                let s = &self.slots[(*h as usize) & self.mask];
                prefetch_range(s as *const Slot, std::mem::size_of::<Slot>());
            }
            for ((r, k), &h) in rb.iter_mut().zip(kb).zip(&hashes) {
                *r = match self.probe(k, h) {
                    (i, true) => self.slots[i].row,
                    _ => u32::MAX,
                };
            }
        }
    }

    /// The row of `key`, inserting it with row `alloc()` when absent; the
    /// flag says whether it was there.
    pub(crate) fn get_or_insert<E>(
        &mut self,
        key: &[u8],
        alloc: impl FnOnce() -> Result<u32, E>,
    ) -> Result<(u32, bool), E> {
        self.reserve(1);
        let h = hash_of(key);
        let (i, found) = self.probe(key, h);
        if found {
            return Ok((self.slots[i].row, true));
        }
        let row = alloc()?;
        let mut s = Slot {
            hash: h,
            row,
            len: key.len() as u32,
            inline: [0; INLINE],
        };
        if key.len() <= INLINE {
            s.inline[..key.len()].copy_from_slice(key);
        } else {
            s.inline[..8].copy_from_slice(&(self.arena.len() as u64).to_le_bytes());
            self.arena.extend_from_slice(key);
        }
        self.slots[i] = s;
        self.len += 1;
        self.used += 1;
        Ok((row, false))
    }

    /// Removes `key`, giving back its row.
    pub(crate) fn remove(&mut self, key: &[u8]) -> Option<u32> {
        match self.probe(key, hash_of(key)) {
            (i, true) => {
                let row = self.slots[i].row;
                self.slots[i].row = TOMBSTONE;
                self.len -= 1;
                Some(row)
            }
            _ => None,
        }
    }

    /// Every live key with its row.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&[u8], u32)> + '_ {
        self.slots
            .iter()
            .filter(|s| s.hash != 0 && s.row != TOMBSTONE)
            .map(|s| (self.key_of(s), s.row))
    }

    /// Re-inserts the live keys into a table sized for `n` keys.
    fn rebuild(&mut self, n: usize) {
        let mut fresh = StrIndex::with_capacity(n.max(self.len));
        for (k, r) in self.entries() {
            let _ = fresh.get_or_insert::<()>(k, || Ok(r));
        }
        *self = fresh;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn behaves_like_a_hash_map_through_growth_and_removals() {
        let mut idx = StrIndex::default();
        let mut model: HashMap<Vec<u8>, u32> = HashMap::new();
        let key = |i: u32| -> Vec<u8> {
            // Short (inline) and long (arena) keys, and the empty key.
            match i % 3 {
                0 => format!("k{i}").into_bytes(),
                1 => format!("a rather long vocabulary entry number {i}").into_bytes(),
                _ => vec![b'x'; (i % 40) as usize],
            }
        };
        for i in 0..5000u32 {
            let k = key(i);
            let want = model.get(&k).copied();
            let (r, found) = idx.get_or_insert::<()>(&k, || Ok(i)).unwrap();
            assert_eq!(found, want.is_some());
            model.entry(k).or_insert(r);
            if i % 7 == 0 {
                let k = key(i / 2);
                assert_eq!(idx.remove(&k), model.remove(&k));
            }
        }
        assert_eq!(idx.len(), model.len());
        let probe: Vec<Vec<u8>> = (0..6000).map(key).collect();
        let mut rows = vec![0; probe.len()];
        idx.get_many(&probe, &mut rows);
        for (k, r) in probe.iter().zip(&rows) {
            assert_eq!(model.get(k).copied().unwrap_or(u32::MAX), *r);
            assert_eq!(idx.get(k), model.get(k).copied());
        }
        let mut got: Vec<(Vec<u8>, u32)> = idx.entries().map(|(k, r)| (k.to_vec(), r)).collect();
        let mut want: Vec<(Vec<u8>, u32)> = model.into_iter().collect();
        got.sort();
        want.sort();
        assert_eq!(got, want);
    }
}
