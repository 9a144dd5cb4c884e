//! Request traces written in the libCacheSim layout the output's name
//! gives — oracleGeneral, csv or lcs (v3), each with its next-access times,
//! through a temporary file renamed when whole ([`Writer`]): synthetic
//! workloads (`tramp workload zipf|uniform|hotspot`) and a cache's miss
//! stream (`tramp cachesim --emit-misses`).

use std::io::{BufWriter, Write};

use tramp_cachesim::layouts::{self, Layout as Binary, LcsWriter};
use tramp_cachesim::{NEVER, Op, Request};
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

/// Requests written one at a time in a libCacheSim layout, to a
/// temporary file renamed when [`Writer::finish`] has filled in the
/// next-access times (removed if it never does).
pub struct Writer {
    layout: Layout,
    path: String,
    out: FileOutput,
    plain: Option<BufWriter<std::fs::File>>,
    lcs: Option<LcsWriter<std::fs::File>>,
    n: u64,
}

impl Writer {
    /// A writer of the layout `path`'s name gives, refused before
    /// anything is written when the name gives none.
    pub fn create(path: &str) -> Result<Writer, Error> {
        let layout = Layout::of(path)?;
        let mut out = FileOutput::create(path, "request trace").map_err(io(path))?;
        let file = out.file().try_clone().map_err(io(path))?;
        let (mut plain, mut lcs) = (None, None);
        match layout {
            Layout::Lcs => lcs = Some(LcsWriter::new(file).map_err(io(path))?),
            _ => plain = Some(BufWriter::new(file)),
        }
        if layout == Layout::Csv
            && let Some(f) = plain.as_mut()
        {
            writeln!(f, "# time, object, size").map_err(io(path))?;
        }
        Ok(Writer {
            layout,
            path: path.to_string(),
            out,
            plain,
            lcs,
            n: 0,
        })
    }

    /// One request, at its time (saturated to libCacheSim's 32 bits).
    /// A write or a TTL is refused in oracleGeneral and csv, which carry
    /// neither as tramp writes them (lcs v3 carries both): the trace is
    /// never written with them silently dropped.
    pub fn write(&mut self, r: &Request) -> Result<(), Error> {
        if self.layout != Layout::Lcs && (r.op == Op::Write || r.ttl != 0) {
            return Err(Error::Invalid(format!(
                "{}: request {} is {}, which {} does not carry as tramp writes it; name the output .lcs (lcs v3 carries operations and TTLs)",
                self.path,
                self.n + 1,
                if r.ttl != 0 {
                    format!("of TTL {}", r.ttl)
                } else {
                    "a write".to_string()
                },
                if self.layout == Layout::Csv {
                    "csv"
                } else {
                    "oracleGeneral"
                }
            )));
        }
        let t = r.time.min(u32::MAX as u64) as u32;
        let r = Request {
            next_access: NEVER,
            ..*r
        };
        let done = match (self.layout, &mut self.plain, &mut self.lcs) {
            (Layout::Csv, Some(f), _) => writeln!(f, "{t}, {}, {}", r.id, r.size),
            (Layout::Oracle, Some(f), _) => tramp_cachesim::trace::write_oracle(f, t, &r),
            (_, _, Some(w)) => w.write(t, &r),
            _ => Ok(()),
        };
        done.map_err(io(&self.path))?;
        self.n += 1;
        Ok(())
    }

    /// Ends the trace: the requests written.
    pub fn finish(self) -> Result<u64, Error> {
        let path = self.path.clone();
        let io = io(&path);
        match (self.layout, self.plain, self.lcs) {
            (Layout::Csv, Some(mut f), _) => f.flush().map_err(&io)?,
            (Layout::Oracle, Some(f), _) => {
                let mut file = f.into_inner().map_err(|e| io(e.into_error()))?;
                // oracleGeneral's records are lcs v1's, without a header.
                layouts::fill_next_access(&mut file, Binary::Lcs(1), 0).map_err(&io)?;
            }
            (_, _, Some(w)) => {
                let (mut file, _) = w.finish().map_err(&io)?;
                layouts::fill_next_access(
                    &mut file,
                    Binary::Lcs(layouts::LCS_WRITTEN),
                    layouts::LCS_HEADER as u64,
                )
                .map_err(&io)?;
            }
            _ => {}
        }
        self.out.finish().map_err(&io)?;
        Ok(self.n)
    }
}

fn io(path: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Create {
        path: path.to_string(),
        source,
    }
}

/// Writes `w`'s requests, each of `size` bytes, to `path`; the requests
/// written.
pub fn write(w: Workload, size: u32, path: &str) -> Result<u64, Error> {
    Layout::of(path)?;
    let reqs = w.requests().map_err(|e| Error::Invalid(e.to_string()))?;
    let mut out = Writer::create(path)?;
    for (t, id) in reqs {
        out.write(&Request::read(id, size).at(t))?;
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_ttls_are_refused_where_the_layout_cannot_carry_them() {
        let dir = std::env::temp_dir().join(format!("tramp-workload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["w.csv", "w.oracleGeneral"] {
            let path = dir.join(name);
            let path = path.to_str().unwrap();
            for r in [
                Request::write(7, 10),
                Request {
                    ttl: 60,
                    ..Request::read(7, 10)
                },
            ] {
                let mut w = Writer::create(path).unwrap();
                w.write(&Request::read(1, 10)).unwrap();
                let e = w.write(&r).unwrap_err().to_string();
                assert!(e.contains("request 2") && e.contains(".lcs"), "{e}");
                drop(w);
                // Nothing is left behind.
                assert!(!std::path::Path::new(path).exists());
            }
        }
        // lcs v3 carries both, and reads back with them.
        let path = dir.join("w.lcs");
        let path = path.to_str().unwrap();
        let mut w = Writer::create(path).unwrap();
        let r = Request {
            ttl: 60,
            ..Request::write(7, 10).at(5)
        };
        w.write(&r).unwrap();
        assert_eq!(w.finish().unwrap(), 1);
        let bytes = std::fs::read(path).unwrap();
        let back: Vec<Request> =
            layouts::LayoutReader::new(&bytes[layouts::LCS_HEADER..], Binary::Lcs(3), 8192)
                .map(Result::unwrap)
                .collect();
        assert_eq!(back, vec![r]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
