//! Selecting part of a trace: a time range (`--time 2s..5s`, `0%..50%`),
//! threads (`--thread`) and a process (`--pid`), as one [`Selection`], and
//! [`Selected`], the source that passes only the records it selects.
//!
//! Times count in nanoseconds (as `tramp record` writes them) from the
//! trace's first timed record. Comments always pass (a recording's module
//! and process notes are what its stacks are read with), except those of a
//! process `--pid` did not select and samples of a moment (`tramp:rss`)
//! outside a time range. A selection by time or thread reads as
//! a recording attached at its start: before the first record it passes a
//! `tramp:selected` note, and the heap view then counts a free of a block
//! allocated outside the selection as such, not as an anomaly
//! (docs/select.md).

use std::fmt;
use std::sync::Arc;

use crate::stream::Item;
use crate::{
    Error, Position, ReallocOutcome, Record, RecordBuf, RecordKind, Role, Schema, Slot, Source,
};

/// The note a selection by time or thread passes first (`tramp:selected`
/// and what was selected).
pub const NOTE: &str = "tramp:selected";

/// Whether a comment is the note of a selection.
pub fn is_selected_note(comment: &[u8]) -> bool {
    comment.starts_with(NOTE.as_bytes())
}

/// Whether a selection's note says it selects threads.
pub fn selects_threads(note: &[u8]) -> bool {
    note.split(|b| *b == b' ')
        .any(|w| w.starts_with(b"thread="))
}

/// The time of a note that is a sample of its moment (`tramp:rss time=T
/// …`): a selection by time passes such a note only inside its range, as
/// it does an event, so a reader may skip it with the events around it.
pub fn sample_time(comment: &[u8]) -> Option<u64> {
    number_after(comment, b"tramp:rss time=")
}

/// The decimal number a note's text holds right after `prefix`.
fn number_after(text: &[u8], prefix: &[u8]) -> Option<u64> {
    let rest = text.strip_prefix(prefix)?;
    let end = rest
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(rest.len());
    std::str::from_utf8(&rest[..end]).ok()?.parse().ok()
}

/// One end of a time range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// Nanoseconds after the trace's first timed record.
    Nanos(u64),
    /// A share of the trace's span, 0 to 100.
    Percent(f64),
}

/// A time range `A..B` (either end may be left open: `2s..`, `..5s`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeRange {
    pub start: Option<Bound>,
    pub end: Option<Bound>,
}

impl TimeRange {
    /// Parses `A..B`: each end a number with a unit (`ns`, `us`, `ms`,
    /// `s`, `min`), a percentage of the run (`50%`), or a bare number of
    /// seconds; `A` alone is `A..` (from A to the end).
    pub fn parse(text: &str) -> Result<TimeRange, Error> {
        let bad = |why: &str| Error::Usage(format!("--time `{text}`: {why}"));
        let (a, b) = match text.split_once("..") {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (text.trim(), ""),
        };
        let bound = |s: &str| -> Result<Option<Bound>, Error> {
            if s.is_empty() {
                return Ok(None);
            }
            if let Some(p) = s.strip_suffix('%') {
                let v: f64 = p
                    .trim()
                    .parse()
                    .map_err(|_| bad(&format!("`{s}` is not a percentage")))?;
                if !(0.0..=100.0).contains(&v) {
                    return Err(bad(&format!("`{s}` is not between 0% and 100%")));
                }
                return Ok(Some(Bound::Percent(v)));
            }
            let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
            let (num, unit) = (s[..split].trim(), &s[split..]);
            if num.is_empty() {
                return Err(bad(&format!("`{s}` is not a time (2s, 250ms, 1.5, 50%)")));
            }
            let scale: u128 = match unit {
                "" | "s" => 1_000_000_000,
                "ns" => 1,
                "us" | "µs" => 1_000,
                "ms" => 1_000_000,
                "min" => 60_000_000_000,
                _ => {
                    return Err(bad(&format!(
                        "unknown unit `{unit}` (ns, us, ms, s, min or %)"
                    )));
                }
            };
            let n = decimal_nanos(num, scale).ok_or_else(|| {
                bad(&format!(
                    "`{s}` is not a time from the start (2s, 250ms, 1.5, 50%)"
                ))
            })?;
            Ok(Some(Bound::Nanos(n)))
        };
        let r = TimeRange {
            start: bound(a)?,
            end: bound(b)?,
        };
        if r.start.is_none() && r.end.is_none() {
            return Err(bad("no time given (A..B, A.., ..B)"));
        }
        Ok(r)
    }
}

