//! The interpreter: walks a script's tree with the current record.
//!
//! Values are integers (64-bit, overflow is an error), floats and text.
//! False is 0, 0.0 or empty text; comparisons and `found` give 1 or 0.
//! Arrays are hash maps from keys (an integer, a text, or a pair) to values,
//! growing on demand; an element never set reads as 0. `for` visits keys in
//! ascending order (integers, then texts, then pairs), over a snapshot.
//! Buffers are caches of the cache simulator, counted in objects; a buffer
//! key (k1, k2) names one object.

use std::fmt::Write as _;
use std::io::Write;
use std::rc::Rc;

use rustc_hash::FxHashMap;
use tramp_cachesim::{Cache, Unit};
use tramp_core::ints::FixedInt;
use tramp_core::{Record, Value};

use crate::compiled::{Step, compile};
use crate::deferred::{Simulator, answers_unread};
use crate::tree::{BufferOp, Node, Op, Script};

/// A value.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Int(i64),
    Float(f64),
    Str(Rc<str>),
}

impl Val {
    fn truthy(&self) -> bool {
        match self {
            Val::Int(v) => *v != 0,
            Val::Float(v) => *v != 0.0,
            Val::Str(s) => !s.is_empty(),
        }
    }

    fn key(&self) -> Key {
        match self {
            Val::Int(v) => Key::I(*v),
            Val::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e18 => Key::I(*f as i64),
            Val::Float(f) => Key::S(f.to_string().into()),
            Val::Str(s) => Key::S(s.clone()),
        }
    }

    fn from_key(k: &Key) -> Val {
        match k {
            Key::I(v) => Val::Int(*v),
            Key::S(s) => Val::Str(s.clone()),
            Key::II(a, _) => Val::Int(*a),
            Key::P(p) => Val::from_key(&p.0),
        }
    }
}

impl std::fmt::Display for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::Int(v) => write!(f, "{v}"),
            Val::Float(v) => write!(f, "{v}"),
            Val::Str(s) => f.write_str(s),
        }
    }
}

/// An array key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    I(i64),
    S(Rc<str>),
    /// Two integer keys, inline (the common two-dimensional case).
    II(i64, i64),
    P(Box<(Key, Key)>),
}

impl Key {
    /// A well-mixed 64-bit hash (the maps' hasher is FxHash, which alone
    /// clusters small integers and pairs of them).
    fn mixed(&self) -> u64 {
        use tramp_core::rng::mix;
        match self {
            Key::I(v) => mix(*v as u64),
            Key::S(s) => {
                use std::hash::{Hash, Hasher};
                let mut h = rustc_hash::FxHasher::default();
                s.hash(&mut h);
                mix(h.finish() ^ 0x5555)
            }
            Key::II(a, b) => mix(mix(*a as u64).rotate_left(17) ^ *b as u64),
            Key::P(p) => mix(p.0.mixed().rotate_left(17) ^ p.1.mixed()),
        }
    }
}

impl std::hash::Hash for Key {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.mixed());
    }
}

/// A runtime error: what, and in which record (or block).
#[derive(Debug, thiserror::Error)]
#[error("{place}: {message}")]
pub struct RunError {
    pub place: String,
    pub message: String,
    /// The output error behind a failed write (a closed pipe ends quietly).
    #[source]
    pub io: Option<std::io::Error>,
}

/// Where `spit` and `spit_int`/`spit_char` write.
pub trait Spit {
    /// Writes the current record, with the fields `update` changed.
    fn record(&mut self, rec: &Record<'_>, updates: &[Option<Val>]) -> Result<(), String>;
    /// Writes raw bytes.
    fn raw(&mut self, bytes: &[u8]) -> Result<(), String>;
}

/// A script's state.
pub struct Machine<'a> {
    script: &'a Script,
    pub(crate) scalars: Vec<Val>,
    arrays: Vec<FxHashMap<Key, Val>>,
    /// The buffers, when simulated in line (else the simulator has them).
    buffers: Vec<Cache>,
    /// How many buffers exist.
    pub(crate) nbuffers: usize,
    /// Serves buffer requests on its own thread while records run, when
    /// their answers are never read ([`crate::deferred`]).
    sim: Option<Simulator>,
    /// Whether records may run with the simulator.
    may_defer: bool,
    /// Main compiled to closures ([`crate::compiled`]), shared so that it
    /// can run while the machine is borrowed (taking it out and putting it
    /// back moved it through memory in pieces that store forwarding could
    /// not serve).
    main_code: Option<Rc<Step<'a>>>,
    buffer_ids: FxHashMap<Key, u64>,
    out: &'a mut dyn Write,
    spit: Option<&'a mut dyn Spit>,
    line_started: bool,
    swapped: bool,
    /// Number of the current record (0-based), counted over all traces.
    record: u64,
    place: &'static str,
    updates: Vec<Option<Val>>,
    touched: bool,
    labels: Vec<Vec<Vec<(u64, String)>>>,
    depth: u32,
}

