//! Name resolution while parsing: scalar variables and arrays to slots,
//! procedures to indices, `RECORD_FIELD` names to (record type, field),
//! record names to constants (their type index). A scalar read that no
//! statement ever sets is an error at its first use — how a misspelt field
//! name is caught.

use rustc_hash::{FxHashMap, FxHashSet};
use tramp_core::Schema;
use tramp_diag::Diagnostic;

use crate::tree::Node;

type Span = std::ops::Range<usize>;

/// Names known while parsing a script against a schema.
pub struct Names {
    records: FxHashMap<String, usize>,
    record_names: Vec<String>,
    fields: FxHashMap<String, (usize, usize)>,
    scalars: Vec<String>,
    scalar_slots: FxHashMap<String, usize>,
    arrays: Vec<String>,
    array_slots: FxHashMap<String, usize>,
    procedures: FxHashMap<String, usize>,
    assigned: FxHashSet<usize>,
    first_read: Vec<(usize, Span)>,
    array_spans: FxHashMap<String, Span>,
    scalar_spans: FxHashMap<String, Span>,
    /// Operator nodes of the statement (Algol) or top-level body form
    /// (Lisp) being parsed: the depth its expression trees can reach.
    ops: usize,
}

/// The most binary operations one statement may hold. The interpreter
/// recurses on expression trees and a chain `1+1+…+1` is a tree as deep
/// as it is long: a million terms overflowed the stack. Ten thousand
/// leave ample room.
pub const MAX_OPERATIONS: usize = 10_000;

