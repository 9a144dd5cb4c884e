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

use crate::machine::{FieldAt, Machine, R};
use crate::tree::{BufferOp, Node, Op, Script};

/// A compiled block, branch or fallback.
type Code<'s> = Box<dyn Fn(&mut Machine<'_>, Option<&Record<'_>>) -> R<()> + 's>;

/// A compiled statement.
pub(crate) enum Step<'s> {
    /// `set x = FIELD`.
    Load { slot: usize, f: FieldAt },
    /// `set x = x + c`.
    AddVar { slot: usize, c: i64, node: &'s Node },
    /// `set x = x + FIELD`.
    AddField {
        slot: usize,
        f: FieldAt,
        node: &'s Node,
    },
    /// A buffer call on a buffer and two keys in variables.
    Buffer2 {
        op: BufferOp,
        b: usize,
        keys: [usize; 2],
    },
    /// A buffer call on a buffer in a variable and two keys, each a
    /// variable or a field of the record (`read_buffer(b, IO_FILE, page)`).
    BufferKeys {
        op: BufferOp,
        b: usize,
        keys: [Operand; 2],
        node: &'s Node,
    },
    /// Anything else.
    Code(Code<'s>),
}

impl Step<'_> {
    /// Runs the step: the machine's own fast paths, without a call.
    #[inline(always)]
    pub(crate) fn run(&self, m: &mut Machine<'_>, r: Option<&Record<'_>>) -> R<()> {
        match *self {
            Step::Load { slot, f } => m.set_from_field(slot, f, r),
            Step::AddVar { slot, c, node } => m.add_to(node, slot, c, r),
            Step::AddField { slot, f, node } => m.add_field(node, slot, f, r),
            Step::Buffer2 { op, b, ref keys } => m.buffer_pair(op, b, keys),
            Step::BufferKeys {
                op,
                b,
                ref keys,
                node,
            } => m.buffer_keys(op, b, keys, node, r),
            Step::Code(ref c) => c(m, r),
        }
    }
}

/// Compiles a statement of `script` (whose record layouts let field reads
/// go straight to a record's bytes).
pub(crate) fn compile<'s>(script: &'s Script, node: &'s Node) -> Step<'s> {
    let compile = |n| compile(script, n);
    match node {
        // A block of one statement run as a statement is that statement
        // (its value, which a block would make true, is not wanted here).
        Node::Seq(v) if v.len() == 1 => compile(&v[0]),
        Node::Seq(v) => Step::Code(seq(v.iter().map(compile).collect())),
        Node::If(arms, otherwise) => Step::Code(chain(script, arms, otherwise.as_deref())),
        // Lisp's sequences: their truth decides, their value is not wanted.
        Node::And(_) | Node::Or(_) => {
            let t = test(script, node);
            Step::Code(Box::new(move |m, r| t(m, r).map(drop)))
        }
        &Node::LoadField { slot, ty, field } => Step::Load {
            slot,
            f: FieldAt::of(script, ty, field),
        },
        &Node::AddVar(slot, c) => Step::AddVar { slot, c, node },
        &Node::AddField { slot, ty, field } => Step::AddField {
            slot,
            f: FieldAt::of(script, ty, field),
            node,
        },
        Node::BufferVars(op, b, keys) if keys.len() == 2 => Step::Buffer2 {
            op: *op,
            b: *b,
            keys: [keys[0], keys[1]],
        },
        Node::Buffer(op, buf, keys) if keys.len() == 2 => {
            match (&**buf, operand(script, &keys[0]), operand(script, &keys[1])) {
                (&Node::Var(b), Some(x), Some(y)) => Step::BufferKeys {
                    op: *op,
                    b,
                    keys: [x, y],
                    node,
                },
                _ => Step::Code(Box::new(move |m, r| m.exec(node, r))),
            }
        }
        _ => Step::Code(Box::new(move |m, r| m.exec(node, r))),
    }
}

/// A buffer key read without the walker: a variable, or a field of the
/// current record.
#[derive(Clone, Copy)]
pub(crate) enum Operand {
    Var(usize),
    Field(FieldAt),
}

/// `n` as an [`Operand`], when it is one.
fn operand(script: &Script, n: &Node) -> Option<Operand> {
    match *n {
        Node::Var(slot) => Some(Operand::Var(slot)),
        Node::Field { ty, field } => Some(Operand::Field(FieldAt::of(script, ty, field))),
        _ => None,
    }
}

