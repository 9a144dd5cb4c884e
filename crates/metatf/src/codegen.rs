//! Code generation: a DTD becomes a self-contained Rust module (std only)
//! with a struct per record type, a `Record` enum, a streaming `Reader`
//! and a `Writer` that read and write exactly what the universal codec
//! does (same header, same embedded DTD, same metadata and section rules),
//! and a `to_text` that prints records in tramp's generic text form.

use std::fmt::Write as _;

use crate::check::Interp;
use crate::plan::{Op, Plan, RecordPlan, StepWidth, TAG_METADATA};

fn ident(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if s.chars().next().is_none_or(|c| c.is_ascii_digit())
        || matches!(
            s.as_str(),
            "type"
                | "match"
                | "ref"
                | "fn"
                | "use"
                | "mod"
                | "struct"
                | "enum"
                | "self"
                | "loop"
                | "move"
                | "box"
        )
    {
        s = format!("f_{s}");
    }
    s
}

fn type_name(name: &str) -> String {
    let mut out = String::new();
    let mut up = true;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            up = true;
            continue;
        }
        if up {
            out.push(c.to_ascii_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out = format!("R{out}");
    }
    // Names the generated module uses itself.
    const TAKEN: [&str; 11] = [
        "Reader", "Writer", "Record", "Interp", "Stop", "Live", "Txt", "IoRead", "IoWrite",
        "HashMap", "String",
    ];
    if TAKEN.contains(&out.as_str()) {
        out.push_str("Rec");
    }
    out
}

fn interp_expr(i: &Interp) -> String {
    match i {
        Interp::None => "Interp::None".into(),
        Interp::SectionOffset(n) => format!("Interp::SectionOffset({n})"),
        Interp::SectionStride { section, stride } => {
            format!("Interp::SectionStride({section}, {stride})")
        }
        Interp::Default(v) => format!("Interp::Default({v})"),
        Interp::BaseOffset(v) => format!("Interp::BaseOffset({v})"),
        Interp::Delta(init) => format!("Interp::Delta({init})"),
        Interp::Stride { initial, stride } => format!("Interp::Stride({initial}, {stride})"),
    }
}

/// The generated expressions for a step's static width (`Some(n)` or
/// `None` when it comes from a field) and for the field it comes from.
fn width_exprs(width: &StepWidth) -> (String, String) {
    match width {
        StepWidth::Bytes(n) => (format!("Some({n})"), "0".into()),
        StepWidth::Of(i) => ("None".into(), format!("vals[{i}]")),
    }
}

/// A simple field as it appears in the generated struct.
struct GField {
    rust: String,
    text: String,
    bytes: bool,
    list: bool,
}

fn fields_of(plan: &Plan, rp: &RecordPlan) -> Vec<GField> {
    let ty = &plan.schema.types[rp.schema_type];
    ty.fields
        .iter()
        .map(|f| {
            let list = matches!(f.ty, tramp_core::FieldType::List(_));
            let bytes = matches!(&f.ty, tramp_core::FieldType::Bytes)
                || matches!(&f.ty, tramp_core::FieldType::List(e) if **e == tramp_core::FieldType::Bytes);
            GField { rust: ident(&f.name.replace('#', "_")), text: f.name.clone(), bytes, list }
        })
        .collect()
}

