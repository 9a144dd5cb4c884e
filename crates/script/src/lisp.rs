//! The Lisp-like syntax (the paper's Figure 5), parsed to the same tree as
//! the Algol-like one.
//!
//! `(defun begin …)`, `(defun main …)`, `(defun end …)` and `(defun NAME
//! …)` for procedures, each a sequence of forms. Forms: `(and …)`, `(or
//! …)`, `(not x)`, `(eq a b)`, `(ne …)`, `(lt …)`, `(le …)`, `(gt …)`,
//! `(ge …)`, `(add a b …)`, `(sub a b)`, `(mul a b …)`, `(div a b)`, `(mod
//! a b)`, `(setq x e)`, `(aref a k [k2])`, `(aset a k [k2] v)`, `(found a
//! k [k2])`, `(notfound a k [k2])`, `(delete a k [k2])`, `(if c then
//! [else])`, `(while c body…)`, `(for k a body…)`, `(progn …)`, `(echo e
//! …)`, `(nl)`, `(update FIELD e)`, `(spit)`, `(spit_int e)`, `(spit_char
//! e)`, `(swap)`, `(print)`, `(make_buffer POLICY size)`, `(read_buffer b
//! k1 [k2])`, `(write_buffer …)`, `(prefetch_buffer …)`, `(print_buffer
//! b)`, `(hits b)`, `(misses b)`, and `(NAME)`: a procedure call, or a field
//! or `RECORD_TYPE` read as in Figure 5. Statements are true, so `and`
//! sequences them. Comments: `;` to the end of the line, and `/* … */`.

use tramp_core::Schema;
use tramp_diag::Diagnostic;

use crate::algol::policy;
use crate::names::Names;
use crate::tree::{BufferOp, Node, Op, Script};

type Span = std::ops::Range<usize>;

#[derive(Clone, Debug)]
enum Sexp {
    Int(u64, Span),
    Float(f64, Span),
    Str(String, Span),
    Sym(String, Span),
    List(Vec<Sexp>, Span),
}

impl Sexp {
    fn span(&self) -> Span {
        match self {
            Sexp::Int(_, s)
            | Sexp::Float(_, s)
            | Sexp::Str(_, s)
            | Sexp::Sym(_, s)
            | Sexp::List(_, s) => s.clone(),
        }
    }
}

fn read(src: &str) -> Result<Vec<Sexp>, Diagnostic> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut stack: Vec<(Vec<Sexp>, usize)> = vec![(Vec::new(), 0)];
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b';' {
            i += src[i..].find('\n').unwrap_or(src.len() - i);
        } else if b[i..].starts_with(b"/*") {
            match src[i + 2..].find("*/") {
                Some(e) => i += e + 4,
                None => {
                    return Err(Diagnostic::new(
                        "comment never closed",
                        i..i + 2,
                        "this `/*`",
                    ));
                }
            }
        } else if c == b'(' {
            if stack.len() > crate::algol::MAX_NESTING {
                return Err(Diagnostic::new(
                    format!("nested more than {} levels deep", crate::algol::MAX_NESTING),
                    i..i + 1,
                    "too deep here",
                ));
            }
            stack.push((Vec::new(), i));
            i += 1;
        } else if c == b')' {
            if stack.len() == 1 {
                return Err(Diagnostic::new(
                    "unbalanced `)`",
                    i..i + 1,
                    "nothing to close",
                ));
            }
            let (items, start) = stack.pop().expect("open list");
            stack
                .last_mut()
                .expect("outer")
                .0
                .push(Sexp::List(items, start..i + 1));
            i += 1;
        } else if c == b'"' {
            let start = i;
            i += 1;
            let mut s = String::new();
            loop {
                match b.get(i) {
                    None | Some(b'\n') => {
                        return Err(Diagnostic::new("string never closed", start..i, "here"));
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') if i + 1 < b.len() => {
                        let esc = src[i + 1..].chars().next().expect("in bounds");
                        s.push(match esc {
                            'n' => '\n',
                            't' => '\t',
                            c => c,
                        });
                        i += 1 + esc.len_utf8();
                    }
                    Some(_) => {
                        let ch = src[i..].chars().next().expect("in bounds");
                        s.push(ch);
                        i += ch.len_utf8();
                    }
                }
            }
            stack
                .last_mut()
                .expect("list")
                .0
                .push(Sexp::Str(s, start..i));
        } else {
            let start = i;
            while i < b.len() && !b[i].is_ascii_whitespace() && !b"()\";".contains(&b[i]) {
                i += 1;
            }
            let text = &src[start..i];
            let atom = if let Some(h) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"))
            {
                match u64::from_str_radix(h, 16) {
                    Ok(v) => Sexp::Int(v, start..i),
                    Err(_) => {
                        return Err(Diagnostic::new(
                            format!("`{text}` is not a number"),
                            start..i,
                            "here",
                        ));
                    }
                }
            } else if text.as_bytes()[0].is_ascii_digit() {
                if let Ok(v) = text.parse::<u64>() {
                    Sexp::Int(v, start..i)
                } else if let Ok(v) = text.parse::<f64>() {
                    Sexp::Float(v, start..i)
                } else {
                    return Err(Diagnostic::new(
                        format!("`{text}` is not a number"),
                        start..i,
                        "here",
                    ));
                }
            } else {
                Sexp::Sym(text.to_string(), start..i)
            };
            stack.last_mut().expect("list").0.push(atom);
        }
    }
    if stack.len() > 1 {
        let (_, start) = stack.pop().expect("open");
        return Err(Diagnostic::new(
            "`(` never closed",
            start..start + 1,
            "this list",
        ));
    }
    Ok(stack.pop().expect("top").0)
}