/// A record type or field name as an identifier (other characters → `_`).
pub fn ident_of(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

impl Names {
    /// Counts one binary operation of the current statement (an error at
    /// `span` past [`MAX_OPERATIONS`]).
    pub fn count_op(&mut self, span: &Span) -> Result<(), Diagnostic> {
        self.ops += 1;
        if self.ops > MAX_OPERATIONS {
            return Err(Diagnostic::new(
                format!(
                    "more than {MAX_OPERATIONS} operations in one statement: split it (a running total in a variable)"
                ),
                span.clone(),
                "the operation past the limit",
            ));
        }
        Ok(())
    }

    /// A new statement starts: its operations are counted afresh.
    pub fn new_statement(&mut self) {
        self.ops = 0;
    }

    pub fn new(schema: &Schema) -> Names {
        let mut records = FxHashMap::default();
        let mut fields = FxHashMap::default();
        let mut record_names = Vec::new();
        for t in &schema.types {
            let r = ident_of(&t.name);
            records.insert(r.clone(), t.index);
            record_names.push(r.clone());
            for (i, f) in t.fields.iter().enumerate() {
                fields
                    .entry(format!("{r}_{}", ident_of(&f.name)))
                    .or_insert((t.index, i));
            }
        }
        Names {
            ops: 0,
            records,
            record_names,
            fields,
            scalars: Vec::new(),
            scalar_slots: FxHashMap::default(),
            arrays: Vec::new(),
            array_slots: FxHashMap::default(),
            procedures: FxHashMap::default(),
            assigned: FxHashSet::default(),
            first_read: Vec::new(),
            array_spans: FxHashMap::default(),
            scalar_spans: FxHashMap::default(),
        }
    }

    /// Declares a procedure (before bodies are parsed, so calls may come
    /// first).
    pub fn declare_procedure(&mut self, name: &str, span: Span) -> Result<usize, Diagnostic> {
        if self.procedures.contains_key(name) {
            return Err(Diagnostic::new(
                format!("procedure `{name}` is defined twice"),
                span,
                "second definition",
            ));
        }
        let i = self.procedures.len();
        self.procedures.insert(name.to_string(), i);
        Ok(i)
    }

    pub fn procedure(&self, name: &str) -> Option<usize> {
        self.procedures.get(name).copied()
    }

    pub fn procedure_count(&self) -> usize {
        self.procedures.len()
    }

    /// A field variable, `RECORD_TYPE`, or a record name, if `name` is one.
    pub fn record_name(&self, name: &str) -> Option<Node> {
        if name == "RECORD_TYPE" {
            return Some(Node::RecordType);
        }
        if let Some(&(ty, field)) = self.fields.get(name) {
            return Some(Node::Field { ty, field });
        }
        self.records.get(name).map(|&i| Node::Int(i as i64))
    }

    /// The (record type, field) a field variable names.
    pub fn field(&self, name: &str) -> Option<(usize, usize)> {
        self.fields.get(name).copied()
    }

    fn reserved(&self, name: &str, span: &Span) -> Result<(), Diagnostic> {
        if name == "RECORD_TYPE"
            || self.records.contains_key(name)
            || self.fields.contains_key(name)
        {
            return Err(Diagnostic::new(
                format!("`{name}` names a record or field; it cannot be set (use `update`)"),
                span.clone(),
                "not a variable",
            ));
        }
        Ok(())
    }

    fn scalar_slot(&mut self, name: &str, span: &Span) -> Result<usize, Diagnostic> {
        if let Some(a) = self.array_spans.get(name) {
            return Err(Diagnostic::new(
                format!("`{name}` is an array; it has no value of its own"),
                span.clone(),
                "used as a variable here",
            )
            .related(a.clone(), "used as an array here"));
        }
        self.scalar_spans
            .entry(name.to_string())
            .or_insert(span.clone());
        Ok(*self
            .scalar_slots
            .entry(name.to_string())
            .or_insert_with(|| {
                self.scalars.push(name.to_string());
                self.scalars.len() - 1
            }))
    }

    /// A scalar read.
    pub fn read(&mut self, name: &str, span: Span) -> Result<Node, Diagnostic> {
        if let Some(n) = self.record_name(name) {
            return Ok(n);
        }
        let slot = self.scalar_slot(name, &span)?;
        self.first_read.push((slot, span));
        Ok(Node::Var(slot))
    }

    /// A scalar written.
    pub fn write(&mut self, name: &str, span: Span) -> Result<usize, Diagnostic> {
        self.reserved(name, &span)?;
        let slot = self.scalar_slot(name, &span)?;
        self.assigned.insert(slot);
        Ok(slot)
    }

    /// An array by name.
    pub fn array(&mut self, name: &str, span: Span) -> Result<usize, Diagnostic> {
        self.reserved(name, &span)?;
        if let Some(s) = self.scalar_spans.get(name) {
            return Err(Diagnostic::new(
                format!("`{name}` is a variable; it cannot be indexed"),
                span,
                "used as an array here",
            )
            .related(s.clone(), "used as a variable here"));
        }
        self.array_spans.entry(name.to_string()).or_insert(span);
        Ok(
            *self.array_slots.entry(name.to_string()).or_insert_with(|| {
                self.arrays.push(name.to_string());
                self.arrays.len() - 1
            }),
        )
    }

    /// Checks that every scalar read is set somewhere; returns the slot
    /// names.
    pub fn finish(self) -> Result<(Vec<String>, Vec<String>), Diagnostic> {
        for (slot, span) in &self.first_read {
            if !self.assigned.contains(slot) {
                let name = &self.scalars[*slot];
                let mut d = Diagnostic::new(
                    format!("unknown name `{name}`: no statement sets it"),
                    span.clone(),
                    "read here",
                );
                if let Some(r) = self
                    .record_names
                    .iter()
                    .filter(|r| name.starts_with(&format!("{r}_")))
                    .max_by_key(|r| r.len())
                {
                    d = d.note(format!(
                        "record `{r}` has no field `{}`; its fields: {}",
                        &name[r.len() + 1..],
                        self.fields_of(r)
                    ));
                }
                return Err(d);
            }
        }
        Ok((self.scalars, self.arrays))
    }

    fn fields_of(&self, record: &str) -> String {
        let ty = self.records[record];
        let mut v: Vec<(usize, &str)> = self
            .fields
            .iter()
            .filter(|(_, (t, _))| *t == ty)
            .map(|(n, (_, f))| (*f, n.as_str()))
            .collect();
        v.sort();
        v.into_iter().map(|p| p.1).collect::<Vec<_>>().join(", ")
    }
}
