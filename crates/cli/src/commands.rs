//! One function per subcommand: parse options into library calls.

use anyhow::{Context, Result, bail};
use clap::Args;
use tramp_core::io::{Compression, Input, Output};
use tramp_core::{Sink, Source};
use tramp_formats::{Format, SinkOptions, SourceOptions, create_sink, open_source};
use tramp_hatf::Policy;
use tramp_hatf::records::{HatfSink, item_to_record, schema};
use tramp_hatf::sample::Sample;
use tramp_heap::HeapStats;

use crate::progress::Progress;

/// Write the built-in sample heap trace (HATF, naive policy) and optionally
/// print its statistics.
///
/// The sample simulates three threads and two heaps over a size-class
/// allocator with 64-bit addresses: skewed sizes, frees, and reallocs with
/// all four outcomes. The same seed always gives the same trace.
#[derive(Args)]
pub struct SampleArgs {
    /// Output file (`-` for stdout); compressed by extension (.zst, .gz, .xz).
    #[arg(short, long, default_value = "tramp-sample.hatf.zst")]
    output: String,
    /// Number of allocator operations to simulate.
    #[arg(long, default_value_t = 20_000)]
    events: usize,
    /// Seed of the workload generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print the trace's statistics afterwards.
    #[arg(long)]
    stats: bool,
    /// With --stats: print JSON instead of text.
    #[arg(long, requires = "stats")]
    json: bool,
}

pub fn sample(a: SampleArgs) -> Result<()> {
    let out = Output::create(&a.output, None).with_context(|| format!("creating {}", a.output))?;
    let mut sink: Box<dyn Sink> = Box::new(HatfSink::new(out, Policy::Naive));
    let mut buf = tramp_core::RecordBuf::new();
    let mut stats = HeapStats::new();
    for item in Sample::new(a.events, a.seed) {
        item_to_record(&item.as_item(), &mut buf);
        let rec = buf.as_record(&schema().types[buf.type_index()]);
        stats.observe(&rec);
        sink.write_record(&rec).context("writing the sample")?;
    }
    sink.finish()
        .with_context(|| format!("finishing {}", a.output))?;
    if a.output != "-" {
        eprintln!(
            "tramp: wrote {} ({} records)",
            a.output,
            stats.report().records
        );
    }
    if a.stats {
        print_report(&stats.report(), a.json)?;
    }
    Ok(())
}

fn print_report(r: &tramp_heap::Report, json: bool) -> Result<()> {
    let text = if json {
        serde_json::to_string_pretty(r)? + "\n"
    } else {
        r.to_string()
    };
    print_text(&text)
}

/// Writes to stdout; a closed pipe is reported as an error (and then
/// treated as success by main), never a panic.
fn print_text(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Options shared by commands that read a trace.
#[derive(Args)]
pub struct InputArgs {
    /// Trace file, or `-` for stdin. zstd, gzip and xz are unwrapped
    /// automatically.
    input: String,
    /// Input format (default: detected from the content, then the name).
    /// See `tramp formats`.
    #[arg(long = "format", short = 'f')]
    format: Option<String>,
    /// DTD file for Meta-TF traces that do not embed theirs (read from
    /// disk only; DTDs are never fetched over the network).
    #[arg(long, value_name = "FILE.dtd")]
    dtd: Option<String>,
}

/// A DTD file's text (from disk only: DTDs are never fetched).
fn read_dtd(path: &str) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading the DTD {path}"))
}

struct Opened {
    source: Box<dyn Source>,
    format: Format,
    progress: Progress,
    name: String,
}

fn open(args: &InputArgs, mut opts: SourceOptions) -> Result<Opened> {
    if let Some(path) = &args.dtd {
        opts.dtd = Some(read_dtd(path)?);
    }
    let input = Input::open(&args.input).with_context(|| format!("opening {}", args.input))?;
    let progress = Progress::new(input.raw_len, input.raw_position());
    let format = args.format.as_deref().map(Format::parse).transpose()?;
    let (source, format) =
        open_source(input, format, opts).with_context(|| format!("reading {}", args.input))?;
    Ok(Opened {
        source,
        format,
        progress,
        name: args.input.clone(),
    })
}

/// Print heap statistics of a trace: the HATF paper's Table 3 (allocs,
/// reallocs, frees, bytes, maximum live objects and bytes, average object
/// size), counts per record type, thread and heap, a power-of-two size
/// histogram, and anomalies (frees of unknown addresses, double frees).
///
/// For a PTF trace: events per type, objects created per format, edges
/// written and read, data reads and writes, maximum live objects.
///
/// For a Heph trace: packets, events, epoch, streams and substreams,
/// unknown options, the descriptions by total time (count, total and self
/// time, p50, p99; the top 20 in text, all in JSON) and the counter gaps
/// of each stream.
///
/// If the trace is damaged, the statistics of every record before the
/// damage are printed, then the error, and the exit status is 1.
#[derive(Args)]
pub struct StatsArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Also list the top allocation sites of a recorded trace (`tramp
    /// record`) by allocations, by bytes, and by bytes still live at exit
    /// (leaks), symbolized to function, file and line.
    #[arg(long)]
    sites: bool,
    /// With --sites: how many sites per table.
    #[arg(long, default_value_t = 10, requires = "sites")]
    top: usize,
}

