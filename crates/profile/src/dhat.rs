//! The heap profile as DHAT's JSON (`dhatFileVersion` 2, valgrind's
//! dhat/dh_main.c), which DHAT's viewer (`dh_view.html`) and the Firefox
//! Profiler open: one program point per allocation site with its totals
//! (bytes, blocks, the lifetimes of its blocks), its most live at once, what
//! it held at the global peak and at the end.
//!
//! [`DhatCounts`] is the analysis (heap events keeping the site and the
//! birth of each object); [`Dhat`] the JSON, built from it and the trace's
//! names. Time is the trace's (ns for recordings; DHAT's own unit is
//! instructions): `tu` says so.

use rustc_hash::FxHashMap;
use serde::Serialize;
use tramp_core::{Analysis, Error};
use tramp_heap::site::{SITE_RETURN_ADDRESS, SITE_STACK};
use tramp_heap::{Heap, HeapEvent, HeapStep, Keep, Site};
use tramp_symbols::modules::Names;

/// One program point's figures, as DHAT names them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Point {
    /// Total bytes and blocks allocated.
    tb: u64,
    tbk: u64,
    /// Lifetimes of its freed blocks, added up.
    tl: u128,
    /// Bytes and blocks live now, and the sum of their births.
    cur_b: u64,
    cur_bk: u64,
    births: u128,
    /// The most bytes live at once, and the blocks then.
    mb: u64,
    mbk: u64,
    /// Bytes and blocks live at the global peak (kept when the point
    /// changes after a peak; see `stamp`).
    gb: u64,
    gbk: u64,
    stamp: u64,
}

/// Per allocation site: what DHAT reports per program point.
#[derive(Default)]
pub struct DhatCounts {
    points: Vec<(Site, Point)>,
    index: FxHashMap<Site, usize>,
    /// Bumped at every new global peak: a point whose stamp is older has
    /// not changed since, so it holds at the peak what it holds now.
    epoch: u64,
    peak_bytes: u64,
    peak_time: u64,
    end_time: u64,
    sampling: Option<tramp_heap::sampling::Sampling>,
}

impl DhatCounts {
    pub fn new() -> Self {
        Self::default()
    }

    /// The trace's sampling, if it is sampled: DHAT's counts have no
    /// estimates, so `tramp export --dhat` refuses such a trace.
    pub fn sampling(&self) -> Option<tramp_heap::sampling::Sampling> {
        self.sampling
    }

    fn point(&mut self, site: Site) -> &mut Point {
        let next = self.points.len();
        let i = *self.index.entry(site).or_insert(next);
        if i == next {
            self.points.push((site, Point::default()));
        }
        let epoch = self.epoch;
        let p = &mut self.points[i].1;
        if p.stamp < epoch {
            (p.gb, p.gbk, p.stamp) = (p.cur_b, p.cur_bk, epoch);
        }
        p
    }

    fn born(&mut self, site: Site, size: u64, birth: u64) {
        let p = self.point(site);
        p.tb = p.tb.saturating_add(size);
        p.tbk += 1;
        p.cur_b = p.cur_b.saturating_add(size);
        p.cur_bk += 1;
        p.births += u128::from(birth);
        if p.cur_b > p.mb {
            (p.mb, p.mbk) = (p.cur_b, p.cur_bk);
        }
    }

    fn died(&mut self, site: Site, size: u64, birth: u64, now: u64) {
        let p = self.point(site);
        p.cur_b = p.cur_b.saturating_sub(size);
        p.cur_bk = p.cur_bk.saturating_sub(1);
        p.births = p.births.saturating_sub(u128::from(birth));
        p.tl += u128::from(now.saturating_sub(birth));
    }
}

impl<K: Keep> Analysis<Heap<K>> for DhatCounts {
    type Report = DhatCounts;

