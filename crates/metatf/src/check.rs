//! From syntax to a checked model: scopes, property resolution (record,
//! then its section, then global), the rules of the language, and the
//! built-in records.

use std::collections::HashMap;
use std::fmt;

use tramp_core::{RecordKind, Role};

use crate::ast::*;
use tramp_diag::Diagnostic;

/// A field's width.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Width {
    /// Bytes (widths above 8 make byte strings).
    Bytes(u32),
    /// The value of an earlier field of the same record (`data.width = length.value`).
    Of(String),
}

/// A field's interpretation (HATF's, plus Meta-TF's section ones).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Interp {
    None,
    Default(u64),
    BaseOffset(u64),
    Delta(u64),
    Stride { initial: u64, stride: i64 },
    SectionOffset(u8),
    SectionStride { section: u8, stride: i64 },
}

impl Interp {
    /// default, stride and sectionStride store nothing in the record.
    pub fn implies_zero_width(&self) -> bool {
        matches!(
            self,
            Interp::Default(_) | Interp::Stride { .. } | Interp::SectionStride { .. }
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub kind: FieldKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldKind {
    Simple {
        width: Width,
        interp: Interp,
        value: Option<u64>,
    },
    /// A composite field: a field group (like vfield) or `(a, b)`.
    Group { fields: Vec<Field> },
    /// `count*item`.
    Repeat { count: String, item: Box<Field> },
}

/// A record type (with a tag), or a field group (without).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordDef {
    pub name: String,
    pub tag: Option<u64>,
    /// The section it belongs to: 0 is global.
    pub section: u8,
    pub fields: Vec<Field>,
    pub builtin: bool,
    /// What the record means to tramp (`tag.kind = alloc;`), if declared.
    pub kind: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub id: u8,
}

/// A checked DTD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dtd {
    pub tag_width: u32,
    pub sections: Vec<Section>,
    /// Records with tags (built-ins first), then in definition order.
    pub records: Vec<RecordDef>,
    pub groups: Vec<RecordDef>,
    /// Roles the DTD gives fields: (record, field, role).
    pub roles: Vec<(String, String, String)>,
}

impl Dtd {
    /// The record with `tag` as seen from `section` (its own, then global).
    pub fn record_for_tag(&self, section: u8, tag: u64) -> Option<&RecordDef> {
        self.records
            .iter()
            .find(|r| r.section == section && r.tag == Some(tag))
            .or_else(|| {
                self.records
                    .iter()
                    .find(|r| r.section == 0 && r.tag == Some(tag))
            })
    }

    pub fn record_named(&self, name: &str) -> Option<&RecordDef> {
        self.records.iter().find(|r| r.name == name)
    }
}

const BUILTIN_NAMES: [&str; 4] = ["vfield", "comment", "section", "metadata"];
const RESERVED_PROPS: [&str; 3] = ["width", "interpretation", "value"];

type Props<'a> = HashMap<(&'a str, &'a str), &'a PropAst>;

struct Scope<'a> {
    global: Props<'a>,
    sections: HashMap<u8, Props<'a>>,
}

/// Definitions gathered before records are resolved.
struct Def<'a> {
    ast: &'a RecordAst,
    section: u8,
    builtin: bool,
}

pub fn check(doc: &Doc) -> Result<Dtd, Vec<Diagnostic>> {
    let builtins = crate::parser::parse(crate::BUILTINS).expect("built-ins parse");
    let mut c = Checker {
        errors: Vec::new(),
        roles: Vec::new(),
    };
    let dtd = c.run(&builtins, doc);
    if c.errors.is_empty() {
        Ok(dtd.expect("no errors"))
    } else {
        Err(c.errors)
    }
}

struct Checker {
    errors: Vec<Diagnostic>,
    /// (record, field, role) from `field.role = NAME;` properties.
    roles: Vec<(String, String, String)>,
}

impl Checker {
    fn err(&mut self, d: Diagnostic) {
        if self.errors.len() < 50 {
            self.errors.push(d);
        }
    }