pub fn stats(a: StatsArgs) -> Result<()> {
    let o = match open_heph_or(&a.input)? {
        Ok(h) => {
            if a.sites {
                bail!("--sites lists allocation sites of heap traces; Heph traces have none");
            }
            return heph_spans(
                h,
                None,
                10,
                Some(if a.json { usize::MAX } else { 20 }),
                a.json,
            );
        }
        Err(o) => o,
    };
    if matches!(o.format, Format::Ptf | Format::PtfText) {
        return ptf_stats(o, a.json);
    }
    analyse(o, a.json, a.sites.then_some(a.top))
}

/// PTF statistics: events per type, objects per format, edges, data
/// accesses, maximum live objects. A decode error still prints what was
/// read before it, then fails.
fn ptf_stats(mut o: Opened, json: bool) -> Result<()> {
    let mut stats = tramp_ptf::stats::PtfStats::new();
    let mut n = 0u64;
    let result = loop {
        match o.source.next_record() {
            Ok(Some(rec)) => match tramp_ptf::records::record_to_event(&rec) {
                Ok(e) => stats.observe(&e),
                Err(e) => break Err(anyhow::Error::new(e)),
            },
            Ok(None) => break Ok(()),
            Err(e) => break Err(anyhow::Error::new(e)),
        }
        n += 1;
        o.progress.record(n);
    };
    o.progress.finish();
    let r = stats.report();
    if json {
        let per_type: serde_json::Map<String, serde_json::Value> = r
            .per_type
            .iter()
            .map(|(t, n)| (t.mnemonic().to_string(), (*n).into()))
            .collect();
        let per_format: Vec<serde_json::Value> = r
            .per_format
            .iter()
            .map(|(id, name, n)| serde_json::json!({"format": id, "name": name, "objects": n}))
            .collect();
        let v = serde_json::json!({
            "events": r.events,
            "objects_created": r.objects_created,
            "max_live_objects": r.max_live,
            "max_live_at_event": r.max_live_at,
            "live_at_end": r.live_at_end,
            "edges_written": r.edges_written,
            "null_edges_written": r.null_edges_written,
            "edges_read": r.edges_read,
            "data_reads": r.data_reads,
            "data_writes": r.data_writes,
            "array_elements_read": r.array_elements_read,
            "array_elements_written": r.array_elements_written,
            "events_per_type": per_type,
            "objects_per_format": per_format,
        });
        print_text(&(serde_json::to_string_pretty(&v)? + "\n"))?;
    } else {
        print_text(&r.to_string())?;
    }
    result.with_context(|| {
        format!(
            "reading {} ({}); statistics above cover the events before the error",
            o.name, o.format
        )
    })
}

/// A Heph input read natively (borrowed packets, no record model).
struct HephInput {
    reader: tramp_heph::Reader<Box<dyn std::io::BufRead + Send>>,
    progress: Progress,
    name: String,
}

impl HephInput {
    /// Clears the progress bar, then prints the damage skipped over.
    fn done(mut self) {
        let warnings = self.reader.take_warnings();
        self.progress.finish();
        for w in warnings {
            eprintln!("tramp: warning: {}: {w}", self.name);
        }
    }
}

/// Opens the input; a Heph trace natively, anything else as a source.
fn open_heph_or(args: &InputArgs) -> Result<Result<HephInput, Opened>> {
    let input = Input::open(&args.input).with_context(|| format!("opening {}", args.input))?;
    let format = match args.format.as_deref() {
        Some(f) => Some(Format::parse(f)?),
        None => Format::detect(&input.head, &input.name),
    };
    let progress = Progress::new(input.raw_len, input.raw_position());
    if format == Some(Format::Heph) {
        return Ok(Ok(HephInput {
            reader: tramp_heph::Reader::new(input.reader),
            progress,
            name: args.input.clone(),
        }));
    }
    let mut opts = SourceOptions::default();
    if let Some(path) = &args.dtd {
        opts.dtd = Some(read_dtd(path)?);
    }
    let (source, format) =
        open_source(input, format, opts).with_context(|| format!("reading {}", args.input))?;
    Ok(Err(Opened {
        source,
        format,
        progress,
        name: args.input.clone(),
    }))
}

/// Export a trace for a viewer: `--chrome OUT.json` writes the Chrome
/// Trace Event format that Perfetto (ui.perfetto.dev) and chrome://tracing
/// open. For Heph traces each stream becomes a process and each substream
/// a thread (with `process_name`/`thread_name` metadata events), each event
/// a complete event with its attributes (arrays included) as args;
/// timestamps are microseconds after the trace's epoch with nanosecond
/// decimals, the epoch is in `otherData.epoch_ns`. NaN and infinities
/// become the strings "NaN", "Infinity", "-Infinity". Damaged packets are
/// skipped with a warning; every whole packet is exported.
#[derive(Args)]
pub struct ExportArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Write Chrome Trace Event JSON here (`-` for stdout; .gz/.zst/.xz
    /// compress).
    #[arg(long, value_name = "OUT.json")]
    chrome: String,
}

