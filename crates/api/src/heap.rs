//! The heap jobs over an opened trace, each one function returning its
//! report and the [`Run`] that says how much of the trace it covers: the
//! statistics (with or without allocation sites), every call stack's
//! totals, call trees, folded stacks and flame graphs, the heap over time,
//! the HTML report's assembly, and the comparison of two traces. The heap
//! view feeds the analyses (`tramp_heap::HeapStats` composes them) and the
//! module map names the sites; nothing here prints.

use tramp_core::{Analysis, Run};
use tramp_heap::images::PerImage;
use tramp_heap::timeline::Timeline;
use tramp_heap::view::{Heap, Keep};
use tramp_heap::{HeapStats, Site};
use tramp_profile::report::Report;
use tramp_profile::tree::{Direction, Tree};
use tramp_symbols::sites::{Cost, SiteCounts, SiteTotals, WithSites};
use tramp_symbols::suppressions::Suppressions;
use tramp_symbols::{ModuleMap, Modules};

use crate::Error;
use crate::input::{Opened, TraceSpec, open_for, read_text};

/// What a heap job needs of a trace, for its refusal.
pub const HEAP_EVENTS: &str = "heap events (allocations, frees, reallocs)";

/// Opens a trace for the heap job `command`, refused when it holds no heap
/// events.
pub fn open_heap(spec: &TraceSpec, command: &str) -> Result<Opened, Error> {
    open_for(spec, command, |d| d.heap, HEAP_EVENTS)
}

/// The heap statistics of every record of `o`.
pub fn stats(o: &mut Opened) -> (HeapStats, Run) {
    let mut stats = HeapStats::new();
    let run = o.run(&mut [&mut stats], Vec::new());
    (stats, run)
}

/// The statistics of every record of `o`: of its one image, or a row per
/// image of a run (each image's heap apart: tramp_heap::images::PerImage).
pub fn trace_stats(o: &mut Opened) -> (tramp_heap::processes::TraceStats, Run) {
    use tramp_heap::processes::{TimeSpan, TraceStats};
    let mut per = PerImage::new(|| (HeapStats::new(), TimeSpan::new()));
    let run = o.run(&mut [&mut per], Vec::new());
    (TraceStats::of(Analysis::finish(per)), run)
}

/// The heap statistics of a trace file; damage is an error.
pub fn stats_of(spec: &TraceSpec) -> Result<tramp_heap::Report, Error> {
    let mut o = crate::open(spec, false)?;
    let (stats, run) = stats(&mut o);
    crate::end(run, &o, None, "").into_result()?;
    Ok(stats.report())
}

/// LeakSanitizer suppressions read from a file (`-`: stdin).
pub fn suppressions(path: &str) -> Result<Suppressions, Error> {
    Suppressions::parse(&read_text(path, "suppressions")?).map_err(|message| Error::Malformed {
        path: path.to_string(),
        message,
    })
}

/// What one heap view gives the site jobs: the heap statistics, every
/// site's counts, and the module map (from the trace's notes) that names
/// them; of one image of the trace (tramp_heap::images::choose).
pub struct Sites {
    pub heap: tramp_heap::Report,
    pub counts: SiteCounts,
    pub modules: Modules,
    /// Which of the trace's several images this is, and the others.
    pub images: Option<String>,
}

/// Heap statistics and one more heap analysis of an image, finished
/// together (the statistics name the image and its peak).
pub(crate) struct WithStats<A: Analysis<Heap<K>>, K: Keep>(pub(crate) HeapStats<A, K>);

impl<A: Analysis<Heap<K>>, K: Keep> Analysis for WithStats<A, K> {
    type Report = (tramp_heap::Report, A::Report);

    #[inline]
    fn observe(&mut self, rec: &tramp_core::Record<'_>) -> Result<(), tramp_core::Error> {
        self.0.observe(rec)
    }

    fn warning(&mut self, warning: &tramp_core::Warning) {
        Analysis::warning(&mut self.0, warning);
    }

