//! tpack in the format registry: its reader and writer as HATF's item
//! source and sink (HATF's record schema, the heap domain), so every heap
//! format converts to and from it by the same mapping HATF uses.

use std::io::Read;

use tramp_core::output::Finish;
use tramp_core::{CreateOptions, Error, FormatDesc, Holds, Position, Sink, Sniff};
use tramp_hatf::records::{Entry, ItemSink, ItemSource, ReadItems, WriteItems};

use crate::MAGIC;
use crate::reader::Reader;
use crate::writer::{FORMAT, Options, Writer, machine_threads};

/// tpack: magic `tpack\0` and the version (3 written; 1, 2 and 3 read).
pub static TPACK: FormatDesc = FormatDesc {
    name: "tpack",
    family: "tpack",
    about: "tpack, tramp's packed heap trace: predicted, split, block-compressed (extension .tpack)",
    extensions: &[".tpack"],
    sniff: |head| Sniff::magic(head, &[&MAGIC[..6]]),
    text_form: Some("hatf-text"),
    holds: Holds::ByRole(tramp_hatf::format::hatf_schema),
    open: |input, opts| {
        Ok(Box::new(TpackSource::from_reader(open_reader(
            input,
            opts.time_window,
        )?)))
    },
    create: |out, opts| {
        Ok(Box::new(TpackSink::from_writer(Writer::new(out, options(opts)?)?)) as Box<dyn Sink>)
    },
};

/// The way to read for the machine. Whoever reads through the registry
/// gets its records decoded on a second core already: every `tramp`
/// command reads its sources through `tramp_core::ReadAhead`. So on a
/// machine of up to three cores the reader decodes in line
/// ([`Reader::new`]): a framer thread of its own ([`Reader::read_ahead`])
/// changed no command's time there, and decoding whole blocks on two more
/// threads made `tramp stats` slower (docs/benchmarks.md). With more
/// cores, the cores beyond two decode whole blocks ([`Reader::parallel`]),
/// four at most; its memory is bounded by a budget of records out
/// (`tramp_tpack::parallel::RECORD_BUDGET`).
/// A selection's time range (`window`) lets the framer skip the blocks
/// wholly outside it (crate::framer::Summary).
fn open_reader<R: Read + Send + 'static>(
    input: R,
    window: Option<(u64, u64)>,
) -> Result<Reader<R>, Error> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let framer = crate::framer::Framer::new(input).skipping(window);
    Ok(if cores >= 4 {
        Reader::parallel_from(framer, (cores - 2).min(4), crate::parallel::RECORD_BUDGET)?
    } else {
        Reader::from_framer(framer)
    })
}

/// `--policy` names tpack's stream codec and, optionally, its block size
/// and threads: `zstd`, `zstd-N`, `xz`, `xz-N`, `gzip`, `gzip-N` or `raw`
/// (default zstd at level 9), then `,block=N` (records per block, default
/// 1M) and `,threads=N` (threads coding blocks, default the machine's
/// cores up to four: the bytes are the same with any).
fn options(opts: &CreateOptions<'_>) -> Result<Options, Error> {
    match opts.policy {
        None => Ok(Options {
            threads: machine_threads(),
            ..Options::default()
        }),
        Some(p) => Options::parse_for_machine_explained(p).map_err(|why| {
            Error::Usage(format!(
                "tpack policy `{p}`: {why} (a codec, optionally followed by ,block=N and ,threads=N)"
            ))
        }),
    }
}

impl<R: Read> ReadItems for Reader<R> {
    fn next_item(&mut self) -> Result<Option<tramp_hatf::Item<'_>>, Error> {
        Reader::next_item(self)
    }

    fn position(&self) -> Position {
        Reader::position(self)
    }

    fn next_entry(&mut self) -> Result<Option<Entry<'_>>, Error> {
        Reader::next_entry(self)
    }

    fn each_entry(
        &mut self,
        f: impl FnMut(&Entry<'_>) -> std::ops::ControlFlow<()>,
    ) -> Result<(), Error> {
        Reader::each_entry(self, f)
    }
}

impl<W: Finish> WriteItems for Writer<W> {
    const FORMAT: &'static str = FORMAT;

    fn write_item(&mut self, item: &tramp_hatf::Item<'_>) -> Result<(), Error> {
        Writer::write_item(self, item)
    }

    fn finish(self) -> Result<(), Error> {
        Ok(self.into_inner()?.finish()?)
    }
}

/// tpack as a tramp source: HATF records, and a warning for every block
/// skipped as damaged.
pub type TpackSource<R> = ItemSource<Reader<R>>;

/// tpack as a tramp sink: records of any heap schema, mapped as HATF maps
/// them (kinds and roles).
pub type TpackSink<W> = ItemSink<Writer<W>>;