pub fn export(a: ExportArgs) -> Result<()> {
    let mut h = match open_heph_or(&a.input)? {
        Ok(h) => h,
        Err(o) => bail!("--chrome exports Heph traces; {} is {}", o.name, o.format),
    };
    let out = Output::create(&a.chrome, None).with_context(|| format!("creating {}", a.chrome))?;
    let mut w = tramp_heph::chrome::ChromeWriter::new(out);
    let mut n = 0u64;
    while let Some(p) = h
        .reader
        .next_ref()
        .with_context(|| format!("reading {}", h.name))?
    {
        w.packet_ref(&p)
            .with_context(|| format!("writing {}", a.chrome))?;
        n += 1;
        h.progress.record(n);
    }
    h.done();
    let out = w
        .finish()
        .with_context(|| format!("writing {}", a.chrome))?;
    out.finish()
        .with_context(|| format!("finishing {}", a.chrome))?;
    Ok(())
}

/// Analyse the spans of a Heph trace. An event is the child of the event
/// that contains it in time on the same stream and substream (Heph writes
/// no parent ids). Prints, per description: count, total time, self time
/// (total minus the time covered by its children), p50 and p99 of the
/// durations (to within 1 %); then, per stream, gaps in the event counter
/// (missed events, with wrap-around at 2^32 and late, out-of-order events
/// filling their gap). With `--tree STREAM[:SUBSTREAM]`, prints that
/// stream's span tree instead.
#[derive(Args)]
pub struct SpansArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Print the span tree of this stream (all its substreams) or of one
    /// substream (`STREAM:SUBSTREAM`).
    #[arg(long, value_name = "STREAM[:SUBSTREAM]")]
    tree: Option<String>,
    /// Missing-counter ranges listed per stream.
    #[arg(long, default_value_t = 10)]
    max_ranges: usize,
}

pub fn spans(a: SpansArgs) -> Result<()> {
    let h = match open_heph_or(&a.input)? {
        Ok(h) => h,
        Err(o) => bail!(
            "spans are inferred for Heph traces; {} is {}",
            o.name,
            o.format
        ),
    };
    let tree = match a.tree.as_deref() {
        None => None,
        Some(t) => {
            let (s, sub) = match t.split_once(':') {
                Some((s, sub)) => (
                    s,
                    Some(
                        sub.parse::<u64>()
                            .with_context(|| format!("substream `{sub}`"))?,
                    ),
                ),
                None => (t, None),
            };
            Some((
                s.parse::<u32>().with_context(|| format!("stream `{s}`"))?,
                sub,
            ))
        }
    };
    heph_spans(h, tree, a.max_ranges, None, false)
}

/// Span totals and counter gaps of a Heph trace, or one stream's tree;
/// `top` limits the totals table (stats) and adds a summary.
fn heph_spans(
    mut h: HephInput,
    tree: Option<(u32, Option<u64>)>,
    max_ranges: usize,
    top: Option<usize>,
    json: bool,
) -> Result<()> {
    use std::collections::BTreeMap;
    let mut stats = tramp_heph::spans::SpanStats::new();
    let mut kept: BTreeMap<u64, Vec<tramp_heph::Event>> = BTreeMap::new();
    let (mut epoch, mut packets, mut options) = (None, 0u64, Vec::new());
    let mut subs: std::collections::BTreeSet<(u32, u64)> = Default::default();
    while let Some(p) = h
        .reader
        .next_ref()
        .with_context(|| format!("reading {}", h.name))?
    {
        packets += 1;
        match p {
            tramp_heph::PacketRef::Event(e) => {
                stats.observe_ref(&e);
                subs.insert((e.stream, e.substream));
                if let Some((s, sub)) = tree
                    && e.stream == s
                    && sub.is_none_or(|x| x == e.substream)
                {
                    kept.entry(e.substream).or_default().push(e.to_event());
                }
            }
            tramp_heph::PacketRef::Metadata { option, value } => match (option, value.len()) {
                ("epoch", 8) => {
                    epoch = Some(u64::from_be_bytes(value.try_into().expect("8 bytes")))
                }
                _ => options.push(format!(
                    "{option} ({} bytes, unknown option kept)",
                    value.len()
                )),
            },
        }
        h.progress.record(packets);
    }
    h.done();
    if json {
        let mut rows: Vec<_> = stats.by_description.iter().collect();
        rows.sort_by(|a, b| b.1.total.cmp(&a.1.total).then(a.0.cmp(b.0)));
        let descriptions: Vec<serde_json::Value> = rows
            .iter()
            .map(|(d, t)| {
                serde_json::json!({
                    "description": d,
                    "count": t.count,
                    "total_ns": t.total,
                    "self_ns": t.self_time,
                    "p50_ns": t.durations.quantile(0.5),
                    "p99_ns": t.durations.quantile(0.99),
                })
            })
            .collect();
        let gaps: Vec<serde_json::Value> = stats
            .gaps
            .iter()
            .map(|(stream, g)| {
                serde_json::json!({
                    "stream": stream,
                    "missing": g.missing_count,
                    "late": g.late,
                    "duplicates": g.duplicates,
                    "wraps": g.wraps,
                    "missing_ranges": g.missing.iter().take(max_ranges).map(|(a, n)| [*a as u64, *n as u64]).collect::<Vec<_>>(),
                })
            })
            .collect();
        let v = serde_json::json!({
            "packets": packets,
            "events": stats.events,
            "epoch_ns": epoch,
            "streams": stats.gaps.len(),
            "substreams": subs.len(),
            "unknown_options": options,
            "descriptions": descriptions,
            "counters": gaps,
        });
        return print_text(&(serde_json::to_string_pretty(&v)? + "\n"));
    }
    let mut text = String::new();
    use std::fmt::Write as _;
    if let Some((s, _)) = tree {
        for (sub, events) in &kept {
            let refs: Vec<&tramp_heph::Event> = events.iter().collect();
            let _ = writeln!(text, "stream {s} substream {sub}:");
            let _ = write!(
                text,
                "{}",
                tramp_heph::spans::Render(&tramp_heph::spans::tree(&refs))
            );
        }
        if kept.is_empty() {
            let _ = writeln!(text, "stream {s}: no events");
        }
    } else {
        if top.is_some() {
            let _ = writeln!(text, "packets     {packets}");
            let _ = writeln!(text, "events      {}", stats.events);
            let _ = writeln!(
                text,
                "epoch       {}",
                epoch.map_or("none".to_string(), |e| format!(
                    "{e} ns since the Unix epoch"
                ))
            );
            let _ = writeln!(text, "streams     {}", stats.gaps.len());
            let _ = writeln!(text, "substreams  {}", subs.len());
            for opt in &options {
                let _ = writeln!(text, "option      {opt}");
            }
            text.push('\n');
        }
        let table = stats.totals_table();
        match top {
            Some(k) => {
                for line in table.lines().take(k + 1) {
                    let _ = writeln!(text, "{line}");
                }
            }
            None => text.push_str(&table),
        }
        text.push('\n');
        text.push_str(&stats.gaps_table(max_ranges));
    }
    print_text(&text)
}

