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

impl BufferOp {
    /// Serves this request for object `id` (of size 1) on `cache`; true on
    /// a hit (a prefetch is true).
    #[inline]
    pub fn serve(self, cache: &mut tramp_cachesim::Cache, id: u64) -> bool {
        use tramp_cachesim::Request;
        match self {
            BufferOp::Read => cache.access(&Request::read(id, 1)),
            BufferOp::Write => cache.access(&Request::write(id, 1)),
            BufferOp::Prefetch => {
                cache.prefetch(&Request::read(id, 1));
                true
            }
        }
    }
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
    // Shapes common in scripts, fused by [`simplify`] (same meaning):
    /// `RECORD_TYPE == c`.
    TypeIs(i64),
    /// `FIELD op c` for an integer constant.
    FieldCmp {
        ty: usize,
        field: usize,
        op: Op,
        value: i64,
    },
    /// `set x = x + c` (or `x - c`).
    AddVar(usize, i64),
    /// `set x = x + FIELD` (a sum of a field).
    AddField {
        slot: usize,
        ty: usize,
        field: usize,
    },
    /// `set x = FIELD`.
    LoadField {
        slot: usize,
        ty: usize,
        field: usize,
    },
    /// A buffer call whose buffer and keys are all variables.
    BufferVars(BufferOp, usize, Box<[usize]>),
}

/// Fuses common shapes into single nodes; the meaning does not change.
pub fn simplify(node: Node) -> Node {
    use Node::*;
    let b = |n: Box<Node>| Box::new(simplify(*n));
    match node {
        Bin(op, l, r) => {
            let (l, r) = (simplify(*l), simplify(*r));
            match (op, &l, &r) {
                (Op::Eq, RecordType, Int(c)) | (Op::Eq, Int(c), RecordType) => TypeIs(*c),
                (
                    Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge,
                    Field { ty, field },
                    Int(c),
                ) => FieldCmp {
                    ty: *ty,
                    field: *field,
                    op,
                    value: *c,
                },
                _ => Bin(op, Box::new(l), Box::new(r)),
            }
        }
        SetVar(slot, e) => match simplify(*e) {
            Bin(Op::Add, l, r) if matches!((&*l, &*r), (Var(v), Int(_)) if *v == slot) => {
                let Int(c) = *r else { unreachable!() };
                AddVar(slot, c)
            }
            Bin(Op::Sub, l, r) if matches!((&*l, &*r), (Var(v), Int(c)) if *v == slot && *c != i64::MIN) =>
            {
                let Int(c) = *r else { unreachable!() };
                AddVar(slot, -c)
            }
            Bin(Op::Add, l, r) if matches!((&*l, &*r), (Var(v), Field { .. }) if *v == slot) => {
                let Field { ty, field } = *r else {
                    unreachable!()
                };
                AddField { slot, ty, field }
            }
            Field { ty, field } => LoadField { slot, ty, field },
            e => SetVar(slot, Box::new(e)),
        },
        SetElem(a, k, e) => SetElem(a, simplify_all(k), b(e)),
        Elem(a, k) => Elem(a, simplify_all(k)),
        Found(a, k, n) => Found(a, simplify_all(k), n),
        Delete(a, k) => Delete(a, simplify_all(k)),
        Neg(e) => Neg(b(e)),
        Not(e) => Not(b(e)),
        And(v) => And(v.into_iter().map(simplify).collect()),
        Or(v) => Or(v.into_iter().map(simplify).collect()),
        Seq(v) => {
            let mut v: Vec<Node> = v.into_iter().map(simplify).collect();
            // A block of one statement is that statement (statements are
            // true, as the block is).
            if v.len() == 1 && is_statement(&v[0]) {
                v.pop().expect("one")
            } else {
                Seq(v)
            }
        }
        If(arms, e) => If(
            arms.into_iter()
                .map(|(c, t)| (simplify(c), simplify(t)))
                .collect(),
            e.map(b),
        ),
        While(c, body) => While(b(c), b(body)),
        For(k, a, body) => For(k, a, b(body)),
        Echo(v, end) => Echo(v.into_iter().map(simplify).collect(), end),
        Update { ty, field, value } => Update {
            ty,
            field,
            value: b(value),
        },
        SpitInt(e) => SpitInt(b(e)),
        SpitChar(e) => SpitChar(b(e)),
        MakeBuffer(k, e) => MakeBuffer(k, b(e)),
        Buffer(op, buf, k) => {
            let (buf, k) = (simplify(*buf), simplify_all(k));
            match (&buf, k.iter().all(|n| matches!(n, Var(_)))) {
                (Var(bs), true) => {
                    let slots = k
                        .iter()
                        .map(|n| match n {
                            Var(s) => *s,
                            _ => unreachable!("all variables"),
                        })
                        .collect();
                    BufferVars(op, *bs, slots)
                }
                _ => Buffer(op, Box::new(buf), k),
            }
        }
        PrintBuffer(e) => PrintBuffer(b(e)),
        BufferCount(e, h) => BufferCount(b(e), h),
        other => other,
    }
}

/// Whether a node always evaluates to true (a statement).
fn is_statement(n: &Node) -> bool {
    use Node::*;
    matches!(
        n,
        SetVar(..)
            | SetElem(..)
            | Delete(..)
            | Seq(_)
            | If(..)
            | While(..)
            | For(..)
            | Call(_)
            | Echo(..)
            | Nl
            | Update { .. }
            | Spit
            | SpitInt(_)
            | SpitChar(_)
            | Swap
            | Print
            | PrintBuffer(_)
            | AddVar(..)
            | AddField { .. }
            | LoadField { .. }
    )
}

fn simplify_all(v: Box<[Node]>) -> Box<[Node]> {
    v.into_vec().into_iter().map(simplify).collect()
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
    /// Per record type, where each field lies when the type has a fixed
    /// layout ([`tramp_core::RecordType::fixed_ints`]): compiled steps read
    /// such fields from the record's bytes.
    pub layouts: Vec<Option<Box<[tramp_core::ints::FixedInt]>>>,
}

impl Script {
    /// Fuses common shapes in every block ([`simplify`]).
    pub(crate) fn simplify(&mut self) {
        for b in [&mut self.preprocess, &mut self.main, &mut self.postprocess] {
            if let Some(n) = b.take() {
                *b = Some(simplify(n));
            }
        }
        for p in &mut self.procedures {
            *p = simplify(std::mem::replace(p, Node::Int(0)));
        }
    }

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
        self.layouts = schema.types.iter().map(|t| t.fixed_ints.clone()).collect();
    }
}