/// A field of a record type, and where it lies in the record's bytes when
/// the type has a fixed layout (looked up once, when main is compiled).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FieldAt {
    pub ty: usize,
    pub field: usize,
    pub fixed: Option<FixedInt>,
}

impl FieldAt {
    /// Field `field` of type `ty`, read through the record's slots.
    #[inline(always)]
    pub fn plain(ty: usize, field: usize) -> Self {
        FieldAt {
            ty,
            field,
            fixed: None,
        }
    }

    /// Field `field` of type `ty` of `script`, with its place when known.
    pub fn of(script: &Script, ty: usize, field: usize) -> Self {
        let fixed = script
            .layouts
            .get(ty)
            .and_then(|l| l.as_ref()?.get(field).copied());
        FieldAt { ty, field, fixed }
    }
}

/// Deepest procedure recursion (the interpreter recurses on the stack).
const MAX_DEPTH: u32 = 1_000;

/// Internal results carry the error boxed: values travel by register.
pub(crate) type R<T> = Result<T, Box<RunError>>;

impl<'a> Machine<'a> {
    /// A machine writing `echo` output to `out` and `spit` output to `spit`.
    pub fn new(script: &'a Script, out: &'a mut dyn Write, spit: Option<&'a mut dyn Spit>) -> Self {
        Machine {
            script,
            scalars: vec![Val::Int(0); script.scalars.len()],
            arrays: vec![FxHashMap::default(); script.arrays.len()],
            buffers: Vec::new(),
            nbuffers: 0,
            sim: None,
            may_defer: script.main.is_some() && answers_unread(script),
            main_code: script.main.as_ref().map(|n| Rc::new(compile(script, n))),
            buffer_ids: FxHashMap::default(),
            out,
            spit,
            line_started: false,
            swapped: false,
            record: 0,
            place: "preprocess",
            updates: Vec::new(),
            touched: false,
            labels: Vec::new(),
            depth: 0,
        }
    }

    /// Value labels per (record type, field), for `print`.
    pub fn set_labels(&mut self, labels: Vec<Vec<Vec<(u64, String)>>>) {
        self.labels = labels;
    }

    #[cold]
    fn err(&self, message: impl Into<String>) -> Box<RunError> {
        let place = if self.place == "main" {
            format!("record {}", self.record)
        } else {
            format!("in {}", self.place)
        };
        Box::new(RunError {
            place,
            message: message.into(),
            io: None,
        })
    }

    /// Runs the preprocess block.
    pub fn preprocess(&mut self) -> Result<(), RunError> {
        self.preprocess_inner().map_err(|e| *e)
    }

    fn preprocess_inner(&mut self) -> R<()> {
        self.place = "preprocess";
        if let Some(n) = &self.script.preprocess {
            self.eval(n, None)?;
        }
        if self.may_defer && self.nbuffers > 0 {
            match Simulator::start(std::mem::take(&mut self.buffers)) {
                Ok(s) => self.sim = Some(s),
                // No thread: the buffers stay in line.
                Err(caches) => self.buffers = caches,
            }
        }
        Ok(())
    }

    /// Serves buffer requests in line, on this thread, even when their
    /// answers are never read (to compare with the simulating thread).
    /// Call before [`Machine::preprocess`].
    pub fn simulate_in_line(&mut self) {
        self.may_defer = false;
    }

    /// Runs main by walking its tree, not compiled to closures (to compare
    /// the two).
    pub fn walk_only(&mut self) {
        self.main_code = None;
    }

    /// Whether buffer requests go to a simulating thread.
    pub fn simulates_apart(&self) -> bool {
        self.sim.is_some()
    }

    /// Takes the buffers back from the simulating thread, every queued
    /// request served.
    fn settle_buffers(&mut self) -> R<()> {
        if let Some(s) = self.sim.take() {
            match s.finish() {
                Some(caches) => self.buffers = caches,
                None => return Err(self.err("the thread simulating the buffers panicked")),
            }
        }
        Ok(())
    }

    /// Runs main on one record.
    #[inline]
    pub fn main(&mut self, rec: &Record<'_>) -> Result<(), RunError> {
        self.main_inner(rec).map_err(|e| *e)
    }

    /// [`Machine::main`] with the error boxed: the record loop's form (a
    /// one-word result, where the unboxed error makes every return go
    /// through memory).
    #[inline]
    pub fn main_boxed(&mut self, rec: &Record<'_>) -> Result<(), Box<RunError>> {
        self.main_inner(rec)
    }

    #[inline]
    fn main_inner(&mut self, rec: &Record<'_>) -> R<()> {
        self.place = "main";
        if self.touched {
            self.updates.iter_mut().for_each(|u| *u = None);
            self.touched = false;
        }
        if let Some(code) = self.main_code.clone() {
            code.run(self, Some(rec))?;
        } else if let Some(n) = &self.script.main {
            self.exec(n, Some(rec))?;
        }
        self.record += 1;
        Ok(())
    }

