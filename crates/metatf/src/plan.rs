//! A DTD compiled once into decode/encode plans: per record type, a flat
//! list of steps (with loops for repeated fields), the tramp schema its
//! records are read into, and per section the table from tag to record.
//! The universal codec runs these plans; it never walks the syntax tree.

use std::collections::HashMap;
use std::sync::Arc;

use tramp_core::{FieldDef, FieldType, RecordKind, Role, Schema, Slot};

use crate::check::{Dtd, Field, FieldKind, Interp, Width};

/// Where a field's width comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepWidth {
    Bytes(u32),
    /// The value of an earlier step (its index in `values`).
    Of(usize),
}

/// One simple field.
#[derive(Clone, Debug)]
pub struct Step {
    /// Position among the record's simple fields (what metadata names).
    pub pos: usize,
    pub name: String,
    /// Dense id of the field's name (previous values are kept per name).
    pub name_id: usize,
    pub width: StepWidth,
    pub interp: Interp,
    /// Required value (the tag).
    pub value: Option<u64>,
    /// Field of the tramp record it fills.
    pub out: usize,
    /// Whether the field is a byte string (width above 8 or from a field).
    pub bytes: bool,
}

#[derive(Clone, Debug)]
pub enum Op {
    Field(Step),
    /// Repeat `body` as many times as the value at step `count` says.
    Repeat {
        count: usize,
        body: Vec<Op>,
    },
}

/// A field of a fixed-layout record: output field, byte offset, width,
/// and the constant value of a defaulted (or zero-width) field.
pub type FastField = (usize, usize, usize, Option<u64>);

/// How to read and write one record type.
#[derive(Clone, Debug)]
pub struct RecordPlan {
    pub name: String,
    pub tag: u64,
    pub section: u8,
    pub ops: Vec<Op>,
    /// Number of simple fields (positions 0..n; the tag is 0).
    pub positions: usize,
    /// Index of the record type in the schema.
    pub schema_type: usize,
    /// For records of fixed-width (0, 1, 2, 4, 8 bytes) fields stored as is
    /// or defaulted, none of whose names another field reads as a previous
    /// value: (output field, offset, width, constant) per field and the
    /// record's length. Used while no metadata has changed an encoding.
    pub fast: Option<(Vec<FastField>, usize)>,
    /// The same, laid out for the universal reader's fast path.
    pub layout: Option<FastLayout>,
}

/// A fixed-layout record as the universal reader decodes it: copy the
/// template (constants filled in), then read each variable field with one
/// 8-byte load at its offset, shifted or masked to its width.
#[derive(Clone, Debug)]
pub struct FastLayout {
    /// The record's length in bytes.
    pub len: usize,
    /// One slot per schema field: constants set, the rest absent.
    pub template: Vec<Slot>,
    pub reads: Vec<FastRead>,
}

/// One variable field of a [`FastLayout`].
#[derive(Clone, Copy, Debug)]
pub struct FastRead {
    pub out: u32,
    pub at: u32,
    /// `64 - 8 * width`: how far an 8-byte load is shifted down (big
    /// endian) or how much of it is masked off (little endian).
    pub shift: u32,
}

/// The compiled DTD.
#[derive(Clone, Debug)]
pub struct Plan {
    pub dtd: Dtd,
    pub records: Vec<RecordPlan>,
    pub schema: Arc<Schema>,
    /// Distinct simple-field names (`Step::name_id` indexes them).
    pub names: Vec<String>,
    /// `by_tag[section][tag]` for tags below 256 (others are searched).
    by_tag: Vec<Vec<Option<usize>>>,
    /// Bytes the universal reader wants buffered to take its fast path:
    /// the longest fixed layout plus the 8 that its last load may touch.
    pub fast_window: usize,
    /// `fast_index[section * 256 + tag]`: 1 + the record plan's index when
    /// that record has a [`FastLayout`], else 0 (tags below 256 only).
    pub fast_index: Vec<u16>,
}

pub const TAG_COMMENT: u64 = 1;
pub const TAG_SECTION: u64 = 2;
pub const TAG_METADATA: u64 = 3;

/// The role a field's conventional name suggests, when the DTD gives none.
fn role_of(name: &str) -> Option<Role> {
    Some(match name {
        "size" => Role::Size,
        "address" | "addr" => Role::Address,
        "time" => Role::Time,
        "thread" => Role::Thread,
        "heap" => Role::Heap,
        "object" | "oid" => Role::ObjectId,
        "site" | "pc" => Role::Site,
        _ => return None,
    })
}

/// A record's kind: the one its DTD declares, else the one its name suggests.
fn kind_for(declared: Option<&str>, name: &str) -> RecordKind {
    match declared {
        Some("other") => RecordKind::Other,
        Some(k) => kind_of(k),
        None => kind_of(name),
    }
}

fn kind_of(name: &str) -> RecordKind {
    match name {
        // The built-in records' names.
        "metadata" | "section" => RecordKind::Metadata,
        _ => RecordKind::named(name).unwrap_or(RecordKind::Other),
    }
}

