//! HATF SplitAddr as a container: a directory holding `main.hatf` (HATF
//! best without the addresses stored raw) and `addresses` (those
//! addresses), each optionally compressed. Written through
//! [`tramp_hatf::splitaddr::Splitter`], read through
//! [`tramp_hatf::splitaddr::Joiner`] into any HATF reader.

use std::io::{self, BufReader};
use std::path::Path;

use tramp_hatf::splitaddr::{Joiner, Splitter};
use tramp_hatf::{Policy, Writer};
use tramp_io::{Compression, Input, Output};

fn ext(c: Compression) -> &'static str {
    match c {
        Compression::None => "",
        Compression::Gzip => ".gz",
        Compression::Zstd => ".zst",
        Compression::Xz => ".xz",
    }
}

/// A HATF writer (policy `best`) whose bytes are split into the directory.
pub fn create(dir: &Path, c: Compression) -> io::Result<Writer<Splitter<Output, Output>>> {
    std::fs::create_dir_all(dir)?;
    let main = Output::create(
        &dir.join(format!("main.hatf{}", ext(c))).to_string_lossy(),
        Some(c),
    )?;
    let addrs = Output::create(
        &dir.join(format!("addresses{}", ext(c))).to_string_lossy(),
        Some(c),
    )?;
    Ok(Writer::new(Splitter::new(main, addrs), Policy::Best))
}

/// Finishes the files of [`create`].
pub fn finish(w: Writer<Splitter<Output, Output>>) -> Result<(), tramp_core::Error> {
    let (main, addrs) = w.into_inner()?.finish()?;
    main.finish()?;
    addrs.finish()?;
    Ok(())
}

fn find(dir: &Path, stem: &str) -> io::Result<Input> {
    for c in [
        Compression::None,
        Compression::Gzip,
        Compression::Zstd,
        Compression::Xz,
    ] {
        let p = dir.join(format!("{stem}{}", ext(c)));
        if p.exists() {
            return Input::open(&p.to_string_lossy());
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("no {stem} in {}", dir.display()),
    ))
}

/// A decompressed input stream.
type In = Box<dyn io::BufRead + Send>;

/// The HATF bytes of a SplitAddr directory, joined back.
pub fn open(dir: &Path) -> io::Result<Joiner<BufReader<In>, In>> {
    let main = find(dir, "main.hatf")?;
    let addrs = find(dir, "addresses")?;
    Ok(Joiner::new(BufReader::new(main.reader), addrs.reader))
}
