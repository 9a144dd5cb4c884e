//! Whether a conversion keeps every record exactly, decided per record
//! type before anything reaches the output, and enforced per record.
//!
//! [`plan`] looks at each record type of the source schema and at what the
//! target does with it: the same schema (exact), a foreign type the target
//! maps by kind, name and role (exact when every field that carries data
//! has a place and every field the target needs comes from the source),
//! encoding metadata of another format (not data: values travel
//! absolute), or no place at all (dropped). [`Audited`] wraps the target's
//! sink: it counts records read and written per type, checks each foreign
//! record's unplaced fields for data, and, unless losses are allowed,
//! refuses at the end without finishing the output (so an [`Output`]
//! removes its temporary file and nothing appears at the output path).
//!
//! [`Output`]: tramp_io::Output

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tramp_core::{Error, Header, Holds, Record, RecordKind, Role, Schema, Sink, Value};

use crate::Format;

/// What the target does with one source record type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Written exactly (unless a record's unplaced fields hold data).
    Exact,
    /// Encoding metadata of the source (field widths and the like): not
    /// written, and nothing is lost, since the target re-encodes values.
    Encoding,
    /// Written, but some of its data is not: the reason.
    Changed(String),
    /// Not written at all: the reason.
    Dropped(String),
}

#[derive(Clone, Debug)]
struct TypePlan {
    name: String,
    fate: Fate,
    /// Why a record whose unplaced fields hold data is changed.
    unplaced_why: String,
    /// Source fields the target has no place for: a record loses data if
    /// any of them holds some (non-zero, non-empty).
    unplaced: Vec<(usize, String)>,
}

/// The fate of every record type of a source schema in one target.
#[derive(Clone, Debug)]
pub struct Plan {
    types: Vec<TypePlan>,
}

fn holds_data(v: &Value<'_>) -> bool {
    match v {
        Value::U64(n) => *n != 0,
        Value::I64(n) => *n != 0,
        Value::Bytes(b) => !b.is_empty(),
        Value::Str(s) => !s.is_empty(),
        Value::List(l) => !l.is_empty(),
        Value::F64(x) => *x != 0.0,
        Value::Attrs(_) => true,
    }
}

/// Plans converting the records of `source` (of format `from`, with header
/// `source_header`) to `to`, whose output header is `header`. The target
/// writes the very schema the source reads when both are of one family
/// and, for Meta-TF, of one DTD.
pub fn plan(
    source: &Schema,
    from: Format,
    source_header: &Header,
    to: Format,
    header: &Header,
) -> Result<Plan, Error> {
    // The very schema the source reads: one family and, for a format
    // whose schema its header describes, one description.
    let same_schema = from.family == to.family
        && (!matches!(to.holds, Holds::ByName(_)) || header.dtd == source_header.dtd);
    let target: Option<(Arc<Schema>, bool)> = match to.holds {
        _ if same_schema => None,
        Holds::ByRole(schema) => Some((schema(), true)),
        Holds::ByName(schema) => Some((schema(header)?, false)),
        Holds::OwnOnly(_) | Holds::Nothing => Some((Arc::new(Schema::new(to.family)), false)),
    };
    let types = source
        .types
        .iter()
        .map(|ty| {
            let Some((target, by_role)) = &target else {
                return TypePlan {
                    name: ty.name.clone(),
                    fate: Fate::Exact,
                    unplaced_why: String::new(),
                    unplaced: Vec::new(),
                };
            };
            if let Holds::OwnOnly(why) = to.holds {
                return TypePlan {
                    name: ty.name.clone(),
                    fate: Fate::Dropped(why.into()),
                    unplaced_why: String::new(),
                    unplaced: Vec::new(),
                };
            }
            foreign(ty, target, *by_role, to)
        })
        .collect();
    Ok(Plan { types })
}

