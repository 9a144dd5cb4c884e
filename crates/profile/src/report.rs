//! `tramp report`: the heap profile as one self-contained HTML page (no
//! network): summary, memory and allocations over time, size histogram,
//! lifetimes, an interactive flame graph (cost switch, click to zoom,
//! search) and top-down / bottom-up tables.
//!
//! The page is aggregated first, so its size does not grow with the trace:
//! at most [`MAX_STACKS`] call stacks (the rest merged into one
//! `[other stacks]` row per cost), frames named once in a table, a bounded
//! number of time slices. The data is one JSON object in the page; the
//! script draws it (`report.js`, inlined).

use serde::Serialize;
use tramp_heap::lifetimes;
use tramp_heap::stats::Bucket;
use tramp_heap::timeline::Slice;
use tramp_symbols::sites::{Cost, SiteTotals};
use tramp_symbols::slices::{Grid, SliceCounts};

/// Call stacks kept in the page (by their largest share of any cost).
pub const MAX_STACKS: usize = tramp_symbols::sites::SLICED_ROWS;

/// One line of the summary.
#[derive(Clone, Debug, Serialize)]
pub struct Figure {
    pub label: String,
    pub value: String,
}

/// What the page shows.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub title: String,
    pub summary: Vec<Figure>,
    /// `time` (ns) or `events`.
    pub clock: String,
    pub timeline: Vec<Slice>,
    /// The process's resident set size over time, (time, bytes), when the
    /// recording sampled it.
    pub rss: Vec<(u64, u64)>,
    pub sizes: Vec<Bucket>,
    pub lifetimes: lifetimes::Report,
    pub costs: Vec<&'static str>,
    /// Frame names; stacks index them.
    pub frames: Vec<String>,
    /// Stacks outermost first, with their five costs.
    pub stacks: Vec<(Vec<u32>, [u64; 5])>,
    /// Stacks merged into `[other stacks]` to bound the page.
    pub merged_stacks: usize,
    /// Per stack (as `stacks`), what it did in each slice of `grid`
    /// (tramp_symbols::slices): the time ranges' data.
    pub slices: Vec<Vec<SliceCounts>>,
    /// The slices' first time and width, when the trace has times.
    pub grid: Option<Grid>,
    /// Per stack (as `stacks`), what each thread allocated of it: (slot,
    /// allocations, bytes), the slots `thread_slots` names (empty past
    /// [`SLICE_BUDGET`] entries: the page then has no thread filter).
    pub by_thread: Vec<Vec<(u32, u64, u64)>>,
    pub thread_slots: Vec<u64>,
    /// Per stack (as `stacks`), its blocks' sizes and lifetimes
    /// (`SiteTotals::shape`: bucket, count): the selected stack's
    /// histograms.
    pub shapes: Vec<Vec<(u8, u64)>>,
    /// The ten sites with most of the peak, the allocations, the temporary
    /// allocations and the leaks, over every stack (the first screen's
    /// tables).
    pub tops: Vec<tramp_symbols::sites::TopSites>,
    /// The threads that allocated most bytes (at most [`MAX_THREADS`]),
    /// each with its activity, and how many threads there were.
    pub threads: Vec<(u64, tramp_heap::stats::Activity)>,
    pub thread_count: usize,
    /// Bytes allocated by every thread (the shares' whole).
    pub thread_bytes: u128,
}

/// The most stack slices a page holds (20 bytes or so each in its JSON).
pub const SLICE_BUDGET: usize = 60_000;

/// Threads the page lists.
pub const MAX_THREADS: usize = 64;

