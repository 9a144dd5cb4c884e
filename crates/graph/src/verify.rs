//! The PTF verifier: every semantic rule of §3, checked event by event in
//! memory proportional to the store (not the trace), with an optional
//! simulation of persistence by reachability from the super root that
//! honours the `ts`/`te` (no collection) brackets.

use std::fmt;

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::gc::Schedule;
use crate::graph::{MAX_SLOT, ObjectGraph};

use tramp_ptf::event::{self, Event, EventType, FormatObject, NULL, Oid};

/// Which rule an event broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// Wrong number or type of parameters (reported by the readers).
    Syntax,
    /// An identifier in 1–40 (null, unused or primitive) where a new
    /// format or object is created.
    ReservedOid,
    /// An OId created a second time (OIds are never reused).
    OidReused,
    /// A format used before its `fo` (or a member format of the wrong kind).
    FormatUndefined,
    /// The format named by an event is not the object's.
    FormatMismatch,
    /// An event names an object that was never created.
    NoSuchObject,
    /// An event names an object after its `do` (or after it was collected).
    AfterDelete,
    /// An edge number beyond the format's pointers, or an edge target
    /// that does not exist.
    Edge,
    /// A data offset that is not a data member of the format.
    DataOffset,
    /// An array access outside the array, or on something not an array.
    ArrayBounds,
    /// `cao` whose container was not created before.
    Container,
    /// `gr` before any `sr`.
    NoRoot,
    /// `te` without `ts`, or `ts` never closed.
    Brackets,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rule::Syntax => "syntax",
            Rule::ReservedOid => "reserved-oid",
            Rule::OidReused => "oid-reused",
            Rule::FormatUndefined => "format-undefined",
            Rule::FormatMismatch => "format-mismatch",
            Rule::NoSuchObject => "no-such-object",
            Rule::AfterDelete => "after-delete",
            Rule::Edge => "edge",
            Rule::DataOffset => "data-offset",
            Rule::ArrayBounds => "array-bounds",
            Rule::Container => "container",
            Rule::NoRoot => "no-root",
            Rule::Brackets => "brackets",
        })
    }
}

/// Where an event is: its 1-based number, and its line (ASCII) or byte
/// offset (binary).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct At {
    pub event: u64,
    pub line: u64,
    pub offset: u64,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "event {} (line {})", self.event, self.line)
        } else {
            write!(f, "event {} (byte offset {})", self.event, self.offset)
        }
    }
}

/// One broken rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub at: At,
    pub rule: Rule,
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: [{}] {}", self.at, self.rule, self.message)
    }
}

/// Objects a collection found unreachable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Collection {
    /// The event after which the collector ran.
    pub at: At,
    /// The objects that became garbage, in OId order.
    pub garbage: Vec<Oid>,
}

/// How to verify.
#[derive(Clone, Debug)]
pub struct Options {
    /// Simulate persistence by reachability.
    pub gc: bool,
    /// Keep at most this many violations (all are counted).
    pub max_violations: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            gc: false,
            max_violations: 100,
        }
    }
}

/// A format object with its super classes folded in: positions 1..=D are
/// data members, D+1..=D+A fixed arrays (super class members first).
#[derive(Clone, Debug)]
struct Layout {
    pointers: u64,
    data: Vec<Oid>,
    arrays: Vec<(Oid, u64)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gone {
    Deleted(u64),
    Collected(u64),
}

/// What the verifier knows of a live object; its edges and the super
/// root live in the object graph.
#[derive(Debug)]
enum Obj {
    Plain {
        format: Oid,
        /// Data members of the format (positions 1..=data). Its edges
        /// (one graph slot per pointer of the format) are in the graph.
        data: u64,
    },
    Array {
        format: Oid,
        elements: u64,
    },
}

impl Obj {
    fn format(&self) -> Oid {
        match self {
            Obj::Plain { format, .. } | Obj::Array { format, .. } => *format,
        }
    }
}

/// The verifier's state; feed it events in order with [`Verifier::event`],
/// then call [`Verifier::finish`].
pub struct Verifier {
    opts: Options,
    formats: FxHashMap<Oid, Layout>,
    names: FxHashMap<Oid, String>,
    /// Live objects, their edges and the super root.
    objects: ObjectGraph<Obj>,
    gone: FxHashMap<Oid, Gone>,
    /// Holds open and whether a collection is due: tramp-graph's rule.
    schedule: Schedule,
    open_at: Vec<At>,
    violations: Vec<Violation>,
    total: u64,
    collections: Vec<Collection>,
    collected: u64,
    events: u64,
    last: At,
}

impl Verifier {
    pub fn new(opts: Options) -> Self {
        Verifier {
            opts,
            formats: FxHashMap::default(),
            names: FxHashMap::default(),
            objects: ObjectGraph::new(),
            gone: FxHashMap::default(),
            schedule: Schedule::default(),
            open_at: Vec::new(),
            violations: Vec::new(),
            total: 0,
            collections: Vec::new(),
            collected: 0,
            events: 0,
            last: At::default(),
        }
    }

