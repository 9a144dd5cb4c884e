//! Main compiled to closures: each statement of the record loop becomes a
//! step that knows its own shape, so that running a record is a few calls
//! instead of a walk of the tree (matching each node, checking each
//! result). Leaves that most record loops run (`set x = FIELD`, counters,
//! sums of a field, buffer calls on two variables) are steps run in line
//! by their block or branch; blocks and `if` chains are closures, with
//! record-type and integer-field tests decided in the closure itself. Only
//! these shapes are compiled; the leaves run the machine's own fast paths
//! (the ones its walker runs), and everything else, and every slow path,
//! calls the walker ([`Machine`]), so the meaning is the walker's
//! (`tests/simplify.rs` runs scripts both ways).

use tramp_core::Record;

use crate::machine::{Machine, R};
use crate::tree::{BufferOp, Node, Op};

/// A compiled block, branch or fallback.
type Code<'s> = Box<dyn Fn(&mut Machine<'_>, Option<&Record<'_>>) -> R<()> + 's>;

/// A compiled statement.
pub(crate) enum Step<'s> {
    /// `set x = FIELD`.
    Load {
        slot: usize,
        ty: usize,
        field: usize,
    },
    /// `set x = x + c`.
    AddVar { slot: usize, c: i64, node: &'s Node },
    /// `set x = x + FIELD`.
    AddField {
        slot: usize,
        ty: usize,
        field: usize,
        node: &'s Node,
    },
    /// A buffer call on a buffer and two keys in variables.
    Buffer2 {
        op: BufferOp,
        b: usize,
        keys: [usize; 2],
    },
    /// Anything else.
    Code(Code<'s>),
}

impl Step<'_> {
    /// Runs the step: the machine's own fast paths, without a call.
    #[inline(always)]
    pub(crate) fn run(&self, m: &mut Machine<'_>, r: Option<&Record<'_>>) -> R<()> {
        match *self {
            Step::Load { slot, ty, field } => m.set_from_field(slot, ty, field, r),
            Step::AddVar { slot, c, node } => m.add_to(node, slot, c, r),
            Step::AddField {
                slot,
                ty,
                field,
                node,
            } => m.add_field(node, slot, ty, field, r),
            Step::Buffer2 { op, b, ref keys } => m.buffer_pair(op, b, keys),
            Step::Code(ref c) => c(m, r),
        }
    }
}

/// Compiles a statement.
pub(crate) fn compile(node: &Node) -> Step<'_> {
    match node {
        Node::Seq(v) => {
            let steps: Box<[Step<'_>]> = v.iter().map(compile).collect();
            Step::Code(Box::new(move |m, r| {
                for s in steps.iter() {
                    s.run(m, r)?;
                }
                Ok(())
            }))
        }
        Node::If(arms, otherwise) => Step::Code(chain(arms, otherwise.as_deref())),
        // Lisp's sequences: their truth decides, their value is not wanted.
        Node::And(_) | Node::Or(_) => {
            let t = test(node);
            Step::Code(Box::new(move |m, r| t(m, r).map(drop)))
        }
        &Node::LoadField { slot, ty, field } => Step::Load { slot, ty, field },
        &Node::AddVar(slot, c) => Step::AddVar { slot, c, node },
        &Node::AddField { slot, ty, field } => Step::AddField {
            slot,
            ty,
            field,
            node,
        },
        Node::BufferVars(op, b, keys) if keys.len() == 2 => Step::Buffer2 {
            op: *op,
            b: *b,
            keys: [keys[0], keys[1]],
        },
        _ => Step::Code(Box::new(move |m, r| m.exec(node, r))),
    }
}

/// Compiles `if` arms with what follows them: each arm a closure that
/// tests, then runs its body or the rest of the chain.
fn chain<'s>(arms: &'s [(Node, Node)], otherwise: Option<&'s Node>) -> Code<'s> {
    let Some(((c, body), rest)) = arms.split_first() else {
        return match otherwise.map(compile) {
            Some(Step::Code(code)) => code,
            Some(step) => Box::new(move |m, r| step.run(m, r)),
            None => Box::new(|_, _| Ok(())),
        };
    };
    let body = compile(body);
    let rest = (!rest.is_empty() || otherwise.is_some()).then(|| chain(rest, otherwise));
    with_quick!(c, |t| branch(t, body, rest), branch(test(c), body, rest))
}