impl Report {
    /// Builds the page's data from named stacks (outermost first, as
    /// `SiteCounts::by_stack` gives them; `merged_before` stacks already
    /// merged into an `[other stacks]` row by the caller) and the other
    /// views.
    pub fn new(
        title: String,
        summary: Vec<Figure>,
        timeline: tramp_heap::timeline::Report,
        sizes: Vec<Bucket>,
        lifetimes: lifetimes::Report,
        stacks: &[(Vec<String>, SiteTotals)],
        merged_before: usize,
    ) -> Report {
        let order = tramp_symbols::sites::by_largest_share(stacks);
        let mut names: rustc_hash::FxHashMap<&str, u32> = Default::default();
        let mut frames = Vec::new();
        let mut kept = Vec::new();
        let mut slices = Vec::new();
        let mut by_thread = Vec::new();
        let mut shapes = Vec::new();
        // The stacks past the bound, added up: one row.
        let mut rest = SiteTotals::default();
        for (n, &i) in order.iter().enumerate() {
            let (stack, t) = &stacks[i];
            if n >= MAX_STACKS {
                rest.add(t);
                continue;
            }
            slices.push(t.slices.clone());
            by_thread.push(t.threads.clone());
            shapes.push(t.shape.clone());
            let ids = stack
                .iter()
                .map(|f| {
                    *names.entry(f.as_str()).or_insert_with(|| {
                        frames.push(f.clone());
                        frames.len() as u32 - 1
                    })
                })
                .collect();
            kept.push((ids, t.costs()));
        }
        let merged_stacks = stacks.len().saturating_sub(MAX_STACKS) + merged_before;
        if merged_stacks > 0 {
            frames.push("[other stacks]".into());
            kept.push((vec![frames.len() as u32 - 1], rest.costs()));
            slices.push(rest.slices);
            by_thread.push(rest.threads);
            shapes.push(rest.shape);
        }
        if by_thread.iter().map(Vec::len).sum::<usize>() > SLICE_BUDGET {
            by_thread.iter_mut().for_each(Vec::clear);
        }
        Report {
            title,
            summary,
            clock: timeline.clock.to_string(),
            timeline: timeline.slices,
            rss: Vec::new(),
            sizes,
            lifetimes,
            costs: Cost::NAMED.iter().map(|(name, _)| *name).collect(),
            frames,
            stacks: kept,
            merged_stacks,
            slices,
            grid: None,
            by_thread,
            thread_slots: Vec::new(),
            shapes,
            tops: Vec::new(),
            threads: Vec::new(),
            thread_count: 0,
            thread_bytes: 0,
        }
    }

    /// The threads' activity (the statistics' per-thread table), those
    /// that allocated most bytes first.
    pub fn with_threads(
        mut self,
        per_thread: &std::collections::BTreeMap<u64, tramp_heap::stats::Activity>,
    ) -> Report {
        let mut threads: Vec<(u64, tramp_heap::stats::Activity)> =
            per_thread.iter().map(|(t, a)| (*t, a.clone())).collect();
        threads.sort_by(|a, b| {
            b.1.bytes_allocated
                .cmp(&a.1.bytes_allocated)
                .then(a.0.cmp(&b.0))
        });
        self.thread_count = threads.len();
        self.thread_bytes = threads.iter().map(|(_, a)| a.bytes_allocated).sum();
        threads.truncate(MAX_THREADS);
        self.threads = threads;
        self
    }

    /// The first screen's tables of top sites.
    pub fn with_tops(mut self, tops: Vec<tramp_symbols::sites::TopSites>) -> Report {
        self.tops = tops;
        self
    }

    /// The grid the stacks' slices count in (none: a trace without times,
    /// whose page has no time ranges). The slices are merged in pairs, the
    /// grid's width doubling, until the page holds at most
    /// [`SLICE_BUDGET`] of them.
    pub fn with_grid(mut self, grid: Option<Grid>, timed: bool) -> Report {
        let Some(mut grid) = grid.filter(|_| timed) else {
            self.slices.iter_mut().for_each(Vec::clear);
            return self;
        };
        while self.slices.iter().map(Vec::len).sum::<usize>() > SLICE_BUDGET
            && grid.width < u64::MAX / 2
        {
            for s in &mut self.slices {
                tramp_symbols::slices::halve(s, 1);
            }
            grid.width *= 2;
        }
        self.grid = Some(grid);
        self
    }

