//! Allocation sites as traces carry them: in the attributes field of a
//! HATF or tpack allocation (a kind byte, then the value as a varint), or
//! as a plain number in a field with the site role (pointer traces and
//! other descriptions), whose meaning the trace's process notes give.

use serde::{Deserialize, Serialize};

/// The site is a return address (the allocation's caller).
pub const SITE_RETURN_ADDRESS: u8 = 1;
/// The site is the id of a call stack the trace lists.
pub const SITE_STACK: u8 = 2;
/// A plain number from a site field: a stack id when the trace says it
/// recorded stacks, else a return address.
pub const SITE_PLAIN: u8 = 3;

/// Where an allocation was made: a kind (0 when the trace has none) and
/// its value.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Site {
    pub kind: u8,
    pub value: u64,
}

impl Site {
    /// The site with a plain number read as the trace's process notes say
    /// (`stacks`: the recording kept call stacks).
    pub fn resolved(self, stacks: bool) -> Site {
        match self.kind {
            SITE_PLAIN if stacks => Site {
                kind: SITE_STACK,
                ..self
            },
            SITE_PLAIN => Site {
                kind: SITE_RETURN_ADDRESS,
                ..self
            },
            _ => self,
        }
    }
}

/// Encodes a site for the attributes field (replacing what `out` held).
pub fn encode_site(kind: u8, v: u64, out: &mut Vec<u8>) {
    // Built on the stack and copied once (a push per byte checked the
    // vector's capacity each time).
    let mut b = [0u8; 11];
    b[0] = kind;
    let (mut v, mut n) = (v, 1);
    while v >= 0x80 {
        b[n] = v as u8 | 0x80;
        v >>= 7;
        n += 1;
    }
    b[n] = v as u8;
    out.clear();
    out.extend_from_slice(&b[..=n]);
}

/// Decodes a site from an attributes field (tramp-core's varint codec).
pub fn decode_site(attrs: &[u8]) -> Option<Site> {
    let (&kind, _) = attrs.split_first()?;
    let mut pos = 1;
    let value = crate::varint::get(attrs, &mut pos).ok()?;
    Some(Site { kind, value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_round_trip_through_the_attributes_field() {
        let mut v = Vec::new();
        for x in [0u64, 1, 127, 128, 1 << 40, u64::MAX] {
            encode_site(SITE_RETURN_ADDRESS, x, &mut v);
            assert_eq!(
                decode_site(&v),
                Some(Site {
                    kind: SITE_RETURN_ADDRESS,
                    value: x
                })
            );
        }
        assert_eq!(decode_site(&[1, 0x80]), None, "a cut varint");
        assert_eq!(decode_site(&[]), None);
    }

    #[test]
    fn plain_sites_are_read_as_the_process_notes_say() {
        let plain = Site {
            kind: SITE_PLAIN,
            value: 9,
        };
        assert_eq!(plain.resolved(true).kind, SITE_STACK);
        assert_eq!(plain.resolved(false).kind, SITE_RETURN_ADDRESS);
        let attr = Site {
            kind: SITE_STACK,
            value: 9,
        };
        assert_eq!(attr.resolved(false), attr);
    }
}