/// Check a PTF trace against every rule of the PTF report's section 3:
/// parameters (number and type), formats defined before use, objects
/// created before use, OIds never reused, deletes of existing objects
/// only, edge targets existing or null, data offsets within the format's
/// data members, array accesses within bounds, `cao` after its
/// container's `co`, no access after delete, `ts`/`te` balanced. Each
/// violation names the event number and its line (ASCII) or byte offset
/// (binary); all are reported up to --max-errors.
///
/// With --gc, persistence by reachability is simulated: after every event
/// outside `ts`/`te` brackets that may disconnect objects (an overwritten
/// edge, a delete, a new root, an object created outside a bracket), the
/// objects no longer reachable from the super root are collected and
/// listed with the event at which they became garbage; later accesses to
/// them are violations.
///
/// Exit status: 0 when the trace is valid, 1 otherwise.
#[derive(Args)]
pub struct VerifyArgs {
    /// PTF trace (binary or ASCII, detected), or `-` for stdin.
    input: String,
    /// Simulate garbage collection by reachability from the super root.
    #[arg(long)]
    gc: bool,
    /// Print at most this many violations (all are counted).
    #[arg(long, default_value_t = 100)]
    max_errors: usize,
    /// With --gc: list at most this many collected OIds per collection.
    #[arg(long, default_value_t = 20)]
    max_oids: usize,
}

pub fn verify(a: VerifyArgs) -> Result<()> {
    let input = Input::open(&a.input).with_context(|| format!("opening {}", a.input))?;
    let mut progress = Progress::new(input.raw_len, input.raw_position());
    let events = tramp_ptf::open(input.reader).with_context(|| format!("reading {}", a.input))?;
    let opts = tramp_ptf::verify::Options {
        gc: a.gc,
        max_violations: a.max_errors,
    };
    let report = tramp_ptf::verify::verify_pipelined(events, opts, &mut |n| progress.record(n));
    progress.finish();
    let mut text = String::new();
    use std::fmt::Write as _;
    for v in &report.violations {
        let _ = writeln!(text, "{}: {v}", a.input);
    }
    if report.total > report.violations.len() as u64 {
        let _ = writeln!(
            text,
            "{}: … and {} more violations",
            a.input,
            report.total - report.violations.len() as u64
        );
    }
    if a.gc {
        for c in &report.collections {
            let shown: Vec<String> = c
                .garbage
                .iter()
                .take(a.max_oids)
                .map(|o| o.to_string())
                .collect();
            let more = if c.garbage.len() > a.max_oids {
                " …"
            } else {
                ""
            };
            let _ = writeln!(
                text,
                "{}: gc after {}: {} objects became garbage: {}{more}",
                a.input,
                c.at,
                c.garbage.len(),
                shown.join(" ")
            );
        }
    }
    let _ = writeln!(
        text,
        "{} events, {} violations{}, {} objects live at the end",
        report.events,
        report.total,
        if a.gc {
            format!(
                ", {} objects collected in {} collections",
                report.collected,
                report.collections.len()
            )
        } else {
            String::new()
        },
        report.live
    );
    print_text(&text)?;
    if report.total > 0 {
        bail!("{}: {} violations", a.input, report.total);
    }
    Ok(())
}