    /// Runs the postprocess block and ends a started output line.
    pub fn postprocess(&mut self) -> Result<(), RunError> {
        self.postprocess_inner().map_err(|e| *e)
    }

    fn postprocess_inner(&mut self) -> R<()> {
        self.place = "postprocess";
        self.settle_buffers()?;
        if let Some(n) = &self.script.postprocess {
            self.eval(n, None)?;
        }
        self.flush_inner()
    }

    /// Flushes the echo output.
    pub fn flush(&mut self) -> Result<(), RunError> {
        self.flush_inner().map_err(|e| *e)
    }

    fn flush_inner(&mut self) -> R<()> {
        if self.line_started {
            self.write_out(b"\n")?;
            self.line_started = false;
        }
        self.out.flush().map_err(|e| {
            let mut err = self.err(format!("writing output: {e}"));
            err.io = Some(e);
            err
        })
    }

    /// Whether the script has a main procedure (needs records).
    pub fn wants_records(&self) -> bool {
        self.script.main.is_some()
    }

    fn write_out(&mut self, b: &[u8]) -> R<()> {
        if let Err(e) = self.out.write_all(b) {
            let mut err = self.err(format!("writing output: {e}"));
            err.io = Some(e);
            return Err(err);
        }
        Ok(())
    }

    /// An integer field of the current record, when it is one and the
    /// script has not updated it (else `None`: ask [`Machine::field`], which
    /// also says what is wrong). Comes back in registers, where a `Val` in
    /// a `Result` goes through memory.
    #[inline(always)]
    pub(crate) fn field_int(&self, rec: Option<&Record<'_>>, f: FieldAt) -> Option<i64> {
        let rec = rec?;
        if rec.record_type().index != f.ty || self.touched {
            return None;
        }
        match f.fixed {
            Some(at) => rec.int_at(f.field, at),
            None => rec.int(f.field),
        }
    }

    #[inline]
    fn field(&self, rec: Option<&Record<'_>>, ty: usize, field: usize) -> R<Val> {
        let Some(rec) = rec else {
            return Err(self.err("record fields exist only in main and the procedures it calls"));
        };
        let rt = rec.record_type();
        if rt.index != ty {
            let (want, fields) = &self.script.records[ty];
            return Err(self.err(format!(
                "field `{}` of a `{want}` record read while the record is a `{}`",
                fields[field], rt.name
            )));
        }
        if self.touched
            && let Some(Some(v)) = self.updates.get(field)
        {
            return Ok(v.clone());
        }
        Ok(match rec.get(field) {
            Some(Value::U64(v)) => Val::Int(v as i64),
            Some(Value::I64(v)) => Val::Int(v),
            Some(Value::F64(v)) => Val::Float(v),
            Some(Value::Str(s)) => Val::Str(s.into()),
            Some(Value::Bytes(b)) => {
                let end = b.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
                Val::Str(String::from_utf8_lossy(&b[..end]).into())
            }
            Some(_) => Val::Str("".into()),
            None => Val::Int(0),
        })
    }

    fn arith(&self, op: Op, a: Val, b: Val) -> R<Val> {
        use Val::*;
        Ok(match (a, b) {
            (Int(x), Int(y)) => {
                let r = match op {
                    Op::Add => x.checked_add(y),
                    Op::Sub => x.checked_sub(y),
                    Op::Mul => x.checked_mul(y),
                    Op::Div | Op::Mod if y == 0 => return Err(self.err("division by zero")),
                    Op::Div => x.checked_div(y),
                    Op::Mod => x.checked_rem(y),
                    _ => unreachable!("comparison"),
                };
                Int(r.ok_or_else(|| self.err("integer overflow"))?)
            }
            (Str(_), _) | (_, Str(_)) => {
                return Err(self.err("arithmetic on text"));
            }
            (a, b) => {
                let (x, y) = (num(&a), num(&b));
                Float(match op {
                    Op::Add => x + y,
                    Op::Sub => x - y,
                    Op::Mul => x * y,
                    Op::Div if y == 0.0 => return Err(self.err("division by zero")),
                    Op::Div => x / y,
                    Op::Mod if y == 0.0 => return Err(self.err("division by zero")),
                    Op::Mod => x % y,
                    _ => unreachable!("comparison"),
                })
            }
        })
    }

    fn keys(&mut self, keys: &[Node], rec: Option<&Record<'_>>) -> R<Key> {
        let k0 = self.eval(&keys[0], rec)?.key();
        Ok(match keys.get(1) {
            None => k0,
            Some(k) => match (k0, self.eval(k, rec)?.key()) {
                (Key::I(a), Key::I(b)) => Key::II(a, b),
                (a, b) => Key::P(Box::new((a, b))),
            },
        })
    }