    fn finish(self) -> Self::Report {
        self.0.finish_with()
    }
}

/// The statistics' peak and image, by which an image is chosen.
pub(crate) fn peak_and_image(r: &tramp_heap::Report) -> (u64, Option<tramp_heap::images::Image>) {
    (r.max_live_bytes, r.processes.first().cloned())
}

/// The heap statistics and site counts of `o`, from one heap view per
/// image; of the image tramp_heap::images::choose takes.
pub fn sites(o: &mut Opened) -> (Sites, Run) {
    let make = || {
        (
            WithStats(HeapStats::<SiteCounts, Site>::with(SiteCounts::new())),
            ModuleMap::new(),
        )
    };
    let mut per = PerImage::new(make);
    let run = o.run(&mut [&mut per], Vec::new());
    let (((heap, counts), modules), images) =
        tramp_heap::images::choose(Analysis::finish(per), |((h, _), _)| peak_and_image(h));
    (
        Sites {
            heap,
            counts,
            modules,
            images,
        },
        run,
    )
}

/// Heap statistics and the top `top` allocation sites per table.
pub fn with_sites(
    o: &mut Opened,
    top: usize,
    suppressions: Option<&Suppressions>,
) -> (WithSites, Run) {
    let (s, run) = sites(o);
    let sites = s.counts.report_with(&s.modules, top, suppressions);
    (
        WithSites {
            heap: s.heap,
            sites,
        },
        run,
    )
}

/// Every call stack's totals, named, and how the trace was sampled.
pub struct Stacks {
    pub stacks: Vec<(Vec<String>, SiteTotals)>,
    pub sampling: Option<tramp_heap::sampling::Sampling>,
    /// Which of the trace's several images they are of ([`sites`]).
    pub images: Option<String>,
}

/// Every call stack's totals of `o`.
pub fn stacks(o: &mut Opened) -> (Stacks, Run) {
    let (s, run) = sites(o);
    let stacks = Stacks {
        stacks: s.counts.by_stack(&s.modules),
        sampling: s.counts.sampling(),
        images: s.images,
    };
    (stacks, run)
}

/// A call tree of every cost, `depth` levels kept (and which image of
/// several it is of).
pub fn tree(o: &mut Opened, direction: Direction, depth: usize) -> (Tree, Run, Option<String>) {
    let (s, run) = stacks(o);
    (Tree::new(&s.stacks, direction, depth), run, s.images)
}

/// The heap over time in `slices` slices, of one image (as [`sites`]
/// chooses it; the note says which when there were several).
pub fn timeline(
    o: &mut Opened,
    slices: usize,
) -> (tramp_heap::timeline::Report, Run, Option<String>) {
    let mut per =
        PerImage::new(|| WithStats(HeapStats::<Timeline, ()>::with(Timeline::new(slices))));
    let run = o.run(&mut [&mut per], Vec::new());
    let ((_, timeline), images) =
        tramp_heap::images::choose(Analysis::finish(per), |(h, _)| peak_and_image(h));
    (timeline, run, images)
}

/// Folded stacks of one cost (`outer;…;inner COST` lines).
pub fn folded(stacks: &Stacks, cost: Cost) -> String {
    tramp_symbols::sites::folded(&stacks.stacks, cost)
}

/// The folded stacks parsed back into frames (a frame name the folded
/// form cannot carry is an error, never a panic).
fn parsed(stacks: &Stacks, cost: Cost) -> Result<Vec<(Vec<String>, u64)>, Error> {
    tramp_profile::flame::parse_folded(&folded(stacks, cost)).map_err(|message| Error::Malformed {
        path: "the folded stacks".into(),
        message,
    })
}

/// A flame graph of one cost, as one self-contained SVG.
pub fn flame_graph(title: &str, stacks: &Stacks, cost: Cost) -> Result<String, Error> {
    Ok(tramp_profile::flame::svg(
        title,
        cost.unit(),
        &parsed(stacks, cost)?,
    ))
}