    /// The thread of each slot the stacks' `by_thread` counts.
    pub fn with_thread_slots(mut self, slots: &[u64]) -> Report {
        self.thread_slots = slots.to_vec();
        self
    }

    /// Adds RSS samples (time, bytes) on the trace's clock.
    pub fn with_rss(mut self, rss: Vec<(u64, u64)>) -> Report {
        self.rss = rss;
        self
    }

    /// The page.
    pub fn html(&self) -> String {
        page_html(
            &self.title,
            &serde_json::to_string(self).expect("plain data serializes"),
        )
    }
}

/// One process's heap over the run's time.
#[derive(Clone, Debug, Serialize)]
pub struct Lane {
    pub label: String,
    /// (time, bytes live at the end of the slice): ns since the run's
    /// first event when `RunPage::common` (else the image's own clock).
    pub points: Vec<(u64, u64)>,
}

/// A lane as given: its label, its image's `clock0`, its (time, live
/// bytes) points on the image's clock.
pub type LaneOf = (String, Option<u64>, Vec<(u64, u64)>);

/// The page of a run's several images: each image's page, a switch
/// between them (the one that used the most shown first), and each
/// image's heap over the run's time in one chart.
#[derive(Clone, Debug, Serialize)]
pub struct RunPage {
    pub title: String,
    pub pages: Vec<Report>,
    pub labels: Vec<String>,
    pub chosen: usize,
    pub lanes: Vec<Lane>,
    /// Every image's clock says where it starts (`clock0`): the lanes
    /// share the run's axis.
    pub common: bool,
    /// Images in the run (the page holds `pages.len()` of them).
    pub images: usize,
}

impl RunPage {
    /// The run's page of `pages` (labelled), `chosen` first, each lane
    /// (label, the image's `clock0`, its (time, live bytes) points) put on
    /// the run's axis when every lane has its `clock0`.
    pub fn new(
        pages: Vec<Report>,
        labels: Vec<String>,
        chosen: usize,
        lanes: Vec<LaneOf>,
        images: usize,
    ) -> RunPage {
        let common = lanes.iter().all(|l| l.1.is_some());
        let origin = lanes
            .iter()
            .filter_map(|(_, c, p)| Some(c.unwrap_or(0) + p.first()?.0))
            .min()
            .unwrap_or(0);
        let lanes = lanes
            .into_iter()
            .map(|(label, clock0, points)| Lane {
                label,
                points: match (common, clock0) {
                    (true, Some(c)) => points
                        .into_iter()
                        .map(|(t, b)| ((c + t).saturating_sub(origin), b))
                        .collect(),
                    _ => points,
                },
            })
            .collect();
        RunPage {
            title: format!("Heap profile of a run: {images} images"),
            pages,
            labels,
            chosen,
            lanes,
            common,
            images,
        }
    }

    /// The page.
    pub fn html(&self) -> String {
        let mut json = serde_json::to_value(self).expect("plain data serializes");
        json["run"] = serde_json::Value::Bool(true);
        page_html(&self.title, &json.to_string())
    }
}