/// `num` (decimal digits, at most one point) times `scale` nanoseconds,
/// exactly (rounded to the nanosecond), or `None` if it is not such a
/// number or does not fit in 64 bits.
fn decimal_nanos(num: &str, scale: u128) -> Option<u64> {
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) || int.len() > 20 {
        return None;
    }
    let int: u128 = if int.is_empty() { 0 } else { int.parse().ok()? };
    // Digits past the 20th cannot move a nanosecond of any unit (a
    // minute is 6·10^10 ns).
    let frac = &frac[..frac.len().min(20)];
    let (f, den) = if frac.is_empty() {
        (0u128, 1u128)
    } else {
        (frac.parse().ok()?, 10u128.pow(frac.len() as u32))
    };
    // f < den ≤ 10^20 and scale ≤ 6·10^10: the product fits in 128 bits
    // (found by the fuzzer with 30 digits, which did not).
    let part = (f * scale + den / 2) / den;
    u64::try_from(int.checked_mul(scale)?.checked_add(part)?).ok()
}

impl TimeRange {
    /// Whether an end is a percentage (the trace's span is then needed).
    pub fn needs_span(&self) -> bool {
        matches!(self.start, Some(Bound::Percent(_))) || matches!(self.end, Some(Bound::Percent(_)))
    }

    /// The range in nanoseconds from the first timed record, `[lo, hi)`;
    /// `span` (the last timed record's time less the first's) resolves
    /// percentages. An end at 100% includes the last record.
    pub fn resolve(&self, span: Option<u64>) -> Result<(u64, u64), Error> {
        let at = |b: Bound, end: bool| -> Result<u64, Error> {
            Ok(match b {
                Bound::Nanos(n) => n,
                Bound::Percent(p) => {
                    let span = span.ok_or_else(|| {
                        Error::Usage(
                            "--time in percent needs the trace's span: a file, read twice (not stdin)"
                                .into(),
                        )
                    })?;
                    let v = (span as f64 * p / 100.0).round() as u64;
                    if end && p >= 100.0 {
                        span.saturating_add(1)
                    } else {
                        v
                    }
                }
            })
        };
        let lo = self.start.map(|b| at(b, false)).transpose()?.unwrap_or(0);
        let hi = self
            .end
            .map(|b| at(b, true))
            .transpose()?
            .unwrap_or(u64::MAX);
        if hi <= lo {
            return Err(Error::Usage(format!(
                "--time {self}: the range is empty ({lo} ns to {hi} ns from the start)"
            )));
        }
        Ok((lo, hi))
    }
}

impl fmt::Display for TimeRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let end = |f: &mut fmt::Formatter<'_>, b: Option<Bound>| match b {
            None => Ok(()),
            Some(Bound::Percent(p)) => write!(f, "{p}%"),
            Some(Bound::Nanos(n)) => {
                let (whole, frac) = (n / 1_000_000_000, n % 1_000_000_000);
                if frac == 0 {
                    write!(f, "{whole}s")
                } else {
                    let digits = format!("{frac:09}");
                    write!(f, "{whole}.{}s", digits.trim_end_matches('0'))
                }
            }
        };
        end(f, self.start)?;
        f.write_str("..")?;
        end(f, self.end)
    }
}

/// What part of a trace a job reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    pub time: Option<TimeRange>,
    /// Threads (empty: every thread).
    pub threads: Vec<u64>,
    pub pid: Option<u64>,
}

impl Selection {
    /// Whether it selects the whole trace.
    pub fn is_all(&self) -> bool {
        self.time.is_none() && self.threads.is_empty() && self.pid.is_none()
    }

    /// Whether it leaves out part of a process's records (time, threads):
    /// the heap view then reads the rest as an attached recording.
    pub fn is_partial(&self) -> bool {
        self.time.is_some() || !self.threads.is_empty()
    }
}

impl fmt::Display for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        if let Some(p) = self.pid {
            write!(f, "pid={p}")?;
            sep = " ";
        }
        if !self.threads.is_empty() {
            let t: Vec<String> = self.threads.iter().map(u64::to_string).collect();
            write!(f, "{sep}thread={}", t.join(","))?;
            sep = " ";
        }
        if let Some(t) = &self.time {
            write!(f, "{sep}time={t}")?;
        }
        Ok(())
    }
}

/// Where each record type keeps what a selection looks at.
#[derive(Clone, Copy)]
struct Fields {
    kind: RecordKind,
    address: Option<usize>,
    old: Option<usize>,
    time: Option<usize>,
    thread: Option<usize>,
    comment: bool,
    text: Option<usize>,
}

