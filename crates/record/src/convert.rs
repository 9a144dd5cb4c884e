//! One process's raw events into trace records (HATF's record model, for
//! HATF or tpack output). The merge of threads by time is `live`'s; this
//! module maps each event. Mapping, documented in
//! `docs/formats/capture.md`:
//!
//! * thread field: the OS thread id; heap: 0; time: nanoseconds since the
//!   process's first recorded event;
//! * realloc: the outcome tag (2 in place, 3 moved, 4 `realloc(NULL, n)`,
//!   5 `realloc(p, 0)`), then the alloc and/or free it performed;
//! * attributes of allocs and reallocs: the site, `01` + LEB128 return
//!   address (`--stack 0`), or `02` + LEB128 node of the stack tree;
//! * comments: `tramp:process …`, `tramp:module 0xBASE PATH` (the module
//!   map, for symbolization), `tramp:frames FIRST PARENT 0xPC …` (nodes of
//!   the stack tree, before their first use) and `tramp:unwind …` (how a
//!   thread's stacks were taken).

use std::io::Write;

use rustc_hash::{FxHashMap, FxHashSet};
use tramp_core::Error;
use tramp_hatf::{Event, EventKind, Item};

use tramp_symbols::{Annotation, StackTree};

use crate::pointers::Access;
use crate::raw::{RawEvent, UnwindStats};

/// What a conversion did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConvertStats {
    pub pid: u64,
    /// The program the process ran when its first log appeared.
    pub program: String,
    pub records: u64,
    pub allocs: u64,
    pub frees: u64,
    pub reallocs: u64,
    /// 8-byte loads and stores (`--pointers`).
    pub loads: u64,
    pub stores: u64,
    pub threads: u64,
    /// The damage that ended a log early (a process killed mid-write).
    pub damage: Vec<String>,
    /// Times a thread of the program waited for the conversion to catch
    /// up (the capture's back-pressure), and how long in all.
    pub stalls: u64,
    pub stall_ns: u64,
    /// Events that arrived after later events of other threads had been
    /// written (a thread that held its buffer longer than the reorder
    /// window): written in arrival order, with their own times.
    pub late: u64,
    /// The signal that interrupted the recording, if one did.
    pub interrupted: Option<i32>,
    /// How the call stacks were taken (stacks on).
    pub unwind: UnwindStats,
    /// Nodes of the stack tree the trace holds.
    pub stack_nodes: u64,
    /// Code addresses symbolized at the end and stored in the trace.
    pub symbols: u64,
    /// `--sample`: the mean bytes between sample points (0: every event).
    pub sample: u64,
    /// Recorded by attaching to the running process (`record -p`).
    pub attached: bool,
}

impl std::fmt::Display for ConvertStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} records ({} allocs, {} frees, {} reallocs, {} threads)",
            self.records, self.allocs, self.frees, self.reallocs, self.threads
        )?;
        if self.loads + self.stores > 0 {
            write!(f, "; {} loads, {} stores", self.loads, self.stores)?;
        }
        if self.stalls > 0 {
            write!(
                f,
                "; the program waited {} times ({:.3} s) for the conversion",
                self.stalls,
                self.stall_ns as f64 / 1e9
            )?;
        }
        if self.late > 0 {
            write!(f, "; {} events written late", self.late)?;
        }
        if let Some(sig) = self.interrupted {
            write!(f, "; interrupted by signal {sig}")?;
        }
        Ok(())
    }
}

pub use tramp_heap::site::{SITE_RETURN_ADDRESS, SITE_STACK, encode_site};

/// A thread's current call stack, outermost first: frame and tree node.
#[derive(Default)]
struct ThreadStack {
    frames: Vec<(u64, u64)>,
    /// The outer frames whose nodes are known.
    named: usize,
    /// The innermost frame is the next allocation's site (a frames event
    /// came).
    site_next: bool,
}