/// Parses a Lisp-like script.
pub fn parse(src: &str, schema: &Schema) -> Result<Script, Diagnostic> {
    let forms = read(src)?;
    let mut names = Names::new(schema);
    let mut defs = Vec::new();
    for f in &forms {
        let Sexp::List(items, span) = f else {
            return Err(Diagnostic::new(
                "expected `(defun NAME …)`",
                f.span(),
                "at the top level",
            ));
        };
        match items.as_slice() {
            [Sexp::Sym(d, _), Sexp::Sym(name, nspan), body @ ..] if d == "defun" => {
                if !matches!(name.as_str(), "begin" | "main" | "end") {
                    names.declare_procedure(name, nspan.clone())?;
                }
                defs.push((name.clone(), nspan.clone(), body));
            }
            _ => {
                return Err(Diagnostic::new(
                    "expected `(defun NAME …)`",
                    span.clone(),
                    "at the top level",
                ));
            }
        }
    }
    let mut script = Script {
        procedures: vec![Node::Seq(Vec::new()); names.procedure_count()],
        ..Script::default()
    };
    for (name, nspan, body) in defs {
        let node = Node::Seq(
            body.iter()
                .map(|f| {
                    names.new_statement();
                    form(f, &mut names)
                })
                .collect::<Result<_, _>>()?,
        );
        let slot = match name.as_str() {
            "begin" => &mut script.preprocess,
            "main" => &mut script.main,
            "end" => &mut script.postprocess,
            _ => {
                let i = names.procedure(&name).expect("declared");
                script.procedures[i] = node;
                continue;
            }
        };
        if slot.is_some() {
            return Err(Diagnostic::new(
                format!("`{name}` is defined twice"),
                nspan,
                "second definition",
            ));
        }
        *slot = Some(node);
    }
    let (scalars, arrays) = names.finish()?;
    script.scalars = scalars;
    script.arrays = arrays;
    script.set_records(schema);
    script.simplify();
    Ok(script)
}

fn arity(args: &[Sexp], lo: usize, hi: usize, head: &str, span: &Span) -> Result<(), Diagnostic> {
    if args.len() < lo || args.len() > hi {
        let want = if lo == hi {
            lo.to_string()
        } else {
            format!("{lo} to {hi}")
        };
        return Err(Diagnostic::new(
            format!("`{head}` takes {want} arguments, not {}", args.len()),
            span.clone(),
            "here",
        ));
    }
    Ok(())
}

