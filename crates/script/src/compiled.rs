//! Main compiled to closures: each statement of the record loop becomes a
//! closure that knows its own shape, so that running a record is a chain
//! of calls instead of a walk of the tree (matching each node, checking
//! each result). Only the shapes the walker runs fastest (blocks, branches,
//! `set x = FIELD`, counters, sums of a field, buffer calls on variables,
//! record-type and field tests) get closures of their own, each with the
//! walker's fast path; everything else, and every slow path, calls the
//! walker ([`Machine`]), so the meaning is the walker's.

use tramp_core::Record;

use crate::machine::{Machine, R, Val};
use crate::tree::{Node, Op};

/// A compiled statement.
pub(crate) type Code<'s> = Box<dyn Fn(&mut Machine<'_>, Option<&Record<'_>>) -> R<()> + 's>;
/// A compiled condition.
type Test<'s> = Box<dyn Fn(&mut Machine<'_>, Option<&Record<'_>>) -> R<bool> + 's>;

/// Compiles a statement.
pub(crate) fn compile(node: &Node) -> Code<'_> {
    match node {
        Node::Seq(v) => {
            let codes: Box<[Code<'_>]> = v.iter().map(compile).collect();
            Box::new(move |m, r| {
                for c in codes.iter() {
                    c(m, r)?;
                }
                Ok(())
            })
        }
        Node::If(arms, otherwise) => chain(arms, otherwise.as_deref()),
        &Node::LoadField { slot, ty, field } => Box::new(move |m, r| {
            if let Some(i) = m.field_int(r, ty, field)
                && let Val::Int(x) = &mut m.scalars[slot]
            {
                *x = i;
                return Ok(());
            }
            m.load_field(slot, ty, field, r)
        }),
        &Node::AddVar(slot, c) => Box::new(move |m, r| {
            if let Val::Int(v) = &mut m.scalars[slot]
                && let Some(n) = v.checked_add(c)
            {
                *v = n;
                return Ok(());
            }
            m.exec_rest(node, r)
        }),
        &Node::AddField { slot, ty, field } => Box::new(move |m, r| {
            if let Some(f) = m.field_int(r, ty, field)
                && let Val::Int(v) = &mut m.scalars[slot]
                && let Some(n) = v.checked_add(f)
            {
                *v = n;
                return Ok(());
            }
            m.exec_rest(node, r)
        }),
        Node::BufferVars(op, b, keys) if keys.len() == 2 => {
            // `read_buffer(buf, k1, k2)` on integer variables: the object's
            // id made here as `Machine::buffer_id` makes it.
            let (op, b, k1, k2) = (*op, *b, keys[0], keys[1]);
            const LIMIT: i64 = 1 << 31;
            Box::new(move |m, _| {
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
            })
        }
        Node::BufferVars(op, b, keys) => {
            let (op, b) = (*op, *b);
            Box::new(move |m, _| m.buffer_vars(op, b, keys).map(drop))
        }
        _ => Box::new(move |m, r| m.exec(node, r)),
    }
}

/// Compiles `if` arms with what follows them: each arm a closure that
/// runs its body or the rest of the chain.
fn chain<'s>(arms: &'s [(Node, Node)], otherwise: Option<&'s Node>) -> Code<'s> {
    let Some(((c, body), rest)) = arms.split_first() else {
        return match otherwise {
            Some(e) => compile(e),
            None => Box::new(|_, _| Ok(())),
        };
    };
    let (t, b) = (test(c), compile(body));
    if rest.is_empty() && otherwise.is_none() {
        return Box::new(move |m, r| if t(m, r)? { b(m, r) } else { Ok(()) });
    }
    let e = chain(rest, otherwise);
    Box::new(move |m, r| if t(m, r)? { b(m, r) } else { e(m, r) })
}

/// Compiles a branch's condition.
fn test(node: &Node) -> Test<'_> {
    match *node {
        Node::TypeIs(c) => Box::new(move |m, r| match r {
            Some(rec) => Ok(rec.record_type().index as i64 == c),
            None => m.cond(node, r),
        }),
        Node::FieldCmp {
            ty,
            field,
            op,
            value,
        } => match op {
            Op::Eq => field_test(node, ty, field, move |x| x == value),
            Op::Ne => field_test(node, ty, field, move |x| x != value),
            Op::Lt => field_test(node, ty, field, move |x| x < value),
            Op::Le => field_test(node, ty, field, move |x| x <= value),
            Op::Gt => field_test(node, ty, field, move |x| x > value),
            Op::Ge => field_test(node, ty, field, move |x| x >= value),
            _ => Box::new(move |m, r| m.cond(node, r)),
        },
        _ => Box::new(move |m, r| m.cond(node, r)),
    }
}

/// `FIELD op c` with the comparison `holds` known when compiled.
fn field_test<'s>(
    node: &'s Node,
    ty: usize,
    field: usize,
    holds: impl Fn(i64) -> bool + 's,
) -> Test<'s> {
    Box::new(move |m, r| match m.field_int(r, ty, field) {
        Some(x) => Ok(holds(x)),
        None => m.cond(node, r),
    })
}
