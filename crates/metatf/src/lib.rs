//! tramp-metatf: Meta-TF, the trace-format description language of
//! Chilimbi, Jones and Zorn (seed 000, §4 and Appendices B–C).
//!
//! * [`lexer`]: tokens (logos), with C and C++ comments skipped.
//! * [`ast`]: what a DTD says, with byte spans.
//! * [`parser`]: the reconstructed grammar (docs/formats/metatf.md).
//! * [`check`]: scoping, property resolution and the language's rules,
//!   producing a [`Dtd`] model.
//! * [`plan`]: a DTD compiled once into per-record plans and a tramp schema.
//! * [`codec`]: the universal reader and writer (tramp Source and Sink).

pub mod ast;
pub mod check;
pub mod codec;
pub mod codegen;
pub mod format;
pub mod lexer;
pub mod parser;
pub mod plan;
pub mod text;

pub use check::{Dtd, Field, FieldKind, Interp, RecordDef, Section, Width};
pub use tramp_diag::{Diagnostic, render};

/// The built-in records every DTD has (Appendix B), in Meta-TF itself.
pub const BUILTINS: &str = include_str!("builtins.dtd");

/// Parses and checks a DTD. Render errors with [`render`].
pub fn load(src: &str) -> Result<Dtd, Vec<Diagnostic>> {
    let ast = parser::parse(src).map_err(|d| vec![d])?;
    check::check(&ast)
}