/// What the conversion of one process remembers between events.
#[derive(Default)]
pub(crate) struct State {
    pid: u64,
    stack_depth: u64,
    threads_live: FxHashSet<u32>,
    /// The thread of the last event, known live (most events repeat it).
    last_live: Option<u32>,
    /// The site `attrs` holds the encoding of.
    last_site: Option<(usize, u32, u64)>,
    threads_seen: FxHashSet<u32>,
    modules: FxHashSet<(u64, Vec<u8>)>,
    /// The process's call stacks as a tree (ids in the trace).
    tree: StackTree,
    /// Return addresses used as sites (`--stack 0`), to symbolize at the
    /// end.
    sites_seen: FxHashSet<u64>,
    /// Each thread's current stack.
    stacks: FxHashMap<(usize, u32), ThreadStack>,
    attrs: Vec<u8>,
    /// A free's site (pointer captures), encoded like `attrs`.
    free_attrs: Vec<u8>,
    /// The next module is the program's (a process record came before).
    program_next: bool,
    /// The command line's pieces so far (`RawEvent::Command`).
    command: Vec<u8>,
    /// The heap of reported blocks was announced (a createHeap record).
    reported_heap: bool,
    /// A thread's start (thread, time) not written yet: a log's first
    /// thread starts before its process record, and the trace's image
    /// begins at the process note (tramp_heap::images::PerImage), so the
    /// start waits for the next event and follows a process record.
    pending_start: Option<(u32, u64)>,
    /// CLOCK_MONOTONIC (ns) at the trace's time 0, once the conversion
    /// knows it (the recorded note says it).
    pub(crate) clock0: Option<u64>,
}

impl State {
    /// Writes an annotation (a comment record).
    pub(crate) fn comment<O: TraceOut>(
        &self,
        w: &mut O,
        a: &Annotation,
        stats: &mut ConvertStats,
    ) -> Result<(), Error> {
        stats.records += 1;
        w.write_comment(a.to_comment().as_bytes())
    }

    fn event<O: TraceOut>(w: &mut O, ev: Event<'_>, stats: &mut ConvertStats) -> Result<(), Error> {
        stats.records += 1;
        w.write_item(&Item::Event(ev))
    }

    /// Announces the heap of reported blocks before its first block.
    fn heap_seen<O: TraceOut>(
        &mut self,
        heap: u64,
        tid: u32,
        time: u64,
        w: &mut O,
        stats: &mut ConvertStats,
    ) -> Result<(), Error> {
        if heap == 0 || std::mem::replace(&mut self.reported_heap, true) {
            return Ok(());
        }
        let mut e = Event::new(EventKind::CreateHeap);
        e.heap = heap;
        e.thread = tid as u64;
        e.time = time;
        Self::event(w, e, stats)
    }

    fn thread_seen<O: TraceOut>(
        &mut self,
        tid: u32,
        time: u64,
        w: &mut O,
        stats: &mut ConvertStats,
    ) -> Result<(), Error> {
        if self.last_live == Some(tid) {
            return Ok(());
        }
        self.threads_seen.insert(tid);
        self.last_live = Some(tid);
        if self.threads_live.insert(tid) {
            let mut e = Event::new(EventKind::CreateThread);
            e.thread = tid as u64;
            e.time = time;
            Self::event(w, e, stats)?;
        }
        Ok(())
    }

    /// Puts the site of an allocation in `attrs`: its return address, or
    /// with stacks on, the node of the thread's current stack (new nodes
    /// are written first).
    fn site<O: TraceOut>(
        &mut self,
        file: usize,
        tid: u32,
        site: u64,
        w: &mut O,
        stats: &mut ConvertStats,
    ) -> Result<(), Error> {
        if self.stack_depth == 0 {
            if self.last_site == Some((file, tid, site)) && !self.attrs.is_empty() {
                return Ok(()); // the attributes already hold it
            }
            self.last_site = Some((file, tid, site));
            self.sites_seen.insert(site);
            encode_site(SITE_RETURN_ADDRESS, site, &mut self.attrs);
            return Ok(());
        }
        let stack = self.stacks.entry((file, tid)).or_default();
        if std::mem::take(&mut stack.site_next) || stack.frames.is_empty() {
            // The frames event left the innermost frame to the site (or no
            // stack was taken: the unwinder could not map its state).
            stack.frames.push((site, 0));
        }
        let mut parent = match stack.named {
            0 => 0,
            n => stack.frames[n - 1].1,
        };
        for (frame, node) in &mut stack.frames[stack.named..] {
            *node = self.tree.node(parent, *frame);
            parent = *node;
        }
        stack.named = stack.frames.len();
        if let Some((first, nodes)) = self.tree.take_new() {
            stats.stack_nodes += nodes.len() as u64;
            for (k, part) in nodes.chunks(512).enumerate() {
                let a = Annotation::Frames {
                    first: first + (k * 512) as u64,
                    nodes: part.to_vec(),
                };
                self.comment(w, &a, stats)?;
            }
        }
        let key = (file, tid, parent);
        if self.last_site != Some(key) || self.attrs.is_empty() {
            self.last_site = Some(key);
            encode_site(SITE_STACK, parent, &mut self.attrs);
        }
        Ok(())
    }

