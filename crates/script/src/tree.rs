//! The one tree both syntaxes parse to. Every node evaluates to a value;
//! statements evaluate to true (so Lisp's `and` can sequence them).

use std::rc::Rc;

use tramp_cachesim::PolicyKind;

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Built-ins on buffers (the cache simulator's caches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferOp {
    Read,
    Write,
    Prefetch,
}

/// A node of a script.
#[derive(Clone, Debug)]
pub enum Node {
    Int(i64),
    Float(f64),
    Str(Rc<str>),
    /// A scalar variable by slot.
    Var(usize),
    SetVar(usize, Box<Node>),
    /// An array element (one or two keys).
    Elem(usize, Box<[Node]>),
    SetElem(usize, Box<[Node]>, Box<Node>),
    /// Whether the key is in the array (negated for `not found`).
    Found(usize, Box<[Node]>, bool),
    Delete(usize, Box<[Node]>),
    /// The current record's field `field` of record type `ty`.
    Field {
        ty: usize,
        field: usize,
    },
    /// The current record's type index.
    RecordType,
    Bin(Op, Box<Node>, Box<Node>),
    Neg(Box<Node>),
    Not(Box<Node>),
    /// True if every part is (stops at the first false).
    And(Vec<Node>),
    /// True if some part is (stops at the first true).
    Or(Vec<Node>),
    /// Statements in order.
    Seq(Vec<Node>),
    /// (condition, body) pairs tried in order, then the else body.
    If(Vec<(Node, Node)>, Option<Box<Node>>),
    While(Box<Node>, Box<Node>),
    /// For each key of an array (ascending), in a scalar slot.
    For(usize, usize, Box<Node>),
    Call(usize),
    /// Prints the values (space-separated); `true`: then ends the line.
    Echo(Vec<Node>, bool),
    Nl,
    Update {
        ty: usize,
        field: usize,
        value: Box<Node>,
    },
    Spit,
    SpitInt(Box<Node>),
    SpitChar(Box<Node>),
    Swap,
    /// Prints the current record with its field names (and value labels).
    Print,
    MakeBuffer(PolicyKind, Box<Node>),
    Buffer(BufferOp, Box<Node>, Box<[Node]>),
    PrintBuffer(Box<Node>),
    /// Hits (true) or misses (false) of a buffer so far.
    BufferCount(Box<Node>, bool),
}

/// A compiled script.
#[derive(Clone, Debug, Default)]
pub struct Script {
    pub preprocess: Option<Node>,
    pub main: Option<Node>,
    pub postprocess: Option<Node>,
    pub procedures: Vec<Node>,
    /// Names of the scalar slots and array slots (for messages).
    pub scalars: Vec<String>,
    pub arrays: Vec<String>,
    /// The record types the script was resolved against: name and fields.
    pub records: Vec<(String, Vec<String>)>,
}

impl Script {
    pub(crate) fn set_records(&mut self, schema: &tramp_core::Schema) {
        self.records = schema
            .types
            .iter()
            .map(|t| {
                (
                    t.name.clone(),
                    t.fields.iter().map(|f| f.name.clone()).collect(),
                )
            })
            .collect();
    }
}
