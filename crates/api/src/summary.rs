//! The first screen of the heap report: what ran (the command line, the
//! processes), for how long, the peak heap and when, the peak RSS,
//! allocations and temporaries with their rates, what leaked — in human
//! units with the exact counts beside — then the trace's totals; first of
//! all what makes the page an estimate (sampling), partial (damage) or a
//! part of the trace (a selection).

use tramp_core::numbers::{bytes_exact, duration, grouped, rate};
use tramp_profile::report::Figure;

use crate::heap::Profile;

fn figure(label: &str, value: String) -> Figure {
    Figure {
        label: label.to_string(),
        value,
    }
}

impl Profile {
    /// The report's summary (`stacks`: the call stacks the page holds).
    pub(crate) fn summary(&self, stacks: usize) -> Vec<Figure> {
        let mut summary = self.caveats();
        summary.extend(self.what_ran());
        summary.extend(self.what_it_used());
        let totals = &self.totals;
        summary.extend([
            figure(
                "bytes allocated",
                bytes_exact(u64::try_from(totals.bytes_allocated).unwrap_or(u64::MAX)),
            ),
            figure("frees", grouped(totals.total_frees)),
            figure("reallocs", grouped(totals.total_reallocs)),
            figure("objects live at most", grouped(totals.max_live_objects)),
            figure("call stacks", grouped(stacks as u64)),
            figure("records", grouped(totals.records)),
            figure("trace", self.trace.clone()),
        ]);
        summary
    }

    /// The first and last time of the heap over time (the trace's clock),
    /// when it has times.
    fn span(&self) -> Option<(u64, u64)> {
        let timed = self.timeline.clock == tramp_heap::timeline::Clock::Time;
        match (self.timeline.slices.first(), self.timeline.slices.last()) {
            (Some(a), Some(b)) if timed => Some((a.start, b.end)),
            _ => None,
        }
    }

    /// What makes the page other than the whole truth, first.
    fn caveats(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        if let Some(d) = &self.partial {
            out.push(figure(
                "PARTIAL",
                format!("the trace is damaged; this page covers the records before it: {d}"),
            ));
        }
        if let Some(s) = &self.totals.sampling {
            out.push(figure(
                "SAMPLED",
                format!(
                    "one allocation every {} bytes on average was recorded ({} in all): the \
                     figures and stacks are estimates; the heap over time and the lifetimes \
                     show the recorded blocks only",
                    s.mean_bytes, s.samples
                ),
            ));
        }
        if let Some(images) = &self.images {
            out.push(figure("ONE PROCESS OF A RUN", images.clone()));
        }
        if let Some(sel) = &self.totals.selection {
            out.push(figure("selection (docs/select.md)", sel.clone()));
        }
        out
    }

    /// The command line, the processes when there were several, the
    /// duration.
    fn what_ran(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        let processes = &self.totals.processes;
        if let Some(first) = processes.first() {
            let line = match first.command.is_empty() {
                true => "(not recorded)".to_string(),
                false => tramp_heap::images::shell_words(&first.command),
            };
            out.push(figure("command line", line));
        }
        if processes.len() > 1 {
            let images: Vec<String> = processes
                .iter()
                .map(|p| {
                    format!(
                        "{} {}",
                        p.pid,
                        p.command.first().map_or("?", |c| c.as_str())
                    )
                })
                .collect();
            out.push(figure(
                "processes (pid, program; a pid twice exec'd)",
                images.join(", "),
            ));
        }
        if let Some((t0, t1)) = self.span().filter(|(a, b)| b > a) {
            out.push(figure("duration", duration(t1 - t0)));
        }
        if let Some(first) = processes.first()
            && let Some(at) = first.recorded_at
        {
            let host = first.host.as_deref().unwrap_or("?");
            out.push(figure(
                "recorded",
                format!("{} on {host}", tramp_core::numbers::utc_seconds(at)),
            ));
        }
        out
    }

    /// The peak heap and when, the peak RSS, the rates, the leaks.
    fn what_it_used(&self) -> Vec<Figure> {
        let totals = &self.totals;
        let (t0, t1) = self.span().unwrap_or((0, 0));
        let per_second = |n: u64| match rate(n, t1.saturating_sub(t0)) {
            Some(r) => format!("{} ({r})", grouped(n)),
            None => grouped(n),
        };
        let peak = self.sites.peak();
        let when = match self.span().is_some() && peak.bytes > 0 {
            true => format!(" at {}", duration(peak.time.saturating_sub(t0))),
            false => String::new(),
        };
        let mut out = vec![figure(
            "peak heap (bytes live at once)",
            format!("{}{when}", bytes_exact(totals.max_live_bytes)),
        )];
        if let Some(rss) = self.rss.iter().map(|&(_, b)| b).max() {
            out.push(figure("peak RSS (sampled)", bytes_exact(rss)));
        }
        out.extend([
            figure("allocations", per_second(totals.total_allocs)),
            figure(
                "temporary allocations",
                per_second(totals.temporary_allocations),
            ),
            figure(
                "leaked (live at exit)",
                format!(
                    "{} in {} objects",
                    bytes_exact(totals.live_bytes_at_end),
                    grouped(totals.live_objects_at_end)
                ),
            ),
        ]);
        out
    }
}