/// Builds one record's plan. Every lookup is by map: a DTD's records and
/// fields come from untrusted input, and scans per field made a record of
/// 100 k fields take minutes.
struct Builder<'n> {
    /// Every field name of the DTD, in first-use order, and each one's
    /// index there.
    all_names: &'n mut Vec<String>,
    name_ids: &'n mut HashMap<String, usize>,
    /// Roles the DTD gives this record's fields.
    roles: HashMap<String, Role>,
    positions: usize,
    fields: Vec<FieldDef>,
    /// Fields of each name so far (the second `a` is output as `a#2`).
    uses: HashMap<String, usize>,
    /// The latest position of each simple-field name (for `Of` widths and
    /// repeat counts).
    names: HashMap<String, usize>,
}

impl Builder<'_> {
    fn unique(&mut self, name: &str) -> String {
        let n = self.uses.entry(name.to_string()).or_insert(0);
        *n += 1;
        if *n == 1 {
            name.to_string()
        } else {
            format!("{name}#{n}")
        }
    }

    fn ops(&mut self, fields: &[Field], in_repeat: bool) -> Vec<Op> {
        let mut out = Vec::new();
        for f in fields {
            match &f.kind {
                FieldKind::Simple {
                    width,
                    interp,
                    value,
                } => {
                    let bytes = !matches!(width, Width::Bytes(n) if *n <= 8);
                    let name = self.unique(&f.name);
                    let elem = if bytes {
                        FieldType::Bytes
                    } else {
                        FieldType::U64
                    };
                    let ty = if in_repeat {
                        FieldType::List(Box::new(elem))
                    } else {
                        elem
                    };
                    let declared = self.roles.get(&f.name).copied();
                    let role = declared.or(if name == f.name {
                        role_of(&f.name)
                    } else {
                        None
                    });
                    let out_idx = self.fields.len();
                    self.fields.push(FieldDef::new(name, ty, role));
                    let width = match width {
                        Width::Bytes(n) => StepWidth::Bytes(*n),
                        Width::Of(other) => {
                            StepWidth::Of(self.names.get(other).copied().unwrap_or(0))
                        }
                    };
                    let pos = self.positions;
                    self.positions += 1;
                    self.names.insert(f.name.clone(), pos);
                    let name_id = match self.name_ids.get(&f.name) {
                        Some(&i) => i,
                        None => {
                            self.all_names.push(f.name.clone());
                            self.name_ids
                                .insert(f.name.clone(), self.all_names.len() - 1);
                            self.all_names.len() - 1
                        }
                    };
                    out.push(Op::Field(Step {
                        pos,
                        name: f.name.clone(),
                        name_id,
                        width,
                        interp: interp.clone(),
                        value: *value,
                        out: out_idx,
                        bytes,
                    }));
                }
                FieldKind::Group { fields } => out.extend(self.ops(fields, in_repeat)),
                FieldKind::Repeat { count, item } => {
                    let count = self.names.get(count).copied().unwrap_or(0);
                    let body = self.ops(std::slice::from_ref(item), true);
                    out.push(Op::Repeat { count, body });
                }
            }
        }
        out
    }
}