    /// Records a violation found outside [`Verifier::event`] (a reader's
    /// syntax error, for instance).
    pub fn report(&mut self, at: At, rule: Rule, message: impl Into<String>) {
        self.total += 1;
        if self.violations.len() < self.opts.max_violations {
            self.violations.push(Violation {
                at,
                rule,
                message: message.into(),
            });
        }
    }

    fn format_name(&self, f: Oid) -> String {
        match self.names.get(&f) {
            Some(n) => format!("{f} ({n})"),
            None => match event::scalar(f) {
                Some((n, _)) => format!("{f} ({n})"),
                None => f.to_string(),
            },
        }
    }

    /// Checks that `oid` names a live object; returns whether it does.
    fn live(&mut self, at: At, ty: EventType, oid: Oid) -> bool {
        if self.objects.contains(oid) {
            return true;
        }
        let msg = match self.gone.get(&oid) {
            Some(Gone::Deleted(e)) => (
                Rule::AfterDelete,
                format!("`{ty}` on object {oid}, deleted at event {e}"),
            ),
            Some(Gone::Collected(e)) => (
                Rule::AfterDelete,
                format!("`{ty}` on object {oid}, which became garbage at event {e}"),
            ),
            None if oid == NULL => (Rule::NoSuchObject, format!("`{ty}` on the null object")),
            None if self.formats.contains_key(&oid) => (
                Rule::NoSuchObject,
                format!("`{ty}` on {oid}, a format object, not a store object"),
            ),
            None => (
                Rule::NoSuchObject,
                format!("`{ty}` on object {oid}, which was never created"),
            ),
        };
        self.report(at, msg.0, msg.1);
        false
    }

    /// Checks that the event's format is the object's.
    fn same_format(&mut self, at: At, ty: EventType, oid: Oid, format: Oid) {
        let Some(o) = self.objects.data(oid) else {
            return;
        };
        let have = o.format();
        if have != format {
            let (a, b) = (self.format_name(format), self.format_name(have));
            self.report(
                at,
                Rule::FormatMismatch,
                format!("`{ty}` names format {a} but object {oid} has format {b}"),
            );
        }
    }

    /// Checks that a new OId is usable.
    fn fresh(&mut self, at: At, ty: EventType, oid: Oid) -> bool {
        if oid < event::FIRST_USER_OID {
            self.report(
                at,
                Rule::ReservedOid,
                format!(
                    "`{ty}` creates {oid}: OIds below {} are reserved (0 null, 10–40 primitive formats)",
                    event::FIRST_USER_OID
                ),
            );
            return false;
        }
        if self.objects.contains(oid)
            || self.formats.contains_key(&oid)
            || self.gone.contains_key(&oid)
        {
            self.report(
                at,
                Rule::OidReused,
                format!("`{ty}` creates {oid}, an OId already used (OIds are never reused)"),
            );
            return false;
        }
        true
    }