/// Generate a synthetic workload trace.
///
/// `oo7` models the OO7 object-database benchmark (Carey, DeWitt and
/// Naughton, 1993) as the PTF authors did with AMPS: the schema as PTF
/// format objects, the database built inside ts/te brackets, then the
/// operations named by --ops in order. Output is PTF (binary for .ptf,
/// ASCII for .ptf.txt or --to ptf-text), and always passes `tramp verify
/// --gc`. The same --seed gives the same trace.
#[derive(Args)]
pub struct WorkloadArgs {
    /// The workload: `oo7`.
    workload: String,
    /// OO7 configuration: small (NumAtomicPerComp 20, DocumentSize 2000)
    /// or medium (200, 20000); both NumConnPerAtomic 3, NumCompPerModule
    /// 500, NumAssmPerAssm 3, NumAssmLevels 7, NumCompPerAssm 3, one module.
    #[arg(long, default_value = "small")]
    config: String,
    /// Operations after the build, comma-separated, in order: t1, t2a, t2b,
    /// t2c, t3a, t3b, t3c, t6, q1 … q8, insert, delete; `all` for every
    /// one; empty for the build only.
    #[arg(long, default_value = "")]
    ops: String,
    /// Seed of the random choices (connections, components, queries).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output file (`-` for stdout); compressed by extension (.zst, .gz, .xz).
    #[arg(short, long, default_value = "oo7.ptf")]
    output: String,
    /// Output form: ptf (binary) or ptf-text (default: by extension).
    #[arg(long)]
    to: Option<String>,
}

pub fn workload(a: WorkloadArgs) -> Result<()> {
    use tramp_ptf::oo7::{Config, Op};
    if a.workload != "oo7" {
        bail!("unknown workload `{}` (known: oo7)", a.workload);
    }
    let cfg = Config::named(&a.config)
        .with_context(|| format!("unknown OO7 configuration `{}` (small or medium)", a.config))?;
    let mut ops = Vec::new();
    for name in a.ops.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if name == "all" {
            ops.extend(Op::ALL.iter().map(|(o, _)| *o));
            continue;
        }
        ops.push(Op::parse(name).with_context(|| {
            let known: Vec<&str> = Op::ALL.iter().map(|(_, n)| *n).collect();
            format!(
                "unknown operation `{name}` (known: {}, all)",
                known.join(", ")
            )
        })?);
    }
    if let Some(d) = ops.iter().position(|o| *o == Op::Delete)
        && !ops[..d].contains(&Op::Insert)
    {
        bail!("`delete` removes what an earlier `insert` added: put insert before it");
    }
    let to = match a.to.as_deref() {
        Some(t) => Format::parse(t)?,
        None => Format::from_path(&a.output).unwrap_or(Format::Ptf),
    };
    let ascii = match to {
        Format::Ptf => false,
        Format::PtfText => true,
        other => bail!("workloads are written as PTF (ptf or ptf-text), not {other}"),
    };
    let out = Output::create(&a.output, None).with_context(|| format!("creating {}", a.output))?;
    let op_names: Vec<&str> = ops.iter().map(|o| o.name()).collect();
    let notes = vec![format!(
        "OO7 {} seed {} ops {}",
        cfg.name,
        a.seed,
        if op_names.is_empty() {
            "(build only)".to_string()
        } else {
            op_names.join(",")
        }
    )];
    let mut sink = tramp_ptf::records::PtfSink::new(out, ascii, &notes)?;
    let counts = tramp_ptf::oo7::generate(cfg, a.seed, &ops, &mut sink)
        .with_context(|| format!("writing {}", a.output))?;
    Sink::finish(Box::new(sink)).with_context(|| format!("finishing {}", a.output))?;
    eprintln!(
        "tramp: wrote {} ({} events; {} composite parts, {} atomic parts, {} connections, {} base and {} complex assemblies)",
        a.output,
        counts.events,
        counts.composite_parts,
        counts.atomic_parts,
        counts.connections,
        counts.base_assemblies,
        counts.complex_assemblies
    );
    Ok(())
}