/// A record type of another format in `target` (the schema `to` writes).
fn foreign(ty: &tramp_core::RecordType, target: &Schema, by_role: bool, to: Format) -> TypePlan {
    let mut p = TypePlan {
        name: ty.name.clone(),
        fate: Fate::Exact,
        unplaced_why: String::new(),
        unplaced: Vec::new(),
    };
    if ty.kind == RecordKind::Metadata {
        p.fate = Fate::Encoding;
        return p;
    }
    // The target's record: by kind (a realloc by its outcome) for a format
    // that maps by role; by name, else by kind, for one that maps by name.
    let found = target
        .types
        .iter()
        .find(|t| !by_role && t.name == ty.name)
        .or_else(|| {
            target
                .types
                .iter()
                .find(|t| t.kind == ty.kind && ty.kind != RecordKind::Other)
        });
    let Some(t) = found else {
        p.fate = Fate::Dropped(format!("{} has no record for it", to.name));
        return p;
    };
    let text_like = |r: Option<Role>| matches!(r, Some(Role::Text | Role::Attributes));
    // Which source fields reach the target. A Meta-TF record's `tag` is
    // its type, not data; a `length` goes with its `data`; a comment's
    // text is its Text field or its `data`.
    let placed: Vec<bool> = ty
        .fields
        .iter()
        .map(|f| {
            if by_role {
                f.role
                    .is_some_and(|r| t.fields.iter().any(|g| g.role == Some(r)))
                    || (ty.kind == RecordKind::Comment && f.name == "data")
            } else {
                t.fields.iter().any(|g| g.name == f.name)
                    || f.role
                        .is_some_and(|r| t.fields.iter().any(|g| g.role == Some(r)))
                    || (text_like(f.role) && t.fields.iter().any(|g| g.name == "data"))
                    || (f.role == Some(Role::Address)
                        && t.fields.iter().any(|g| g.name == "address"))
            }
        })
        .collect();
    let data_placed = ty
        .fields
        .iter()
        .zip(&placed)
        .any(|(f, p)| *p && (f.name == "data" || text_like(f.role)));
    for (i, f) in ty.fields.iter().enumerate() {
        if f.name == "tag" || (f.name == "length" && data_placed) || placed[i] {
            continue;
        }
        p.unplaced.push((i, f.name.clone()));
    }
    if !p.unplaced.is_empty() {
        p.unplaced_why = format!(
            "{} not written: {} has no place for {}",
            p.unplaced
                .iter()
                .map(|(_, n)| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", "),
            to.name,
            if p.unplaced.len() == 1 { "it" } else { "them" }
        );
    }
    // Which target fields the source cannot fill (they would be 0).
    let needed = |r: Option<Role>| {
        matches!(
            r,
            Some(Role::Size | Role::Address | Role::OldAddress | Role::ObjectId | Role::EdgeTarget)
        )
    };
    let mut missing = Vec::new();
    for g in &t.fields {
        let filled = if by_role {
            !needed(g.role) || ty.fields.iter().any(|f| f.role == g.role)
        } else {
            g.name == "tag"
                || ty.fields.iter().any(|f| f.name == g.name)
                || g.role
                    .is_some_and(|r| ty.fields.iter().any(|f| f.role == Some(r)))
                || (matches!(g.name.as_str(), "data" | "length")
                    && ty.fields.iter().any(|f| text_like(f.role)))
                || (g.name == "address" && ty.fields.iter().any(|f| f.role == Some(Role::Address)))
        };
        if !(filled || (by_role && realloc_zero(t.kind, g.role))) {
            missing.push(g.name.clone());
        }
    }
    if !missing.is_empty() {
        p.fate = Fate::Changed(format!(
            "{} {} not in the source record: written as 0",
            missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if missing.len() == 1 { "is" } else { "are" }
        ));
    }
    p
}

/// Addresses a realloc outcome has as 0 by its meaning (realloc(NULL, n)
/// has no old block; realloc(p, 0) no new one).
fn realloc_zero(kind: RecordKind, role: Option<Role>) -> bool {
    use tramp_core::ReallocOutcome::*;
    matches!(
        (kind, role),
        (RecordKind::Realloc(AllocOnly), Some(Role::OldAddress))
            | (
                RecordKind::Realloc(FreeOnly),
                Some(Role::Address | Role::Size)
            )
    )
}

/// Records of one type: read, and what became of them. Every record read
/// is counted once among `written`, `dropped`, `reencoded` and `withheld`
/// (they add up to `read`); `changed` counts the written or withheld ones
/// that lost data.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct TypeCount {
    pub read: u64,
    pub written: u64,
    /// Not written at all: the target has no record for them.
    pub dropped: u64,
    /// With data missing (written under --lossy; withheld without it).
    pub changed: u64,
    /// Encoding records (HATF metadata) the target does not copy: it
    /// writes its own encoding.
    pub reencoded: u64,
    /// Not written because the conversion was refused (a loss without
    /// --lossy): nothing is written after it.
    pub withheld: u64,
    /// Why, for the dropped and changed ones.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<String>,
}

/// What a conversion did, per source record type.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Ledger {
    pub types: BTreeMap<String, TypeCount>,
    /// Whether losses were allowed (`--lossy`).
    pub lossy: bool,
}

impl Ledger {
    /// Whether any record was dropped or changed.
    pub fn lost(&self) -> bool {
        self.types.values().any(|c| c.dropped + c.changed > 0)
    }

    /// The record types that lost something, as `type: N dropped (why)`.
    pub fn losses(&self) -> Vec<String> {
        self.types
            .iter()
            .filter(|(_, c)| c.dropped + c.changed > 0)
            .map(|(n, c)| {
                let mut parts = Vec::new();
                if c.dropped > 0 {
                    parts.push(format!("{} of {} dropped", c.dropped, c.read));
                }
                if c.changed > 0 {
                    parts.push(format!("{} of {} changed", c.changed, c.read));
                }
                format!("{n}: {} ({})", parts.join(", "), c.why.join("; "))
            })
            .collect()
    }
}