    fn observe(&mut self, step: &HeapStep<K>) -> Result<(), Error> {
        self.sampling = self.sampling.or(step.sampling);
        let birth = |k: &K| k.birth().unwrap_or(0);
        match step.event {
            HeapEvent::Alloc { object, cx, .. } => {
                self.end_time = self.end_time.max(cx.time);
                self.born(object.extra.site(), object.size, birth(&object.extra));
            }
            HeapEvent::Free {
                object: Some(o),
                cx,
                ..
            }
            | HeapEvent::Displaced { object: o, cx } => {
                self.end_time = self.end_time.max(cx.time);
                self.died(o.extra.site(), o.size, birth(&o.extra), cx.time);
            }
            HeapEvent::Realloc {
                resized: Some((o, before)),
                cx,
                ..
            } => {
                // Resized in place: the block's bytes change, not its life.
                self.end_time = self.end_time.max(cx.time);
                let p = self.point(o.extra.site());
                p.cur_b = p.cur_b.saturating_sub(before).saturating_add(o.size);
                if o.size > before {
                    p.tb = p.tb.saturating_add(o.size - before);
                }
                if p.cur_b > p.mb {
                    (p.mb, p.mbk) = (p.cur_b, p.cur_bk);
                }
            }
            _ => {}
        }
        if step.live.bytes > self.peak_bytes {
            self.peak_bytes = step.live.bytes;
            self.peak_time = self.end_time;
            self.epoch += 1;
        }
        Ok(())
    }

    fn finish(self) -> DhatCounts {
        self
    }
}

/// DHAT's JSON (the fields dh_view.html reads).
#[derive(Clone, Debug, Serialize)]
pub struct Dhat {
    #[serde(rename = "dhatFileVersion")]
    pub version: u32,
    pub mode: &'static str,
    pub verb: &'static str,
    /// Block lifetimes are given (`tl`); access counts are not (`bkacc`).
    pub bklt: bool,
    pub bkacc: bool,
    pub tu: &'static str,
    #[serde(rename = "Mtu")]
    pub mtu: &'static str,
    /// Blocks living less than this many time units are short-lived.
    pub tuth: u64,
    pub cmd: String,
    pub pid: u64,
    /// The time at the end and at the global peak.
    pub te: u64,
    pub tg: u64,
    pub pps: Vec<ProgramPoint>,
    pub ftbl: Vec<String>,
}

/// One program point.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ProgramPoint {
    pub tb: u64,
    pub tbk: u64,
    pub tl: u64,
    pub mb: u64,
    pub mbk: u64,
    pub gb: u64,
    pub gbk: u64,
    pub eb: u64,
    pub ebk: u64,
    /// Frames, leaf first, as indices into `ftbl`.
    pub fs: Vec<usize>,
}

impl Dhat {
    /// Writes the JSON.
    pub fn write(&self, out: impl std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer(out, self).map_err(std::io::Error::from)
    }