fn read_ops(
    out: &mut String,
    rp: &RecordPlan,
    ops: &[Op],
    fields: &[GField],
    indent: usize,
    in_repeat: bool,
) {
    let pad = "    ".repeat(indent);
    for op in ops {
        match op {
            Op::Field(s) => {
                let f = &fields[s.out];
                let (w, of) = width_exprs(&s.width);
                let call = if f.bytes {
                    format!("self.bytes(d, &mut at, {}, {}, {w}, {of})?", rp.tag, s.pos)
                } else {
                    format!(
                        "self.field(d, &mut at, {}, {}, {}, {w}, {of}, {})?",
                        rp.tag,
                        s.pos,
                        s.name_id,
                        interp_expr(&s.interp)
                    )
                };
                if f.bytes {
                    let _ = writeln!(out, "{pad}let v = {call};");
                    let _ = writeln!(out, "{pad}vals[{}] = v.len() as u64;", s.pos);
                } else {
                    let _ = writeln!(out, "{pad}let v = {call};");
                    let _ = writeln!(out, "{pad}vals[{}] = v;", s.pos);
                }
                if in_repeat {
                    let _ = writeln!(out, "{pad}rec.{}.push(v);", f.rust);
                } else {
                    let _ = writeln!(out, "{pad}rec.{} = v;", f.rust);
                }
            }
            Op::Repeat { count, body } => {
                let _ = writeln!(
                    out,
                    "{pad}if vals[{count}] > MAX_RECORD as u64 {{ return Err(bad(\"repeat count too large\")); }}"
                );
                let _ = writeln!(out, "{pad}for _ in 0..vals[{count}] {{");
                read_ops(out, rp, body, fields, indent + 1, true);
                let _ = writeln!(out, "{pad}}}");
            }
        }
    }
}

fn write_ops(
    out: &mut String,
    rp: &RecordPlan,
    ops: &[Op],
    fields: &[GField],
    indent: usize,
    index: Option<&str>,
) {
    let pad = "    ".repeat(indent);
    for op in ops {
        match op {
            Op::Field(s) => {
                let f = &fields[s.out];
                let value = match index {
                    Some(i) => format!("r.{}.get({i}).cloned().unwrap_or_default()", f.rust),
                    None => format!("r.{}.clone()", f.rust),
                };
                if s.pos == 0 {
                    let _ = writeln!(out, "{pad}self.put_tag({});", rp.tag);
                    let _ = writeln!(out, "{pad}vals[0] = {};", rp.tag);
                    continue;
                }
                let (w, of) = width_exprs(&s.width);
                if f.bytes {
                    let _ = writeln!(out, "{pad}let v: Vec<u8> = {value};");
                    let _ = writeln!(
                        out,
                        "{pad}self.put_bytes({}, {}, {w}, {of}, &v)?;",
                        rp.tag, s.pos
                    );
                    let _ = writeln!(out, "{pad}vals[{}] = v.len() as u64;", s.pos);
                } else {
                    let _ = writeln!(out, "{pad}let v: u64 = {value};");
                    let _ = writeln!(
                        out,
                        "{pad}self.put_field({}, {}, {}, {w}, {of}, {}, v)?;",
                        rp.tag,
                        s.pos,
                        s.name_id,
                        interp_expr(&s.interp)
                    );
                    let _ = writeln!(out, "{pad}vals[{}] = v;", s.pos);
                }
            }
            Op::Repeat { count, body } => {
                let var = format!("i{indent}");
                let _ = writeln!(out, "{pad}for {var} in 0..vals[{count}] as usize {{");
                write_ops(out, rp, body, fields, indent + 1, Some(&var));
                let _ = writeln!(out, "{pad}}}");
            }
        }
    }
}

const RUNTIME: &str = include_str!("gen_runtime.rs.in");

/// The generated match pattern for a record's section: `_` for a global
/// record (valid in every section), else the section number.
fn section_pattern(rp: &RecordPlan) -> String {
    if rp.section == 0 {
        "_".to_string()
    } else {
        rp.section.to_string()
    }
}

/// The generated match pattern `(section, tag)` that selects a record.
fn arm_pattern(rp: &RecordPlan) -> String {
    format!("({}, {})", section_pattern(rp), rp.tag)
}

fn mark_tracked(ops: &[Op], tracked: &mut [bool]) {
    for op in ops {
        match op {
            Op::Field(s) => {
                if matches!(s.interp, Interp::Delta(_) | Interp::Stride { .. }) {
                    tracked[s.name_id] = true;
                }
            }
            Op::Repeat { body, .. } => mark_tracked(body, tracked),
        }
    }
}

