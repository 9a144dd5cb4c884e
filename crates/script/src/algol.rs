//! The Algol-like syntax (the paper's Figures 4 and 6–9):
//!
//! ```text
//! preprocess begin … end
//! procedure NAME begin … end          (main runs for every record)
//! postprocess begin … end
//! ```
//!
//! Statements: `set x = e`, `set a[k] = e`, `set a[k1, k2] = e`, `if e then
//! … [else if e then …]* [else …] endif`, `while (e) begin … end`, `for (k
//! in a) begin … end`, `delete k from a`, `echo e, …`, `nl`, `update FIELD =
//! e`, `spit()`, `spit_int e`, `spit_char e`, `swap()`, `print()`,
//! `NAME()` (a procedure), and the buffer built-ins `read_buffer(b, k1,
//! k2)`, `write_buffer(…)`, `prefetch_buffer(…)`, `print_buffer(b)`.
//! Semicolons after statements are optional. Expressions: `or`, `and`,
//! `not`, comparisons (`== != < <= > >=`), `k found in a`, `k not found in
//! a`, `+ -`, `* / modulo %`, unary `-`, numbers, strings, `(e)`, `a[k]`,
//! and the functions `make_buffer(POLICY, size)`, `hits(b)`, `misses(b)`.

use tramp_cachesim::PolicyKind;
use tramp_core::Schema;
use tramp_desc::lex::{Span, Tok, Tokens, lex};
use tramp_diag::Diagnostic;

use crate::names::Names;
use crate::tree::{BufferOp, Node, Op, Script};

const KEYWORDS: [&str; 22] = [
    "begin",
    "end",
    "if",
    "then",
    "else",
    "endif",
    "while",
    "for",
    "in",
    "set",
    "delete",
    "from",
    "echo",
    "nl",
    "update",
    "and",
    "or",
    "not",
    "found",
    "modulo",
    "procedure",
    "postprocess",
];

struct Parser {
    t: Tokens,
    n: Names,
    /// Nesting of blocks and expressions being parsed.
    depth: usize,
}

/// Deepest nesting of blocks and parenthesised expressions a script may
/// have (the parser and the interpreter recurse on it).
pub const MAX_NESTING: usize = 200;

/// Parses an Algol-like script.
pub fn parse(src: &str, schema: &Schema) -> Result<Script, Diagnostic> {
    let toks = lex(src)?;
    let mut names = Names::new(schema);
    // Procedures may be called before they are defined.
    for w in toks.windows(2) {
        if let (Tok::Ident(p), Tok::Ident(name)) = (&w[0].0, &w[1].0)
            && p == "procedure"
            && name != "main"
        {
            names.declare_procedure(name, w[1].1.clone())?;
        }
    }
    let procs = names.procedure_count();
    let mut p = Parser {
        t: Tokens::new(toks, src.len()),
        n: names,
        depth: 0,
    };
    let mut script = Script {
        procedures: vec![Node::Seq(Vec::new()); procs],
        ..Script::default()
    };
    while !p.t.at_end() {
        let (kw, span) = p.t.ident("`preprocess`, `procedure` or `postprocess`")?;
        match kw.as_str() {
            "preprocess" | "postprocess" => {
                let body = p.block()?;
                let slot = if kw == "preprocess" {
                    &mut script.preprocess
                } else {
                    &mut script.postprocess
                };
                if slot.is_some() {
                    return Err(Diagnostic::new(
                        format!("a second `{kw}` block"),
                        span,
                        "only one is allowed",
                    ));
                }
                *slot = Some(body);
            }
            "procedure" => {
                let (name, nspan) = p.t.ident("a procedure name")?;
                let body = p.block()?;
                if name == "main" {
                    if script.main.is_some() {
                        return Err(Diagnostic::new(
                            "procedure `main` is defined twice",
                            nspan,
                            "second definition",
                        ));
                    }
                    script.main = Some(body);
                } else {
                    let i = p.n.procedure(&name).expect("declared in the first pass");
                    script.procedures[i] = body;
                }
            }
            _ => {
                return Err(Diagnostic::new(
                    format!("expected `preprocess`, `procedure` or `postprocess`, found `{kw}`"),
                    span,
                    "a script is made of these blocks",
                ));
            }
        }
    }
    let (scalars, arrays) = p.n.finish()?;
    script.scalars = scalars;
    script.arrays = arrays;
    script.set_records(schema);
    script.simplify();
    Ok(script)
}

