//! `tramp stats`: the statistics that fit the trace's domain.

use anyhow::{Result, bail};
use clap::Args;
use tramp_profile::tree::Direction;
use tramp_symbols::sites::Cost;
use tramp_symbols::suppressions::Suppressions;

use super::{InputArgs, print_report};

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
/// Of a run (a recording of several processes, docs/recording.md): a row
/// per image — a process, or the program an exec started in it — with
/// its pid, parent, exec number, program, calls, bytes, temporaries, peak
/// and what was live at its end, then the total, a line per image with
/// its duration and command line, and the image that used the most
/// (`--json`: `processes`, `total`, `most`). `--pid` takes one process;
/// `--sites`, `--folded`, `--tree` and `--timeline` show the image that
/// used the most, saying so.
///
/// If the trace is damaged, the statistics of every record before the
/// damage are printed, then the error, and the exit status is 1.
#[derive(Args)]
pub struct StatsArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also list the top allocation sites of a recorded trace (`tramp
    /// record`) by allocations, by bytes, by bytes live at the heap's
    /// peak (with the peak: bytes, objects, time), and by bytes still live
    /// at exit (leaks), symbolized to function, file and line; each row
    /// also counts its temporary allocations (freed as the very next heap
    /// event).
    ///
    /// A whole tpack recording is answered from its profile index when it
    /// has one (milliseconds, whatever its length; docs/index.md).
    #[arg(long)]
    pub sites: bool,
    /// With --sites: read the events instead of the profile index, and
    /// fail unless the two agree.
    #[arg(long, requires = "sites")]
    pub verify_index: bool,
    /// With --sites: how many sites per table.
    #[arg(long, default_value_t = 10, requires = "sites")]
    pub top: usize,
    /// With --sites: LeakSanitizer suppressions (`leak:PATTERN` lines,
    /// `#` comments; a pattern matches a frame's function, file or module
    /// anywhere, `*` any run of characters, `^` and `$` anchor it): leaks
    /// they match leave the leak table and are counted per suppression.
    #[arg(long, value_name = "FILE", requires = "sites")]
    pub suppressions: Option<String>,
    /// Print folded stacks instead (`outer;…;inner COST` per call stack,
    /// what flamegraph.pl, inferno and speedscope read) for one cost:
    /// allocations, bytes, temporary, peak (bytes live at the peak) or
    /// leaked (bytes live at exit).
    #[arg(long, value_name = "COST", value_parser = parse_cost, conflicts_with_all = ["json", "sites"])]
    pub folded: Option<Cost>,
    /// With --folded: draw them as a flame graph (one self-contained SVG;
    /// each box's tooltip gives its frame, cost and share) into this file
    /// (`-` for stdout) instead of printing them.
    #[arg(long, value_name = "OUT.svg", requires = "folded")]
    pub flamegraph: Option<String>,
    /// Print the heap over time instead: per slice of the trace, the most
    /// bytes live, the bytes live at its end, allocations, bytes allocated
    /// and frees (in the trace's time, else in heap events; at most 48
    /// slices in text, 512 in JSON; constant memory).
    #[arg(long, conflicts_with_all = ["sites", "folded"])]
    pub timeline: bool,
    /// Print a call tree of every cost instead: `top-down` (outermost
    /// callers, then their callees) or `bottom-up` (allocating frames, then
    /// their callers), the most bytes first; `--depth` levels in text, all
    /// in JSON. Whole trees need a recording made with `--stack N`.
    #[arg(long, value_name = "DIRECTION", value_parser = ["top-down", "bottom-up"], conflicts_with_all = ["sites", "folded", "timeline"])]
    pub tree: Option<String>,
    /// With --tree: how many levels the text shows.
    #[arg(long, default_value_t = 6, requires = "tree")]
    pub depth: usize,
}

fn parse_cost(s: &str) -> std::result::Result<Cost, String> {
    Cost::named(s).ok_or_else(|| {
        let names: Vec<&str> = Cost::NAMED.iter().map(|(n, _)| *n).collect();
        format!("the costs are {}", names.join(", "))
    })
}

impl StatsArgs {
    /// The heap views of heap traces are refused (not ignored) on others:
    /// `holds` says what the trace holds instead.
    fn refuse_heap_views(&self, holds: &str) -> Result<()> {
        for (asked, what) in [
            (self.sites, "--sites lists allocation sites"),
            (
                self.folded.is_some(),
                "--folded folds the allocating stacks",
            ),
            (self.timeline, "--timeline slices the heap over time"),
            (
                self.tree.is_some(),
                "--tree builds the allocation call tree",
            ),
        ] {
            if asked {
                bail!("{what} of heap traces; {holds}");
            }
        }
        Ok(())
    }
}

pub fn run(a: StatsArgs) -> Result<()> {
    let suppressions = a
        .suppressions
        .as_deref()
        .map(tramp_api::heap::suppressions)
        .transpose()?;
    if a.sites {
        return sites(&a, suppressions.as_ref());
    }
    let views = a.folded.is_some() || a.timeline || a.tree.is_some();
    if !views {
        let top = if a.json { None } else { Some(20) };
        let s = tramp_api::stats::statistics(&a.input.spec(), top)?;
        print_report(&s.outcome(), a.json)?;
        super::warn(&s.ended.name, &s.ended.warnings);
        return Ok(s.ended.into_result()?);
    }
    let d = super::detect(&a.input)?;
    if d.format.family == tramp_heph::records::FORMAT {
        a.refuse_heap_views("Heph traces have none")?;
    }
    let o = d.open(&a.input.spec(), false, true)?;
    if o.source.schema().domains().heap {
        return heap_view(o, &a);
    }
    let holds = match o.source.schema().format == tramp_ptf::records::FORMAT {
        true => format!("{} traces have none", o.format),
        false => format!(
            "{} holds {}",
            o.name,
            o.source.schema().domains().describe()
        ),
    };
    // A view was asked (`views`), so this refuses it.
    a.refuse_heap_views(&holds)
}

/// The statistics with the top sites, from the profile index or the
/// events.
fn sites(a: &StatsArgs, suppressions: Option<&Suppressions>) -> Result<()> {
    let index = super::IndexArgs {
        verify_index: a.verify_index,
    };
    let spec = a.input.spec();
    let (profile, p) = tramp_api::heap::profile_of(&spec, "stats --sites", index.wanted())?;
    let report = profile.with_sites(a.top, suppressions);
    print_report(&p.run.outcome(&report), a.json)?;
    super::end_profiled(p, "; statistics above cover the records before the error")
}

/// The statistics or the heap view asked for, of a heap trace.
fn heap_view(o: super::Opened, a: &StatsArgs) -> Result<()> {
    if let Some(cost) = a.folded {
        return super::heap_views::folded(o, cost, a.flamegraph.as_deref());
    }
    if let Some(dir) = &a.tree {
        let dir = match dir.as_str() {
            "top-down" => Direction::TopDown,
            _ => Direction::BottomUp,
        };
        let depth = if a.json { usize::MAX } else { a.depth };
        return super::heap_views::tree(o, dir, depth, a.json);
    }
    super::heap_views::timeline(o, a.json)
}