    /// Symbolizes every code address the trace's sites name (stack frames
    /// or return addresses) with the modules of this machine, and stores
    /// the places in the trace (`tramp:symbol` notes), so that it reads
    /// the same after a rebuild or on another machine.
    pub(crate) fn write_symbols<O: TraceOut>(
        &mut self,
        w: &mut O,
        stats: &mut ConvertStats,
    ) -> Result<(), Error> {
        if let Some((t, at)) = self.pending_start.take() {
            self.thread_seen(t, at, w, stats)?;
        }
        let mut modules: Vec<_> = self.modules.iter().collect();
        modules.sort();
        let mut symbolizer = tramp_symbols::Symbolizer::default();
        for (base, path) in modules {
            symbolizer.add_module(*base, &String::from_utf8_lossy(path));
        }
        let mut pcs: Vec<u64> = self
            .tree
            .frames()
            .chain(self.sites_seen.iter().copied())
            .collect();
        pcs.sort_unstable();
        pcs.dedup();
        for pc in pcs {
            let place = symbolizer.symbolize(pc);
            if place.module.is_some() {
                stats.symbols += 1;
                self.comment(w, &Annotation::Symbol(place), stats)?;
            }
        }
        Ok(())
    }

    /// Fills in what the whole conversion learnt: pid and threads.
    pub(crate) fn finish_stats(&self, stats: &mut ConvertStats) {
        stats.threads = self.threads_seen.len() as u64;
        stats.pid = self.pid;
    }

    pub(crate) fn emit<O: TraceOut>(
        &mut self,
        ev: &RawEvent,
        time: u64,
        file: usize,
        tid: u32,
        w: &mut O,
        stats: &mut ConvertStats,
    ) -> Result<(), Error> {
        if let RawEvent::ThreadStart { .. } = ev {
            if let Some((t, at)) = self.pending_start.replace((tid, time)) {
                self.thread_seen(t, at, w, stats)?;
            }
            return Ok(());
        }
        // The waiting start comes before any event but a process record,
        // which it follows.
        let process = matches!(ev, RawEvent::Process { .. });
        let pending = self.pending_start.take();
        if let Some((t, at)) = pending.filter(|_| !process) {
            self.thread_seen(t, at, w, stats)?;
        }
        self.emit_event(ev, time, file, tid, w, stats)?;
        if let Some((t, at)) = pending.filter(|_| process) {
            self.thread_seen(t, at, w, stats)?;
        }
        Ok(())
    }