    fn format_object(&mut self, at: At, f: &FormatObject) {
        if !self.fresh(at, EventType::Fo, f.id) {
            return;
        }
        let mut layout = Layout {
            pointers: 0,
            data: Vec::new(),
            arrays: Vec::new(),
        };
        if f.super_id != NULL {
            match self.formats.get(&f.super_id) {
                Some(s) => layout = s.clone(),
                None => self.report(
                    at,
                    Rule::FormatUndefined,
                    format!(
                        "format {} names super format {}, which no earlier `fo` defines",
                        f.id, f.super_id
                    ),
                ),
            }
        }
        for d in &f.data {
            if event::scalar(*d).is_none() {
                self.report(
                    at,
                    Rule::FormatUndefined,
                    format!(
                        "format {}: data member format {d} is not a primitive scalar format (10–19)",
                        f.id
                    ),
                );
            }
        }
        for (a, _) in &f.arrays {
            if event::array_element(*a).is_none() {
                self.report(
                    at,
                    Rule::FormatUndefined,
                    format!(
                        "format {}: array member format {a} is not a primitive array format (30–39)",
                        f.id
                    ),
                );
            }
        }
        layout.pointers = layout.pointers.saturating_add(f.pointers);
        if layout.pointers > MAX_SLOT {
            // Said, not clamped in silence: the object graph holds at most
            // MAX_SLOT edges an object, so edges past them go unchecked.
            self.report(
                at,
                Rule::Edge,
                format!(
                    "format {}: {} pointers (with its superformats), more than the {MAX_SLOT} edges an object tramp checks; edges from {MAX_SLOT} on are not checked",
                    f.id, layout.pointers
                ),
            );
        }
        layout.data.extend_from_slice(&f.data);
        layout.arrays.extend_from_slice(&f.arrays);
        self.formats.insert(f.id, layout);
        self.names.insert(f.id, f.name.clone());
    }

