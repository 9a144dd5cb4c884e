//! The HATF writer: absolute records in, HATF bytes out. It drives an
//! [`Encoder`] under an encoding [`Policy`], holding back a bounded window
//! of records when the policy looks ahead (addresses) or tries rules on
//! windows (`best`), and writes the bytes out in chunks.

use std::collections::VecDeque;
use std::io::Write;

use tramp_core::Error;

use crate::encoder::Encoder;
use crate::item::{Event, Item, OwnedItem};
use crate::policy::address::Look;
use crate::policy::best;
pub use crate::policy::{Policy, Rules};
use crate::spec::Meta;
use crate::state::State;

pub use crate::policy::narrow::CONTRACT_AFTER;
pub use crate::policy::runs::SWITCH_COST;

const OUT_CHUNK: usize = 1 << 18;

/// Writes HATF 1.0 records to any `Write`.
pub struct Writer<W: Write> {
    out: W,
    enc: Encoder,
    policy: Policy,
    /// Records held back for look-ahead (empty when the policy has none).
    window: VecDeque<OwnedItem>,
    lookahead: usize,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W, policy: Policy) -> Self {
        let mut enc = Encoder::new(policy);
        enc.buf.reserve(OUT_CHUNK + 1024);
        let lookahead = policy.lookahead();
        Writer {
            out,
            enc,
            policy,
            window: VecDeque::with_capacity(lookahead + 1),
            lookahead,
        }
    }

    /// The encoding state in effect (records still held back for look-ahead
    /// are not encoded yet).
    pub fn state(&self) -> &State {
        self.enc.state()
    }

    /// Records written so far, metadata included.
    pub fn records_written(&self) -> u64 {
        self.enc.records_written()
    }

    #[inline]
    fn spill(&mut self) -> Result<(), Error> {
        if self.enc.buf.len() >= OUT_CHUNK {
            self.out.write_all(&self.enc.buf)?;
            self.enc.buf.clear();
        }
        Ok(())
    }

    /// Tests: every record through the encoder's general path.
    #[cfg(test)]
    pub(crate) fn general_path_only(&mut self, on: bool) {
        self.enc.general_only = on;
    }

    /// Writes any item: events and comments always; metadata only under the
    /// explicit policy (the others place their own).
    pub fn write_item(&mut self, item: &Item<'_>) -> Result<(), Error> {
        if self.lookahead == 0 {
            let empty = VecDeque::new();
            self.enc.write_item(item, Look::none(&empty))?;
            return self.spill();
        }
        self.window.push_back(item.to_owned());
        if self.window.len() > self.lookahead {
            self.advance()?;
        }
        Ok(())
    }

    /// Encodes records from the front of the window: one, or under `best`
    /// a whole trial window.
    fn advance(&mut self) -> Result<(), Error> {
        if self.policy == Policy::Best {
            self.out.write_all(&self.enc.buf)?;
            self.enc.buf.clear();
            let n = best::WINDOW.min(self.window.len());
            self.enc = best::encode_window(&self.enc, &self.window, n)?;
            self.window.drain(..n);
        } else {
            let item = self.window.pop_front().expect("window is not empty");
            self.enc.write_item(
                &item.as_item(),
                Look {
                    items: &self.window,
                    from: 0,
                },
            )?;
        }
        self.spill()
    }

    /// Writes a data record with absolute values.
    pub fn write_event(&mut self, ev: &Event<'_>) -> Result<(), Error> {
        self.write_item(&Item::Event(*ev))
    }

    /// Writes a comment record.
    pub fn write_comment(&mut self, text: &[u8]) -> Result<(), Error> {
        self.write_item(&Item::Comment(text))
    }

    /// Writes a metadata record and applies it, whatever the policy (a
    /// policy's rules then work from the encoding it sets). Records held
    /// back for look-ahead are written first.
    pub fn write_meta(&mut self, m: Meta) -> Result<(), Error> {
        self.drain()?;
        self.enc.write_meta(m)?;
        self.spill()
    }

    fn drain(&mut self) -> Result<(), Error> {
        while !self.window.is_empty() {
            self.advance()?;
        }
        Ok(())
    }

    /// Flushes everything and returns the underlying writer.
    pub fn into_inner(mut self) -> Result<W, Error> {
        self.drain()?;
        self.out.write_all(&self.enc.buf)?;
        self.enc.buf.clear();
        self.out.flush()?;
        Ok(self.out)
    }
}