    fn emit_event<O: TraceOut>(
        &mut self,
        ev: &RawEvent,
        time: u64,
        file: usize,
        tid: u32,
        w: &mut O,
        stats: &mut ConvertStats,
    ) -> Result<(), Error> {
        let base = |kind: EventKind| {
            let mut e = Event::new(kind);
            e.thread = tid as u64;
            e.time = time;
            e
        };
        match ev {
            RawEvent::Process {
                pid,
                ppid,
                stack_depth,
                sample,
                attached,
                ..
            } => {
                self.pid = *pid;
                self.stack_depth = *stack_depth;
                self.program_next = true;
                let a = Annotation::Process {
                    pid: *pid,
                    ppid: *ppid,
                    stack_depth: *stack_depth,
                };
                self.comment(w, &a, stats)?;
                self.comment(w, &recorded_now(self.clock0), stats)?;
                // An attach's trace began with its note (`live`); a log
                // converted on its own says it here.
                if *attached {
                    if !stats.attached {
                        self.comment(w, &Annotation::Attached, stats)?;
                    }
                    stats.attached = true;
                }
                if *sample > 0 {
                    let s = tramp_heap::sampling::Sampling {
                        mean_bytes: *sample,
                    };
                    self.comment(w, &Annotation::Sampling(s), stats)?;
                    stats.sample = *sample;
                }
            }
            RawEvent::Module { base: b, path, .. } => {
                // A log's first module is its program (after an exec, the
                // program exec'd).
                if std::mem::take(&mut self.program_next) {
                    let path = String::from_utf8_lossy(path);
                    stats.program = path.rsplit('/').next().unwrap_or(&path).to_string();
                }
                if self.modules.insert((*b, path.clone())) {
                    let a = Annotation::Module {
                        base: *b,
                        path: String::from_utf8_lossy(path).into_owned(),
                    };
                    self.comment(w, &a, stats)?;
                }
            }
            RawEvent::Frames { keep, frames, .. } => {
                let stack = self.stacks.entry((file, tid)).or_default();
                let keep = (*keep as usize).min(stack.frames.len());
                stack.frames.truncate(keep);
                stack.named = stack.named.min(keep);
                stack.frames.extend(frames.iter().rev().map(|&f| (f, 0)));
                stack.site_next = true;
            }
            RawEvent::Command { end, text, .. } => {
                // The capture keeps 8 KiB; a damaged log's endless pieces
                // stop adding at 64 KiB.
                if self.command.len() < 1 << 16 {
                    self.command.extend_from_slice(text);
                }
                if *end != 0 {
                    let line = std::mem::take(&mut self.command);
                    // Each argument ends with a NUL.
                    let args = line
                        .strip_suffix(b"\0")
                        .unwrap_or(&line)
                        .split(|&b| b == 0)
                        .map(|a| String::from_utf8_lossy(a).into_owned())
                        .collect();
                    let a = Annotation::Command {
                        args,
                        cut: *end == 2,
                    };
                    self.comment(w, &a, stats)?;
                }
            }
            RawEvent::Lsan { text, .. } => {
                let a = Annotation::LsanSuppressions(String::from_utf8_lossy(text).into_owned());
                self.comment(w, &a, stats)?;
            }
            RawEvent::Rss { bytes, .. } => {
                let a = Annotation::Rss {
                    time,
                    bytes: *bytes,
                };
                self.comment(w, &a, stats)?;
            }
            RawEvent::Unwind { stats: u, .. } => {
                stats.unwind.add(u);
                let a = Annotation::Unwind {
                    thread: tid as u64,
                    stacks: u.stacks,
                    early_stops: u.early_stops,
                    frames_unwound: u.frames_unwound,
                    checks: u.checks,
                    mismatches: u.mismatches,
                };
                self.comment(w, &a, stats)?;
            }
            RawEvent::Stall { waited_ns, .. } => {
                stats.stalls += 1;
                stats.stall_ns += waited_ns;
                let a = Annotation::Stall {
                    thread: tid as u64,
                    waited_ns: *waited_ns,
                };
                self.comment(w, &a, stats)?;
            }
            RawEvent::ThreadStart { .. } => self.thread_seen(tid, time, w, stats)?,
            // Only the merge of threads uses it (live.rs): no record.
            RawEvent::Spawn { .. } => {}
            RawEvent::Access {
                store,
                address,
                value,
                site,
                ..
            } => {
                self.thread_seen(tid, time, w, stats)?;
                stats.records += 1;
                if *store {
                    stats.stores += 1;
                } else {
                    stats.loads += 1;
                }
                w.write_access(&Access {
                    store: *store,
                    thread: tid as u64,
                    time,
                    address: *address,
                    value: *value,
                    site: *site,
                })?;
            }
            RawEvent::ThreadEnd { .. } => {
                self.thread_seen(tid, time, w, stats)?;
                self.threads_live.remove(&tid);
                self.last_live = None;
                Self::event(w, base(EventKind::DestroyThread), stats)?;
            }
            RawEvent::Alloc {
                size,
                address,
                site,
                heap,
                ..
            } => {
                self.thread_seen(tid, time, w, stats)?;
                self.heap_seen(*heap, tid, time, w, stats)?;
                self.site(file, tid, *site, w, stats)?;
                let mut e = base(EventKind::Alloc);
                e.heap = *heap;
                e.size = *size;
                e.address = *address;
                let attrs = std::mem::take(&mut self.attrs);
                e.attributes = &attrs;
                stats.allocs += 1;
                let r = Self::event(w, e, stats);
                self.attrs = attrs;
                r?;
            }
            RawEvent::Free {
                address,
                site,
                heap,
                ..
            } => {
                self.thread_seen(tid, time, w, stats)?;
                self.heap_seen(*heap, tid, time, w, stats)?;
                let mut e = base(EventKind::Free);
                e.heap = *heap;
                e.address = *address;
                stats.frees += 1;
                // Pointer captures give the free's call site (a return
                // address, also with --stack); only pointer traces keep it.
                let mut attrs = std::mem::take(&mut self.free_attrs);
                attrs.clear();
                if *site != 0 {
                    encode_site(SITE_RETURN_ADDRESS, *site, &mut attrs);
                }
                e.attributes = &attrs;
                let r = Self::event(w, e, stats);
                self.free_attrs = attrs;
                r?;
            }
            RawEvent::Realloc {
                size,
                old,
                new,
                site,
                heap,
                ..
            } => {
                self.thread_seen(tid, time, w, stats)?;
                self.heap_seen(*heap, tid, time, w, stats)?;
                let kind = if *old == 0 {
                    EventKind::ReallocAlloc
                } else if *new == 0 {
                    EventKind::ReallocFree
                } else if old == new {
                    EventKind::ReallocNoAlloc
                } else {
                    EventKind::ReallocAllocFree
                };
                self.site(file, tid, *site, w, stats)?;
                let attrs = std::mem::take(&mut self.attrs);
                let mut r = base(kind);
                r.heap = *heap;
                r.size = *size;
                r.address = *old;
                r.new_address = *new;
                r.attributes = &attrs;
                stats.reallocs += 1;
                let res = Self::event(w, r, stats);
                if res.is_ok()
                    && matches!(kind, EventKind::ReallocAlloc | EventKind::ReallocAllocFree)
                {
                    let mut a = base(EventKind::Alloc);
                    a.heap = *heap;
                    a.size = *size;
                    a.address = *new;
                    a.attributes = &attrs;
                    stats.allocs += 1;
                    Self::event(w, a, stats)?;
                }
                if res.is_ok()
                    && matches!(kind, EventKind::ReallocFree | EventKind::ReallocAllocFree)
                {
                    let mut f = base(EventKind::Free);
                    f.heap = *heap;
                    f.address = *old;
                    stats.frees += 1;
                    Self::event(w, f, stats)?;
                }
                self.attrs = attrs;
                res?;
            }
        }
        Ok(())
    }
}