/// An arm of the generated `fast` function, for records whose fields all
/// have a fixed width of 0, 1, 2, 4 or 8 bytes and are stored as is or are
/// defaults, none of them tracked: the record is built straight from
/// constant offsets (no bounds checks once `FAST_WINDOW` bytes are there)
/// while no metadata has changed any encoding. Returns the arm and the
/// record's length.
fn fast_arm(plan: &Plan, rp: &RecordPlan, tracked: &[bool]) -> Option<(String, usize)> {
    let fields = fields_of(plan, rp);
    let mut body = String::new();
    let mut at = 0usize;
    for op in &rp.ops {
        let Op::Field(s) = op else { return None };
        let f = &fields[s.out];
        let StepWidth::Bytes(w) = s.width else {
            return None;
        };
        if f.bytes || f.list || !matches!(w, 0 | 1 | 2 | 4 | 8) || tracked[s.name_id] {
            return None;
        }
        let w = w as usize;
        let value = match (&s.interp, w) {
            (_, _) if s.pos == 0 => format!("{}", rp.tag),
            (Interp::None, 0) => "0".into(),
            (Interp::None, _) => format!("rd{w}::<BIG>(d, {at})"),
            (Interp::Default(v), _) => format!("{v}"),
            _ => return None,
        };
        let _ = write!(body, "{}: {value}, ", f.rust);
        at += w;
    }
    let pat = arm_pattern(rp);
    let ty = type_name(&rp.name);
    let arm = format!(
        "        {pat} => Some((Record::{ty}({ty} {{ {body}..Default::default() }}), {at})),\n"
    );
    Some((arm, at))
}