    fn run<'a>(&mut self, builtins: &'a Doc, doc: &'a Doc) -> Option<Dtd> {
        let mut scope = Scope {
            global: HashMap::new(),
            sections: HashMap::new(),
        };
        let mut defs: Vec<Def<'a>> = Vec::new();
        let mut defined: HashMap<&'a str, usize> = HashMap::new();
        let mut sections: Vec<(Section, Span)> = Vec::new();
        let mut tag_width: Option<(u32, Span)> = None;
        for item in &builtins.items {
            if let Item::Record(r) = item {
                defs.push(Def {
                    ast: r,
                    section: 0,
                    builtin: true,
                });
            }
        }
        for item in &doc.items {
            match item {
                Item::Record(r) => self.define(&mut defs, &mut defined, r, 0),
                Item::Property(p) => self.global_prop(&mut scope.global, p, &mut tag_width, true),
                Item::Section(s) => {
                    let id = s.id.node;
                    if !(1..=255).contains(&id) {
                        self.err(Diagnostic::new(
                            format!("section id {id} is out of range"),
                            s.id.span.clone(),
                            "must be 1 to 255",
                        ));
                        continue;
                    }
                    let id = id as u8;
                    if s.name.node.eq_ignore_ascii_case("section") {
                        self.err(Diagnostic::new(
                            "`section` is a reserved name",
                            s.name.span.clone(),
                            "reserved",
                        ));
                    }
                    if let Some((prev, span)) = sections
                        .iter()
                        .find(|(p, _)| p.id == id || p.name == s.name.node)
                    {
                        let what = if prev.id == id {
                            format!("id {id}")
                        } else {
                            format!("name `{}`", prev.name)
                        };
                        self.err(
                            Diagnostic::new(
                                format!("two sections with the {what}"),
                                s.span.start..s.id.span.end,
                                "again here",
                            )
                            .related(span.clone(), "first here"),
                        );
                        continue;
                    }
                    sections.push((
                        Section {
                            name: s.name.node.clone(),
                            id,
                        },
                        s.span.start..s.id.span.end,
                    ));
                    let props = scope.sections.entry(id).or_default();
                    for inner in &s.items {
                        match inner {
                            Item::Record(r) => self.define(&mut defs, &mut defined, r, id),
                            Item::Property(p) => {
                                let mut none = None;
                                self.global_prop(props, p, &mut none, false);
                                if p.field.node == "tag" && p.prop.node == "width" {
                                    self.err(Diagnostic::new(
                                        "the tag width can only be set once, globally",
                                        p.span.clone(),
                                        "inside a section",
                                    ));
                                }
                            }
                            Item::Section(_) => unreachable!("the parser rejects nested sections"),
                        }
                    }
                }
            }
        }
        let tag_width = match tag_width {
            Some((w, _)) => w,
            None => {
                self.err(
                    Diagnostic::new("the DTD does not set the tag width", 0..0, "no `tag.width = N;` in the file")
                        .note("every record starts with a tag: set its width once, globally, e.g. `tag.width = 1;`"),
                );
                1
            }
        };
        let section_ids: Vec<u8> = sections.iter().map(|(s, _)| s.id).collect();
        let mut records = Vec::new();
        let mut groups = Vec::new();
        let names: HashMap<&str, &Def> =
            defs.iter().map(|d| (d.ast.name.node.as_str(), d)).collect();
        for d in &defs {
            let cx = Cx {
                scope: &scope,
                names: &names,
                tag_width,
                sections: &section_ids,
            };
            if let Some(r) = self.resolve(&cx, d, 0) {
                if r.tag.is_some() {
                    records.push(r)
                } else {
                    groups.push(r)
                }
            }
        }
        // Duplicate tags within a section (global records are visible in
        // all): each record against the earlier ones of its tag, by a map
        // (a scan of every pair took seconds on tens of thousands of
        // records); the first clash a record has is reported.
        let mut by_tag: HashMap<Option<u64>, Vec<usize>> = HashMap::new();
        for (i, a) in records.iter().enumerate() {
            let earlier = by_tag.entry(a.tag).or_default();
            let clash = earlier
                .iter()
                .map(|&j| &records[j])
                .find(|b| a.section == b.section || a.section == 0 || b.section == 0);
            earlier.push(i);
            if let Some(b) = clash {
                {
                    let (da, db) = (names[a.name.as_str()], names[b.name.as_str()]);
                    let span = tag_span(da.ast).unwrap_or(da.ast.name.span.clone());
                    let mut diag = Diagnostic::new(
                        format!(
                            "records `{}` and `{}` share tag {}",
                            b.name,
                            a.name,
                            a.tag.unwrap_or(0)
                        ),
                        span,
                        "duplicate tag",
                    );
                    if !db.builtin {
                        diag = diag.related(
                            tag_span(db.ast).unwrap_or(db.ast.name.span.clone()),
                            "first used here",
                        );
                    } else {
                        diag = diag.note(format!("tags 1-3 belong to the built-in records comment, section and metadata ({} here)", b.name));
                    }
                    self.err(diag);
                }
            }
        }
        Some(Dtd {
            tag_width,
            sections: sections.into_iter().map(|(s, _)| s).collect(),
            records,
            groups,
            roles: std::mem::take(&mut self.roles),
        })
    }

    /// Adds a record's definition; `defined`: the index in `defs` of each
    /// user record's name (duplicates found by it, not by a scan).
    fn define<'a>(
        &mut self,
        defs: &mut Vec<Def<'a>>,
        defined: &mut HashMap<&'a str, usize>,
        r: &'a RecordAst,
        section: u8,
    ) {
        if BUILTIN_NAMES.contains(&r.name.node.as_str()) {
            self.err(Diagnostic::new(
                format!(
                    "`{}` is a built-in record and cannot be redefined",
                    r.name.node
                ),
                r.name.span.clone(),
                "reserved name",
            ));
            return;
        }
        if let Some(prev) = defined.get(r.name.node.as_str()).map(|&i| &defs[i]) {
            self.err(
                Diagnostic::new(
                    format!("record `{}` is defined twice", r.name.node),
                    r.name.span.clone(),
                    "again here",
                )
                .related(prev.ast.name.span.clone(), "first here"),
            );
            return;
        }
        defined.insert(r.name.node.as_str(), defs.len());
        defs.push(Def {
            ast: r,
            section,
            builtin: false,
        });
    }

    fn global_prop<'a>(
        &mut self,
        props: &mut Props<'a>,
        p: &'a PropAst,
        tag_width: &mut Option<(u32, Span)>,
        top: bool,
    ) {
        let key = (p.field.node.as_str(), p.prop.node.as_str());
        if let Some(prev) = props.get(&key) {
            self.err(
                Diagnostic::new(
                    format!("`{}.{}` is set twice in the same scope", key.0, key.1),
                    p.span.clone(),
                    "again here",
                )
                .related(prev.span.clone(), "first here"),
            );
            return;
        }
        if top && key == ("tag", "width") {
            match &p.value.node {
                ValueAst::Number(n) if (1..=8).contains(n) => {
                    *tag_width = Some((*n as u32, p.span.clone()))
                }
                _ => self.err(Diagnostic::new(
                    "the tag width must be a number from 1 to 8",
                    p.value.span.clone(),
                    "here",
                )),
            }
        }
        if key == ("tag", "interpretation") {
            self.err(Diagnostic::new(
                "the tag's interpretation is always none",
                p.span.clone(),
                "cannot be set",
            ));
        }
        props.insert(key, p);
    }

    fn resolve(&mut self, cx: &Cx, d: &Def, depth: usize) -> Option<RecordDef> {
        let r = d.ast;
        let mut local: Props = HashMap::new();
        for p in &r.props {
            let key = (p.field.node.as_str(), p.prop.node.as_str());
            if let Some(prev) = local.get(&key) {
                self.err(
                    Diagnostic::new(
                        format!(
                            "`{}.{}` is set twice in record `{}`",
                            key.0, key.1, r.name.node
                        ),
                        p.span.clone(),
                        "again here",
                    )
                    .related(prev.span.clone(), "first here"),
                );
            }
            local.insert(key, p);
            if key == ("tag", "width") {
                self.err(Diagnostic::new(
                    "the tag width can only be set once, globally",
                    p.span.clone(),
                    "inside a record",
                ));
            }
            if key == ("tag", "interpretation") {
                self.err(Diagnostic::new(
                    "the tag's interpretation is always none",
                    p.span.clone(),
                    "cannot be set",
                ));
            }
        }
        // The tag: from `tag.value`; listed or implied as the first field.
        let tag = match local.get(&("tag", "value")) {
            Some(p) => match p.value.node {
                ValueAst::Number(n) => {
                    if cx.tag_width < 8 && n >> (8 * cx.tag_width) != 0 {
                        self.err(Diagnostic::new(
                            format!("tag {n} does not fit the {}-byte tag width", cx.tag_width),
                            p.value.span.clone(),
                            "too large",
                        ));
                    }
                    Some(n)
                }
                _ => {
                    self.err(Diagnostic::new(
                        "a tag value must be a number",
                        p.value.span.clone(),
                        "here",
                    ));
                    None
                }
            },
            None => None,
        };
        let lists_tag = r
            .fields
            .iter()
            .any(|f| matches!(f, FieldAst::Name(n) if n.node == "tag"));
        if lists_tag && tag.is_none() {
            self.err(
                Diagnostic::new(
                    format!("record `{}` has a tag field but no tag value", r.name.node),
                    r.name.span.clone(),
                    "here",
                )
                .note("the value property is mandatory for tag fields: `tag.value = N;`"),
            );
        }
        let mut fields = Vec::new();
        if tag.is_some() && !lists_tag {
            fields.push(Field {
                name: "tag".into(),
                kind: FieldKind::Simple {
                    width: Width::Bytes(cx.tag_width),
                    interp: Interp::None,
                    value: tag,
                },
            });
        }
        let mut seen = Seen::default();
        for f in &fields {
            seen.push(f.name.clone());
        }
        for f in &r.fields {
            if let Some(field) = self.field(cx, d, &local, f, &mut seen, tag, depth) {
                fields.push(field);
            }
        }
        // Properties about fields the record does not have.
        for p in &r.props {
            let name = p.field.node.as_str();
            if name != "tag" && !seen.contains(name) {
                self.err(Diagnostic::new(
                    format!("record `{}` has no field `{name}`", r.name.node),
                    p.field.span.clone(),
                    "undefined field",
                ));
            }
        }
        let kind = match local.get(&("tag", "kind")) {
            None => None,
            Some(p) => match &p.value.node {
                ValueAst::Interp { name, args }
                    if args.is_empty() && RecordKind::named(name).is_some() =>
                {
                    Some(name.clone())
                }
                _ => {
                    self.err(
                        Diagnostic::new("unknown record kind", p.value.span.clone(), "here")
                            .note(format!("kinds: {}", RecordKind::names())),
                    );
                    None
                }
            },
        };
        Some(RecordDef {
            kind,
            name: r.name.node.clone(),
            tag,
            section: d.section,
            fields,
            builtin: d.builtin,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn field(
        &mut self,
        cx: &Cx,
        d: &Def,
        local: &Props,
        f: &FieldAst,
        seen: &mut Seen,
        tag: Option<u64>,
        depth: usize,
    ) -> Option<Field> {
        if depth > 16 {
            self.err(Diagnostic::new(
                "field groups nest too deeply (or contain themselves)",
                d.ast.name.span.clone(),
                "here",
            ));
            return None;
        }
        match f {
            FieldAst::Group { fields, .. } => {
                let mut out = Vec::new();
                for g in fields {
                    out.push(self.field(cx, d, local, g, seen, tag, depth + 1)?);
                }
                Some(Field {
                    name: String::new(),
                    kind: FieldKind::Group { fields: out },
                })
            }
            FieldAst::Repeat { count, item } => {
                if !seen.contains(&count.node) {
                    self.err(Diagnostic::new(
                        format!(
                            "the count `{}` must be a field before it in `{}`",
                            count.node, d.ast.name.node
                        ),
                        count.span.clone(),
                        "undefined field",
                    ));
                    return None;
                }
                let item = self.field(cx, d, local, item, seen, tag, depth + 1)?;
                Some(Field {
                    name: count.node.clone() + "*",
                    kind: FieldKind::Repeat {
                        count: count.node.clone(),
                        item: Box::new(item),
                    },
                })
            }
            FieldAst::Name(n) => {
                let name = n.node.as_str();
                if name == "tag" {
                    seen.push("tag".into());
                    return Some(Field {
                        name: "tag".into(),
                        kind: FieldKind::Simple {
                            width: Width::Bytes(cx.tag_width),
                            interp: Interp::None,
                            value: tag,
                        },
                    });
                }
                if let Some(g) = cx.names.get(name) {
                    if g.ast.name.node == d.ast.name.node {
                        self.err(Diagnostic::new(
                            format!("`{name}` contains itself"),
                            n.span.clone(),
                            "here",
                        ));
                        return None;
                    }
                    let group = self.resolve(cx, g, depth + 1)?;
                    if group.tag.is_some() {
                        self.err(
                            Diagnostic::new(
                                format!(
                                    "`{name}` is a record with a tag and cannot be used as a field"
                                ),
                                n.span.clone(),
                                "here",
                            )
                            .note(
                                "use a field group (a definition without `tag.value`), like vfield",
                            ),
                        );
                        return None;
                    }
                    for gf in &group.fields {
                        collect_names(gf, seen);
                    }
                    return Some(Field {
                        name: name.to_string(),
                        kind: FieldKind::Group {
                            fields: group.fields,
                        },
                    });
                }
                let before = seen.len();
                let r = self.simple(cx, d, local, n, seen);
                // Known even if it failed to resolve: no follow-on errors.
                if seen.len() == before {
                    seen.push(name.to_string());
                }
                r
            }
        }
    }

    fn simple(
        &mut self,
        cx: &Cx,
        d: &Def,
        local: &Props,
        n: &Spanned<String>,
        seen: &mut Seen,
    ) -> Option<Field> {
        let name = n.node.as_str();
        {
            {
                let get = |prop: &str| {
                    local
                        .get(&(name, prop))
                        .or_else(|| {
                            cx.scope
                                .sections
                                .get(&d.section)
                                .and_then(|s| s.get(&(name, prop)))
                        })
                        .or_else(|| cx.scope.global.get(&(name, prop)))
                        .copied()
                };
                let interp_p = get("interpretation");
                let width_p = get("width");
                let value_p = get("value");
                let interp = match interp_p {
                    Some(p) => self.interp(cx, p)?,
                    None => {
                        self.err(
                            Diagnostic::new(
                                format!(
                                    "field `{name}` of `{}` has no interpretation",
                                    d.ast.name.node
                                ),
                                n.span.clone(),
                                "defined here",
                            )
                            .note(format!(
                                "set `{name}.interpretation` in the record, its section or globally"
                            )),
                        );
                        return None;
                    }
                };
                let width = match (width_p, interp.implies_zero_width()) {
                    (Some(p), zero) => {
                        let w = self.width(cx, p, seen, d)?;
                        if zero && w != Width::Bytes(0) {
                            self.err(
                                Diagnostic::new(
                                    format!("field `{name}` has a width but its interpretation stores nothing"),
                                    p.span.clone(),
                                    "width set here",
                                )
                                .related(interp_p.expect("checked").span.clone(), "this interpretation implies width 0"),
                            );
                        }
                        w
                    }
                    (None, true) => Width::Bytes(0),
                    (None, false) => {
                        self.err(
                            Diagnostic::new(
                                format!("field `{name}` of `{}` has no width", d.ast.name.node),
                                n.span.clone(),
                                "defined here",
                            )
                            .note(format!(
                                "set `{name}.width` in the record, its section or globally"
                            )),
                        );
                        return None;
                    }
                };
                let value = match value_p.map(|p| &p.value.node) {
                    Some(ValueAst::Number(v)) => Some(*v),
                    Some(_) => {
                        self.err(Diagnostic::new(
                            "a value must be a number",
                            value_p.expect("some").value.span.clone(),
                            "here",
                        ));
                        None
                    }
                    None => None,
                };
                seen.push(name.to_string());
                if let Some(p) = get("role") {
                    match &p.value.node {
                        ValueAst::Interp { name: role, args }
                            if args.is_empty() && Role::named(role).is_some() =>
                        {
                            self.roles.push((
                                d.ast.name.node.clone(),
                                name.to_string(),
                                role.clone(),
                            ));
                        }
                        _ => self.err(
                            Diagnostic::new("unknown role", p.value.span.clone(), "here")
                                .note(format!("roles: {}", Role::names())),
                        ),
                    }
                }
                Some(Field {
                    name: name.to_string(),
                    kind: FieldKind::Simple {
                        width,
                        interp,
                        value,
                    },
                })
            }
        }
    }

    fn width(&mut self, cx: &Cx, p: &PropAst, seen: &Seen, d: &Def) -> Option<Width> {
        match &p.value.node {
            ValueAst::Number(n) if *n <= u32::MAX as u64 => Some(Width::Bytes(*n as u32)),
            ValueAst::Ref { field, prop } if field == "tag" && prop == "width" => {
                Some(Width::Bytes(cx.tag_width))
            }
            ValueAst::Ref { field, prop } if prop == "value" => {
                if seen.contains(field) {
                    Some(Width::Of(field.clone()))
                } else {
                    self.err(Diagnostic::new(
                        format!(
                            "`{field}` is not a field before this one in `{}`",
                            d.ast.name.node
                        ),
                        p.value.span.clone(),
                        "undefined field",
                    ));
                    None
                }
            }
            _ => {
                self.err(Diagnostic::new(
                    "a width is a number of bytes or `field.value`",
                    p.value.span.clone(),
                    "here",
                ));
                None
            }
        }
    }

    fn interp(&mut self, cx: &Cx, p: &PropAst) -> Option<Interp> {
        let ValueAst::Interp { name, args } = &p.value.node else {
            self.err(Diagnostic::new(
                "an interpretation is a name and arguments, e.g. `delta 0`",
                p.value.span.clone(),
                "here",
            ));
            return None;
        };
        let want = match name.as_str() {
            "none" => 0,
            "default" | "baseOffset" | "delta" | "sectionOffset" => 1,
            "stride" | "sectionStride" => 2,
            other => {
                self.err(
                    Diagnostic::new(
                        format!("unknown interpretation `{other}`"),
                        p.value.span.clone(),
                        "here",
                    )
                    .note("none, default, baseOffset, delta, stride, sectionOffset, sectionStride"),
                );
                return None;
            }
        };
        if args.len() != want {
            self.err(Diagnostic::new(
                format!(
                    "`{name}` takes {want} argument{}, found {}",
                    if want == 1 { "" } else { "s" },
                    args.len()
                ),
                p.value.span.clone(),
                "here",
            ));
            return None;
        }
        let unsigned = |v: i128| u64::try_from(v).ok();
        let section = |v: i128, me: &mut Self| -> Option<u8> {
            match u8::try_from(v) {
                Ok(s) if cx.sections.contains(&s) => Some(s),
                _ => {
                    me.err(Diagnostic::new(
                        format!("section {v} is not defined"),
                        p.value.span.clone(),
                        "no such section",
                    ));
                    None
                }
            }
        };
        let r = match name.as_str() {
            "none" => Interp::None,
            "default" => Interp::Default(unsigned(args[0])?),
            "baseOffset" => Interp::BaseOffset(unsigned(args[0])?),
            "delta" => Interp::Delta(unsigned(args[0])?),
            "stride" => Interp::Stride {
                initial: unsigned(args[0])?,
                stride: args[1] as i64,
            },
            "sectionOffset" => Interp::SectionOffset(section(args[0], self)?),
            _ => Interp::SectionStride {
                section: section(args[0], self)?,
                stride: args[1] as i64,
            },
        };
        let _ = RESERVED_PROPS;
        Some(r)
    }
}

struct Cx<'a, 'b> {
    scope: &'a Scope<'b>,
    names: &'a HashMap<&'b str, &'a Def<'b>>,
    tag_width: u32,
    sections: &'a [u8],
}

/// The field names a record has so far, in order, with a set for lookups
/// (a record of 100 k fields made scans quadratic).
#[derive(Default)]
struct Seen {
    list: Vec<String>,
    set: std::collections::HashSet<String>,
}

impl Seen {
    fn push(&mut self, name: String) {
        self.set.insert(name.clone());
        self.list.push(name);
    }

    fn contains(&self, name: &str) -> bool {
        self.set.contains(name)
    }

    fn len(&self) -> usize {
        self.list.len()
    }
}

fn collect_names(f: &Field, seen: &mut Seen) {
    match &f.kind {
        FieldKind::Simple { .. } => seen.push(f.name.clone()),
        FieldKind::Group { fields } => fields.iter().for_each(|g| collect_names(g, seen)),
        FieldKind::Repeat { item, .. } => collect_names(item, seen),
    }
}

fn tag_span(r: &RecordAst) -> Option<Span> {
    r.props
        .iter()
        .find(|p| p.field.node == "tag" && p.prop.node == "value")
        .map(|p| p.value.span.clone())
}

impl fmt::Display for Width {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Width::Bytes(n) => write!(f, "{n}"),
            Width::Of(field) => write!(f, "{field}.value"),
        }
    }
}