/// Where a recording's items go: a HATF writer, a tpack writer, or a
/// pointer trace.
pub trait TraceOut {
    fn write_item(&mut self, item: &Item<'_>) -> Result<(), tramp_core::Error>;

    /// A load or store; only pointer traces hold them.
    fn write_access(&mut self, a: &Access) -> Result<(), tramp_core::Error> {
        let _ = a;
        Err(tramp_core::Error::Usage(
            "the log has loads and stores, which only a pointer trace holds (tramp record --pointers)"
                .into(),
        ))
    }

    fn write_comment(&mut self, text: &[u8]) -> Result<(), tramp_core::Error> {
        self.write_item(&Item::Comment(text))
    }
}

impl<W: Write> TraceOut for tramp_hatf::Writer<W> {
    fn write_item(&mut self, item: &Item<'_>) -> Result<(), tramp_core::Error> {
        tramp_hatf::Writer::write_item(self, item)
    }
}

impl<W: Write> TraceOut for tramp_hatf::text::TextWriter<W> {
    fn write_item(&mut self, item: &Item<'_>) -> Result<(), tramp_core::Error> {
        Ok(tramp_hatf::text::TextWriter::write_item(self, item)?)
    }
}

impl<W: Write> TraceOut for tramp_tpack::Writer<W> {
    fn write_item(&mut self, item: &Item<'_>) -> Result<(), tramp_core::Error> {
        tramp_tpack::Writer::write_item(self, item)
    }
}

/// When and where the recording is made: now, on this host (the kernel's
/// hostname; `?` where it cannot be read).
fn recorded_now(clock0: Option<u64>) -> Annotation {
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "?".into());
    Annotation::Recorded(tramp_heap::images::Recorded { at, host, clock0 })
}