    /// Checks one event; `at` says where it is.
    pub fn event(&mut self, at: At, e: &Event) {
        self.events += 1;
        self.last = at;
        // The common valid reads in one lookup (they never disconnect
        // anything, so no collection can be due after them).
        match e {
            Event::DataRead {
                format,
                oid,
                offset,
            }
            | Event::DataWrite {
                format,
                oid,
                offset,
            } => {
                if let Some(Obj::Plain {
                    format: f, data, ..
                }) = self.objects.data(*oid)
                    && f == format
                    && (1..=*data).contains(offset)
                {
                    return;
                }
            }
            Event::EdgeRead { format, from, edge } => {
                if let Some(node) = self.objects.get(*from)
                    && let Obj::Plain { format: f, .. } = node.data
                    && f == *format
                    && *edge < node.edges().len() as u64
                {
                    return;
                }
            }
            _ => {}
        }
        let ty = e.event_type();
        match e {
            Event::FormatObject(f) => self.format_object(at, f),
            Event::CreateObject { format, oid } => {
                let layout = self.formats.get(format).cloned();
                if layout.is_none() {
                    let what = if event::is_primitive(*format) {
                        "a primitive format (`co` needs a class format; arrays use `cao`)"
                    } else {
                        "not defined by any earlier `fo`"
                    };
                    self.report(
                        at,
                        Rule::FormatUndefined,
                        format!("`co` of object {oid}: format {format} is {what}"),
                    );
                }
                if self.fresh(at, ty, *oid) {
                    let pointers = layout.as_ref().map_or(0, |l| l.pointers);
                    let data = layout.map_or(0, |l| l.data.len() as u64);
                    let pointers = pointers.min(MAX_SLOT);
                    self.objects.create_with_slots(
                        *oid,
                        Obj::Plain {
                            format: *format,
                            data,
                        },
                        pointers,
                    );
                    self.schedule.created();
                }
            }
            Event::CreateArrayObject {
                format,
                oid,
                container,
                elements,
            } => {
                if event::scalar(*format).is_none() && !self.formats.contains_key(format) {
                    self.report(
                        at,
                        Rule::FormatUndefined,
                        format!("`cao` of object {oid}: element format {format} is neither a primitive scalar (10–19) nor defined by an earlier `fo`"),
                    );
                }
                match self.objects.data(*container) {
                    Some(Obj::Plain { .. }) => {}
                    Some(Obj::Array { .. }) => self.report(
                        at,
                        Rule::Container,
                        format!("`cao` of object {oid}: container {container} is an array object"),
                    ),
                    None => {
                        let why = match self.gone.get(container) {
                            Some(Gone::Deleted(e)) => format!("was deleted at event {e}"),
                            Some(Gone::Collected(e)) => format!("became garbage at event {e}"),
                            None => "has no earlier `co`".to_string(),
                        };
                        self.report(
                            at,
                            Rule::Container,
                            format!("`cao` of object {oid}: container {container} {why}"),
                        );
                    }
                }
                if self.fresh(at, ty, *oid) {
                    self.objects.create(
                        *oid,
                        Obj::Array {
                            format: *format,
                            elements: *elements,
                        },
                    );
                    self.schedule.created();
                }
            }
            Event::DeleteObject { format, oid } => {
                if !self.objects.contains(*oid) {
                    if !self.gone.contains_key(oid)
                        && *oid != NULL
                        && !self.formats.contains_key(oid)
                    {
                        self.report(
                            at,
                            Rule::NoSuchObject,
                            format!("`do` deletes object {oid}, which does not exist"),
                        );
                    } else {
                        self.live(at, ty, *oid);
                    }
                    return;
                }
                self.same_format(at, ty, *oid, *format);
                // Deleting the super root leaves none.
                self.objects.delete(*oid);
                self.gone.insert(*oid, Gone::Deleted(at.event));
                self.schedule.deleted();
            }
            Event::SetRoot { format, oid } => {
                if self.live(at, ty, *oid) {
                    self.same_format(at, ty, *oid, *format);
                    let root = self.objects.root();
                    if root != Some(*oid) {
                        if root.is_some() {
                            self.schedule.root_replaced();
                        }
                        self.objects.set_root(Some(*oid));
                    }
                }
            }
            Event::GetRoot => {
                if self.objects.root().is_none() {
                    self.report(
                        at,
                        Rule::NoRoot,
                        "`gr` while no super root is set (no earlier `sr`)",
                    );
                }
            }
            Event::DataRead {
                format,
                oid,
                offset,
            }
            | Event::DataWrite {
                format,
                oid,
                offset,
            } => {
                if !self.live(at, ty, *oid) {
                    return;
                }
                self.same_format(at, ty, *oid, *format);
                let Some(Obj::Plain { format: f, .. }) = self.objects.data(*oid) else {
                    self.report(
                        at,
                        Rule::DataOffset,
                        format!("`{ty}` on array object {oid} (use adr/adw with offset -1)"),
                    );
                    return;
                };
                let d = self.formats.get(f).map_or(0, |l| l.data.len() as u64);
                if *offset == 0 || *offset > d {
                    let name = self.format_name(*f);
                    let range = if d == 0 {
                        "none".to_string()
                    } else {
                        format!("positions 1–{d}")
                    };
                    self.report(
                        at,
                        Rule::DataOffset,
                        format!("`{ty}` offset {offset} of object {oid}: format {name} has {d} data members ({range})"),
                    );
                }
            }
            Event::ArrayDataRead {
                format,
                oid,
                offset,
                index,
                length,
            }
            | Event::ArrayDataWrite {
                format,
                oid,
                offset,
                index,
                length,
            } => self.array_access(at, ty, *format, *oid, *offset, *index, *length),
            Event::EdgeRead { format, from, edge } => {
                self.edge_check(at, ty, *format, *from, *edge);
            }
            Event::EdgeWrite {
                format,
                from,
                edge,
                to,
            } => {
                let target_ok = *to == NULL || self.live(at, ty, *to);
                if !target_ok {
                    // `live` reported it; say it is the target.
                    if let Some(v) = self.violations.last_mut() {
                        v.rule = Rule::Edge;
                        v.message = format!("edge target: {}", v.message);
                    }
                }
                if self.edge_check(at, ty, *format, *from, *edge) {
                    let to = (target_ok && *to != NULL).then_some(*to);
                    if self.objects.link(*from, *edge, to).is_some() {
                        self.schedule.relinked();
                    }
                }
            }
            Event::NoGcStart => {
                self.schedule.hold();
                if self.open_at.len() < 1000 {
                    self.open_at.push(at);
                }
            }
            Event::NoGcEnd => {
                if !self.schedule.resume() {
                    self.report(at, Rule::Brackets, "`te` without an open `ts`");
                } else if (self.schedule.depth() as usize) < self.open_at.len() {
                    self.open_at.pop();
                }
            }
        }
        if self.opts.gc && self.schedule.take_due() {
            self.collect(at);
        }
    }