impl fmt::Display for Interp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Interp::None => write!(f, "none"),
            Interp::Default(v) => write!(f, "default {v}"),
            Interp::BaseOffset(v) => write!(f, "baseOffset {v}"),
            Interp::Delta(v) => write!(f, "delta {v}"),
            Interp::Stride { initial, stride } => write!(f, "stride {initial} {stride}"),
            Interp::SectionOffset(s) => write!(f, "sectionOffset {s}"),
            Interp::SectionStride { section, stride } => {
                write!(f, "sectionStride {section} {stride}")
            }
        }
    }
}

fn write_fields(f: &mut fmt::Formatter<'_>, fields: &[Field], indent: usize) -> fmt::Result {
    for field in fields {
        let pad = "  ".repeat(indent);
        match &field.kind {
            FieldKind::Simple {
                width,
                interp,
                value,
            } => {
                write!(f, "{pad}{}: width {width}, {interp}", field.name)?;
                if let Some(v) = value {
                    write!(f, ", value {v}")?;
                }
                writeln!(f)?;
            }
            FieldKind::Group { fields } => {
                let name = if field.name.is_empty() {
                    "(group)"
                } else {
                    &field.name
                };
                writeln!(f, "{pad}{name}:")?;
                write_fields(f, fields, indent + 1)?;
            }
            FieldKind::Repeat { count, item } => {
                writeln!(f, "{pad}{count} times:")?;
                write_fields(f, std::slice::from_ref(item), indent + 1)?;
            }
        }
    }
    Ok(())
}

/// A canonical listing of the checked DTD (golden tests compare it).
impl fmt::Display for Dtd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "tag width {}", self.tag_width)?;
        for s in &self.sections {
            writeln!(f, "section {} {}", s.name, s.id)?;
        }
        for g in &self.groups {
            writeln!(
                f,
                "group {}{}",
                g.name,
                if g.builtin { " (built-in)" } else { "" }
            )?;
            write_fields(f, &g.fields, 1)?;
        }
        for r in &self.records {
            let sec = self
                .sections
                .iter()
                .find(|s| s.id == r.section)
                .map_or("global".to_string(), |s| format!("section {}", s.name));
            let kind = r
                .kind
                .as_ref()
                .map(|k| format!(", kind {k}"))
                .unwrap_or_default();
            writeln!(
                f,
                "record {} tag {} in {}{}{kind}",
                r.name,
                r.tag.unwrap_or(0),
                sec,
                if r.builtin { " (built-in)" } else { "" }
            )?;
            write_fields(f, &r.fields, 1)?;
        }
        for (record, field, role) in &self.roles {
            writeln!(f, "role {record}.{field} = {role}")?;
        }
        Ok(())
    }
}