/// The page of `data` (a report's JSON, or a run's) titled `title`.
fn page_html(title: &str, data: &str) -> String {
    // Inside a <script> element only `</` could end it early.
    let data = data.replace("</", "<\\/");
    let title = tramp_plot::xml::escape(title);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <title>{title}</title><style>{STYLE}</style></head><body>\n\
             <h1>{title}</h1>\n\
             <section id=\"runbox\" style=\"display:none\"><h2>Processes</h2><div class=\"controls\">show \
             <select id=\"process\"></select> <span id=\"runnote\" class=\"note\"></span></div>\
             <svg id=\"lanes\" class=\"chart\"></svg></section>\n\
             <section><h2>Summary</h2><table id=\"summary\"></table></section>\n\
             <section><h2>Who used the memory</h2><div id=\"tops\" class=\"tops\"></div></section>\n\
             <section><h2>Memory over time</h2><div id=\"rangebar\" class=\"controls\">show \
             <select id=\"rangemode\"><option value=\"made\">what the range made</option>\
             <option value=\"live\">what was live at its end</option></select> \
             <button id=\"clear\">whole trace</button> <span id=\"range\" class=\"note\"></span></div>\
             <svg id=\"memory\" class=\"chart\"></svg><div id=\"rangetops\" class=\"tops\"></div></section>\n\
             <section><h2>Allocations over time</h2><svg id=\"allocations\" class=\"chart\"></svg></section>\n\
             <section><h2>Allocation sizes</h2><svg id=\"sizes\" class=\"chart\"></svg></section>\n\
             <section><h2>Lifetimes</h2><svg id=\"lifetimes\" class=\"chart\"></svg></section>\n\
             <section><h2>Flame graph</h2><div class=\"controls\">cost <select id=\"cost\"></select> thread <select id=\"thread\"></select> \
             search <input id=\"search\" placeholder=\"function or file\"> <button id=\"reset\">reset zoom</button> \
             <span id=\"matched\"></span></div><div id=\"flamebox\"><div id=\"flame\"></div></div><div id=\"hover\">&nbsp;</div>\
             <div id=\"shape\" class=\"tops\"></div><div id=\"calls\" class=\"tops\"></div></section>\n\
             <section><h2>Call trees</h2><div class=\"controls\">filter <input id=\"filter\" placeholder=\"function or file\"> \
             (click a row to fold or unfold it)</div><p id=\"merged\" class=\"note\"></p></section>\n\
             <section><h2>Threads</h2><table id=\"threads\" class=\"tree\"></table></section>\n\
             <section><h2>Top-down</h2><table id=\"topdown\" class=\"tree\"></table></section>\n\
             <section><h2>Bottom-up</h2><table id=\"bottomup\" class=\"tree\"></table></section>\n\
             <script type=\"application/json\" id=\"data\">{data}</script>\n\
             <script>{SCRIPT}</script>\n</body></html>\n"
    )
}

const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(allocs: u64, bytes: u64) -> SiteTotals {
        SiteTotals {
            allocs,
            bytes: u128::from(bytes),
            ..Default::default()
        }
    }

    /// A page of `stacks` alone.
    fn page(stacks: &[(Vec<String>, SiteTotals)]) -> Report {
        let timeline = tramp_heap::timeline::Report {
            clock: tramp_heap::timeline::Clock::Events,
            slices: vec![],
        };
        Report::new(
            "t".into(),
            vec![],
            timeline,
            vec![],
            Default::default(),
            stacks,
            0,
        )
    }

    #[test]
    fn stacks_past_the_bound_are_merged_and_frames_named_once() {
        let mut stacks = Vec::new();
        for i in 0..MAX_STACKS + 10 {
            stacks.push((
                vec!["main".to_string(), format!("leaf{i}")],
                totals(1, 1 + i as u64),
            ));
        }
        let r = page(&stacks);
        assert_eq!(r.merged_stacks, 10);
        assert_eq!(r.stacks.len(), MAX_STACKS + 1);
        // main once, each kept leaf once, and the merged row.
        assert_eq!(r.frames.len(), 1 + MAX_STACKS + 1);
        let allocs: u64 = r.stacks.iter().map(|(_, c)| c[0]).sum();
        assert_eq!(allocs, (MAX_STACKS + 10) as u64, "nothing lost");
        // Outermost first.
        assert_eq!(r.frames[r.stacks[0].0[0] as usize], "main");
        let mut hostile = stacks.clone();
        hostile.push((vec!["</script><b>".into()], totals(1 << 40, 1 << 40)));
        let html = page(&hostile).html();
        assert!(
            !html.contains("</script><b>"),
            "a frame name cannot end the script"
        );
        assert!(html.contains("<\\/script><b>"));
    }
}