    fn edge_check(&mut self, at: At, ty: EventType, format: Oid, from: Oid, edge: u64) -> bool {
        if !self.live(at, ty, from) {
            return false;
        }
        self.same_format(at, ty, from, format);
        let Some((&Obj::Plain { format: f, .. }, pointers)) = self
            .objects
            .get(from)
            .map(|n| (&n.data, n.edges().len() as u64))
        else {
            self.report(
                at,
                Rule::Edge,
                format!("`{ty}` on array object {from}: array objects hold no pointers"),
            );
            return false;
        };
        // The format's declared count (the graph holds at most MAX_SLOT).
        let n = self.formats.get(&f).map_or(pointers, |l| l.pointers);
        if edge >= n {
            let name = self.format_name(f);
            self.report(
                at,
                Rule::Edge,
                format!("`{ty}` edge {edge} of object {from}: format {name} has {n} pointers (edges 0–{})", n as i64 - 1),
            );
            return false;
        }
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn array_access(
        &mut self,
        at: At,
        ty: EventType,
        format: Oid,
        oid: Oid,
        offset: i64,
        index: u64,
        length: u64,
    ) {
        if !self.live(at, ty, oid) {
            return;
        }
        let (elements, want_format, what) = match (offset, self.objects.data(oid)) {
            (
                -1,
                Some(Obj::Array {
                    format: f,
                    elements,
                    ..
                }),
            ) => (*elements, *f, format!("array object {oid}")),
            (-1, Some(Obj::Plain { .. })) => {
                self.report(at, Rule::ArrayBounds, format!("`{ty}` with offset -1 (a dynamic array) on object {oid}, which is not an array object"));
                return;
            }
            (o, Some(Obj::Plain { format: f, .. })) if o >= 0 => {
                let layout = self.formats.get(f);
                let d = layout.map_or(0, |l| l.data.len() as i64);
                let arrays = layout.map_or(&[][..], |l| &l.arrays[..]);
                let k = o - d - 1;
                if k < 0 || k as usize >= arrays.len() {
                    let name = self.format_name(*f);
                    let a = arrays.len() as i64;
                    let range = if a == 0 {
                        "none".to_string()
                    } else {
                        format!("positions {}–{}", d + 1, d + a)
                    };
                    self.report(at, Rule::ArrayBounds, format!("`{ty}` offset {o} of object {oid}: format {name} has {a} array members ({range})"));
                    return;
                }
                let (af, n) = arrays[k as usize];
                (n, af, format!("array member {o} of object {oid}"))
            }
            (o, Some(Obj::Array { .. })) => {
                self.report(
                    at,
                    Rule::ArrayBounds,
                    format!("`{ty}` on array object {oid} needs offset -1, not {o}"),
                );
                return;
            }
            (o, _) => {
                self.report(
                    at,
                    Rule::ArrayBounds,
                    format!("`{ty}` offset {o}: -1 (dynamic array) or an array member position"),
                );
                return;
            }
        };
        if format != want_format {
            let (a, b) = (self.format_name(format), self.format_name(want_format));
            self.report(
                at,
                Rule::FormatMismatch,
                format!("`{ty}` names format {a} but {what} has format {b}"),
            );
        }
        if index.checked_add(length).is_none_or(|end| end > elements) {
            self.report(
                at,
                Rule::ArrayBounds,
                format!(
                    "`{ty}` elements {index}..{} of {what}, which has {elements}",
                    index as u128 + length as u128
                ),
            );
        }
    }

    /// Marks everything reachable from the super root and collects the
    /// rest (only once a super root exists: before that nothing is
    /// persistent yet).
    fn collect(&mut self, at: At) {
        let garbage = self.objects.collect();
        if garbage.is_empty() {
            return;
        }
        for g in &garbage {
            self.gone.insert(*g, Gone::Collected(at.event));
        }
        self.collected += garbage.len() as u64;
        self.collections.push(Collection { at, garbage });
    }

    /// Ends the trace: reports brackets left open.
    pub fn finish(mut self) -> Report {
        for open in std::mem::take(&mut self.open_at) {
            self.report(open, Rule::Brackets, "`ts` never closed by a `te`");
        }
        Report {
            events: self.events,
            violations: self.violations,
            total: self.total,
            collections: self.collections,
            collected: self.collected,
            live: self.objects.len() as u64,
        }
    }
}

/// What a verification found.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub events: u64,
    /// The first violations (up to the limit).
    pub violations: Vec<Violation>,
    /// All violations, counted.
    pub total: u64,
    /// With `gc`: every collection that found garbage.
    pub collections: Vec<Collection>,
    pub collected: u64,
    /// Objects alive at the end.
    pub live: u64,
}

/// A verification as people read it: each violation on a line of its own
/// prefixed by the trace's name, the collections (with `gc`), and a
/// summary line.
#[derive(Serialize)]
pub struct Shown<'a> {
    /// The trace's name, as given.
    pub name: &'a str,
    #[serde(flatten)]
    pub report: &'a Report,
    /// Whether collection was simulated.
    #[serde(skip)]
    pub gc: bool,
    /// OIds listed per collection in the text.
    #[serde(skip)]
    pub max_oids: usize,
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, r) = (self.name, self.report);
        for v in &r.violations {
            writeln!(f, "{name}: {v}")?;
        }
        if r.total > r.violations.len() as u64 {
            writeln!(
                f,
                "{name}: … and {} more violations",
                r.total - r.violations.len() as u64
            )?;
        }
        if self.gc {
            for c in &r.collections {
                let shown: Vec<String> = c
                    .garbage
                    .iter()
                    .take(self.max_oids)
                    .map(|o| o.to_string())
                    .collect();
                let more = if c.garbage.len() > self.max_oids {
                    " …"
                } else {
                    ""
                };
                writeln!(
                    f,
                    "{name}: gc after {}: {} objects became garbage: {}{more}",
                    c.at,
                    c.garbage.len(),
                    shown.join(" ")
                )?;
            }
        }
        let gc = if self.gc {
            format!(
                ", {} objects collected in {} collections",
                r.collected,
                r.collections.len()
            )
        } else {
            String::new()
        };
        writeln!(
            f,
            "{} events, {} violations{gc}, {} objects live at the end",
            r.events, r.total, r.live
        )
    }
}