/// A block's steps, unrolled three to a closure: each step's kind is then
/// decided at a place of its own, which the processor predicts, where a
/// loop over the steps decided them all at one indirect jump (a fifth of
/// Figure 8's block).
fn seq(mut steps: Vec<Step<'_>>) -> Code<'_> {
    let tail = (steps.len() > 3).then(|| seq(steps.split_off(3)));
    let mut steps = steps.into_iter();
    let (a, b, c) = (steps.next(), steps.next(), steps.next());
    match (a, b, c, tail) {
        (Some(a), Some(b), Some(c), Some(tail)) => Box::new(move |m, r| {
            a.run(m, r)?;
            b.run(m, r)?;
            c.run(m, r)?;
            tail(m, r)
        }),
        (Some(a), Some(b), Some(c), None) => Box::new(move |m, r| {
            a.run(m, r)?;
            b.run(m, r)?;
            c.run(m, r)
        }),
        (Some(a), Some(b), None, _) => Box::new(move |m, r| {
            a.run(m, r)?;
            b.run(m, r)
        }),
        (Some(a), None, ..) => code(a),
        _ => Box::new(|_, _| Ok(())),
    }
}

/// A step as a closure.
fn code(step: Step<'_>) -> Code<'_> {
    match step {
        Step::Code(c) => c,
        step => Box::new(move |m, r| step.run(m, r)),
    }
}

/// Compiles `if` arms with what follows them: each arm a closure that
/// tests, then runs its body or the rest of the chain.
fn chain<'s>(
    script: &'s Script,
    arms: &'s [(Node, Node)],
    otherwise: Option<&'s Node>,
) -> Code<'s> {
    let Some(((c, body), rest)) = arms.split_first() else {
        return match otherwise.map(|n| compile(script, n)) {
            Some(step) => code(step),
            None => Box::new(|_, _| Ok(())),
        };
    };
    let body = compile(script, body);
    let rest = (!rest.is_empty() || otherwise.is_some()).then(|| chain(script, rest, otherwise));
    with_quick!(
        script,
        c,
        |t| branch(t, body, rest),
        branch(test(script, c), body, rest)
    )
}

/// A compiled condition.
type Test<'s> = Box<dyn Fn(&mut Machine<'_>, Option<&Record<'_>>) -> R<bool> + 's>;

/// Compiles a condition: record-type and integer-field tests, Lisp's
/// `and`/`or` over conditions, and the compiled leaves (statements are
/// true); anything else through the walker's `cond`.
fn test<'s>(script: &'s Script, node: &'s Node) -> Test<'s> {
    let test = |n| test(script, n);
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
            let step = compile(script, node);
            Box::new(move |m, r| step.run(m, r).map(|()| true))
        }
        _ => with_quick!(
            script,
            node,
            |t| Box::new(t),
            Box::new(move |m, r| m.cond(node, r))
        ),
    }
}

/// `$with` with `$t` bound to a closure deciding condition `$c` in line
/// when it is `RECORD_TYPE == t` or `FIELD op c` (the comparison known when
/// compiled), else `$other`. A macro so that an `if` arm holds the test
/// itself (one closure, no call: a boxed test cost 5 % more instructions
/// on Figure 8) while Lisp's sequences box the same closures.
macro_rules! with_quick {
    ($script:expr, $c:expr, |$t:ident| $with:expr, $other:expr) => {{
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
            } => {
                let f = FieldAt::of($script, ty, field);
                match op {
                    Op::Eq => {
                        let $t = field_test(c, f, move |x| x == value);
                        $with
                    }
                    Op::Ne => {
                        let $t = field_test(c, f, move |x| x != value);
                        $with
                    }
                    Op::Lt => {
                        let $t = field_test(c, f, move |x| x < value);
                        $with
                    }
                    Op::Le => {
                        let $t = field_test(c, f, move |x| x <= value);
                        $with
                    }
                    Op::Gt => {
                        let $t = field_test(c, f, move |x| x > value);
                        $with
                    }
                    Op::Ge => {
                        let $t = field_test(c, f, move |x| x >= value);
                        $with
                    }
                    _ => $other,
                }
            }
            _ => $other,
        }
    }};
}
use with_quick;

/// `RECORD_TYPE == t`; without a record, the walker's error.
fn type_test(c: &Node, t: i64) -> impl Fn(&mut Machine<'_>, Option<&Record<'_>>) -> R<bool> + '_ {
    // Always in line: called through its arm, it cost a call per record.
    #[inline(always)]
    move |m, r| match r {
        Some(rec) => Ok(rec.record_type().index as i64 == t),
        None => m.cond(c, r),
    }
}

/// `FIELD op c` with the comparison `holds`; a field that is not an
/// integer of the current record goes to the walker.
fn field_test<'s>(
    c: &'s Node,
    f: FieldAt,
    holds: impl Fn(i64) -> bool + 's,
) -> impl Fn(&mut Machine<'_>, Option<&Record<'_>>) -> R<bool> + 's {
    #[inline(always)]
    move |m, r| match m.field_int(r, f) {
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