    /// The JSON of `counts`, its frames named by `names`.
    /// `stacks`: the trace's sites are call stacks (its process notes
    /// say so), which decides what a plain site number is.
    pub fn new(counts: &DhatCounts, names: &mut Names, stacks: bool, cmd: &str, pid: u64) -> Dhat {
        let te = counts.end_time;
        let mut ftbl = vec!["[root]".to_string()];
        let mut frames: FxHashMap<String, usize> = FxHashMap::default();
        let mut by_pc: FxHashMap<u64, Vec<usize>> = FxHashMap::default();
        let mut pps = Vec::new();
        for (site, p) in &counts.points {
            // Unchanged since the last peak: it held then what it holds now.
            let (gb, gbk) = if p.stamp < counts.epoch {
                (p.cur_b, p.cur_bk)
            } else {
                (p.gb, p.gbk)
            };
            // Blocks alive at the end lived until then.
            let tl = p.tl + (u128::from(te) * u128::from(p.cur_bk)).saturating_sub(p.births);
            let site = site.resolved(stacks);
            let pcs = match site.kind {
                SITE_STACK => names.stack(site.value),
                SITE_RETURN_ADDRESS => vec![site.value],
                _ => Vec::new(),
            };
            // Each code address is named once: its inlined chain's frames.
            let mut fs = Vec::new();
            for pc in pcs {
                let ids = by_pc.entry(pc).or_insert_with(|| {
                    names
                        .place(pc)
                        .frames()
                        .iter()
                        .map(|place| {
                            let text = format!("{:#x}: {place}", place.address);
                            let next = ftbl.len();
                            *frames.entry(text.clone()).or_insert_with(|| {
                                ftbl.push(text);
                                next
                            })
                        })
                        .collect::<Vec<usize>>()
                });
                fs.extend_from_slice(ids);
            }
            pps.push(ProgramPoint {
                tb: p.tb,
                tbk: p.tbk,
                tl: u64::try_from(tl).unwrap_or(u64::MAX),
                mb: p.mb,
                mbk: p.mbk,
                gb,
                gbk,
                eb: p.cur_b,
                ebk: p.cur_bk,
                fs,
            });
        }
        Dhat {
            version: 2,
            mode: "heap",
            verb: "Allocated",
            bklt: true,
            bkacc: false,
            tu: "ns",
            mtu: "ms",
            tuth: 500,
            cmd: cmd.to_string(),
            pid,
            te,
            tg: counts.peak_time,
            pps,
            ftbl,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tramp_heap::view::{Context, Live};
    use tramp_heap::{Lived, Object};

    fn at(time: u64) -> Context {
        Context {
            time,
            ..Context::default()
        }
    }

    #[test]
    fn a_program_point_worked_out_by_hand() {
        let site = Site {
            kind: 1,
            value: 0x40,
        };
        let obj = |address, size, birth| Object {
            address,
            size,
            extra: Lived { site, birth },
        };
        let mut d = DhatCounts::new();
        let mut step = |event, objects, bytes| {
            let s = HeapStep {
                event,
                live: Live { objects, bytes },
                sampling: None,
                attached: false,
                selected: Default::default(),
            };
            Analysis::<Heap<Lived>>::observe(&mut d, &s).unwrap();
        };
        // 10 bytes at t=0, 20 at t=5 (the peak: 30 in 2 blocks), the first
        // freed at t=10 (it lived 10), then 4 bytes from another site at
        // t=20 that stay: the end is t=20, the second block lived 15.
        let alloc = |o: Object<Lived>| HeapEvent::Alloc {
            object: o,
            displaced: 0,
            implied: false,
            cx: at(o.extra.birth),
        };
        step(alloc(obj(0x100, 10, 0)), 1, 10);
        step(alloc(obj(0x200, 20, 5)), 2, 30);
        step(
            HeapEvent::Free {
                address: 0x100,
                object: Some(obj(0x100, 10, 0)),
                implied: false,
                temporary: false,
                cx: at(10),
            },
            1,
            20,
        );
        let other = Object {
            address: 0x300,
            size: 4,
            extra: Lived {
                site: Site {
                    kind: 1,
                    value: 0x80,
                },
                birth: 20,
            },
        };
        step(alloc(other), 2, 24);
        let d = Analysis::<Heap<Lived>>::finish(d);
        let mut names = tramp_symbols::ModuleMap::new().names();
        let j = Dhat::new(&d, &mut names, false, "prog", 1);
        assert_eq!((j.te, j.tg), (20, 5));
        let p = &j.pps[0];
        assert_eq!(
            (p.tb, p.tbk, p.tl, p.mb, p.mbk, p.gb, p.gbk, p.eb, p.ebk),
            (30, 2, 10 + 15, 30, 2, 30, 2, 20, 1)
        );
        let q = &j.pps[1];
        assert_eq!((q.tb, q.gb, q.eb, q.tl), (4, 0, 4, 0));
    }
}
