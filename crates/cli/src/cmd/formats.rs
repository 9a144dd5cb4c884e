//! `tramp formats`: list the registered formats, then the layouts of
//! libCacheSim that `tramp cachesim` reads as requests.

use anyhow::Result;

/// List the trace formats tramp reads and writes, with the file extensions
/// that select them.
pub fn run() -> Result<()> {
    let mut text = String::new();
    for f in tramp_formats::ALL {
        text.push_str(&format!("{:<12} {}\n", f.name, f.about));
    }
    text.push_str("\ncache-request layouts (`tramp cachesim`, `--format NAME`):\n");
    for d in &tramp_cachetrace::LAYOUTS {
        let ext = d.extensions.join(", ");
        text.push_str(&format!("{:<12} {} ({ext})\n", d.names[0], d.about));
    }
    super::print(&text)
}