/// What a [`Selected`] source knows of the records so far.
struct State {
    selection: Selection,
    fields: Vec<Fields>,
    /// `[lo, hi)` from the first timed record.
    window: Option<(u64, u64)>,
    first_time: Option<u64>,
    /// The process the records are of (its `tramp:process` note), and
    /// every process seen.
    process: Option<u64>,
    processes: Vec<u64>,
    blocks: Blocks,
    skipped: u64,
}

/// The live blocks the selected threads allocated, so that what another
/// thread does to them (frees them, moves them by realloc) passes too: a
/// selection by thread follows its blocks to their end, and no block of
/// it looks live after another thread freed it (whose address could then
/// be allocated again over it).
#[derive(Default)]
struct Blocks {
    own: rustc_hash::FxHashSet<u64>,
    /// Records another thread's passed realloc implies (HATF's accompanying
    /// alloc and free): thread, address, and whether it is the alloc.
    implied: std::collections::VecDeque<(u64, u64, bool)>,
}

/// At most this many implied records are awaited (formats whose reallocs
/// have none would otherwise grow the queue).
const IMPLIED: usize = 64;

impl Blocks {
    /// A record of a selected thread: its blocks are followed.
    fn own(&mut self, kind: RecordKind, address: u64, old: u64) {
        match kind {
            RecordKind::Alloc => {
                self.own.insert(address);
            }
            RecordKind::Free => {
                self.own.remove(&address);
            }
            RecordKind::Realloc(o) => {
                if matches!(o, ReallocOutcome::Moved | ReallocOutcome::FreeOnly) {
                    self.own.remove(&old);
                }
                if matches!(o, ReallocOutcome::Moved | ReallocOutcome::AllocOnly) {
                    self.own.insert(address);
                }
            }
            _ => {}
        }
    }

    /// A record of another thread: it passes when it frees or moves a
    /// block of the selection, or is implied by a realloc that did.
    fn passes_other(&mut self, kind: RecordKind, thread: u64, address: u64, old: u64) -> bool {
        match kind {
            RecordKind::Free => {
                self.own.remove(&address) || self.take_implied(thread, address, false)
            }
            RecordKind::Alloc => self.take_implied(thread, address, true),
            RecordKind::Realloc(o) if o != ReallocOutcome::AllocOnly && self.own.contains(&old) => {
                if o == ReallocOutcome::InPlace {
                    return true;
                }
                self.own.remove(&old);
                self.expect(thread, old, false);
                if o == ReallocOutcome::Moved {
                    self.own.insert(address);
                    self.expect(thread, address, true);
                }
                true
            }
            _ => false,
        }
    }

    fn expect(&mut self, thread: u64, address: u64, alloc: bool) {
        if self.implied.len() >= IMPLIED {
            self.implied.pop_front();
        }
        self.implied.push_back((thread, address, alloc));
    }

    fn take_implied(&mut self, thread: u64, address: u64, alloc: bool) -> bool {
        match self
            .implied
            .iter()
            .position(|e| *e == (thread, address, alloc))
        {
            Some(i) => {
                self.implied.remove(i);
                true
            }
            None => false,
        }
    }
}

/// A source that passes the records a [`Selection`] selects (see the
/// module's documentation). A record that passes is copied (its slots and
/// bytes) before it is lent: the source cannot lend the inner source's
/// record after deciding on it.
pub struct Selected<S> {
    inner: S,
    schema: Arc<Schema>,
    state: State,
    /// The selection's note is in `copy`, to pass before the first record.
    note_pending: bool,
    copy: Copied,
}

/// The record last passed, copied.
#[derive(Default)]
struct Copied {
    ty: usize,
    slots: Vec<Slot>,
    bytes: Vec<u8>,
}

impl Copied {
    fn load(&mut self, ty: usize, slots: &[Slot], bytes: &[u8]) {
        self.ty = ty;
        self.slots.clear();
        self.slots.extend_from_slice(slots);
        self.bytes.clear();
        self.bytes.extend_from_slice(bytes);
    }
}

