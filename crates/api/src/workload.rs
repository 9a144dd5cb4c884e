//! Synthetic request traces (`tramp workload zipf|uniform|hotspot`)
//! written in the libCacheSim layout the output's name gives:
//! oracleGeneral, csv or lcs, each with its next-access times, through a
//! temporary file renamed when whole.

use std::io::{BufWriter, Write};

use tramp_cachesim::layouts::{self, Layout as Binary, LcsWriter};
use tramp_cachesim::{NEVER, Request};
use tramp_io::FileOutput;
use tramp_workloads::requests::Workload;

use crate::Error;

/// The layouts a workload is written in, by the output's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Oracle,
    Csv,
    Lcs,
}

impl Layout {
    /// The layout `path`'s name gives (`.oracleGeneral`, `.csv`, `.lcs`).
    pub fn of(path: &str) -> Result<Layout, Error> {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".oraclegeneral") || lower.ends_with(".oracle") {
            Ok(Layout::Oracle)
        } else if lower.ends_with(".csv") {
            Ok(Layout::Csv)
        } else if lower.ends_with(".lcs") {
            Ok(Layout::Lcs)
        } else {
            Err(Error::Invalid(format!(
                "{path}: a workload is written as oracleGeneral (.oracleGeneral), csv (.csv) or lcs (.lcs); name the output so"
            )))
        }
    }
}

/// Writes `w`'s requests, each of `size` bytes, to `path`; the requests
/// written.
pub fn write(w: Workload, size: u32, path: &str) -> Result<u64, Error> {
    let layout = Layout::of(path)?;
    let reqs = w.requests().map_err(|e| Error::Invalid(e.to_string()))?;
    let io = |source: std::io::Error| Error::Create {
        path: path.to_string(),
        source,
    };
    let mut out = FileOutput::create(path, "workload output").map_err(io)?;
    let file = out.file().try_clone().map_err(io)?;
    let mut n = 0u64;
    match layout {
        Layout::Csv => {
            // No next-access column: a reader works them out when a
            // policy needs them.
            let mut f = BufWriter::new(file);
            writeln!(f, "# time, object, size").map_err(io)?;
            for (t, id) in reqs {
                writeln!(f, "{t}, {id}, {size}").map_err(io)?;
                n += 1;
            }
            f.flush().map_err(io)?;
        }
        Layout::Oracle => {
            let mut f = BufWriter::new(file);
            for (t, id) in reqs {
                let r = Request::read(id, size);
                tramp_cachesim::trace::write_oracle(&mut f, t.min(u32::MAX as u64) as u32, &r)
                    .map_err(io)?;
                n += 1;
            }
            let mut file = f.into_inner().map_err(|e| io(e.into_error()))?;
            // oracleGeneral's records are lcs v1's, without a header.
            layouts::fill_next_access(&mut file, Binary::Lcs(1), 0).map_err(io)?;
        }
        Layout::Lcs => {
            let mut wr = LcsWriter::new(file).map_err(io)?;
            for (t, id) in reqs {
                let r = Request {
                    next_access: NEVER,
                    ..Request::read(id, size)
                };
                wr.write(t.min(u32::MAX as u64) as u32, &r).map_err(io)?;
                n += 1;
            }
            let (mut file, _) = wr.finish().map_err(io)?;
            layouts::fill_next_access(&mut file, Binary::Lcs(2), layouts::LCS_HEADER as u64)
                .map_err(io)?;
        }
    }
    out.finish().map_err(io)?;
    Ok(n)
}
