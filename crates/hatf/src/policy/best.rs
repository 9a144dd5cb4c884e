//! `best`: the most effective combination of rules, chosen automatically.
//! The paper picked HATF (best) by hand per program; here every window of
//! [`WINDOW`] records is encoded under each candidate rule set (from the
//! encoding state the previous window left) and the smallest encoding is
//! kept, so the choice follows the trace as it changes. Memory: the window
//! and one encoder per candidate.

use std::collections::VecDeque;

use tramp_core::Error;

use super::address::Look;
use super::{AddressModes, Rules};
use crate::encoder::Encoder;
use crate::item::OwnedItem;

/// Records per trial window.
pub const WINDOW: usize = 4096;

/// The rule sets `best` tries: sizes by small-size alone or combined with
/// same-size; addresses raw, base-offset (1 and 2 bytes), stride, or both;
/// times as deltas and thread/heap runs always (each places nothing where
/// it does not pay).
pub fn candidates() -> impl Iterator<Item = Rules> {
    let bases = AddressModes::BASE1.with(AddressModes::BASE2);
    [false, true].into_iter().flat_map(move |same_size| {
        [
            AddressModes::NONE,
            bases,
            AddressModes::STRIDE,
            bases.with(AddressModes::STRIDE),
        ]
        .into_iter()
        .map(move |address| Rules {
            small_size: true,
            same_size,
            address,
            time_delta: true,
            thread_heap_runs: true,
        })
    })
}

/// Encodes the first `n` records of `window` under every candidate,
/// starting from `enc` (whose buffer is empty), and returns the encoder of
/// the smallest encoding: its buffer holds those records' bytes and its
/// state is the one the next window starts from.
pub fn encode_window(
    enc: &Encoder,
    window: &VecDeque<OwnedItem>,
    n: usize,
) -> Result<Encoder, Error> {
    let mut best: Option<Encoder> = None;
    for rules in candidates() {
        let mut e = enc.clone();
        e.set_rules(rules);
        for i in 0..n {
            e.write_item(
                &window[i].as_item(),
                Look {
                    items: window,
                    from: i + 1,
                },
            )?;
            if best.as_ref().is_some_and(|b| e.pending() >= b.pending()) {
                break;
            }
        }
        if best.as_ref().is_none_or(|b| e.pending() < b.pending()) {
            best = Some(e);
        }
    }
    Ok(best.expect("at least one candidate"))
}