/// Feeds every record to the heap statistics (and the site tables when
/// `sites` gives a table length), then prints them. A decode error still
/// prints what was read before it, then fails.
fn analyse(mut o: Opened, json: bool, sites: Option<usize>) -> Result<()> {
    let mut stats = HeapStats::new();
    let mut site_stats = sites.map(|_| tramp_record::sites::SiteStats::new());
    let mut n = 0u64;
    let result = loop {
        match o.source.next_record() {
            Ok(Some(rec)) => {
                stats.observe(&rec);
                if let Some(s) = &mut site_stats {
                    s.observe(&rec);
                }
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
        n += 1;
        o.progress.record(n);
    };
    o.progress.finish();
    match (&mut site_stats, sites) {
        (Some(s), Some(top)) => {
            let report = s.report(top);
            if json {
                let mut v = serde_json::to_value(stats.report())?;
                v["sites"] = serde_json::to_value(&report)?;
                print_text(&(serde_json::to_string_pretty(&v)? + "\n"))?;
            } else {
                print_report(&stats.report(), false)?;
                print_text(&report.to_string())?;
            }
        }
        _ => print_report(&stats.report(), json)?,
    }
    result.with_context(|| {
        format!(
            "reading {} ({}); statistics above cover the records before the error",
            o.name, o.format
        )
    })
}

/// Print a trace as text, one record per line (HATF traces in the HATF text
/// form, metadata records included; Meta-TF in its text form; PTF in its
/// ASCII form), so that `tramp convert` can turn it back into the
/// identical binary.
#[derive(Args)]
pub struct DumpArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Write here instead of stdout (compressed by extension).
    #[arg(short, long, default_value = "-")]
    output: String,
}

pub fn dump(a: DumpArgs) -> Result<()> {
    let o = open(&a.input, SourceOptions::with_metadata())?;
    if o.format == Format::Heph {
        return dump_generic(o, &a.output);
    }
    let to = match o.format {
        Format::Hatf | Format::HatfText => Format::HatfText,
        Format::MetaTf | Format::MetaTfText => Format::MetaTfText,
        Format::Ptf | Format::PtfText => Format::PtfText,
        Format::Heph => unreachable!("dumped in the generic text form"),
    };
    let out = Output::create(&a.output, None).with_context(|| format!("creating {}", a.output))?;
    let dtd = o.source.description().map(str::to_string);
    let notes = o.source.notes().to_vec();
    let sink = create_sink(
        out,
        to,
        SinkOptions {
            policy: Policy::Explicit,
            dtd: dtd.as_deref(),
            notes: &notes,
        },
    )?;
    run_pump(o, sink, &a.output)
}

/// Convert a trace between formats: HATF binary and HATF text, Meta-TF
/// binary and Meta-TF text, PTF binary and PTF ASCII (binary → text →
/// binary is byte-identical), compressed or not.
///
/// Between HATF forms the source's metadata records are kept (policy
/// `explicit`) unless `--policy naive` asks for a fresh encoding. A Meta-TF
/// output takes its DTD from `--dtd`, else from the input (a Meta-TF binary
/// embeds it; a Meta-TF text starts with it).
#[derive(Args)]
pub struct ConvertArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Output file, or `-` for stdout.
    output: String,
    /// Output format (default: from the output's extension; else hatf).
    #[arg(long)]
    to: Option<String>,
    /// HATF encoding policy: `explicit` keeps the input's metadata,
    /// `naive` re-encodes with metadata only where values do not fit.
    #[arg(long)]
    policy: Option<String>,
    /// Output compression: none, zstd, gzip or xz (default: by extension).
    #[arg(long)]
    compress: Option<String>,
}

pub fn convert(a: ConvertArgs) -> Result<()> {
    let policy = match a.policy.as_deref() {
        Some(p) => Some(
            Policy::parse(p)
                .with_context(|| format!("unknown policy `{p}` (naive or explicit)"))?,
        ),
        None => None,
    };
    let compression = match a.compress.as_deref() {
        Some(c) => Some(
            Compression::parse(c)
                .with_context(|| format!("unknown compression `{c}` (none, zstd, gzip, xz)"))?,
        ),
        None => None,
    };
    let to = match a.to.as_deref() {
        Some(t) => Format::parse(t)?,
        None => Format::from_path(&a.output).unwrap_or(Format::Hatf),
    };
    let o = open(&a.input, SourceOptions::with_metadata())?;
    let policy = policy.unwrap_or(if o.format.carries_hatf_metadata() {
        Policy::Explicit
    } else {
        Policy::Naive
    });
    if a.output != "-" && a.output == a.input.input {
        bail!("input and output are the same file");
    }
    let out =
        Output::create(&a.output, compression).with_context(|| format!("creating {}", a.output))?;
    // The output's DTD: the one given, else the input's own.
    let dtd = match &a.input.dtd {
        Some(path) => Some(read_dtd(path)?),
        None => o.source.description().map(str::to_string),
    };
    let notes = o.source.notes().to_vec();
    let sink = create_sink(
        out,
        to,
        SinkOptions {
            policy,
            dtd: dtd.as_deref(),
            notes: &notes,
        },
    )?;
    run_pump(o, sink, &a.output)
}

/// Copies every record; on a decode error, still finishes the output so
/// that every record before the damage is kept, then reports the error.
fn run_pump(mut o: Opened, mut sink: Box<dyn Sink>, out_name: &str) -> Result<()> {
    let mut n = 0u64;
    let result = loop {
        match o.source.next_record() {
            Ok(Some(rec)) => {
                if let Err(e) = sink.write_record(&rec) {
                    break Err(anyhow::Error::new(e).context(format!("writing {out_name}")));
                }
            }
            Ok(None) => break Ok(()),
            Err(e) => {
                break Err(
                    anyhow::Error::new(e).context(format!("reading {} ({})", o.name, o.format))
                );
            }
        }
        n += 1;
        o.progress.record(n);
    };
    o.progress.finish();
    report_warnings(&mut *o.source, &o.name);
    let finished = sink
        .finish()
        .with_context(|| format!("finishing {out_name}"));
    result?;
    finished
}