    /// The object a buffer key names: small integers and pairs of them
    /// map to ids directly (bit 63 marks a pair), anything else is
    /// numbered in a table (ids with bit 62 set).
    #[inline]
    fn buffer_id(&mut self, k: Key) -> u64 {
        match k {
            Key::I(v) if (0..1 << 62).contains(&v) => v as u64,
            Key::II(a, b) if let Some(id) = pair_id(a, b) => id,
            k => {
                let next = 1 << 62 | self.buffer_ids.len() as u64;
                *self.buffer_ids.entry(k).or_insert(next)
            }
        }
    }

    /// One request to buffer `b` for object `id`; true on a hit.
    #[inline(always)]
    pub(crate) fn request(&mut self, op: BufferOp, b: usize, id: u64) -> bool {
        if let Some(s) = &mut self.sim {
            // Nobody reads the answer (see `crate::deferred`).
            s.push(op, b, id);
            return true;
        }
        self.request_here(op, b, id)
    }

    /// [`Machine::request`] served in line.
    #[inline(never)]
    fn request_here(&mut self, op: BufferOp, b: usize, id: u64) -> bool {
        op.serve(&mut self.buffers[b], id)
    }

    fn buffer(&self, v: Val) -> R<usize> {
        match v {
            Val::Int(i) if i >= 0 && (i as usize) < self.nbuffers => Ok(i as usize),
            other => Err(self.err(format!(
                "{other} is not a buffer (make one with make_buffer)"
            ))),
        }
    }

    fn echo_val(&mut self, v: &Val) -> R<()> {
        let mut s = String::new();
        if self.line_started {
            s.push(' ');
        }
        let _ = write!(s, "{v}");
        self.line_started = true;
        self.write_out(s.as_bytes())
    }

    fn spit_raw(&mut self, bytes: &[u8]) -> R<()> {
        let r = match self.spit.as_deref_mut() {
            Some(s) => s.raw(bytes),
            None => Err("this run has no output for spit".to_string()),
        };
        r.map_err(|e| self.err(e))
    }