/// Generates the Rust module for a DTD whose text is `dtd_text`.
pub fn rust(dtd_text: &str, source_name: &str) -> Result<String, Vec<crate::Diagnostic>> {
    let dtd = crate::load(dtd_text)?;
    let plan = Plan::compile(&dtd);
    // Data sections the writer spools, in the universal writer's order;
    // the reader keeps section state only when a field reads one.
    let data_sections = plan.strided_sections();
    let keeps_sections = plan.reads_sections();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "//! Generated by `tramp gen --rust` from {source_name}. Do not edit."
    );
    let _ = writeln!(
        out,
        "//! Typed records, a streaming reader and a writer for this DTD, std only."
    );
    let _ = writeln!(
        out,
        "#![allow(dead_code, unused_mut, unused_variables, unused_assignments, clippy::all)]\n"
    );
    let _ = writeln!(out, "pub const DTD: &str = {:?};", dtd_text);
    let _ = writeln!(out, "pub const TAG_WIDTH: usize = {};", dtd.tag_width);
    let _ = writeln!(
        out,
        "/// Data sections written through sectionStride, in number order.\nconst DATA_SECTIONS: &[u8] = &{data_sections:?};\n/// What the reader keeps of them.\ntype Sections = {};",
        if keeps_sections {
            "DataSections"
        } else {
            "NoSections"
        }
    );
    let _ = writeln!(out, "const NAMES: usize = {};", plan.names.len());
    let mut tracked = vec![false; plan.names.len()];
    for rp in &plan.records {
        mark_tracked(&rp.ops, &mut tracked);
    }
    let _ = writeln!(
        out,
        "const TRACKED: [bool; {}] = {:?};",
        plan.names.len(),
        tracked
    );
    let _ = writeln!(
        out,
        "const NAME_TEXT: [&str; {}] = {:?};",
        plan.names.len(),
        plan.names
    );
    out.push_str(RUNTIME);
    // Structs.
    for rp in &plan.records {
        let fields = fields_of(&plan, rp);
        let _ = writeln!(
            out,
            "\n#[derive(Debug, Clone, PartialEq, Default)]\npub struct {} {{",
            type_name(&rp.name)
        );
        for f in &fields {
            let ty = match (f.list, f.bytes) {
                (false, false) => "u64",
                (false, true) => "Vec<u8>",
                (true, false) => "Vec<u64>",
                (true, true) => "Vec<Vec<u8>>",
            };
            let ty = if rp.tag == TAG_METADATA && (f.text == "value" || f.text == "stride") {
                "Option<u64>"
            } else {
                ty
            };
            let _ = writeln!(out, "    pub {}: {ty},", f.rust);
        }
        let _ = writeln!(out, "}}");
    }
    let _ = writeln!(
        out,
        "\n#[derive(Debug, Clone, PartialEq)]\npub enum Record {{"
    );
    for rp in &plan.records {
        let _ = writeln!(out, "    {0}({0}),", type_name(&rp.name));
    }
    let _ = writeln!(out, "}}");
    // Text.
    let _ = writeln!(
        out,
        "\nimpl Record {{\n    /// The record in tramp's generic text form.\n    pub fn to_text(&self) -> String {{\n        let mut s = String::new();\n        match self {{"
    );
    // Tags some section's own record has (one set, not a scan per record:
    // a DTD of 64 k records took 10 s).
    let section_tags: std::collections::HashSet<u64> = plan
        .records
        .iter()
        .filter(|o| o.section != 0)
        .map(|o| o.tag)
        .collect();
    for rp in &plan.records {
        let fields = fields_of(&plan, rp);
        let _ = writeln!(
            out,
            "            Record::{}(r) => {{\n                s.push_str({:?});",
            type_name(&rp.name),
            rp.name
        );
        for f in &fields {
            if rp.tag == TAG_METADATA && (f.text == "value" || f.text == "stride") {
                let _ = writeln!(
                    out,
                    "                if let Some(v) = r.{0} {{ s.push_str(\" {0}=\"); s.push_str(&v.to_string()); }}",
                    f.text
                );
                continue;
            }
            let _ = writeln!(
                out,
                "                s.push_str(\" {}=\"); txt(&mut s, &r.{});",
                f.text, f.rust
            );
        }
        let _ = writeln!(out, "            }}");
    }
    let _ = writeln!(out, "        }}\n        s\n    }}\n}}");
    // Reader.
    let _ = writeln!(
        out,
        "\nimpl<R: IoRead> Reader<R> {{\n    fn decode(&mut self, d: &[u8]) -> Result<(Record, usize), Stop> {{"
    );
    let _ = writeln!(
        out,
        "        let tw = TAG_WIDTH;\n        if d.len() < tw {{ return Err(Stop::More); }}\n        let tag = self.uint(&d[..tw]);"
    );
    let _ = writeln!(out, "        if tag == 3 {{ return self.metadata(d); }}");
    let _ = writeln!(out, "        match (self.section, tag) {{");
    let mut ordered: Vec<&RecordPlan> = plan.records.iter().collect();
    ordered.sort_by_key(|r| r.section == 0);
    for rp in &ordered {
        if rp.tag == TAG_METADATA {
            continue;
        }
        let fields = fields_of(&plan, rp);
        let pat = arm_pattern(rp);
        let _ = writeln!(
            out,
            "            {pat} => {{\n                let mut at = 0usize;\n                let mut vals = [0u64; {}];\n                let mut rec = {}::default();",
            rp.positions.max(1),
            type_name(&rp.name)
        );
        read_ops(&mut out, rp, &rp.ops, &fields, 4, false);
        if rp.tag == crate::plan::TAG_SECTION {
            let _ = writeln!(
                out,
                "                self.section = vals[1].min(255) as u8;"
            );
        }
        let _ = writeln!(
            out,
            "                Ok((Record::{}(rec), at))\n            }}",
            type_name(&rp.name)
        );
    }
    let _ = writeln!(
        out,
        "            _ => Err(Stop::Bad(format!(\"unknown tag {{tag}} in section {{}}\", self.section))),\n        }}\n    }}\n}}"
    );
    // The fast path: fixed-layout records straight from constant offsets.
    let mut arms = String::new();
    let mut window = 0usize;
    for rp in &ordered {
        if rp.tag == TAG_METADATA || rp.tag == crate::plan::TAG_SECTION {
            continue;
        }
        // A global record's arm would shadow a section's own record with
        // the same tag.
        let shadowed = rp.section == 0 && section_tags.contains(&rp.tag);
        if shadowed {
            continue;
        }
        if let Some((arm, len)) = fast_arm(&plan, rp, &tracked) {
            arms.push_str(&arm);
            window = window.max(len);
        }
    }
    let _ = writeln!(
        out,
        "\n/// Bytes the fast path wants buffered: the longest fixed-layout record.\nconst FAST_WINDOW: usize = {window};\n\n/// Decodes a fixed-layout record (while no metadata is in effect) from at\n/// least `FAST_WINDOW` bytes; `None` sends the record to the general path.\n#[inline(always)]\nfn fast<const BIG: bool>(d: &[u8], section: u8) -> Option<(Record, usize)> {{\n    if FAST_WINDOW == 0 || d.len() < FAST_WINDOW {{\n        return None;\n    }}\n    let tag = uint(&d[..TAG_WIDTH], BIG);\n    match (section, tag) {{\n{arms}        _ => None,\n    }}\n}}"
    );
    // Writer.
    let _ = writeln!(
        out,
        "\nimpl<W: IoWrite> Writer<W> {{\n    /// Writes one record; on error nothing of it is written.\n    pub fn write(&mut self, rec: &Record) -> std::io::Result<()> {{\n        let mark = self.buf.len();\n        self.live.pending.clear();\n        let r = self.write_inner(rec);\n        if r.is_err() {{ self.buf.truncate(mark); self.live.pending.clear(); self.pending_data.clear(); return r; }}\n        self.commit();\n        self.commit_data()?;\n        self.spill()\n    }}\n\n    fn write_inner(&mut self, rec: &Record) -> std::io::Result<()> {{\n        match rec {{"
    );
    for rp in &plan.records {
        if rp.tag == TAG_METADATA {
            let _ = writeln!(
                out,
                "            Record::{}(r) => self.metadata(r.record, r.field, r.property, r.value, r.stride)?,",
                type_name(&rp.name)
            );
            continue;
        }
        let fields = fields_of(&plan, rp);
        let _ = writeln!(
            out,
            "            Record::{}(r) => {{\n                let mut vals = [0u64; {}];",
            type_name(&rp.name),
            rp.positions.max(1)
        );
        write_ops(&mut out, rp, &rp.ops, &fields, 4, None);
        if rp.tag == crate::plan::TAG_SECTION {
            let _ = writeln!(
                out,
                "                self.section = vals[1].min(255) as u8;"
            );
        }
        let _ = writeln!(out, "            }}");
    }
    let _ = writeln!(out, "        }}\n        Ok(())\n    }}\n}}");
    // Metadata targets: (section, tag) -> field name by position.
    let _ = writeln!(
        out,
        "\nfn target(section: u8, tag: u64, pos: usize) -> Option<(usize, Option<u32>, Interp)> {{\n    match (section, tag, pos) {{"
    );
    let mut ordered: Vec<&RecordPlan> = plan.records.iter().collect();
    ordered.sort_by_key(|r| r.section == 0);
    for rp in ordered {
        fn steps<'a>(ops: &'a [Op], v: &mut Vec<&'a crate::plan::Step>) {
            for op in ops {
                match op {
                    Op::Field(s) => v.push(s),
                    Op::Repeat { body, .. } => steps(body, v),
                }
            }
        }
        let mut v = Vec::new();
        steps(&rp.ops, &mut v);
        for s in v {
            let sec = section_pattern(rp);
            let w = match &s.width {
                StepWidth::Bytes(n) => format!("Some({n})"),
                StepWidth::Of(_) => "None".into(),
            };
            let _ = writeln!(
                out,
                "        ({sec}, {}, {}) => Some(({}, {w}, {})),",
                rp.tag,
                s.pos,
                s.name_id,
                interp_expr(&s.interp)
            );
        }
    }
    let _ = writeln!(out, "        _ => None,\n    }}\n}}");
    Ok(out)
}
