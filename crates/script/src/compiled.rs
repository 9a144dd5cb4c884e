//! Main compiled to closures: each statement of the record loop becomes a
//! step that knows its own shape, so that running a record is a few calls
//! instead of a walk of the tree (matching each node, checking each
//! result). Leaves that most record loops run (`set x = FIELD`, counters,
//! sums of a field, buffer calls on two variables) are steps run in line
//! by their block or branch; blocks and `if` chains are closures, with
//! record-type and integer-field tests decided in the closure itself. Only
//! these shapes are compiled, each with the walker's fast path; everything
//! else, and every slow path, calls the walker ([`Machine`]), so the
//! meaning is the walker's (`tests/simplify.rs` runs scripts both ways).

use tramp_core::Record;

use crate::machine::{Machine, R, Val};
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
        k1: usize,
        k2: usize,
        keys: &'s [usize],
    },
    /// Anything else.
    Code(Code<'s>),
}

impl Step<'_> {
    /// Runs the step.
    #[inline(always)]
    pub(crate) fn run(&self, m: &mut Machine<'_>, r: Option<&Record<'_>>) -> R<()> {
        match *self {
            Step::Load { slot, ty, field } => {
                if let Some(i) = m.field_int(r, ty, field)
                    && let Val::Int(x) = &mut m.scalars[slot]
                {
                    *x = i;
                    return Ok(());
                }
                m.load_field(slot, ty, field, r)
            }
            Step::AddVar { slot, c, node } => {
                if let Val::Int(v) = &mut m.scalars[slot]
                    && let Some(n) = v.checked_add(c)
                {
                    *v = n;
                    return Ok(());
                }
                m.exec_rest(node, r)
            }
            Step::AddField {
                slot,
                ty,
                field,
                node,
            } => {
                if let Some(f) = m.field_int(r, ty, field)
                    && let Val::Int(v) = &mut m.scalars[slot]
                    && let Some(n) = v.checked_add(f)
                {
                    *v = n;
                    return Ok(());
                }
                m.exec_rest(node, r)
            }
            Step::Buffer2 {
                op,
                b,
                k1,
                k2,
                keys,
            } => {
                // The object's id made here as `Machine::buffer_id` makes
                // it for two integer keys.
                const LIMIT: i64 = 1 << 31;
                if let (&Val::Int(x), &Val::Int(y), &Val::Int(i)) =
                    (&m.scalars[k1], &m.scalars[k2], &m.scalars[b])
                    && (0..LIMIT).contains(&x)
                    && (0..LIMIT).contains(&y)
                    && i >= 0
                    && (i as usize) < m.nbuffers
                {
                    m.request(op, i as usize, 1 << 63 | (x as u64) << 31 | y as u64);
                    return Ok(());
                }
                m.buffer_vars(op, b, keys).map(drop)
            }
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
            k1: keys[0],
            k2: keys[1],
            keys,
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
    match *c {
        Node::TypeIs(t) => branch(
            move |m, r| match r {
                Some(rec) => Ok(rec.record_type().index as i64 == t),
                None => m.cond(c, r),
            },
            body,
            rest,
        ),
        Node::FieldCmp {
            ty,
            field,
            op,
            value,
        } => match op {
            Op::Eq => field_branch(c, ty, field, move |x| x == value, body, rest),
            Op::Ne => field_branch(c, ty, field, move |x| x != value, body, rest),
            Op::Lt => field_branch(c, ty, field, move |x| x < value, body, rest),
            Op::Le => field_branch(c, ty, field, move |x| x <= value, body, rest),
            Op::Gt => field_branch(c, ty, field, move |x| x > value, body, rest),
            Op::Ge => field_branch(c, ty, field, move |x| x >= value, body, rest),
            _ => branch(move |m, r| m.cond(c, r), body, rest),
        },
        _ => branch(test(c), body, rest),
    }
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
        &Node::TypeIs(t) => Box::new(move |m, r| match r {
            Some(rec) => Ok(rec.record_type().index as i64 == t),
            None => m.cond(node, r),
        }),
        &Node::FieldCmp {
            ty,
            field,
            op,
            value,
        } => Box::new(move |m, r| match m.field_int(r, ty, field) {
            Some(x) => Ok(match op {
                Op::Eq => x == value,
                Op::Ne => x != value,
                Op::Lt => x < value,
                Op::Le => x <= value,
                Op::Gt => x > value,
                _ => x >= value,
            }),
            None => m.cond(node, r),
        }),
        Node::LoadField { .. } | Node::AddVar(..) | Node::AddField { .. } => {
            let step = compile(node);
            Box::new(move |m, r| step.run(m, r).map(|()| true))
        }
        _ => Box::new(move |m, r| m.cond(node, r)),
    }
}

/// An arm whose test is `FIELD op c`, the comparison `holds` known when
/// compiled.
fn field_branch<'s>(
    c: &'s Node,
    ty: usize,
    field: usize,
    holds: impl Fn(i64) -> bool + 's,
    body: Step<'s>,
    rest: Option<Code<'s>>,
) -> Code<'s> {
    branch(
        move |m, r| match m.field_int(r, ty, field) {
            Some(x) => Ok(holds(x)),
            None => m.cond(c, r),
        },
        body,
        rest,
    )
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
