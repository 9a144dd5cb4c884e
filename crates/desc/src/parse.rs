//! The format description language:
//!
//! ```text
//! record NAME [= TAG] {
//!     TYPE FIELD [{ VALUE "label", … }];
//!     …
//! };
//! ```
//!
//! Checked here: type names and sizes, duplicate names, value lists that
//! fit their field, and the type byte: when records start with `byte
//! RECORD_TYPE`, every record must, and the nth record's tag is n − 1
//! unless given as `= TAG`; a description of a single record without one
//! reads every record as that type.

use tramp_core::ints::FixedInt;
use tramp_core::{FieldDef, FieldType, RecordKind, Role, Schema};
use tramp_diag::Diagnostic;

use crate::TYPE_FIELD;
use crate::layout::{Encoding, FieldDesc, IntRead, Order, RecordDesc, TimeKind, fits};
use crate::lex::{Span, Tok, Tokens, lex};

/// A checked description.
#[derive(Clone, Debug, PartialEq)]
pub struct Description {
    pub records: Vec<RecordDesc>,
    /// Whether records start with a type byte.
    pub tagged: bool,
    /// Record index by tag.
    by_tag: Vec<Option<u16>>,
}

impl Description {
    /// The record type whose tag is `tag`.
    #[inline]
    pub fn by_tag(&self, tag: u8) -> Option<usize> {
        self.by_tag[tag as usize].map(usize::from)
    }

    /// The record type called `name`.
    pub fn record(&self, name: &str) -> Option<usize> {
        self.records.iter().position(|r| r.name == name)
    }

    /// The tramp schema of records read in this layout: one record type
    /// per record, its fields after the type byte (integers as U64 or I64,
    /// characters as bytes); time fields carry the time role.
    pub fn schema(&self) -> Schema {
        let mut s = Schema::new("tramp-desc");
        for r in &self.records {
            let fields = r
                .fields
                .iter()
                .map(|f| {
                    let ty = match f.enc {
                        Encoding::Int { signed: true, .. } => FieldType::I64,
                        Encoding::Int { .. } => FieldType::U64,
                        Encoding::Chars(_) | Encoding::Prefixed { .. } => FieldType::Bytes,
                    };
                    let role = (f.time != TimeKind::No).then_some(Role::Time);
                    FieldDef::new(f.name.clone(), ty, role)
                })
                .collect();
            let i = s.add_type(r.name.clone(), RecordKind::Other, fields);
            s.types[i].fixed_ints = self.fixed_ints(r);
        }
        s
    }

    /// Where each field of `r` lies, when the record has a fixed size and
    /// every field is a plain integer (not a time: `time_incr` needs the
    /// previous record).
    fn fixed_ints(&self, r: &RecordDesc) -> Option<Box<[FixedInt]>> {
        r.fixed_size?;
        let mut off = self.tagged as u32;
        r.fields
            .iter()
            .map(|f| match (f.enc, f.time) {
                (
                    Encoding::Int {
                        size,
                        order,
                        signed,
                    },
                    TimeKind::No,
                ) => {
                    let at = FixedInt {
                        off,
                        read: IntRead::of(size, order, signed),
                    };
                    off += size as u32;
                    Some(at)
                }
                _ => None,
            })
            .collect()
    }
}

