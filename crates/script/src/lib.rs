//! The TRAMP command language (seed 004, §3 and §6): scripts of a
//! preprocess block, a main procedure run for every record, user
//! procedures without arguments, and a postprocess block, over global
//! variables and associative arrays, with record fields as variables and
//! the cache simulator's buffers as built-ins.
//!
//! Two syntaxes parse to one tree ([`tree::Node`]): the Algol-like one of
//! the paper's Figures 4 and 6–9 ([`algol`]) and the Lisp-like one of
//! Figure 5 ([`lisp`]). Names are resolved while parsing ([`names`]):
//! variables to slots, `RECORD_FIELD` names to (record type, field), record
//! names to constants — an unknown name is an error with its position. The
//! tree is interpreted by [`machine`] over any tramp source.
//!
//! The language, with the decisions taken where the paper is silent, is in
//! docs/formats/tramp.md.

pub mod algol;
mod compiled;
pub mod deferred;
pub mod lisp;
pub mod machine;
pub mod names;
pub mod run;
pub mod tree;

pub use machine::{Machine, RunError};
pub use tree::Script;

use tramp_core::Schema;
use tramp_diag::Diagnostic;

/// Which syntax a script is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    Algol,
    Lisp,
}

impl Syntax {
    /// Lisp if the first thing that is not a comment or space is `(`.
    pub fn detect(src: &str) -> Syntax {
        let mut s = src.trim_start();
        loop {
            if let Some(rest) = s.strip_prefix("/*") {
                s = rest.split_once("*/").map_or("", |p| p.1).trim_start();
            } else if s.starts_with(';') || s.starts_with("//") {
                s = s.split_once('\n').map_or("", |p| p.1).trim_start();
            } else {
                break;
            }
        }
        if s.starts_with('(') {
            Syntax::Lisp
        } else {
            Syntax::Algol
        }
    }
}

/// Parses a script against the record types of the trace it will read.
pub fn compile(src: &str, syntax: Syntax, schema: &Schema) -> Result<Script, Diagnostic> {
    match syntax {
        Syntax::Algol => algol::parse(src, schema),
        Syntax::Lisp => lisp::parse(src, schema),
    }
}
