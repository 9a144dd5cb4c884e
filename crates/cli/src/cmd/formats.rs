//! `tramp formats`: list the registered formats.

use anyhow::Result;

/// List the trace formats tramp reads and writes, with the file extensions
/// that select them.
pub fn run() -> Result<()> {
    let mut text = String::new();
    for f in tramp_formats::ALL {
        text.push_str(&format!("{:<12} {}\n", f.name, f.about));
    }
    super::print(&text)
}