impl fmt::Display for Ledger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<28} {:>12} {:>12} {:>10} {:>10} {:>10} {:>10}",
            "record type", "read", "written", "dropped", "re-encoded", "withheld", "changed"
        )?;
        for (n, c) in &self.types {
            writeln!(
                f,
                "{n:<28} {:>12} {:>12} {:>10} {:>10} {:>10} {:>10}",
                c.read, c.written, c.dropped, c.reencoded, c.withheld, c.changed
            )?;
        }
        writeln!(
            f,
            "(read = written + dropped + re-encoded + withheld; changed: written or withheld with data missing)"
        )
    }
}

/// A sink that audits another (see the module documentation). Counts are
/// kept per source type index, with no lock and no allocation per record,
/// and handed to the shared ledger when the sink is finished or dropped.
pub struct Audited {
    inner: Option<Box<dyn Sink>>,
    plan: Plan,
    counts: Vec<TypeCount>,
    lossy: bool,
    ledger: Arc<Mutex<Ledger>>,
    /// Losses are not allowed and one happened: nothing more is written.
    refused: bool,
}

impl Audited {
    /// Wraps `inner`; the ledger is shared with the caller, who reads it
    /// after the run.
    pub fn new(inner: Box<dyn Sink>, plan: Plan, lossy: bool) -> (Audited, Arc<Mutex<Ledger>>) {
        let ledger = Arc::new(Mutex::new(Ledger {
            types: BTreeMap::new(),
            lossy,
        }));
        let counts = vec![TypeCount::default(); plan.types.len()];
        (
            Audited {
                inner: Some(inner),
                plan,
                counts,
                lossy,
                ledger: ledger.clone(),
                refused: false,
            },
            ledger,
        )
    }

    /// Hands the counts to the shared ledger (once).
    fn flush(&mut self) {
        let mut ledger = self.ledger.lock().unwrap_or_else(|p| p.into_inner());
        for (tp, c) in self.plan.types.iter().zip(self.counts.iter_mut()) {
            if c.read > 0 {
                let e = ledger.types.entry(tp.name.clone()).or_default();
                e.read += c.read;
                e.written += c.written;
                e.dropped += c.dropped;
                e.changed += c.changed;
                e.reencoded += c.reencoded;
                e.withheld += c.withheld;
                for w in c.why.drain(..) {
                    note(&mut e.why, &w);
                }
                c.read = 0;
            }
        }
    }
}

impl Drop for Audited {
    fn drop(&mut self) {
        self.flush();
    }
}

fn note(why: &mut Vec<String>, reason: &str) {
    if !why.iter().any(|w| w == reason) && why.len() < 8 {
        why.push(reason.to_string());
    }
}

impl Sink for Audited {
    fn write_record(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        let index = rec.record_type().index;
        let tp = &self.plan.types[index];
        let count = &mut self.counts[index];
        count.read += 1;
        let mut changed: Option<&str> = match &tp.fate {
            Fate::Exact => None,
            Fate::Encoding => {
                count.reencoded += 1;
                return Ok(());
            }
            Fate::Dropped(why) => {
                count.dropped += 1;
                note(&mut count.why, why);
                self.refused |= !self.lossy;
                return Ok(());
            }
            Fate::Changed(why) => Some(why),
        };
        let lost = tp
            .unplaced
            .iter()
            .any(|(i, _)| rec.get(*i).is_some_and(|v| holds_data(&v)));
        if lost {
            match changed {
                Some(c) => note(&mut count.why, c),
                None => changed = Some(&tp.unplaced_why),
            }
        }
        if let Some(why) = changed {
            count.changed += 1;
            note(&mut count.why, if lost { &tp.unplaced_why } else { why });
            self.refused |= !self.lossy;
        }
        if self.refused {
            count.withheld += 1;
            return Ok(());
        }
        count.written += 1;
        match &mut self.inner {
            Some(inner) => inner.write_record(rec),
            None => Ok(()),
        }
    }

    fn finish(mut self: Box<Self>) -> Result<(), Error> {
        // Records to write (encoding records aside), and those written.
        let (data, written) = self.counts.iter().fold((0, 0), |(d, w), c| {
            (d + c.read - c.reencoded, w + c.written)
        });
        self.flush();
        if self.lossy && data > 0 && written == 0 {
            // The output is dropped unfinished: an empty file is no
            // conversion.
            let ledger = self.ledger.lock().unwrap_or_else(|p| p.into_inner());
            return Err(Error::Usage(format!(
                "--lossy: every record would be dropped, so nothing was written:\n  {}",
                ledger.losses().join("\n  ")
            )));
        }
        if self.refused {
            // The output is dropped unfinished: nothing appears.
            let ledger = self.ledger.lock().unwrap_or_else(|p| p.into_inner());
            return Err(Error::Usage(format!(
                "refused: the conversion would lose data (--lossy allows it):\n  {}",
                ledger.losses().join("\n  ")
            )));
        }
        match self.inner.take() {
            Some(inner) => inner.finish(),
            None => Ok(()),
        }
    }
}