impl Plan {
    pub fn compile(dtd: &Dtd) -> Plan {
        let mut schema = Schema::new("metatf");
        let mut records = Vec::new();
        let mut all_names = Vec::new();
        let mut name_ids = HashMap::new();
        // Roles by record, gathered once.
        let mut roles_of: HashMap<&str, HashMap<String, Role>> = HashMap::new();
        for (rec, field, role) in &dtd.roles {
            if let Some(role) = Role::named(role) {
                // The first role a field is given holds (as the scan found it).
                roles_of
                    .entry(rec.as_str())
                    .or_default()
                    .entry(field.clone())
                    .or_insert(role);
            }
        }
        for r in &dtd.records {
            let mut b = Builder {
                roles: roles_of.remove(r.name.as_str()).unwrap_or_default(),
                all_names: &mut all_names,
                name_ids: &mut name_ids,
                positions: 0,
                fields: Vec::new(),
                uses: HashMap::new(),
                names: HashMap::new(),
            };
            let ops = b.ops(&r.fields, false);
            let mut fields = b.fields;
            if r.tag == Some(TAG_METADATA) {
                // stride and sectionStride metadata carry a second value.
                fields.push(FieldDef::new("stride", FieldType::U64, None));
            }
            let schema_type =
                schema.add_type(r.name.clone(), kind_for(r.kind.as_deref(), &r.name), fields);
            records.push(RecordPlan {
                name: r.name.clone(),
                tag: r.tag.unwrap_or(0),
                section: r.section,
                ops,
                positions: b.positions,
                schema_type,
                fast: None,
                layout: None,
            });
        }
        // Names whose previous value a delta or stride reads.
        let mut tracked = vec![false; all_names.len()];
        fn mark(ops: &[Op], tracked: &mut [bool]) {
            for op in ops {
                match op {
                    Op::Field(s) => {
                        if matches!(s.interp, Interp::Delta(_) | Interp::Stride { .. }) {
                            tracked[s.name_id] = true;
                        }
                    }
                    Op::Repeat { body, .. } => mark(body, tracked),
                }
            }
        }
        for r in &records {
            mark(&r.ops, &mut tracked);
        }
        for r in records.iter_mut() {
            let mut steps = Vec::new();
            let mut at = 0usize;
            let mut ok = true;
            for op in &r.ops {
                let Op::Field(s) = op else {
                    ok = false;
                    break;
                };
                let w = match s.width {
                    StepWidth::Bytes(w @ (0 | 1 | 2 | 4 | 8))
                        if !s.bytes && !tracked[s.name_id] =>
                    {
                        w as usize
                    }
                    _ => {
                        ok = false;
                        break;
                    }
                };
                let constant = match (&s.interp, w) {
                    (Interp::None, 0) => Some(0),
                    (Interp::None, _) => None,
                    (Interp::Default(v), _) => Some(*v),
                    _ => {
                        ok = false;
                        break;
                    }
                };
                steps.push((s.out, at, w, constant));
                at += w;
            }
            if ok && r.tag != TAG_METADATA && r.tag != TAG_SECTION {
                r.fast = Some((steps, at));
            }
        }
        let mut by_tag = vec![vec![None; 256]; 256];
        for (s, table) in by_tag.iter_mut().enumerate() {
            for (i, r) in records.iter().enumerate() {
                if r.tag < 256
                    && (r.section == 0 || r.section as usize == s)
                    && (table[r.tag as usize].is_none() || r.section != 0)
                {
                    table[r.tag as usize] = Some(i);
                }
            }
        }
        let mut fast_window = 0;
        // The fast path reads the tag with one 8-byte load too.
        let tag_loadable = (1..=8).contains(&dtd.tag_width);
        for r in records.iter_mut().filter(|_| tag_loadable) {
            let Some((steps, len)) = &r.fast else {
                continue;
            };
            let nfields = schema.types[r.schema_type].fields.len();
            let mut template = vec![Slot::Absent; nfields];
            let mut reads = Vec::new();
            for &(out, at, w, constant) in steps {
                match constant {
                    Some(c) => template[out] = Slot::U(c),
                    None => reads.push(FastRead {
                        out: out as u32,
                        at: at as u32,
                        shift: 64 - 8 * w as u32,
                    }),
                }
            }
            fast_window = fast_window.max(len + 8).max(dtd.tag_width as usize + 8);
            r.layout = Some(FastLayout {
                len: *len,
                template,
                reads,
            });
        }
        let mut fast_index = vec![0u16; 256 * 256];
        if records.len() < u16::MAX as usize {
            for (section, row) in by_tag.iter().enumerate() {
                for (tag, r) in row.iter().enumerate() {
                    if let Some(i) = r
                        && records[*i].layout.is_some()
                        && tag as u64 != TAG_METADATA
                    {
                        fast_index[section * 256 + tag] = *i as u16 + 1;
                    }
                }
            }
        }
        Plan {
            dtd: dtd.clone(),
            records,
            schema: Arc::new(schema),
            names: all_names,
            by_tag,
            fast_window,
            fast_index,
        }
    }

    /// The record plan for `tag` in `section`.
    #[inline]
    pub fn record(&self, section: u8, tag: u64) -> Option<usize> {
        if tag < 256 {
            return self.by_tag[section as usize][tag as usize];
        }
        self.records
            .iter()
            .position(|r| r.tag == tag && r.section == section)
            .or_else(|| {
                self.records
                    .iter()
                    .position(|r| r.tag == tag && r.section == 0)
            })
    }

    /// The data sections written through `sectionStride`, in number order
    /// (the order writers lay them out in).
    pub fn strided_sections(&self) -> Vec<u8> {
        fn walk(ops: &[Op], out: &mut Vec<u8>) {
            for op in ops {
                match op {
                    Op::Field(s) => {
                        if let Interp::SectionStride { section, .. } = s.interp
                            && !out.contains(&section)
                        {
                            out.push(section);
                        }
                    }
                    Op::Repeat { body, .. } => walk(body, out),
                }
            }
        }
        let mut out = Vec::new();
        for r in &self.records {
            walk(&r.ops, &mut out);
        }
        out.sort_unstable();
        out
    }

    /// Whether any field reads a data section (through an offset, whose
    /// range depends on the section's size, or a stride).
    pub fn reads_sections(&self) -> bool {
        fn walk(ops: &[Op]) -> bool {
            ops.iter().any(|op| match op {
                Op::Field(s) => matches!(
                    s.interp,
                    Interp::SectionOffset(_) | Interp::SectionStride { .. }
                ),
                Op::Repeat { body, .. } => walk(body),
            })
        }
        self.records.iter().any(|r| walk(&r.ops))
    }

    /// The record plan for a schema type.
    pub fn by_schema_type(&self, ty: usize) -> Option<&RecordPlan> {
        self.records.iter().find(|r| r.schema_type == ty)
    }
}
