//! Conversion as a job: a trace read and written in another format through
//! the conversion audit (`tramp_formats::fidelity`), which refuses, before
//! anything is written, a conversion that would lose records, unless
//! `lossy` is asked for; then says what was lost. The output appears only
//! when complete.

use tramp_core::Run;
use tramp_formats::Format;
use tramp_formats::fidelity::{self, Ledger};
use tramp_io::{Compression, Output};

use crate::Error;
use crate::input::{Opened, TraceSpec, read_dtd};

/// A conversion as asked for.
pub struct Request<'a> {
    pub input: &'a TraceSpec,
    /// A path, or `-` for stdout.
    pub output: &'a str,
    pub to: Format,
    /// `None`: by the output's name.
    pub compression: Option<Compression>,
    /// HATF's encoding policy (`tramp convert --policy`).
    pub policy: Option<&'a str>,
    pub lossy: bool,
}

/// What a conversion did: records read and written per type, and the run.
pub struct Converted {
    pub ledger: Ledger,
    pub run: Run,
    pub opened: Opened,
}

/// Converts as `r` asks. A zstd output compresses on the second core, so
/// decoding then stays on this one.
pub fn convert(r: &Request) -> Result<Converted, Error> {
    // heaptrack's writer compresses only at its end (its events wait in a
    // temporary file for the definitions), so it reads ahead.
    let zstd_out = r
        .compression
        .unwrap_or_else(|| Compression::from_path(r.output))
        == Compression::Zstd
        && r.to.name != "heaptrack";
    let mut o = crate::input::detect(r.input)?.open(r.input, true, !zstd_out)?;
    // The output's header: the input's, with the DTD given instead if any.
    let mut header = o.source.header().clone();
    if let Some(path) = &r.input.dtd {
        header.dtd = Some(read_dtd(path)?);
    }
    let plan = fidelity::plan(
        o.source.schema(),
        o.format,
        o.source.header(),
        r.to,
        &header,
    )?;
    let out = Output::create(r.output, r.compression).map_err(|source| Error::Create {
        path: r.output.to_string(),
        source,
    })?;
    let sink = tramp_formats::create_sink(out, r.to, Some(o.format), r.policy, &header)?;
    let (audited, ledger) = fidelity::Audited::new(sink, plan, r.lossy);
    let run = o.run(&mut [], vec![Box::new(audited)]);
    let ledger = ledger.lock().expect("the ledger is not poisoned").clone();
    Ok(Converted {
        ledger,
        run,
        opened: o,
    })
}

impl Converted {
    /// Whether the ledger is worth showing: the run got to the end, or was
    /// refused there.
    pub fn shows_ledger(&self) -> bool {
        self.run.stop.is_none() || self.ledger.lost()
    }

    /// What `--lossy` let go (`Some`), or the refusal of a conversion that
    /// would lose data (nothing was written).
    pub fn losses(&self, to: Format, lossy: bool) -> Result<Option<String>, Error> {
        if !self.ledger.lost() {
            return Ok(None);
        }
        let losses = self.ledger.losses().join("\n  ");
        if !lossy {
            return Err(Error::Differs(format!(
                "refused to convert {} to {}: it would lose data, and nothing was written \
                 (--lossy writes what {} can hold):\n  {losses}",
                self.opened.name, to.name, to.name
            )));
        }
        Ok(Some(format!(
            "--lossy: what {} could not hold:\n  {losses}",
            to.name
        )))
    }
}