/// A differential flame graph of one cost from `a` to `b`.
pub fn flame_graph_diff(title: &str, a: &Stacks, b: &Stacks, cost: Cost) -> Result<String, Error> {
    let (a, b) = (parsed(a, cost)?, parsed(b, cost)?);
    Ok(tramp_profile::flame::svg_diff(title, cost.unit(), &a, &b))
}

/// One trace of a comparison, read: its stacks, and how much of the trace
/// they cover and where they came from.
pub struct Side {
    pub stacks: Stacks,
    pub read: crate::indexed::Profiled,
}

/// Reads one trace of a comparison (from its index where it has one, as
/// `wanted` says).
pub fn side(spec: &TraceSpec, wanted: crate::indexed::IndexUse) -> Result<Side, Error> {
    let (profile, p) = profile_of(spec, "diff", wanted)?;
    Ok(Side {
        stacks: profile.stacks(),
        read: p,
    })
}

/// Two traces compared call stack by call stack (`top` changed stacks in
/// text).
pub fn diff(a: &Side, b: &Side, top: usize) -> tramp_profile::diff::Diff {
    tramp_profile::diff::Diff::new(&a.stacks.stacks, &b.stacks.stacks, top)
        .sampled(a.stacks.sampling, b.stacks.sampling)
}

/// `new` compared with its baseline `base` as a page (`tramp report NEW
/// --baseline OLD`): the comparison `tramp diff OLD NEW` prints, and the
/// differential flame graph of `cost`.
pub fn baseline_page(
    new: &Side,
    base: &Side,
    names: (&str, &str),
    cost: Cost,
) -> Result<String, Error> {
    let d = diff(base, new, usize::MAX);
    let title = format!("{}: {} → {}", cost.name(), names.1, names.0);
    let flame = flame_graph_diff(&title, &base.stacks, &new.stacks, cost)?;
    Ok(tramp_profile::baseline::BaselinePage {
        name: names.0,
        baseline: names.1,
        diff: &d,
        flame: &flame,
        cost: cost.name(),
    }
    .html())
}

/// Everything the heap profile holds of a trace, from one heap view: the
/// statistics, the site counts, the heap over time, lifetimes, the module
/// map and the RSS samples. The HTML report and the statistics with sites
/// are both made from it, so a recording asked for both is decoded once.
pub struct Profile {
    pub totals: tramp_heap::Report,
    pub sites: SiteCounts,
    pub modules: tramp_symbols::Modules,
    pub timeline: tramp_heap::timeline::Report,
    pub lifetimes: tramp_heap::lifetimes::Report,
    pub rss: Vec<(u64, u64)>,
    /// The trace, as the report's summary names it: `NAME (FORMAT)`.
    pub trace: String,
    /// The page's note on damage, if the run met any.
    pub partial: Option<String>,
    /// Which image of a run's several this is, and the others
    /// (tramp_index::choose).
    pub images: Option<String>,
}

/// The heap profile of the trace `spec` names, for the job `command`:
/// from its index or its events ([`crate::indexed::profile`]).
pub fn profile_of(
    spec: &TraceSpec,
    command: &str,
    wanted: crate::indexed::IndexUse,
) -> Result<(Profile, crate::indexed::Profiled), Error> {
    let (parts, p) = crate::indexed::profile(spec, command, wanted)?;
    let mut profile = Profile::of(parts, &p.run, p.trace());
    profile.images = p.images.clone();
    Ok((profile, p))
}