    /// The rarely hot statements, apart so that `eval`'s frame stays small.
    #[inline(never)]
    fn eval_cold(&mut self, node: &Node, rec: Option<&Record<'_>>) -> R<Val> {
        use Val::*;
        const TRUE: Val = Int(1);
        Ok(match node {
            Node::For(var, a, body) => {
                let mut keys: Vec<Key> = self.arrays[*a].keys().cloned().collect();
                keys.sort_unstable();
                let mut last: Option<Val> = None;
                for k in keys {
                    let v = Val::from_key(&k);
                    if matches!(k, Key::P(_) | Key::II(..)) && last.as_ref() == Some(&v) {
                        continue;
                    }
                    last = Some(v.clone());
                    self.scalars[*var] = v;
                    self.eval(body, rec)?;
                }
                TRUE
            }
            Node::Call(p) => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(self.err("procedures call each other more than 1000 deep"));
                }
                let body = &self.script.procedures[*p];
                let r = self.eval(body, rec);
                self.depth -= 1;
                r?;
                TRUE
            }
            Node::Echo(v, end_line) => {
                for n in v {
                    let x = self.eval(n, rec)?;
                    self.echo_val(&x)?;
                }
                if *end_line {
                    self.write_out(b"\n")?;
                    self.line_started = false;
                }
                TRUE
            }
            Node::Nl => {
                self.write_out(b"\n")?;
                self.line_started = false;
                TRUE
            }
            Node::Update { ty, field, value } => {
                let v = self.eval(value, rec)?;
                let Some(r) = rec else {
                    return Err(self.err("`update` needs a current record (main)"));
                };
                if r.record_type().index != *ty {
                    return Err(self.err(format!(
                        "`update` of a field of another record type than this `{}`",
                        r.record_type().name
                    )));
                }
                if self.updates.len() < r.record_type().fields.len() {
                    self.updates.resize(r.record_type().fields.len(), None);
                }
                self.updates[*field] = Some(v);
                self.touched = true;
                TRUE
            }
            Node::Spit => {
                let Some(r) = rec else {
                    return Err(self.err("`spit` writes the current record; there is none here"));
                };
                let empty: &[Option<Val>] = &[];
                let updates = if self.touched {
                    &self.updates[..]
                } else {
                    empty
                };
                let res = match self.spit.as_deref_mut() {
                    Some(s) => s.record(r, updates),
                    None => Err("this run has no output for spit".to_string()),
                };
                res.map_err(|e| self.err(e))?;
                TRUE
            }
            Node::SpitInt(e) => {
                let v = match self.eval(e, rec)? {
                    Int(v) if (i32::MIN as i64..=u32::MAX as i64).contains(&v) => v as u32,
                    other => {
                        return Err(self.err(format!("spit_int: {other} does not fit 4 bytes")));
                    }
                };
                let b = if self.swapped {
                    v.swap_bytes().to_ne_bytes()
                } else {
                    v.to_ne_bytes()
                };
                self.spit_raw(&b)?;
                TRUE
            }
            Node::SpitChar(e) => {
                let v = match self.eval(e, rec)? {
                    Int(v) => v as u8,
                    Str(s) => s.as_bytes().first().copied().unwrap_or(0),
                    Float(f) => f as i64 as u8,
                };
                self.spit_raw(&[v])?;
                TRUE
            }
            Node::Swap => {
                self.swapped = !self.swapped;
                TRUE
            }
            Node::Print => {
                let Some(r) = rec else {
                    return Err(self.err("`print` prints the current record; there is none here"));
                };
                let rt = r.record_type();
                let mut line = rt.name.clone();
                for i in 0..rt.fields.len() {
                    let v = self.field(rec, rt.index, i)?;
                    let _ = write!(line, " {}={v}", rt.fields[i].name);
                    if let (Val::Int(x), Some(l)) =
                        (&v, self.labels.get(rt.index).and_then(|t| t.get(i)))
                        && let Some((_, label)) = l.iter().find(|(val, _)| *val == *x as u64)
                    {
                        let _ = write!(line, "({label})");
                    }
                }
                line.push('\n');
                if self.line_started {
                    self.write_out(b"\n")?;
                    self.line_started = false;
                }
                self.write_out(line.as_bytes())?;
                TRUE
            }
            Node::MakeBuffer(kind, size) => {
                let n = match self.eval(size, rec)? {
                    Int(n) if n > 0 => n as u64,
                    other => {
                        return Err(self.err(format!("make_buffer: size {other} is not above 0")));
                    }
                };
                self.buffers.push(Cache::new(*kind, n, Unit::Objects));
                self.nbuffers = self.buffers.len();
                Int(self.buffers.len() as i64 - 1)
            }
            Node::PrintBuffer(b) => {
                let bv = self.eval(b, rec)?;
                let b = self.buffer(bv)?;
                let text = format!("{}\n", self.buffers[b].report());
                if self.line_started {
                    self.write_out(b"\n")?;
                    self.line_started = false;
                }
                self.write_out(text.as_bytes())?;
                TRUE
            }
            Node::BufferCount(b, hits) => {
                let bv = self.eval(b, rec)?;
                let b = self.buffer(bv)?;
                let s = self.buffers[b].stats();
                Int(if *hits { s.hits() } else { s.misses() } as i64)
            }
            _ => unreachable!("hot nodes are evaluated by eval"),
        })
    }

    fn eval(&mut self, node: &Node, rec: Option<&Record<'_>>) -> R<Val> {
        use Val::*;
        const TRUE: Val = Int(1);
        Ok(match node {
            Node::Int(v) => Int(*v),
            Node::Float(v) => Float(*v),
            Node::Str(s) => Str(s.clone()),
            Node::Var(i) => self.scalars[*i].clone(),
            Node::SetVar(i, e) => {
                let v = self.eval(e, rec)?;
                self.scalars[*i] = v;
                TRUE
            }
            Node::Elem(a, keys) => {
                let k = self.keys(keys, rec)?;
                self.arrays[*a].get(&k).cloned().unwrap_or(Int(0))
            }
            Node::SetElem(a, keys, e) => {
                let k = self.keys(keys, rec)?;
                let v = self.eval(e, rec)?;
                self.arrays[*a].insert(k, v);
                TRUE
            }
            Node::Found(a, keys, negate) => {
                let k = self.keys(keys, rec)?;
                Int((self.arrays[*a].contains_key(&k) != *negate) as i64)
            }
            Node::Delete(a, keys) => {
                let k = self.keys(keys, rec)?;
                self.arrays[*a].remove(&k);
                TRUE
            }
            Node::Field { ty, field } => self.field(rec, *ty, *field)?,
            Node::RecordType => match rec {
                Some(r) => Int(r.record_type().index as i64),
                None => return Err(self.err("RECORD_TYPE exists only in main")),
            },
            Node::Bin(op, a, b) => {
                let x = self.eval(a, rec)?;
                let y = self.eval(b, rec)?;
                match op {
                    Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => {
                        Int(holds(*op, compare(&x, &y)) as i64)
                    }
                    _ => self.arith(*op, x, y)?,
                }
            }
            Node::Neg(a) => match self.eval(a, rec)? {
                Int(v) => Int(v
                    .checked_neg()
                    .ok_or_else(|| self.err("integer overflow"))?),
                Float(v) => Float(-v),
                Str(_) => return Err(self.err("arithmetic on text")),
            },
            Node::Not(_) | Node::And(_) | Node::Or(_) => Int(self.cond(node, rec)? as i64),
            Node::Seq(_) | Node::If(..) | Node::While(..) => {
                self.exec(node, rec)?;
                TRUE
            }
            Node::TypeIs(_) | Node::FieldCmp { .. } => Int(self.cond(node, rec)? as i64),
            Node::LoadField { slot, ty, field } => {
                let v = self.field(rec, *ty, *field)?;
                self.scalars[*slot] = v;
                TRUE
            }
            Node::BufferVars(op, b, keys) => Int(self.buffer_vars(*op, *b, keys)? as i64),
            Node::AddField { slot, ty, field } => {
                let f = self.field(rec, *ty, *field)?;
                let x = self.scalars[*slot].clone();
                self.scalars[*slot] = self.arith(Op::Add, x, f)?;
                TRUE
            }
            Node::AddVar(slot, c) => {
                match &mut self.scalars[*slot] {
                    Int(v) => match v.checked_add(*c) {
                        Some(n) => *v = n,
                        None => return Err(self.err("integer overflow")),
                    },
                    other => {
                        let x = other.clone();
                        let r = self.arith(Op::Add, x, Int(*c))?;
                        self.scalars[*slot] = r;
                    }
                }
                TRUE
            }
            Node::Echo(..)
            | Node::Nl
            | Node::Update { .. }
            | Node::Spit
            | Node::SpitInt(_)
            | Node::SpitChar(_)
            | Node::Swap
            | Node::Print
            | Node::MakeBuffer(..)
            | Node::PrintBuffer(_)
            | Node::BufferCount(..)
            | Node::For(..)
            | Node::Call(_) => self.eval_cold(node, rec)?,
            Node::Buffer(op, b, keys) => {
                let bv = self.eval(b, rec)?;
                let b = self.buffer(bv)?;
                let k = self.keys(keys, rec)?;
                let id = self.buffer_id(k);
                Int(self.request(*op, b, id) as i64)
            }
        })
    }

    /// Runs a statement. Statements need no value, so the hot ones return
    /// nothing here (a `Val` in a `Result` comes back through memory, a
    /// unit or a bool in registers); anything else is evaluated. The hot
    /// shapes only, so that the frame stays small; the rest is
    /// [`Machine::exec_rest`].
    pub(crate) fn exec(&mut self, node: &Node, rec: Option<&Record<'_>>) -> R<()> {
        match node {
            Node::Seq(v) => {
                for n in v {
                    self.step(n, rec)?;
                }
                Ok(())
            }
            Node::If(arms, otherwise) => {
                for (c, body) in arms {
                    if self.test(c, rec)? {
                        return self.step(body, rec);
                    }
                }
                match otherwise {
                    Some(e) => self.step(e, rec),
                    None => Ok(()),
                }
            }
            _ => self.step(node, rec),
        }
    }

    /// A statement inside a block or a branch: the leaves that most
    /// scripts run on every record are done here, without a call; anything
    /// else goes to [`Machine::exec`] (blocks, branches) or
    /// [`Machine::exec_rest`].
    #[inline(always)]
    fn step(&mut self, node: &Node, rec: Option<&Record<'_>>) -> R<()> {
        match node {
            &Node::LoadField { slot, ty, field } => {
                self.set_from_field(slot, FieldAt::plain(ty, field), rec)
            }
            Node::BufferVars(op, b, keys) => self.buffer_vars(*op, *b, keys).map(drop),
            &Node::AddField { slot, ty, field } => {
                self.add_field(node, slot, FieldAt::plain(ty, field), rec)
            }
            &Node::AddVar(slot, c) => self.add_to(node, slot, c, rec),
            Node::Seq(_) | Node::If(..) => self.exec(node, rec),
            // Lisp sequences with `and`/`or`: their truth decides, their
            // value is not wanted.
            Node::And(_) | Node::Or(_) => self.cond(node, rec).map(drop),
            _ => self.exec_rest(node, rec),
        }
    }

    /// A branch's condition: record types and integer fields against
    /// constants here, without a call; the rest in [`Machine::cond`].
    #[inline(always)]
    pub(crate) fn test(&mut self, node: &Node, rec: Option<&Record<'_>>) -> R<bool> {
        match self.quick(node, rec) {
            Some(b) => Ok(b),
            None => self.cond(node, rec),
        }
    }

    /// The truth of `RECORD_TYPE == c` with a record, or of `FIELD op c`
    /// for an integer field; `None` for anything else.
    #[inline(always)]
    fn quick(&self, node: &Node, rec: Option<&Record<'_>>) -> Option<bool> {
        match node {
            Node::TypeIs(c) => Some(rec?.record_type().index as i64 == *c),
            Node::FieldCmp {
                ty,
                field,
                op,
                value,
            } => Some(holds(
                *op,
                self.field_int(rec, FieldAt::plain(*ty, *field))?.cmp(value),
            )),
            _ => None,
        }
    }

    /// `set x = FIELD` in general: any value, or an error.
    #[inline(never)]
    pub(crate) fn load_field(
        &mut self,
        slot: usize,
        ty: usize,
        field: usize,
        rec: Option<&Record<'_>>,
    ) -> R<()> {
        let v = self.field(rec, ty, field)?;
        self.scalars[slot] = v;
        Ok(())
    }

    /// The statements [`Machine::exec`] leaves out.
    #[inline(never)]
    pub(crate) fn exec_rest(&mut self, node: &Node, rec: Option<&Record<'_>>) -> R<()> {
        match node {
            Node::While(c, body) => {
                while self.cond(c, rec)? {
                    self.exec(body, rec)?;
                }
            }
            // Lisp sequences with `and`/`or`: their truth decides, their
            // value is not wanted.
            Node::And(_) | Node::Or(_) | Node::Not(_) => {
                self.cond(node, rec)?;
            }
            _ => {
                self.eval(node, rec)?;
            }
        }
        Ok(())
    }

    /// A buffer call whose buffer and keys are variables; true on a hit.
    #[inline(never)]
    pub(crate) fn buffer_vars(&mut self, op: BufferOp, b: usize, keys: &[usize]) -> R<bool> {
        // The object's id straight from integer variables (a `Key` built
        // and passed by value stalled on store forwarding); anything else
        // through `buffer_id`, which gives the same ids.
        let id = match (keys.first(), keys.get(1)) {
            (Some(&a), None) => match self.scalars[a] {
                Val::Int(v) if (0..1 << 62).contains(&v) => v as u64,
                ref other => {
                    let k = other.key();
                    self.buffer_id(k)
                }
            },
            (Some(&a), Some(&c)) => match (&self.scalars[a], &self.scalars[c]) {
                (&Val::Int(x), &Val::Int(y)) if let Some(id) = pair_id(x, y) => id,
                (&Val::Int(x), &Val::Int(y)) => self.buffer_id(Key::II(x, y)),
                (x, y) => {
                    let k = Key::P(Box::new((x.key(), y.key())));
                    self.buffer_id(k)
                }
            },
            _ => unreachable!("one or two keys"),
        };
        let b = match self.buffer_index(b) {
            Some(i) => i,
            None => {
                let v = self.scalars[b].clone();
                self.buffer(v)?
            }
        };
        Ok(self.request(op, b, id))
    }

    /// The buffer that scalar `slot` names, if it names one.
    #[inline(always)]
    fn buffer_index(&self, slot: usize) -> Option<usize> {
        match self.scalars[slot] {
            Val::Int(i) if i >= 0 && (i as usize) < self.nbuffers => Some(i as usize),
            _ => None,
        }
    }

    /// A buffer call on a buffer and two keys in variables, as a statement:
    /// integer keys and buffer here, anything else through
    /// [`Machine::buffer_vars`] (which makes the same ids).
    #[inline(always)]
    pub(crate) fn buffer_pair(&mut self, op: BufferOp, b: usize, keys: &[usize; 2]) -> R<()> {
        if let (&Val::Int(x), &Val::Int(y)) = (&self.scalars[keys[0]], &self.scalars[keys[1]])
            && let Some(id) = pair_id(x, y)
            && let Some(i) = self.buffer_index(b)
        {
            self.request(op, i, id);
            return Ok(());
        }
        self.buffer_vars(op, b, keys).map(drop)
    }

    /// A buffer call on the buffer in variable `b` and two keys, each a
    /// variable or a field: the request made here when both are integers
    /// that make a pair id (the ids [`Machine::buffer_vars`] gives them);
    /// anything else, or an error, through the walker running `node`.
    #[inline(always)]
    pub(crate) fn buffer_keys(
        &mut self,
        op: BufferOp,
        b: usize,
        keys: &[crate::compiled::Operand; 2],
        node: &Node,
        rec: Option<&Record<'_>>,
    ) -> R<()> {
        if let (Some(x), Some(y)) = (
            self.operand_int(keys[0], rec),
            self.operand_int(keys[1], rec),
        ) && let Some(id) = pair_id(x, y)
            && let Some(i) = self.buffer_index(b)
        {
            self.request(op, i, id);
            return Ok(());
        }
        self.exec(node, rec)
    }

    /// A buffer key's integer, when it is one.
    #[inline(always)]
    fn operand_int(&self, k: crate::compiled::Operand, rec: Option<&Record<'_>>) -> Option<i64> {
        match k {
            crate::compiled::Operand::Var(s) => match self.scalars[s] {
                Val::Int(x) => Some(x),
                _ => None,
            },
            crate::compiled::Operand::Field(f) => self.field_int(rec, f),
        }
    }

    /// `set x = FIELD` (`slot`, the field of record type `ty`): an integer
    /// over an integer here, one word written (a `Val` assembled and copied
    /// stalled on store forwarding); anything else, or an error, through
    /// [`Machine::load_field`].
    #[inline(always)]
    pub(crate) fn set_from_field(
        &mut self,
        slot: usize,
        f: FieldAt,
        rec: Option<&Record<'_>>,
    ) -> R<()> {
        if let Some(i) = self.field_int(rec, f)
            && let Val::Int(x) = &mut self.scalars[slot]
        {
            *x = i;
            return Ok(());
        }
        self.load_field(slot, f.ty, f.field, rec)
    }

    /// `node`, which adds `c` to the integer in `slot`: done here when it
    /// fits, else (another value, an overflow) by the walker.
    #[inline(always)]
    pub(crate) fn add_to(
        &mut self,
        node: &Node,
        slot: usize,
        c: i64,
        rec: Option<&Record<'_>>,
    ) -> R<()> {
        if let Val::Int(v) = &mut self.scalars[slot]
            && let Some(n) = v.checked_add(c)
        {
            *v = n;
            return Ok(());
        }
        self.exec_rest(node, rec)
    }

    /// `set x = x + FIELD` (`node`): [`Machine::add_to`] for an integer
    /// field of the current record, else the walker.
    #[inline(always)]
    pub(crate) fn add_field(
        &mut self,
        node: &Node,
        slot: usize,
        f: FieldAt,
        rec: Option<&Record<'_>>,
    ) -> R<()> {
        match self.field_int(rec, f) {
            Some(x) => self.add_to(node, slot, x, rec),
            None => self.exec_rest(node, rec),
        }
    }

    /// Evaluates a condition: the hot shapes here, the rest in
    /// [`Machine::cond_rest`].
    pub(crate) fn cond(&mut self, node: &Node, rec: Option<&Record<'_>>) -> R<bool> {
        if let Some(b) = self.quick(node, rec) {
            return Ok(b);
        }
        match node {
            Node::TypeIs(_) => Err(self.err("RECORD_TYPE exists only in main")),
            Node::FieldCmp {
                ty,
                field,
                op,
                value,
            } => self.field_cmp(rec, *ty, *field, *op, *value),
            // Lisp's sequences.
            Node::And(v) => {
                for n in v {
                    if !self.test(n, rec)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Node::Or(v) => {
                for n in v {
                    if self.test(n, rec)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            // Statements are true.
            Node::AddVar(..) | Node::AddField { .. } | Node::LoadField { .. } => {
                self.step(node, rec).map(|()| true)
            }
            _ => self.cond_rest(node, rec),
        }
    }

    /// `FIELD op c` in general: any value, or an error.
    #[inline(never)]
    fn field_cmp(
        &mut self,
        rec: Option<&Record<'_>>,
        ty: usize,
        field: usize,
        op: Op,
        value: i64,
    ) -> R<bool> {
        let v = self.field(rec, ty, field)?;
        Ok(holds(op, compare(&v, &Val::Int(value))))
    }

    /// The conditions [`Machine::cond`] leaves out.
    #[inline(never)]
    fn cond_rest(&mut self, node: &Node, rec: Option<&Record<'_>>) -> R<bool> {
        Ok(match node {
            Node::Not(a) => !self.cond(a, rec)?,
            // Statements are true (a buffer call: whether it hit).
            Node::BufferVars(op, b, keys) => self.buffer_vars(*op, *b, keys)?,
            Node::SetVar(..)
            | Node::AddVar(..)
            | Node::AddField { .. }
            | Node::LoadField { .. }
            | Node::Seq(_)
            | Node::If(..)
            | Node::While(..) => {
                self.exec(node, rec)?;
                true
            }
            Node::And(v) => {
                for n in v {
                    if !self.cond(n, rec)? {
                        return Ok(false);
                    }
                }
                true
            }
            Node::Or(v) => {
                for n in v {
                    if self.cond(n, rec)? {
                        return Ok(true);
                    }
                }
                false
            }
            _ => self.eval(node, rec)?.truthy(),
        })
    }
}

/// The object id of a two-key buffer request with both keys in 0..2^31
/// (bit 63 marks a pair); `None` for other keys, which are numbered in a
/// table.
#[inline(always)]
fn pair_id(x: i64, y: i64) -> Option<u64> {
    const LIMIT: i64 = 1 << 31;
    ((0..LIMIT).contains(&x) && (0..LIMIT).contains(&y))
        .then_some(1 << 63 | (x as u64) << 31 | y as u64)
}

fn num(v: &Val) -> f64 {
    match v {
        Val::Int(i) => *i as f64,
        Val::Float(f) => *f,
        Val::Str(_) => f64::NAN,
    }
}

/// Whether comparison `op` holds for `ord` (the left operand against the
/// right).
fn holds(op: Op, ord: std::cmp::Ordering) -> bool {
    match op {
        Op::Eq => ord.is_eq(),
        Op::Ne => !ord.is_eq(),
        Op::Lt => ord.is_lt(),
        Op::Le => ord.is_le(),
        Op::Gt => ord.is_gt(),
        _ => ord.is_ge(),
    }
}

fn compare(a: &Val, b: &Val) -> std::cmp::Ordering {
    use Val::*;
    match (a, b) {
        (Int(x), Int(y)) => x.cmp(y),
        (Str(x), Str(y)) => x.cmp(y),
        (Str(x), y) => (**x).cmp(&*y.to_string()),
        (x, Str(y)) => (*x.to_string()).cmp(&**y),
        (x, y) => num(x)
            .partial_cmp(&num(y))
            .unwrap_or(std::cmp::Ordering::Equal),
    }
}
