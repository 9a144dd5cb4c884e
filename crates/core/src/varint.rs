//! LEB128 varints and zigzag: the one codec tpack's streams, PTF's binary
//! form and recordings' site attributes share (readers with hand-tuned
//! fast paths for their own buffers fall back to [`get`]).

/// Why a varint could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarintError {
    /// The bytes end inside it.
    End,
    /// It needs more than 64 bits (or 10 bytes).
    TooLong,
}

/// Appends `v` as an unsigned LEB128 varint.
#[inline]
pub fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The varint at `*pos` of `b`, moving `pos` past it.
#[inline]
pub fn get(b: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
    let mut v = 0u64;
    let mut shift = 0u32;
    loop {
        let byte = *b.get(*pos).ok_or(VarintError::End)?;
        *pos += 1;
        if shift == 63 && byte > 1 {
            return Err(VarintError::TooLong);
        }
        v |= ((byte & 0x7f) as u64) << shift;
        if byte < 0x80 {
            return Ok(v);
        }
        shift += 7;
        if shift > 63 {
            return Err(VarintError::TooLong);
        }
    }
}

/// A signed value as an unsigned one, small magnitudes small.
#[inline]
pub fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

/// The signed value of a zigzag-coded one.
#[inline]
pub fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_value_round_trips(v in any::<u64>(), d in any::<i64>()) {
            let mut out = Vec::new();
            put(&mut out, v);
            let mut pos = 0;
            prop_assert_eq!(get(&out, &mut pos), Ok(v));
            prop_assert_eq!(pos, out.len());
            prop_assert_eq!(unzigzag(zigzag(d)), d);
        }
    }

    #[test]
    fn cut_and_overlong_varints_are_told_apart() {
        // By hand: 300 is 0xac 0x02; -1 zigzags to 1, 1 to 2.
        let mut out = Vec::new();
        put(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        assert_eq!((zigzag(-1), zigzag(1)), (1, 2));
        assert_eq!(get(&[0x80], &mut 0), Err(VarintError::End));
        assert_eq!(get(&[0xff; 10], &mut 0), Err(VarintError::TooLong));
        // The 10th byte may hold only the 64th bit.
        let mut max = Vec::new();
        put(&mut max, u64::MAX);
        assert_eq!(max.len(), 10);
        max[9] = 2;
        assert_eq!(get(&max, &mut 0), Err(VarintError::TooLong));
    }
}
