//! The syntax of a DTD, as written, with byte spans for diagnostics.

use std::ops::Range;

pub type Span = Range<usize>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spanned<T> {
    pub node: T,
    pub span: Span,
}

/// A whole DTD: definitions outside any section are global.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Doc {
    pub items: Vec<Item>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Record(RecordAst),
    Property(PropAst),
    Section(SectionAst),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionAst {
    pub name: Spanned<String>,
    pub id: Spanned<u64>,
    pub items: Vec<Item>,
    pub span: Span,
}

/// `name : fields { properties }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordAst {
    pub name: Spanned<String>,
    pub fields: Vec<FieldAst>,
    pub props: Vec<PropAst>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldAst {
    /// A field, or a field group / record used as a composite field.
    Name(Spanned<String>),
    /// `count*item`: the value of the earlier field `count` says how many.
    Repeat {
        count: Spanned<String>,
        item: Box<FieldAst>,
    },
    /// `(a, b, ...)`.
    Group { fields: Vec<FieldAst>, span: Span },
}

/// `field.property = value;`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropAst {
    pub field: Spanned<String>,
    pub prop: Spanned<String>,
    pub value: Spanned<ValueAst>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValueAst {
    Number(u64),
    /// `other.property`, e.g. `length.value` or `tag.width`.
    Ref {
        field: String,
        prop: String,
    },
    /// An interpretation: a name and its numeric arguments.
    Interp {
        name: String,
        args: Vec<i128>,
    },
}