/// Dumps records in tramp's generic text form (`type field=value …`), for
/// formats without a text form of their own (Heph).
fn dump_generic(mut o: Opened, output: &str) -> Result<()> {
    use std::io::Write;
    let mut out = Output::create(output, None).with_context(|| format!("creating {output}"))?;
    let mut line = String::new();
    let mut n = 0u64;
    let result = loop {
        match o.source.next_record() {
            Ok(Some(rec)) => {
                line.clear();
                tramp_core::text::format_record(&mut line, &rec);
                line.push('\n');
                out.write_all(line.as_bytes())?;
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(anyhow::Error::new(e)),
        }
        n += 1;
        o.progress.record(n);
    };
    o.progress.finish();
    report_warnings(&mut *o.source, &o.name);
    out.finish()
        .with_context(|| format!("finishing {output}"))?;
    result.with_context(|| format!("reading {} ({})", o.name, o.format))
}

/// Prints the damage a resynchronising reader skipped over (Heph).
fn report_warnings(source: &mut dyn Source, name: &str) {
    for w in source.warnings() {
        eprintln!("tramp: warning: {name}: {w}");
    }
}

/// List the formats tramp reads and writes.
pub fn formats() -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for f in Format::ALL {
        writeln!(out, "{:<12} {}", f.name(), f.describe())?;
    }
    Ok(())
}

/// The capture library, compiled by build.rs and carried inside `tramp`.
static CAPTURE_LIBRARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libtramp_capture.so"));

/// Record the heap behaviour of a program: every malloc, free, calloc,
/// realloc, reallocarray, posix_memalign, aligned_alloc, memalign, valloc
/// and pvalloc, with size, address, thread, time (ns) and allocation site.
///
/// The program runs with the capture library preloaded (it must be
/// dynamically linked); its output and exit status pass through unchanged.
/// Each process it forks gets its own trace, named with its pid
/// (`out.PID.hatf.zst`). The trace is HATF, zstd-compressed by default;
/// module maps and call stacks are comment records (docs/formats/capture.md).
#[derive(Args)]
pub struct RecordArgs {
    /// Output trace (compressed by extension). Default: PROGRAM.hatf.zst.
    #[arg(short, long)]
    output: Option<String>,
    /// Record up to N frames of call stack per allocation (deduplicated)
    /// instead of only the caller's return address. Slower.
    #[arg(long, value_name = "N", default_value_t = 0)]
    stack: usize,
    /// Print the trace's heap statistics on stdout after the program ends.
    #[arg(long)]
    stats: bool,
    /// With --stats: JSON.
    #[arg(long, requires = "stats")]
    json: bool,
    /// With --stats: also the top allocation sites (see `tramp stats --sites`).
    #[arg(long, requires = "stats")]
    sites: bool,
    /// With --sites: how many sites per table.
    #[arg(long, default_value_t = 10, requires = "sites")]
    top: usize,
    /// The command and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    command: Vec<std::ffi::OsString>,
}

pub fn record(a: RecordArgs) -> Result<u8> {
    let program = std::path::Path::new(&a.command[0])
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trace".into());
    let output = a.output.unwrap_or_else(|| format!("{program}.hatf.zst"));
    let lib = tramp_record::launch::install_library(CAPTURE_LIBRARY)
        .context("installing the capture library")?;
    let opts = tramp_record::RecordOptions {
        output: output.clone().into(),
        stack: a.stack,
    };
    // Ctrl-C reaches the recorded program (same process group), which flushes
    // and ends; tramp stays to convert what it recorded.
    let _ = ctrlc::set_handler(|| {});
    let rec = tramp_record::record(&lib, &a.command, &opts).context("recording")?;
    for (pid, path, st) in &rec.traces {
        eprintln!(
            "tramp: pid {pid}: {} records ({} allocs, {} frees, {} reallocs, {} threads) -> {}",
            st.records,
            st.allocs,
            st.frees,
            st.reallocs,
            st.threads,
            path.display()
        );
        for d in &st.damage {
            eprintln!("tramp: pid {pid}: log damaged, events after it lost: {d}");
        }
    }
    if a.stats
        && let Some((_, path, _)) = rec.traces.first()
    {
        let args = InputArgs {
            input: path.to_string_lossy().into_owned(),
            format: Some("hatf".into()),
            dtd: None,
        };
        analyse(
            open(&args, SourceOptions::default())?,
            a.json,
            a.sites.then_some(a.top),
        )?;
    }
    use std::os::unix::process::ExitStatusExt;
    Ok(match (rec.status.code(), rec.status.signal()) {
        (Some(c), _) => c as u8,
        (None, Some(sig)) => {
            eprintln!("tramp: the program was killed by signal {sig}");
            (128 + sig) as u8
        }
        _ => 1,
    })
}

/// The replay driver, compiled by build.rs and carried inside `tramp`.
static REPLAY_DRIVER: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/tramp-replay"));

