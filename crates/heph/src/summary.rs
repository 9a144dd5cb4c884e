//! What `tramp stats` and `tramp spans` say about a Heph trace: packets,
//! epoch, streams and options, span totals per description, counter gaps,
//! or one stream's span tree, read from borrowed packets in one pass.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};

use serde::Serialize;
use tramp_io::Progress;

use crate::Event;
use crate::reader::{HephError, PacketRef, Reader};
use crate::spans::{Render, SpanStats, tree};

/// What to summarize.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Keep this stream (all substreams, or one) and show its span tree
    /// instead of the totals.
    pub tree: Option<(u32, Option<u64>)>,
    /// Missing-counter ranges listed per stream.
    pub max_ranges: usize,
    /// `Some(k)`: the statistics view (a header with packets, epoch,
    /// streams, and the top `k` descriptions); `None`: the spans view (all
    /// descriptions, no header).
    pub top: Option<usize>,
}

/// The summary of a trace.
pub struct Summary {
    opts: Options,
    pub packets: u64,
    pub epoch: Option<u64>,
    /// Unknown metadata options, described.
    pub options: Vec<String>,
    pub substreams: BTreeSet<(u32, u64)>,
    pub spans: SpanStats,
    /// With a tree: the kept stream's events per substream.
    pub kept: BTreeMap<u64, Vec<Event>>,
}

/// Reads every packet of `reader` (damage becomes the reader's warnings).
pub fn summarize<R: std::io::Read>(
    reader: &mut Reader<R>,
    opts: Options,
    progress: &mut Progress,
) -> Result<Summary, HephError> {
    let mut s = Summary {
        opts,
        packets: 0,
        epoch: None,
        options: Vec::new(),
        substreams: BTreeSet::new(),
        spans: SpanStats::new(),
        kept: BTreeMap::new(),
    };
    while let Some(p) = reader.next_ref()? {
        s.packets += 1;
        match p {
            PacketRef::Event(e) => {
                s.spans.observe_ref(&e);
                s.substreams.insert((e.stream, e.substream));
                if let Some((st, sub)) = opts.tree
                    && e.stream == st
                    && sub.is_none_or(|x| x == e.substream)
                {
                    s.kept.entry(e.substream).or_default().push(e.to_event());
                }
            }
            PacketRef::Metadata { option, value } => match (option, value.len()) {
                ("epoch", 8) => {
                    s.epoch = Some(u64::from_be_bytes(value.try_into().expect("8 bytes")))
                }
                _ => s.options.push(format!(
                    "{option} ({} bytes, unknown option kept)",
                    value.len()
                )),
            },
        }
        progress.record(s.packets);
    }
    progress.finish();
    Ok(s)
}

impl Serialize for Summary {
    /// The statistics as one JSON object (keys in sorted order), every
    /// description by total time.
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut rows: Vec<_> = self.spans.by_description.iter().collect();
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
        let gaps: Vec<serde_json::Value> = self
            .spans
            .gaps
            .iter()
            .map(|(stream, g)| {
                serde_json::json!({
                    "stream": stream,
                    "missing": g.missing_count,
                    "late": g.late,
                    "duplicates": g.duplicates,
                    "wraps": g.wraps,
                    "missing_ranges": g.missing.iter().take(self.opts.max_ranges).map(|(a, n)| [*a as u64, *n as u64]).collect::<Vec<_>>(),
                })
            })
            .collect();
        serde_json::json!({
            "packets": self.packets,
            "events": self.spans.events,
            "epoch_ns": self.epoch,
            "streams": self.spans.gaps.len(),
            "substreams": self.substreams.len(),
            "unknown_options": self.options,
            "descriptions": descriptions,
            "counters": gaps,
        })
        .serialize(ser)
    }
}

impl Summary {
    /// Why the span tree asked for cannot be shown: its stream (or
    /// substream) is not in the trace.
    pub fn tree_refusal(&self) -> Option<String> {
        let (s, sub) = self.opts.tree?;
        if !self.kept.is_empty() {
            return None;
        }
        let streams: BTreeSet<u32> = self.substreams.iter().map(|(st, _)| *st).collect();
        Some(match sub {
            Some(sub) if streams.contains(&s) => {
                format!("stream {s} has no events of substream {sub}")
            }
            _ if streams.contains(&s) => format!("stream {s} has no events"),
            _ => format!("the trace has no stream {s}"),
        })
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        if let Some((s, _)) = self.opts.tree {
            for (sub, events) in &self.kept {
                let refs: Vec<&Event> = events.iter().collect();
                let _ = writeln!(text, "stream {s} substream {sub}:");
                let _ = write!(text, "{}", Render(&tree(&refs)));
            }
            if self.kept.is_empty() {
                // Which streams there are, so the user can pick one.
                let streams: BTreeSet<u32> = self.substreams.iter().map(|(st, _)| *st).collect();
                let list: Vec<String> = streams.iter().map(u32::to_string).collect();
                if streams.contains(&s) {
                    let _ = writeln!(text, "stream {s}: no events of that substream");
                } else {
                    let _ = writeln!(
                        text,
                        "no stream {s} (streams: {})",
                        if list.is_empty() {
                            "none".to_string()
                        } else {
                            list.join(", ")
                        }
                    );
                }
            }
            return f.write_str(&text);
        }
        if self.opts.top.is_some() {
            use tramp_core::numbers::grouped as g;
            let _ = writeln!(text, "packets     {}", g(self.packets as u128));
            let _ = writeln!(text, "events      {}", g(self.spans.events as u128));
            let _ = writeln!(
                text,
                "epoch       {}",
                self.epoch.map_or("none".to_string(), |e| format!(
                    "{e} ns since the Unix epoch ({})",
                    crate::spans::utc(e)
                ))
            );
            let _ = writeln!(text, "streams     {}", g(self.spans.gaps.len() as u128));
            let _ = writeln!(text, "substreams  {}", g(self.substreams.len() as u128));
            for opt in &self.options {
                let _ = writeln!(text, "option      {opt}");
            }
            text.push('\n');
        }
        let table = self.spans.totals_table();
        match self.opts.top {
            Some(k) => {
                for line in table.lines().take(k + 1) {
                    let _ = writeln!(text, "{line}");
                }
            }
            None => text.push_str(&table),
        }
        text.push('\n');
        text.push_str(&self.spans.gaps_table(self.opts.max_ranges));
        f.write_str(&text)
    }
}