/// The report page of the trace `spec` names: of its one image, or of a
/// run's images (the [`MAX_PAGES`] that peaked highest, a process
/// switch, the heap of each over the run's time), as HTML.
pub fn report_page(
    spec: &TraceSpec,
    wanted: crate::indexed::IndexUse,
) -> Result<(String, crate::indexed::Profiled), Error> {
    let (mut images, p) = crate::indexed::images(spec, "report", wanted)?;
    if images.len() == 1 {
        let profile = Profile::of(images.remove(0), &p.run, p.trace());
        return Ok((profile.page(&p.name).html(), p));
    }
    let n = images.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(images[i].totals.max_live_bytes), i));
    order.truncate(MAX_PAGES);
    order.sort_unstable();
    let chosen =
        tramp_heap::images::largest(order.iter().map(|&i| images[i].totals.max_live_bytes));
    let mut lanes = Vec::new();
    let mut labels = Vec::new();
    let mut pages = Vec::new();
    let mut exec = std::collections::BTreeMap::<u64, u32>::new();
    for (i, parts) in images.into_iter().enumerate() {
        let image = parts.totals.processes.first().cloned().unwrap_or_default();
        let k = exec.entry(image.pid).or_insert(0);
        let label = match *k {
            0 => format!("pid {} {}", image.pid, image.program()),
            e => format!("pid {} {} (exec {e})", image.pid, image.program()),
        };
        *k += 1;
        if order.contains(&i) {
            let points: Vec<(u64, u64)> = parts
                .timeline
                .slices
                .iter()
                .map(|s| (s.start / 2 + s.end / 2, s.live_bytes))
                .collect();
            lanes.push((label.clone(), image.clock0, points));
            labels.push(label);
            let mut profile = Profile::of(parts, &p.run, p.trace());
            profile.images = Some(format!(
                "one of {n} images of the run; the switch above the summary shows another"
            ));
            pages.push(profile.page(&p.name));
        }
    }
    let run = tramp_profile::report::RunPage::new(pages, labels, chosen, lanes, n);
    Ok((run.html(), p))
}

/// The most images a run's page holds (those that peaked highest).
pub const MAX_PAGES: usize = 12;

impl Profile {
    /// The profile of `parts`, which `run` read from the trace named
    /// `trace` (`NAME (FORMAT)`).
    pub fn of(parts: tramp_index::Parts, run: &Run, trace: String) -> Profile {
        let partial = run
            .damage()
            .map(|d| d.to_string())
            .or_else(|| run.stop.as_ref().map(|s| s.to_string()));
        Profile {
            sites: parts.site_counts(),
            totals: parts.totals,
            modules: parts.modules,
            timeline: parts.timeline,
            lifetimes: parts.lifetimes,
            rss: parts.rss,
            trace,
            partial,
            images: None,
        }
    }

    /// Every call stack's totals, named, and how the trace was sampled.
    pub fn stacks(&self) -> Stacks {
        Stacks {
            stacks: self.sites.by_stack(&self.modules),
            sampling: self.sites.sampling(),
            images: self.images.clone(),
        }
    }
}

impl Profile {
    /// The statistics with the top `top` allocation sites per table.
    pub fn with_sites(&self, top: usize, suppressions: Option<&Suppressions>) -> WithSites {
        WithSites {
            heap: self.totals.clone(),
            sites: self.sites.report_with(&self.modules, top, suppressions),
        }
    }

    /// The HTML report's model, titled by `name`.
    pub fn page(self, name: &str) -> Report {
        let (mut stacks, merged, other) = self
            .sites
            .by_stack_top(&self.modules, tramp_profile::report::MAX_STACKS);
        let kept = stacks.len();
        if merged > 0 {
            stacks.push((vec!["[other stacks]".to_string()], other));
        }
        let summary = self.summary(kept + merged);
        let timed = self.timeline.clock == tramp_heap::timeline::Clock::Time;
        let grid = self.sites.grid();
        let threads = self.sites.thread_ids().to_vec();
        let tops = self.sites.top_sites(
            &self.modules,
            &[Cost::Peak, Cost::Allocations, Cost::Temporary, Cost::Leaked],
            10,
        );
        Report::new(
            format!("Heap profile: {name}"),
            summary,
            self.timeline,
            self.totals.size_histogram.clone(),
            self.lifetimes,
            &stacks,
            merged,
        )
        .with_rss(self.rss)
        .with_tops(tops)
        .with_threads(&self.totals.per_thread)
        .with_grid(grid, timed)
        .with_thread_slots(&threads)
    }
}
