//! Whole output files (an SVG, an HTML page, a report written to a file):
//! created before the work, so that an output that cannot be written (onto
//! an input, into a missing directory) is refused first, then written in
//! one piece through a temporary file that is renamed into place only when
//! complete (`tramp_io::Output`).

use std::io::Write;

use tramp_io::{Compression, Output};

use crate::Error;

/// An output file created and not yet written.
pub struct WholeFile {
    path: String,
    out: Output,
}

/// Creates `path` for a whole file written as it is (no compression
/// whatever its name).
pub fn create(path: &str) -> Result<WholeFile, Error> {
    create_with(path, Some(Compression::None))
}

/// Creates `path`, compressed as `compression` says (`None`: by its name).
pub fn create_with(path: &str, compression: Option<Compression>) -> Result<WholeFile, Error> {
    let out = Output::create(path, compression).map_err(|source| Error::Create {
        path: path.to_string(),
        source,
    })?;
    Ok(WholeFile {
        path: path.to_string(),
        out,
    })
}

impl WholeFile {
    /// Writes `bytes` as the whole file and puts it in place.
    pub fn write(mut self, bytes: &[u8]) -> Result<(), Error> {
        let path = self.path;
        self.out.write_all(bytes).map_err(|e| Error::Write {
            path: path.clone(),
            source: e.into(),
        })?;
        self.out.finish().map_err(|e| Error::Write {
            path,
            source: e.into(),
        })
    }
}

/// Creates `path` and writes `bytes` as the whole file.
pub fn write_whole(path: &str, bytes: &[u8]) -> Result<(), Error> {
    create(path)?.write(bytes)
}
