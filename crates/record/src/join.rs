//! One run, one file: the traces of a run's processes joined into the
//! tpack file the user named, block by block (tramp_tpack::join; nothing
//! is decoded or packed again), each process's records in turn behind its
//! own `tramp:process` note, and one trailer holding every image's profile
//! (each trace's own index entries, in turn: tramp_index::Index::join).
//! The design and its cost are in docs/recording.md ("One run, one
//! file").

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use tramp_core::Error;
use tramp_tpack::trailer::{Found, find};

/// What joining wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Joined {
    pub traces: usize,
    pub records: u64,
    /// The joined file's bytes.
    pub bytes: u64,
    /// Every trace had an index, so the joined file has one.
    pub indexed: bool,
    /// How long the join took (s).
    pub seconds: f64,
}

/// Joins `traces` (tpack files, in order) into `output`, which may be one
/// of them: written to a temporary file renamed over it once whole, so a
/// failure leaves every trace as it was. The traces other than `output`
/// are removed once the joined file is in place.
pub fn join(output: &Path, traces: &[PathBuf]) -> Result<Joined, Error> {
    let fail = |path: &Path, e: tramp_tpack::TpackError| {
        Error::Usage(format!(
            "cannot join the run's traces into one file: {}: {e}",
            path.display()
        ))
    };
    let started = std::time::Instant::now();
    // Opened before the output replaces any of them.
    let mut inputs = Vec::new();
    let mut indexes = Some(Vec::new());
    for path in traces {
        let mut file = File::open(path)?;
        match find(&mut file).map_err(|e| fail(path, e))? {
            Found::Trailer(body) => match tramp_index::Index::decode(&body) {
                Ok(index) => {
                    if let Some(v) = indexes.as_mut() {
                        v.push(index)
                    }
                }
                Err(_) => indexes = None,
            },
            Found::None | Found::Unreachable(_) => indexes = None,
        }
        std::io::Seek::rewind(&mut file)?;
        inputs.push((path, file));
    }
    let name = output.to_string_lossy();
    let out = tramp_io::Output::create(&name, Some(tramp_io::Compression::None))?;
    let mut w = BufWriter::with_capacity(1 << 20, out);
    tramp_tpack::join::start(&mut w)?;
    let mut joined = Joined {
        traces: traces.len(),
        bytes: 8,
        ..Joined::default()
    };
    for (path, file) in inputs {
        let copied = tramp_tpack::join::copy_blocks(&mut BufReader::new(file), &mut w)
            .map_err(|e| fail(path, e))?;
        joined.records += copied.records;
        joined.bytes += copied.bytes;
    }
    if let Some(indexes) = indexes {
        let index = tramp_index::Index::join(indexes);
        if index.records == joined.records {
            let body = index.encode();
            tramp_tpack::trailer::write(&mut w, joined.records, &body)?;
            joined.bytes += (tramp_tpack::trailer::HEADER + tramp_tpack::trailer::FOOTER) as u64
                + body.len() as u64;
            joined.indexed = true;
        }
    }
    w.flush()?;
    let out = w.into_inner().map_err(|e| e.into_error())?;
    out.finish()?;
    for path in traces {
        if path != output {
            std::fs::remove_file(path)?;
        }
    }
    joined.seconds = started.elapsed().as_secs_f64();
    Ok(joined)
}
