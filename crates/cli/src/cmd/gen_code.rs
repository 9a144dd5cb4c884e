//! `tramp gen`: generate code from a Meta-TF DTD.

use anyhow::{Context, Result, bail};
use clap::Args;

/// Generate code from a Meta-TF DTD: a Rust module (std only) with a struct
/// per record type, a `Record` enum, a streaming `Reader` and a `Writer`
/// that read and write what `tramp convert` does for that DTD, and
/// `Record::to_text` in tramp's text form. A DTD with errors gets its
/// diagnostics (file, line, column) and exit status 1.
#[derive(Args)]
pub struct GenArgs {
    /// Generate Rust (the only language so far).
    #[arg(long, required = true)]
    rust: bool,
    /// The DTD.
    dtd: String,
    /// Write here instead of stdout.
    #[arg(short, long, default_value = "-")]
    output: String,
}

pub fn run(a: GenArgs) -> Result<()> {
    let text = super::read_dtd(&a.dtd)?;
    let name = std::path::Path::new(&a.dtd)
        .file_name()
        .map_or(a.dtd.clone(), |n| n.to_string_lossy().into_owned());
    let code = match tramp_metatf::codegen::rust(&text, &name) {
        Ok(code) => code,
        Err(diags) => {
            eprint!("{}", tramp_diag::render(&a.dtd, &text, &diags));
            bail!("{} has {} error(s)", a.dtd, diags.len());
        }
    };
    if a.output == "-" {
        super::print(&code)
    } else {
        use std::io::Write;
        let mut out = tramp_io::Output::create(&a.output, None)
            .with_context(|| format!("creating {}", a.output))?;
        out.write_all(code.as_bytes())
            .and_then(|()| out.finish())
            .with_context(|| format!("writing {}", a.output))
    }
}