/// Parses and checks a description.
pub fn parse(src: &str) -> Result<Description, Diagnostic> {
    let toks = lex(src)?;
    let mut t = Tokens::new(toks, src.len());
    // Each record, its explicit tag (if any), and whether it has a type byte.
    type Parsed = (RecordDesc, Option<(u64, Span)>, bool);
    let mut records: Vec<Parsed> = Vec::new();
    // Names seen, by map: descriptions are untrusted input, and scans made
    // one of 100 k fields take seconds.
    let mut record_names: std::collections::HashMap<String, usize> = Default::default();
    while !t.at_end() {
        t.expect_word("record", "to start a record description")?;
        let (name, span) = t.ident("a record name")?;
        if let Some(prev) = record_names.get(&name).map(|&i| &records[i].0) {
            return Err(Diagnostic::new(
                format!("record `{name}` is described twice"),
                span,
                "second description",
            )
            .related(prev.span.clone(), "first description"));
        }
        let tag = if t.eat("=") {
            Some(t.int("the record's type byte value")?)
        } else {
            None
        };
        t.expect("{", "to open the record's fields")?;
        let mut fields: Vec<FieldDesc> = Vec::new();
        let mut field_names: std::collections::HashMap<String, usize> = Default::default();
        let mut has_type_byte = false;
        while !t.eat("}") {
            let f = field(&mut t)?;
            if f.name == TYPE_FIELD {
                let first = fields.is_empty() && !has_type_byte;
                let is_byte = f.enc
                    == Encoding::Int {
                        size: 1,
                        order: Order::HOST,
                        signed: false,
                    };
                if !first || !is_byte {
                    return Err(Diagnostic::new(
                        format!("`{TYPE_FIELD}` must be the first field and a `byte`"),
                        f.span,
                        "the type byte",
                    ));
                }
                has_type_byte = true;
                continue;
            }
            if let Some(prev) = field_names.get(&f.name).map(|&i| &fields[i]) {
                return Err(Diagnostic::new(
                    format!("field `{}` is declared twice in record `{name}`", f.name),
                    f.span.clone(),
                    "second declaration",
                )
                .related(prev.span.clone(), "first declaration"));
            }
            field_names.insert(f.name.clone(), fields.len());
            fields.push(f);
        }
        t.eat(";");
        let fixed: usize = fields.iter().filter_map(|f| f.enc.fixed_size()).sum();
        if fixed > crate::source::MAX_RECORD {
            return Err(Diagnostic::new(
                format!(
                    "record `{name}` is {fixed} bytes, over the {}-byte limit",
                    crate::source::MAX_RECORD
                ),
                span,
                "this record",
            ));
        }
        let fixed_size = fields
            .iter()
            .map(|f| f.enc.fixed_size())
            .sum::<Option<usize>>()
            .map(|n| n + has_type_byte as usize);
        record_names.insert(name.clone(), records.len());
        records.push((
            RecordDesc {
                name,
                span,
                tag: None,
                fields,
                fixed_size,
            },
            tag,
            has_type_byte,
        ));
    }
    if records.is_empty() {
        return Err(Diagnostic::new(
            "the description has no record",
            0..0,
            "expected `record NAME { … };`",
        ));
    }
    let tagged = records.iter().any(|r| r.2);
    if !tagged && records[0].0.fields.is_empty() {
        let r = &records[0].0;
        return Err(Diagnostic::new(
            format!("record `{}` has no bytes", r.name),
            r.span.clone(),
            "a record without a type byte needs at least one field",
        ));
    }
    if !tagged && records.len() > 1 {
        let r = &records[1].0;
        return Err(Diagnostic::new(
            "several records need a type byte to tell them apart",
            r.span.clone(),
            format!("`{}` has no `byte {TYPE_FIELD};` first", r.name),
        )
        .note("start every record with `byte RECORD_TYPE;`, or describe a single record"));
    }
    let mut by_tag: Vec<Option<u16>> = vec![None; 256];
    let mut out = Vec::with_capacity(records.len());
    for (i, (mut r, tag, has)) in records.into_iter().enumerate() {
        if tagged && !has {
            return Err(Diagnostic::new(
                format!("record `{}` lacks the type byte the others have", r.name),
                r.span,
                format!("add `byte {TYPE_FIELD};` as its first field"),
            ));
        }
        if !tagged && let Some((_, span)) = tag {
            return Err(Diagnostic::new(
                "a record without a type byte cannot have a tag",
                span,
                format!("this needs `byte {TYPE_FIELD};` in the record"),
            ));
        }
        if tagged {
            let (value, span) = tag.unwrap_or((i as u64, r.span.clone()));
            if value > 255 {
                return Err(Diagnostic::new(
                    format!("tag {value} does not fit the type byte"),
                    span,
                    "0 to 255",
                ));
            }
            if let Some(other) = by_tag[value as usize] {
                let o: &RecordDesc = &out[other as usize];
                return Err(Diagnostic::new(
                    format!("records `{}` and `{}` share tag {value}", o.name, r.name),
                    span,
                    "this tag",
                )
                .related(o.span.clone(), "the record that has it")
                .note("the nth record's tag is n - 1 unless given as `record NAME = TAG`"));
            }
            by_tag[value as usize] = Some(i as u16);
            r.tag = Some(value as u8);
        }
        out.push(r);
    }
    Ok(Description {
        records: out,
        tagged,
        by_tag,
    })
}

fn field(t: &mut Tokens) -> Result<FieldDesc, Diagnostic> {
    let (ty, ty_span) = t.ident("a field type")?;
    let param = if t.eat("(") {
        let v = t.int("the type's size")?;
        t.expect(")", "after the type's size")?;
        Some(v)
    } else {
        None
    };
    let (enc, time) = field_type(&ty, param, ty_span.start..t.prev_span().end)?;
    let (name, span) = t.ident("a field name")?;
    let mut values = Vec::new();
    if t.eat("{") {
        while !t.eat("}") {
            let (v, vspan) = t.int("a value")?;
            let label = match t.take() {
                Some((Tok::Str(s), _)) => s,
                _ => {
                    return Err(Diagnostic::new(
                        "expected a label string after the value",
                        t.prev_span(),
                        "e.g. 0x00 \"read\",",
                    ));
                }
            };
            if let Encoding::Int { size, signed, .. } = enc
                && !fits(v, size, signed)
            {
                return Err(Diagnostic::new(
                    format!("value {v} does not fit field `{name}`"),
                    vspan,
                    format!("{size}-byte field"),
                ));
            }
            values.push((v, label));
            if !t.eat(",") {
                t.expect("}", "to close the value list")?;
                break;
            }
        }
    }
    t.expect(";", "after a field")?;
    Ok(FieldDesc {
        name,
        span,
        enc,
        time,
        values,
    })
}