/// Verifies everything `src` yields; reader errors count as syntax
/// violations (an ASCII reader goes on with the next line; a binary reader
/// cannot resynchronise and stops).
pub fn verify(src: &mut dyn tramp_ptf::EventSource, opts: Options) -> Report {
    verify_with(src, opts, &mut |_| {})
}

/// [`verify`], calling `progress` with the number of events read so far
/// every 64 Ki events.
pub fn verify_with(
    src: &mut dyn tramp_ptf::EventSource,
    opts: Options,
    progress: &mut dyn FnMut(u64),
) -> Report {
    src.resume_after_bad_lines(true);
    let mut v = Verifier::new(opts);
    let mut n = 0u64;
    loop {
        let r = src.next_event();
        let (line, offset) = src.location();
        n += 1;
        let at = At {
            event: n,
            line,
            offset,
        };
        match r {
            Ok(Some(e)) => v.event(at, &e),
            Ok(None) => break,
            Err(err) => v.report(at, Rule::Syntax, error_text(&err)),
        }
        if n & 0xffff == 0 {
            progress(n);
        }
    }
    v.finish()
}

fn error_text(err: &tramp_ptf::PtfError) -> String {
    match err {
        tramp_ptf::PtfError::Ascii { message, .. }
        | tramp_ptf::PtfError::Binary { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// One item read ahead: an event or a reader's error, with its place.
type Item = (Result<Event, String>, u64, u64);

/// [`verify_with`] on two threads: one reads and parses, the other
/// verifies, joined by a bounded channel of batches (memory stays
/// constant: at most a few batches are in flight).
pub fn verify_pipelined(
    mut src: Box<dyn tramp_ptf::EventSource + Send>,
    opts: Options,
    progress: &mut dyn FnMut(u64),
) -> Report {
    const BATCH: usize = 4096;
    src.resume_after_bad_lines(true);
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Item>>(4);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut batch = Vec::with_capacity(BATCH);
            loop {
                let r = src.next_event();
                let (line, offset) = src.location();
                let done = matches!(r, Ok(None));
                match r {
                    Ok(Some(e)) => batch.push((Ok(e), line, offset)),
                    Ok(None) => {}
                    Err(err) => batch.push((Err(error_text(&err)), line, offset)),
                }
                if batch.len() == BATCH || done {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    if tx.send(full).is_err() || done {
                        return;
                    }
                }
            }
        });
        let mut v = Verifier::new(opts);
        let mut n = 0u64;
        for batch in rx {
            for (r, line, offset) in batch {
                n += 1;
                let at = At {
                    event: n,
                    line,
                    offset,
                };
                match r {
                    Ok(e) => v.event(at, &e),
                    Err(text) => v.report(at, Rule::Syntax, text),
                }
            }
            if n & 0xffff < BATCH as u64 {
                progress(n);
            }
        }
        v.finish()
    })
}