/// Drive a real allocator through a trace's malloc/free/realloc sequence and
/// report time per operation, peak RSS, and the allocator's footprint
/// against the trace's live bytes.
///
/// The operations run in trace order (so each thread's order is kept) in a
/// separate driver process, with objects mapped to reusable slots and every
/// page of each block written once, as the traced program used its memory.
/// `--allocator` preloads another allocator into the driver (for example
/// /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 from Debian's libjemalloc2).
#[derive(Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    input: InputArgs,
    /// A shared library to preload into the driver (an allocator).
    #[arg(long, value_name = "LIB.so")]
    allocator: Option<String>,
    /// Do not write to the allocated memory (measures the allocator alone;
    /// RSS then shows only what the allocator itself touches).
    #[arg(long)]
    no_touch: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn replay(a: ReplayArgs) -> Result<()> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use tramp_heap::replay::{DriverReport, OpWriter};
    let driver = tramp_record::launch::install_replayer(REPLAY_DRIVER)
        .context("installing the replay driver")?;
    let mut o = open(&a.input, SourceOptions::default())?;
    let mut cmd = Command::new(&driver);
    if a.no_touch {
        cmd.arg("--no-touch");
    }
    if let Some(lib) = &a.allocator {
        let path = std::fs::canonicalize(lib).with_context(|| format!("allocator {lib}"))?;
        cmd.env("LD_PRELOAD", path);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("starting the replay driver")?;
    let stdin = child.stdin.take().expect("piped");
    let mut ops = OpWriter::new(std::io::BufWriter::with_capacity(1 << 20, stdin));
    let mut view = tramp_heap::HeapView::new();
    let mut stats = HeapStats::new();
    let mut n = 0u64;
    let result = loop {
        match o.source.next_record() {
            Ok(Some(rec)) => {
                stats.observe(&rec);
                if let Some(ev) = view.event(&rec) {
                    ops.event(&ev).context("feeding the replay driver")?;
                }
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
        n += 1;
        o.progress.record(n);
    };
    o.progress.finish();
    let counts = ops.counts.clone();
    ops.into_inner()
        .flush()
        .context("feeding the replay driver")?;
    let out = child
        .wait_with_output()
        .context("waiting for the replay driver")?;
    anyhow::ensure!(
        out.status.success(),
        "the replay driver failed: {}",
        out.status
    );
    let driver: DriverReport =
        serde_json::from_slice(&out.stdout).context("reading the driver's report")?;
    let trace = stats.report();
    let footprint_kib = (driver.peak_rss_kib - driver.rss_before_kib).max(0);
    let ratio = if trace.max_live_bytes > 0 {
        footprint_kib as f64 * 1024.0 / trace.max_live_bytes as f64
    } else {
        0.0
    };
    let allocator = a
        .allocator
        .clone()
        .unwrap_or_else(|| "glibc (default)".into());
    if a.json {
        let v = serde_json::json!({
            "allocator": allocator,
            "trace": { "allocs": trace.total_allocs, "frees": trace.total_frees, "reallocs": trace.total_reallocs,
                       "max_live_bytes": trace.max_live_bytes, "max_live_objects": trace.max_live_objects },
            "operations": counts,
            "driver": driver,
            "footprint_kib": footprint_kib,
            "footprint_over_max_live_bytes": ratio,
        });
        print_text(&(serde_json::to_string_pretty(&v)? + "\n"))?;
    } else {
        print_text(&format!(
            "allocator                 {allocator}\n\
             trace                     {} allocs, {} frees, {} reallocs; max live {} objects, {} bytes\n\
             replayed                  {} malloc, {} free, {} realloc ({} unknown frees skipped, {} failed)\n\
             time per operation        malloc {:.1} ns, free {:.1} ns, realloc {:.1} ns ({:.3} s in all)\n\
             peak RSS                  {} KiB (driver alone: {} KiB)\n\
             footprint                 {} KiB = {:.2} x the trace's max live bytes\n",
            trace.total_allocs,
            trace.total_frees,
            trace.total_reallocs,
            trace.max_live_objects,
            trace.max_live_bytes,
            driver.mallocs,
            driver.frees,
            driver.reallocs,
            counts.unknown_frees,
            driver.failed,
            driver.ns_per_malloc,
            driver.ns_per_free,
            driver.ns_per_realloc,
            driver.seconds,
            driver.peak_rss_kib,
            driver.rss_before_kib,
            footprint_kib,
            ratio
        ))?;
    }
    result.with_context(|| {
        format!(
            "reading {} ({}); the replay covers the records before the error",
            o.name, o.format
        )
    })
}

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

pub fn gen_code(a: GenArgs) -> Result<()> {
    let text = std::fs::read_to_string(&a.dtd).with_context(|| format!("reading {}", a.dtd))?;
    let name = std::path::Path::new(&a.dtd)
        .file_name()
        .map_or(a.dtd.clone(), |n| n.to_string_lossy().into_owned());
    let code = match tramp_metatf::codegen::rust(&text, &name) {
        Ok(code) => code,
        Err(diags) => {
            eprint!("{}", tramp_metatf::render(&a.dtd, &text, &diags));
            bail!("{} has {} error(s)", a.dtd, diags.len());
        }
    };
    if a.output == "-" {
        print_text(&code)
    } else {
        std::fs::write(&a.output, code).with_context(|| format!("writing {}", a.output))
    }
}