fn is_word(t: Option<&Tok>, w: &str) -> bool {
    matches!(t, Some(Tok::Ident(x)) if x == w)
}

impl Parser {
    /// `begin stmts end`
    fn block(&mut self) -> Result<Node, Diagnostic> {
        self.t.expect_word("begin", "to open a block")?;
        let body = self.stmts(&["end"])?;
        self.t.expect_word("end", "to close the block")?;
        self.t.eat(";");
        Ok(body)
    }

    fn enter(&mut self) -> Result<(), Diagnostic> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Diagnostic::new(
                format!("nested more than {MAX_NESTING} levels deep"),
                self.t.span(),
                "too deep here",
            ));
        }
        Ok(())
    }

    /// Statements up to one of the `stops` keywords (not taken).
    fn stmts(&mut self, stops: &[&str]) -> Result<Node, Diagnostic> {
        self.enter()?;
        let r = self.stmts_inner(stops);
        self.depth -= 1;
        r
    }

    fn stmts_inner(&mut self, stops: &[&str]) -> Result<Node, Diagnostic> {
        let mut out = Vec::new();
        loop {
            while self.t.eat(";") {}
            match self.t.peek() {
                None => break,
                Some(Tok::Ident(w)) if stops.contains(&w.as_str()) => break,
                _ => out.push(self.stmt()?),
            }
        }
        Ok(Node::Seq(out))
    }

    fn paren_opt(&mut self) -> Result<(), Diagnostic> {
        if self.t.eat("(") {
            self.t.expect(")", "(this takes no arguments)")?;
        }
        Ok(())
    }

    fn stmt(&mut self) -> Result<Node, Diagnostic> {
        self.n.new_statement();
        let (w, span) = self.t.ident("a statement")?;
        let node = match w.as_str() {
            "set" => {
                let (name, nspan) = self.t.ident("a variable")?;
                if self.t.eat("[") {
                    let keys = self.keys("]")?;
                    let a = self.n.array(&name, nspan)?;
                    self.t.expect("=", "in `set`")?;
                    Node::SetElem(a, keys, Box::new(self.expr()?))
                } else {
                    self.t.expect("=", "in `set`")?;
                    let value = self.expr()?;
                    Node::SetVar(self.n.write(&name, nspan)?, Box::new(value))
                }
            }
            "if" => {
                let mut arms = Vec::new();
                let mut otherwise = None;
                let cond = self.expr()?;
                self.t.expect_word("then", "after the condition")?;
                arms.push((cond, self.stmts(&["else", "endif"])?));
                loop {
                    if self.t.eat_word("endif") {
                        break;
                    }
                    self.t.expect_word("else", "or `endif`")?;
                    if self.t.eat_word("if") {
                        let cond = self.expr()?;
                        self.t.expect_word("then", "after the condition")?;
                        arms.push((cond, self.stmts(&["else", "endif"])?));
                    } else {
                        otherwise = Some(Box::new(self.stmts(&["endif"])?));
                        self.t.expect_word("endif", "to close the `if`")?;
                        break;
                    }
                }
                Node::If(arms, otherwise)
            }
            "while" => {
                let cond = self.expr()?;
                let body = self.block()?;
                Node::While(Box::new(cond), Box::new(body))
            }
            "for" => {
                self.t.expect("(", "after `for`")?;
                let (k, kspan) = self.t.ident("the key variable")?;
                self.t.expect_word("in", "in `for (key in array)`")?;
                let (a, aspan) = self.t.ident("an array")?;
                self.t.expect(")", "after `for (key in array`")?;
                let key = self.n.write(&k, kspan)?;
                let arr = self.n.array(&a, aspan)?;
                Node::For(key, arr, Box::new(self.block()?))
            }
            "delete" => {
                let keys = self.key_tuple()?;
                self.t.expect_word("from", "in `delete key from array`")?;
                let (a, aspan) = self.t.ident("an array")?;
                Node::Delete(self.n.array(&a, aspan)?, keys)
            }
            "echo" => {
                let mut v = vec![self.expr()?];
                while self.t.eat(",") {
                    v.push(self.expr()?);
                }
                Node::Echo(v, true)
            }
            "nl" => {
                self.paren_opt()?;
                Node::Nl
            }
            "update" => {
                let (f, fspan) = self.t.ident("a field (RECORD_FIELD)")?;
                let Some((ty, field)) = self.n.field(&f) else {
                    return Err(Diagnostic::new(
                        format!("`{f}` is not a field of any record"),
                        fspan,
                        "`update` sets a field of the current record",
                    ));
                };
                self.t.expect("=", "in `update`")?;
                Node::Update {
                    ty,
                    field,
                    value: Box::new(self.expr()?),
                }
            }
            "spit" => {
                self.paren_opt()?;
                Node::Spit
            }
            "swap" => {
                self.paren_opt()?;
                Node::Swap
            }
            "print" => {
                self.paren_opt()?;
                Node::Print
            }
            "spit_int" => Node::SpitInt(Box::new(self.expr()?)),
            "spit_char" => Node::SpitChar(Box::new(self.expr()?)),
            "read_buffer" | "write_buffer" | "prefetch_buffer" => {
                let op = match w.as_str() {
                    "read_buffer" => BufferOp::Read,
                    "write_buffer" => BufferOp::Write,
                    _ => BufferOp::Prefetch,
                };
                let mut args = self.args()?;
                if !(2..=3).contains(&args.len()) {
                    return Err(Diagnostic::new(
                        format!("`{w}` takes a buffer and one or two keys"),
                        span,
                        "here",
                    ));
                }
                let buf = args.remove(0);
                Node::Buffer(op, Box::new(buf), args.into_boxed_slice())
            }
            "print_buffer" => {
                let mut args = self.args()?;
                if args.len() != 1 {
                    return Err(Diagnostic::new(
                        "`print_buffer` takes one buffer",
                        span,
                        "here",
                    ));
                }
                Node::PrintBuffer(Box::new(args.remove(0)))
            }
            _ if KEYWORDS.contains(&w.as_str()) => {
                return Err(Diagnostic::new(
                    format!("`{w}` cannot start a statement"),
                    span,
                    "expected a statement",
                ));
            }
            _ => {
                if !matches!(self.t.peek(), Some(Tok::Punct("("))) {
                    return Err(Diagnostic::new(
                        format!("`{w}` is not a statement"),
                        span,
                        "statements start with set, if, while, for, delete, echo, update, spit, … or call a procedure: NAME()",
                    ));
                }
                self.paren_opt()?;
                match self.n.procedure(&w) {
                    Some(i) => Node::Call(i),
                    None => {
                        return Err(Diagnostic::new(
                            format!("no procedure `{w}`"),
                            span,
                            "called here",
                        ));
                    }
                }
            }
        };
        self.t.eat(";");
        Ok(node)
    }

    /// `(e, …)` arguments.
    fn args(&mut self) -> Result<Vec<Node>, Diagnostic> {
        self.t.expect("(", "before the arguments")?;
        let mut v = Vec::new();
        if self.t.eat(")") {
            return Ok(v);
        }
        loop {
            v.push(self.arg()?);
            if self.t.eat(")") {
                return Ok(v);
            }
            self.t.expect(",", "between arguments")?;
        }
    }

    /// An argument: an expression, or a policy name for `make_buffer`.
    fn arg(&mut self) -> Result<Node, Diagnostic> {
        self.expr()
    }

    /// One or two keys up to `close`.
    fn keys(&mut self, close: &str) -> Result<Box<[Node]>, Diagnostic> {
        let mut v = vec![self.expr()?];
        if self.t.eat(",") {
            v.push(self.expr()?);
        }
        self.t.expect(close, "after the key")?;
        Ok(v.into_boxed_slice())
    }

    /// A key, or `(k1, k2)`.
    fn key_tuple(&mut self) -> Result<Box<[Node]>, Diagnostic> {
        if matches!(self.t.peek(), Some(Tok::Punct("("))) && self.tuple_ahead() {
            self.t.expect("(", "")?;
            return self.keys(")");
        }
        Ok(vec![self.add()?].into_boxed_slice())
    }

    /// Whether a `(` starts a two-key tuple (a top-level comma before its
    /// matching `)`).
    fn tuple_ahead(&self) -> bool {
        let mut depth = 0usize;
        let mut i = 0;
        while let Some(t) = self.t.peek_at(i) {
            match t {
                Tok::Punct("(") | Tok::Punct("[") => depth += 1,
                Tok::Punct(")") | Tok::Punct("]") => {
                    depth -= 1;
                    if depth == 0 {
                        return false;
                    }
                }
                Tok::Punct(",") if depth == 1 => return true,
                _ => {}
            }
            i += 1;
        }
        false
    }

    fn expr(&mut self) -> Result<Node, Diagnostic> {
        self.enter()?;
        let r = self.expr_inner();
        self.depth -= 1;
        r
    }

    fn expr_inner(&mut self) -> Result<Node, Diagnostic> {
        let mut v = vec![self.and()?];
        while self.t.eat_word("or") {
            v.push(self.and()?);
        }
        Ok(if v.len() == 1 {
            v.pop().expect("one")
        } else {
            Node::Or(v)
        })
    }

    fn and(&mut self) -> Result<Node, Diagnostic> {
        let mut v = vec![self.not()?];
        while self.t.eat_word("and") {
            v.push(self.not()?);
        }
        Ok(if v.len() == 1 {
            v.pop().expect("one")
        } else {
            Node::And(v)
        })
    }

    fn not(&mut self) -> Result<Node, Diagnostic> {
        if self.t.eat_word("not") || self.t.eat("!") {
            self.enter()?;
            let r = self.not();
            self.depth -= 1;
            return Ok(Node::Not(Box::new(r?)));
        }
        self.cmp()
    }

    fn cmp(&mut self) -> Result<Node, Diagnostic> {
        let keys_at = self.t.span();
        let tuple = matches!(self.t.peek(), Some(Tok::Punct("("))) && self.tuple_ahead();
        let left = if tuple {
            self.t.expect("(", "")?;
            let k = self.keys(")")?;
            if !(is_word(self.t.peek(), "found")
                || (is_word(self.t.peek(), "not") && is_word(self.t.peek_at(1), "found")))
            {
                return Err(Diagnostic::new(
                    "a key pair is only used with `found in`",
                    keys_at,
                    "(k1, k2)",
                ));
            }
            return self.found(k);
        } else {
            self.add()?
        };
        if is_word(self.t.peek(), "found")
            || (is_word(self.t.peek(), "not") && is_word(self.t.peek_at(1), "found"))
        {
            return self.found(vec![left].into_boxed_slice());
        }
        let op = match self.t.peek() {
            Some(Tok::Punct("==")) => Op::Eq,
            Some(Tok::Punct("!=")) => Op::Ne,
            Some(Tok::Punct("<")) => Op::Lt,
            Some(Tok::Punct("<=")) => Op::Le,
            Some(Tok::Punct(">")) => Op::Gt,
            Some(Tok::Punct(">=")) => Op::Ge,
            Some(Tok::Punct("=")) => {
                return Err(Diagnostic::new(
                    "`=` assigns; compare with `==`",
                    self.t.span(),
                    "here",
                ));
            }
            _ => return Ok(left),
        };
        self.t.take();
        let right = self.add()?;
        Ok(Node::Bin(op, Box::new(left), Box::new(right)))
    }

    fn found(&mut self, keys: Box<[Node]>) -> Result<Node, Diagnostic> {
        let negate = self.t.eat_word("not");
        self.t.expect_word("found", "")?;
        self.t.expect_word("in", "in `found in`")?;
        let (a, aspan) = self.t.ident("an array")?;
        Ok(Node::Found(self.n.array(&a, aspan)?, keys, negate))
    }

    fn add(&mut self) -> Result<Node, Diagnostic> {
        let mut left = self.mul()?;
        loop {
            let at = self.t.span();
            let op = if self.t.eat("+") {
                Op::Add
            } else if self.t.eat("-") {
                Op::Sub
            } else {
                return Ok(left);
            };
            self.n.count_op(&at)?;
            let right = self.mul()?;
            left = Node::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn mul(&mut self) -> Result<Node, Diagnostic> {
        let mut left = self.unary()?;
        loop {
            let at = self.t.span();
            let op = if self.t.eat("*") {
                Op::Mul
            } else if self.t.eat("/") {
                Op::Div
            } else if self.t.eat("%") || self.t.eat_word("modulo") {
                Op::Mod
            } else {
                return Ok(left);
            };
            self.n.count_op(&at)?;
            let right = self.unary()?;
            left = Node::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Node, Diagnostic> {
        if self.t.eat("-") {
            self.enter()?;
            let r = self.unary();
            self.depth -= 1;
            return Ok(Node::Neg(Box::new(r?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Node, Diagnostic> {
        let span = self.t.span();
        match self.t.take() {
            Some((Tok::Int(v), s)) => i64::try_from(v).map(Node::Int).map_err(|_| {
                Diagnostic::new(
                    format!("{v} does not fit a signed 64-bit integer"),
                    s,
                    "here",
                )
            }),
            Some((Tok::Float(v), _)) => Ok(Node::Float(v)),
            Some((Tok::Str(s), _)) => Ok(Node::Str(s.into())),
            Some((Tok::Punct("("), _)) => {
                let e = self.expr()?;
                self.t.expect(")", "to close the parenthesis")?;
                Ok(e)
            }
            Some((Tok::Ident(name), s)) => self.ident_expr(name, s),
            _ => Err(Diagnostic::new(
                "expected a value",
                span,
                "a number, string, variable, field or (expression)",
            )),
        }
    }

    fn ident_expr(&mut self, name: String, span: Span) -> Result<Node, Diagnostic> {
        if KEYWORDS.contains(&name.as_str()) {
            return Err(Diagnostic::new(
                format!("expected a value, found `{name}`"),
                span,
                "a keyword",
            ));
        }
        if self.t.eat("[") {
            let keys = self.keys("]")?;
            return Ok(Node::Elem(self.n.array(&name, span)?, keys));
        }
        if matches!(self.t.peek(), Some(Tok::Punct("("))) {
            return self.function(name, span);
        }
        self.n.read(&name, span)
    }

    fn function(&mut self, name: String, span: Span) -> Result<Node, Diagnostic> {
        match name.as_str() {
            "make_buffer" => {
                self.t.expect("(", "")?;
                let (p, pspan) = match self.t.take() {
                    Some((Tok::Ident(p), s)) | Some((Tok::Str(p), s)) => (p, s),
                    _ => {
                        return Err(Diagnostic::new(
                            "`make_buffer` takes a policy name first",
                            self.t.prev_span(),
                            "e.g. make_buffer(LRU, 2048)",
                        ));
                    }
                };
                let kind = policy(&p, pspan)?;
                self.t.expect(",", "between the policy and the size")?;
                let size = self.expr()?;
                self.t.expect(")", "after the size")?;
                Ok(Node::MakeBuffer(kind, Box::new(size)))
            }
            "hits" | "misses" => {
                let mut a = self.args()?;
                if a.len() != 1 {
                    return Err(Diagnostic::new(
                        format!("`{name}` takes one buffer"),
                        span,
                        "here",
                    ));
                }
                Ok(Node::BufferCount(Box::new(a.remove(0)), name == "hits"))
            }
            "RECORD_TYPE" => {
                self.paren_opt()?;
                Ok(Node::RecordType)
            }
            _ => Err(Diagnostic::new(
                format!("no function `{name}`"),
                span,
                "functions: make_buffer, hits, misses (procedures are statements)",
            )),
        }
    }
}

/// A policy name for `make_buffer`.
pub(crate) fn policy(name: &str, span: Span) -> Result<PolicyKind, Diagnostic> {
    match name.parse::<PolicyKind>() {
        Ok(PolicyKind::Opt) => Err(Diagnostic::new(
            "OPT needs every request's next-access time, which a script does not have",
            span,
            "use `tramp cachesim --policy opt`",
        )),
        Ok(k) => Ok(k),
        Err(e) => Err(Diagnostic::new(e.to_string(), span, "not a policy")),
    }
}