/// A compiled condition.
type Test<'s> = Box<dyn Fn(&mut Machine<'_>, Option<&Record<'_>>) -> R<bool> + 's>;

/// Compiles a condition: record-type and integer-field tests, Lisp's
/// `and`/`or` over conditions, and the compiled leaves (statements are
/// true); anything else through the walker's `cond`.
fn test(node: &Node) -> Test<'_> {
    match node {
        Node::And(v) => {
            let tests: Box<[Test<'_>]> = v.iter().map(test).collect();
            Box::new(move |m, r| {
                for t in tests.iter() {
                    if !t(m, r)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            })
        }
        Node::Or(v) => {
            let tests: Box<[Test<'_>]> = v.iter().map(test).collect();
            Box::new(move |m, r| {
                for t in tests.iter() {
                    if t(m, r)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            })
        }
        Node::LoadField { .. } | Node::AddVar(..) | Node::AddField { .. } => {
            let step = compile(node);
            Box::new(move |m, r| step.run(m, r).map(|()| true))
        }
        _ => with_quick!(node, |t| Box::new(t), Box::new(move |m, r| m.cond(node, r))),
    }
}

/// `$with` with `$t` bound to a closure deciding condition `$c` in line
/// when it is `RECORD_TYPE == t` or `FIELD op c` (the comparison known when
/// compiled), else `$other`. A macro so that an `if` arm holds the test
/// itself (one closure, no call: a boxed test cost 5 % more instructions
/// on Figure 8) while Lisp's sequences box the same closures.
macro_rules! with_quick {
    ($c:expr, |$t:ident| $with:expr, $other:expr) => {{
        let c: &Node = $c;
        match *c {
            Node::TypeIs(ty) => {
                let $t = type_test(c, ty);
                $with
            }
            Node::FieldCmp {
                ty,
                field,
                op,
                value,
            } => match op {
                Op::Eq => {
                    let $t = field_test(c, ty, field, move |x| x == value);
                    $with
                }
                Op::Ne => {
                    let $t = field_test(c, ty, field, move |x| x != value);
                    $with
                }
                Op::Lt => {
                    let $t = field_test(c, ty, field, move |x| x < value);
                    $with
                }
                Op::Le => {
                    let $t = field_test(c, ty, field, move |x| x <= value);
                    $with
                }
                Op::Gt => {
                    let $t = field_test(c, ty, field, move |x| x > value);
                    $with
                }
                Op::Ge => {
                    let $t = field_test(c, ty, field, move |x| x >= value);
                    $with
                }
                _ => $other,
            },
            _ => $other,
        }
    }};
}
use with_quick;

/// `RECORD_TYPE == t`; without a record, the walker's error.
fn type_test(c: &Node, t: i64) -> impl Fn(&mut Machine<'_>, Option<&Record<'_>>) -> R<bool> + '_ {
    move |m, r| match r {
        Some(rec) => Ok(rec.record_type().index as i64 == t),
        None => m.cond(c, r),
    }
}

/// `FIELD op c` with the comparison `holds`; a field that is not an
/// integer of the current record goes to the walker.
fn field_test<'s>(
    c: &'s Node,
    ty: usize,
    field: usize,
    holds: impl Fn(i64) -> bool + 's,
) -> impl Fn(&mut Machine<'_>, Option<&Record<'_>>) -> R<bool> + 's {
    move |m, r| match m.field_int(r, ty, field) {
        Some(x) => Ok(holds(x)),
        None => m.cond(c, r),
    }
}

/// An arm: `test`, then `body` or `rest`.
fn branch<'s>(
    test: impl Fn(&mut Machine<'_>, Option<&Record<'_>>) -> R<bool> + 's,
    body: Step<'s>,
    rest: Option<Code<'s>>,
) -> Code<'s> {
    match rest {
        None => Box::new(move |m, r| if test(m, r)? { body.run(m, r) } else { Ok(()) }),
        Some(e) => Box::new(move |m, r| if test(m, r)? { body.run(m, r) } else { e(m, r) }),
    }
}