impl<S: Source> Selected<S> {
    /// Selects from `inner`; `window` is the selection's time range as
    /// [`TimeRange::resolve`] gave it (the caller resolved it once, for the
    /// reader's skipping too). Refuses a selection the trace cannot answer
    /// (a time range of a trace without times).
    pub fn new(
        inner: S,
        selection: Selection,
        window: Option<(u64, u64)>,
    ) -> Result<Selected<S>, Error> {
        let schema = inner.schema().clone();
        let fields = fields_of(&schema);
        if selection.time.is_some() && fields.iter().all(|f| f.time.is_none()) {
            return Err(Error::Usage(format!(
                "--time needs times: the records of {} have no time field",
                schema.format
            )));
        }
        if !selection.threads.is_empty() && fields.iter().all(|f| f.thread.is_none()) {
            return Err(Error::Usage(format!(
                "--thread needs threads: the records of {} have no thread field",
                schema.format
            )));
        }
        // The note waits in the copy buffers, lent like any record.
        let mut copy = Copied::default();
        let note = schema
            .types
            .iter()
            .find(|t| t.kind == RecordKind::Comment && t.role_index(Role::Text).is_some())
            .filter(|_| selection.is_partial());
        let note_pending = note.is_some();
        if let Some(ty) = note {
            let mut b = RecordBuf::new();
            b.reset(ty);
            let text = format!("{NOTE} {selection}");
            b.set_bytes(ty.role_index(Role::Text).unwrap(), text.as_bytes());
            let (_, slots, bytes) = b.as_record(ty).parts();
            copy.load(ty.index, slots, bytes);
        }
        Ok(Selected {
            inner,
            schema,
            state: State {
                selection,
                fields,
                window,
                first_time: None,
                process: None,
                processes: Vec::new(),
                blocks: Blocks::default(),
                skipped: 0,
            },
            note_pending,
            copy,
        })
    }

    /// Records left out so far.
    pub fn skipped(&self) -> u64 {
        self.state.skipped
    }
}

impl State {
    /// Whether the record passes (and what it tells of the process).
    fn passes(&mut self, rec: &Record<'_>) -> bool {
        let pass = self.decide(rec);
        if !pass {
            self.skipped += 1;
        }
        pass
    }

    fn decide(&mut self, rec: &Record<'_>) -> bool {
        let f = self.fields[rec.record_type().index];
        if f.comment {
            let text = f.text.and_then(|i| rec.get(i)).and_then(|v| v.as_bytes());
            if let Some(pid) = text.and_then(process_of) {
                self.process = Some(pid);
                if !self.processes.contains(&pid) {
                    self.processes.push(pid);
                }
            }
            if let Some((lo, hi)) = self.window
                && let Some(t) = text.and_then(sample_time)
                && let Some(first) = self.first_time
            {
                let from_first = t.saturating_sub(first);
                if from_first < lo || from_first >= hi {
                    return false;
                }
            }
            return self.process_selected();
        }
        if !self.process_selected() {
            return false;
        }
        if let Some((lo, hi)) = self.window
            && let Some(t) = f.time.and_then(|i| rec.int(i))
        {
            let first = *self.first_time.get_or_insert(t as u64);
            let from_first = (t as u64).saturating_sub(first);
            if from_first < lo || from_first >= hi {
                return false;
            }
        }
        if self.selection.threads.is_empty() {
            return true;
        }
        let Some(thread) = f.thread.and_then(|i| rec.int(i)).map(|t| t as u64) else {
            return true;
        };
        let at = |i: Option<usize>| i.and_then(|i| rec.int(i)).map_or(0, |v| v as u64);
        let (address, old) = (at(f.address), at(f.old));
        if self.selection.threads.contains(&thread) {
            self.blocks.own(f.kind, address, old);
            true
        } else {
            self.blocks.passes_other(f.kind, thread, address, old)
        }
    }

    fn process_selected(&self) -> bool {
        match self.selection.pid {
            None => true,
            // Records before any process note (a trace's own header) pass.
            Some(p) => self.process.is_none_or(|q| q == p),
        }
    }

    /// At the end: a process asked for that the trace does not hold.
    fn check_end(&self) -> Result<(), Error> {
        let Some(p) = self.selection.pid else {
            return Ok(());
        };
        if self.processes.contains(&p) {
            return Ok(());
        }
        let held: Vec<String> = self.processes.iter().map(u64::to_string).collect();
        Err(Error::Usage(if held.is_empty() {
            format!("--pid {p}: the trace names no process (no tramp:process note)")
        } else {
            format!(
                "--pid {p}: no such process in the trace (it holds {})",
                held.join(", ")
            )
        }))
    }
}

/// The pid of a `tramp:process pid=N …` note.
fn process_of(text: &[u8]) -> Option<u64> {
    number_after(text, b"tramp:process pid=")
}

fn fields_of(schema: &Schema) -> Vec<Fields> {
    schema
        .types
        .iter()
        .map(|t| Fields {
            kind: t.kind,
            address: t.role_index(Role::Address),
            old: t.role_index(Role::OldAddress),
            time: t.role_index(Role::Time),
            thread: t.role_index(Role::Thread),
            comment: t.kind == RecordKind::Comment,
            text: t.role_index(Role::Text),
        })
        .collect()
}

