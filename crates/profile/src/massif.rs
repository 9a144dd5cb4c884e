//! The heap over time as valgrind massif's output (`massif.out.PID`), which
//! `ms_print` and massif-visualizer read: snapshots of the heap's live
//! bytes, the one at the peak detailed as massif's tree (allocation
//! functions at the root, each level the callers of the one above), and
//! the last one detailed with what is left.
//!
//! Time is massif's `B` unit: bytes allocated and freed so far, which a
//! trace gives exactly (massif's default, instructions, it does not).
//! [`MassifSnapshots`] keeps fewer than [`MAX_SNAPSHOTS`] evenly spaced
//! snapshots in constant memory (when full, every other one goes and the
//! spacing doubles), and the peak.

use std::fmt::Write as _;

use tramp_core::{Analysis, Error};
use tramp_heap::{Heap, HeapEvent, HeapStep, Keep};
use tramp_symbols::Place;

/// Snapshots kept at most (massif keeps 100 by default).
pub const MAX_SNAPSHOTS: usize = 100;

/// The heap's live bytes over massif's byte time.
#[derive(Clone, Debug, Default)]
pub struct MassifSnapshots {
    /// (time in bytes, live bytes), evenly spaced by `every`.
    snapshots: Vec<(u64, u64)>,
    every: u64,
    next: u64,
    time: u64,
    live: u64,
    /// The peak: time and live bytes.
    pub peak: (u64, u64),
}

impl MassifSnapshots {
    pub fn new() -> Self {
        MassifSnapshots {
            snapshots: vec![(0, 0)],
            every: 1,
            ..Self::default()
        }
    }

    fn advance(&mut self, bytes: u64, live: u64) {
        self.time = self.time.saturating_add(bytes.max(1));
        self.live = live;
        if live > self.peak.1 {
            self.peak = (self.time, live);
        }
        if self.time >= self.next {
            self.snapshots.push((self.time, live));
            self.next = self.time.saturating_add(self.every);
            if self.snapshots.len() >= MAX_SNAPSHOTS {
                // Every other one goes; the spacing doubles.
                let mut i = 0;
                self.snapshots.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
                self.every = self.every.saturating_mul(2);
            }
        }
    }

    /// The snapshots in time order, the last at the end of the trace.
    pub fn snapshots(&self) -> Vec<(u64, u64)> {
        let mut v = self.snapshots.clone();
        if v.last().is_some_and(|s| s.0 < self.time) {
            v.push((self.time, self.live));
        }
        v
    }
}

impl<K: Keep> Analysis<Heap<K>> for MassifSnapshots {
    type Report = MassifSnapshots;

    fn observe(&mut self, step: &HeapStep<K>) -> Result<(), Error> {
        let bytes = match &step.event {
            HeapEvent::Alloc { object, .. } | HeapEvent::Displaced { object, .. } => object.size,
            HeapEvent::Free {
                object: Some(o), ..
            } => o.size,
            HeapEvent::Realloc {
                resized: Some((o, before)),
                ..
            } => o.size.abs_diff(*before),
            _ => return Ok(()),
        };
        self.advance(bytes, step.live.bytes);
        Ok(())
    }

    fn finish(self) -> MassifSnapshots {
        self
    }
}

/// One call stack's bytes in a detailed snapshot: frames innermost first.
pub type Held<'a> = (&'a [Place], u64);

/// massif's output: `cmd` is the program, `snapshots` (time, live bytes)
/// in time order, `peak` the peak's (time, bytes) with what each stack
/// held then, `end` what each stack held at the end.
pub fn write(
    cmd: &str,
    snapshots: &[(u64, u64)],
    peak: ((u64, u64), &[Held<'_>]),
    end: &[Held<'_>],
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "desc: (recorded by tramp)");
    let _ = writeln!(out, "cmd: {cmd}");
    let _ = writeln!(out, "time_unit: B");
    // The peak goes in its place among the others; the last is detailed.
    let mut all: Vec<(u64, u64, u8)> = snapshots.iter().map(|&(t, b)| (t, b, 0)).collect();
    let ((pt, pb), at_peak) = peak;
    if pb > 0 {
        let i = all.partition_point(|s| s.0 <= pt);
        all.insert(i, (pt, pb, 1));
    }
    if let Some(last) = all.last_mut()
        && last.2 == 0
    {
        last.2 = 2;
    }
    for (n, &(time, bytes, kind)) in all.iter().enumerate() {
        let _ = writeln!(out, "#-----------\nsnapshot={n}\n#-----------");
        let _ = writeln!(
            out,
            "time={time}\nmem_heap_B={bytes}\nmem_heap_extra_B=0\nmem_stacks_B=0"
        );
        match kind {
            1 => {
                out.push_str("heap_tree=peak\n");
                tree(&mut out, at_peak, bytes);
            }
            2 => {
                out.push_str("heap_tree=detailed\n");
                tree(&mut out, end, bytes);
            }
            _ => out.push_str("heap_tree=empty\n"),
        }
    }
    out
}

/// massif's tree: the allocation functions at the root (`total` bytes),
/// then the innermost frames, each level the callers of the one above,
/// largest first.
fn tree(out: &mut String, held: &[Held<'_>], total: u64) {
    let rows: Vec<(&[Place], u64)> = held.iter().filter(|h| h.1 > 0).copied().collect();
    // The rows' bytes can only be what the snapshot holds; anything they
    // miss (sites not named) stays in the root.
    let children = group(&rows, 0);
    let _ = writeln!(
        out,
        "n{}: {total} (heap allocation functions) malloc/new/new[], --alloc-fns, etc.",
        children.len()
    );
    for (label, bytes, sub) in children {
        node(out, &rows, &sub, 1, &label, bytes);
    }
}

/// The rows (by index) under each distinct frame at `depth`: (label, bytes,
/// row indices), largest first.
fn group(rows: &[(&[Place], u64)], depth: usize) -> Vec<(String, u64, Vec<usize>)> {
    group_of(rows, &(0..rows.len()).collect::<Vec<_>>(), depth)
}

fn group_of(
    rows: &[(&[Place], u64)],
    of: &[usize],
    depth: usize,
) -> Vec<(String, u64, Vec<usize>)> {
    let mut groups: Vec<(String, u64, Vec<usize>)> = Vec::new();
    for &i in of {
        let Some(p) = rows[i].0.get(depth) else {
            continue;
        };
        let label = format!("{:#X}: {p}", p.address).replacen("0X", "0x", 1);
        match groups.iter_mut().find(|g| g.0 == label) {
            Some(g) => {
                g.1 += rows[i].1;
                g.2.push(i);
            }
            None => groups.push((label, rows[i].1, vec![i])),
        }
    }
    groups.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    groups
}

fn node(
    out: &mut String,
    rows: &[(&[Place], u64)],
    of: &[usize],
    depth: usize,
    label: &str,
    bytes: u64,
) {
    let children = group_of(rows, of, depth);
    let _ = writeln!(
        out,
        "{:indent$}n{}: {bytes} {label}",
        "",
        children.len(),
        indent = depth
    );
    for (l, b, sub) in children {
        node(out, rows, &sub, depth + 1, &l, b);
    }
}