fn sym(s: &Sexp, what: &str) -> Result<(String, Span), Diagnostic> {
    match s {
        Sexp::Sym(n, sp) => Ok((n.clone(), sp.clone())),
        _ => Err(Diagnostic::new(
            format!("expected {what}"),
            s.span(),
            "here",
        )),
    }
}

fn forms(v: &[Sexp], n: &mut Names) -> Result<Vec<Node>, Diagnostic> {
    v.iter().map(|f| form(f, n)).collect()
}

fn form(s: &Sexp, n: &mut Names) -> Result<Node, Diagnostic> {
    let (items, span) = match s {
        Sexp::Int(v, sp) => {
            return i64::try_from(*v).map(Node::Int).map_err(|_| {
                Diagnostic::new(
                    format!("{v} does not fit 64 signed bits"),
                    sp.clone(),
                    "here",
                )
            });
        }
        Sexp::Float(v, _) => return Ok(Node::Float(*v)),
        Sexp::Str(v, _) => return Ok(Node::Str(v.as_str().into())),
        Sexp::Sym(name, sp) => return n.read(name, sp.clone()),
        Sexp::List(items, sp) => (items, sp),
    };
    let Some(Sexp::Sym(head, hspan)) = items.first() else {
        return Err(Diagnostic::new(
            "expected `(NAME …)`",
            span.clone(),
            "a form starts with a name",
        ));
    };
    let args = &items[1..];
    let bin = |op: Op, n: &mut Names| -> Result<Node, Diagnostic> {
        arity(args, 2, 2, head, span)?;
        Ok(Node::Bin(
            op,
            Box::new(form(&args[0], n)?),
            Box::new(form(&args[1], n)?),
        ))
    };
    let fold = |op: Op, n: &mut Names| -> Result<Node, Diagnostic> {
        arity(args, 2, usize::MAX, head, span)?;
        for _ in 1..args.len() {
            n.count_op(span)?;
        }
        let mut it = forms(args, n)?.into_iter();
        let first = it.next().expect("two");
        Ok(it.fold(first, |a, b| Node::Bin(op, Box::new(a), Box::new(b))))
    };
    let keys_of = |a: &[Sexp], n: &mut Names| -> Result<Box<[Node]>, Diagnostic> {
        Ok(forms(a, n)?.into_boxed_slice())
    };
    Ok(match head.as_str() {
        "and" => Node::And(forms(args, n)?),
        "or" => Node::Or(forms(args, n)?),
        "progn" => Node::Seq(forms(args, n)?),
        "not" => {
            arity(args, 1, 1, head, span)?;
            Node::Not(Box::new(form(&args[0], n)?))
        }
        "eq" => bin(Op::Eq, n)?,
        "ne" => bin(Op::Ne, n)?,
        "lt" => bin(Op::Lt, n)?,
        "le" => bin(Op::Le, n)?,
        "gt" => bin(Op::Gt, n)?,
        "ge" => bin(Op::Ge, n)?,
        "sub" => bin(Op::Sub, n)?,
        "div" => bin(Op::Div, n)?,
        "mod" | "modulo" => bin(Op::Mod, n)?,
        "add" => fold(Op::Add, n)?,
        "mul" => fold(Op::Mul, n)?,
        "neg" => {
            arity(args, 1, 1, head, span)?;
            Node::Neg(Box::new(form(&args[0], n)?))
        }
        "setq" => {
            arity(args, 2, 2, head, span)?;
            let (v, vspan) = sym(&args[0], "a variable")?;
            let value = form(&args[1], n)?;
            Node::SetVar(n.write(&v, vspan)?, Box::new(value))
        }
        "aref" | "found" | "notfound" | "delete" => {
            arity(args, 2, 3, head, span)?;
            let (a, aspan) = sym(&args[0], "an array")?;
            let keys = keys_of(&args[1..], n)?;
            let arr = n.array(&a, aspan)?;
            match head.as_str() {
                "aref" => Node::Elem(arr, keys),
                "found" => Node::Found(arr, keys, false),
                "notfound" => Node::Found(arr, keys, true),
                _ => Node::Delete(arr, keys),
            }
        }
        "aset" => {
            arity(args, 3, 4, head, span)?;
            let (a, aspan) = sym(&args[0], "an array")?;
            let keys = keys_of(&args[1..args.len() - 1], n)?;
            let value = form(&args[args.len() - 1], n)?;
            Node::SetElem(n.array(&a, aspan)?, keys, Box::new(value))
        }
        "if" => {
            arity(args, 2, 3, head, span)?;
            let c = form(&args[0], n)?;
            let t = form(&args[1], n)?;
            let e = args.get(2).map(|e| form(e, n)).transpose()?;
            Node::If(vec![(c, t)], e.map(Box::new))
        }
        "while" => {
            arity(args, 1, usize::MAX, head, span)?;
            let c = form(&args[0], n)?;
            Node::While(Box::new(c), Box::new(Node::Seq(forms(&args[1..], n)?)))
        }
        "for" => {
            arity(args, 2, usize::MAX, head, span)?;
            let (k, kspan) = sym(&args[0], "the key variable")?;
            let (a, aspan) = sym(&args[1], "an array")?;
            let key = n.write(&k, kspan)?;
            let arr = n.array(&a, aspan)?;
            Node::For(key, arr, Box::new(Node::Seq(forms(&args[2..], n)?)))
        }
        "echo" => Node::Echo(forms(args, n)?, false),
        "nl" => {
            arity(args, 0, 0, head, span)?;
            Node::Nl
        }
        "update" => {
            arity(args, 2, 2, head, span)?;
            let (f, fspan) = sym(&args[0], "a field")?;
            let Some((ty, field)) = n.field(&f) else {
                return Err(Diagnostic::new(
                    format!("`{f}` is not a field of any record"),
                    fspan,
                    "here",
                ));
            };
            Node::Update {
                ty,
                field,
                value: Box::new(form(&args[1], n)?),
            }
        }
        "spit" | "swap" | "print" => {
            arity(args, 0, 0, head, span)?;
            match head.as_str() {
                "spit" => Node::Spit,
                "swap" => Node::Swap,
                _ => Node::Print,
            }
        }
        "spit_int" | "spit_char" => {
            arity(args, 1, 1, head, span)?;
            let v = Box::new(form(&args[0], n)?);
            if head == "spit_int" {
                Node::SpitInt(v)
            } else {
                Node::SpitChar(v)
            }
        }
        "make_buffer" => {
            arity(args, 2, 2, head, span)?;
            let (p, pspan) = match &args[0] {
                Sexp::Sym(p, s) | Sexp::Str(p, s) => (p.clone(), s.clone()),
                other => {
                    return Err(Diagnostic::new(
                        "expected a policy name",
                        other.span(),
                        "here",
                    ));
                }
            };
            Node::MakeBuffer(policy(&p, pspan)?, Box::new(form(&args[1], n)?))
        }
        "read_buffer" | "write_buffer" | "prefetch_buffer" => {
            arity(args, 2, 3, head, span)?;
            let op = match head.as_str() {
                "read_buffer" => BufferOp::Read,
                "write_buffer" => BufferOp::Write,
                _ => BufferOp::Prefetch,
            };
            Node::Buffer(op, Box::new(form(&args[0], n)?), keys_of(&args[1..], n)?)
        }
        "print_buffer" => {
            arity(args, 1, 1, head, span)?;
            Node::PrintBuffer(Box::new(form(&args[0], n)?))
        }
        "hits" | "misses" => {
            arity(args, 1, 1, head, span)?;
            Node::BufferCount(Box::new(form(&args[0], n)?), head == "hits")
        }
        name => {
            arity(args, 0, 0, head, span)?;
            if let Some(i) = n.procedure(name) {
                Node::Call(i)
            } else if let Some(node) = n.record_name(name) {
                node
            } else {
                return Err(Diagnostic::new(
                    format!("no procedure, field or form `{name}`"),
                    hspan.clone(),
                    "here",
                ));
            }
        }
    })
}