fn field_type(
    ty: &str,
    param: Option<(u64, Span)>,
    span: Span,
) -> Result<(Encoding, TimeKind), Diagnostic> {
    let int = |size: u64, order: Order, signed: bool| Encoding::Int {
        size: size as u8,
        order,
        signed,
    };
    let sized = |allowed: &[u64], default: Option<u64>| -> Result<u64, Diagnostic> {
        match (param.as_ref(), default) {
            (Some((v, s)), _) => {
                if allowed.contains(v) {
                    Ok(*v)
                } else {
                    Err(Diagnostic::new(
                        format!("`{ty}({v})`: the size must be one of {allowed:?}"),
                        s.clone(),
                        "size",
                    ))
                }
            }
            (None, Some(d)) => Ok(d),
            (None, None) => Err(Diagnostic::new(
                format!("`{ty}` needs a size: `{ty}(n)`"),
                span.clone(),
                "no size",
            )),
        }
    };
    let no_param = || -> Result<(), Diagnostic> {
        match &param {
            Some((_, s)) => Err(Diagnostic::new(
                format!("`{ty}` takes no size"),
                s.clone(),
                "remove this",
            )),
            None => Ok(()),
        }
    };
    const INTS: [u64; 4] = [1, 2, 4, 8];
    let host = Order::HOST;
    let enc = match ty {
        "byte" => {
            no_param()?;
            int(1, host, false)
        }
        "bytes" => int(sized(&INTS, None)?, host, false),
        "time" => return Ok((int(sized(&INTS, Some(4))?, host, false), TimeKind::Absolute)),
        "time_incr" => {
            return Ok((
                int(sized(&INTS, Some(4))?, host, false),
                TimeKind::Increment,
            ));
        }
        "swap_halfword" => {
            no_param()?;
            int(2, host.swapped(), false)
        }
        "swap_fullword" => {
            no_param()?;
            int(4, host.swapped(), false)
        }
        "le" => int(sized(&INTS, None)?, Order::Little, false),
        "be" => int(sized(&INTS, None)?, Order::Big, false),
        "signed" => int(sized(&INTS, None)?, host, true),
        "char" => {
            let n = match &param {
                Some((n, s)) if *n == 0 || *n > 1 << 20 => {
                    return Err(Diagnostic::new(
                        format!("`char({n})`: 1 to 1048576 characters"),
                        s.clone(),
                        "size",
                    ));
                }
                Some((n, _)) => *n,
                None => 1,
            };
            Encoding::Chars(n as u32)
        }
        "varchar" => {
            let n = sized(&[1, 2, 4], None)?;
            Encoding::Prefixed {
                len_size: n as u8,
                order: host,
            }
        }
        _ => match explicit_int(ty) {
            Some((size, order, signed)) => {
                no_param()?;
                int(size, order, signed)
            }
            None => {
                return Err(Diagnostic::new(
                    format!("unknown field type `{ty}`"),
                    span,
                    "not a type",
                )
                .note(
                    "types: byte, bytes(1|2|4|8), time[(n)], time_incr[(n)], swap_halfword, \
                     swap_fullword, le(n), be(n), signed(n), u8..u64 and i8..i64 with an \
                     optional le/be suffix, char(n), varchar(1|2|4)",
                ));
            }
        },
    };
    Ok((enc, TimeKind::No))
}

/// `u16`, `i32le`, `u64be`, …
fn explicit_int(ty: &str) -> Option<(u64, Order, bool)> {
    let signed = match ty.as_bytes().first()? {
        b'u' => false,
        b'i' => true,
        _ => return None,
    };
    let rest = &ty[1..];
    let (digits, order) = if let Some(d) = rest.strip_suffix("le") {
        (d, Order::Little)
    } else if let Some(d) = rest.strip_suffix("be") {
        (d, Order::Big)
    } else {
        (rest, Order::HOST)
    };
    let bits: u64 = digits.parse().ok()?;
    matches!(bits, 8 | 16 | 32 | 64).then_some((bits / 8, order, signed))
}