impl<S: Source> Source for Selected<S> {
    fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>, Error> {
        loop {
            match self.next_item()? {
                None => return Ok(None),
                Some(Item::Warning(_)) => continue,
                Some(Item::Record(_)) => break,
            }
        }
        Ok(Some(self.lent()))
    }

    fn next_item(&mut self) -> Result<Option<Item<'_>>, Error> {
        if self.note_pending {
            self.note_pending = false;
            return Ok(Some(Item::Record(self.lent())));
        }
        loop {
            match self.inner.next_item()? {
                None => {
                    self.state.check_end()?;
                    return Ok(None);
                }
                Some(Item::Warning(w)) => return Ok(Some(Item::Warning(w))),
                Some(Item::Record(r)) => {
                    if self.state.passes(&r) {
                        let (ty, slots, bytes) = r.parts();
                        self.copy.load(ty.index, slots, bytes);
                        break;
                    }
                }
            }
        }
        Ok(Some(Item::Record(self.lent())))
    }

    fn position(&self) -> Position {
        self.inner.position()
    }

    fn header(&self) -> &crate::Header {
        self.inner.header()
    }
}

impl<S> Selected<S> {
    /// The record last copied.
    fn lent(&self) -> Record<'_> {
        let c = &self.copy;
        Record::new(&self.schema.types[c.ty], &c.slots, &c.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(text: &str) -> (u64, u64) {
        TimeRange::parse(text)
            .unwrap()
            .resolve(Some(10_000_000_000))
            .unwrap()
    }

    #[test]
    fn ranges_read_in_every_unit_and_as_shares_of_the_span() {
        assert_eq!(ns("2s..5s"), (2_000_000_000, 5_000_000_000));
        assert_eq!(ns("250ms..1s"), (250_000_000, 1_000_000_000));
        assert_eq!(ns("1.5..2"), (1_500_000_000, 2_000_000_000));
        assert_eq!(ns("10us..20000ns"), (10_000, 20_000));
        assert_eq!(ns("1min.."), (60_000_000_000, u64::MAX));
        assert_eq!(ns("..500ms"), (0, 500_000_000));
        assert_eq!(ns("3s"), (3_000_000_000, u64::MAX));
        // A share of a 10 s span; 100% takes in the last record.
        assert_eq!(ns("0%..50%"), (0, 5_000_000_000));
        assert_eq!(ns("50%..100%"), (5_000_000_000, 10_000_000_001));
        assert_eq!(TimeRange::parse("2s..5s").unwrap().to_string(), "2s..5s");
        assert_eq!(TimeRange::parse("..250ms").unwrap().to_string(), "..0.25s");
        // Exact decimals (floats made 4444444440ms one nanosecond more),
        // and a long fraction is no overflow (both found by the fuzzer).
        assert_eq!(ns("4444444440ms").0, 4_444_444_440_000_000);
        assert_eq!(ns("2.8888888888888888888888888888885s").0, 2_888_888_889);
        assert_eq!(
            TimeRange::parse("1.000000001").unwrap().to_string(),
            "1.000000001s.."
        );
    }

    #[test]
    fn bad_ranges_say_what_is_wrong() {
        let err = |t: &str| match TimeRange::parse(t).and_then(|r| r.resolve(Some(100))) {
            Err(e) => e.to_string(),
            Ok(r) => panic!("{t} read as {r:?}"),
        };
        assert!(err("2h..3h").contains("unknown unit `h`"));
        assert!(err("x..1s").contains("`x` is not a time"));
        assert!(err("-1s..1s").contains("`-1s` is not a time"));
        assert!(err("5s..2s").contains("the range is empty"));
        assert!(err("101%").contains("not between 0% and 100%"));
        assert!(err("..").contains("no time given"));
        let pct = TimeRange::parse("0%..10%")
            .unwrap()
            .resolve(None)
            .unwrap_err();
        assert!(pct.to_string().contains("needs the trace's span"));
    }

    #[test]
    fn notes_say_what_was_selected() {
        let s = Selection {
            time: Some(TimeRange::parse("1s..2s").unwrap()),
            threads: vec![7, 9],
            pid: Some(3),
        };
        assert_eq!(s.to_string(), "pid=3 thread=7,9 time=1s..2s");
        assert!(selects_threads(format!("{NOTE} {s}").as_bytes()));
        assert!(!selects_threads(b"tramp:selected time=1s..2s"));
        assert_eq!(
            process_of(b"tramp:process pid=20524 ppid=1 stack=64"),
            Some(20524)
        );
        assert_eq!(process_of(b"tramp:module 0x1 /bin/ls"), None);
    }
}
