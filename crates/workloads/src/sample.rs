//! A built-in, deterministic sample workload: a few threads and heaps, a
//! skewed size distribution, frees, and reallocs of all four outcomes,
//! with addresses from a simulated size-class allocator on a 64-bit heap.
//! It exists so that `tramp sample` and the tests have a realistic trace
//! without recording a program.

use std::collections::HashMap;

use tramp_hatf::item::{OwnedEvent, OwnedItem};
use tramp_hatf::spec::EventKind;

use tramp_core::rng::SplitMix64;

/// A size-class allocator simulation: 16-byte classes below 64 KiB served
/// from free lists and a bump pointer, larger blocks from their own region.
struct Heap {
    free: HashMap<u64, Vec<u64>>,
    bump: u64,
    big: u64,
}

impl Heap {
    fn new(base: u64) -> Self {
        Heap {
            free: HashMap::new(),
            bump: base,
            big: base + (1 << 36),
        }
    }

    fn class(size: u64) -> u64 {
        (size.max(1) + 15) & !15
    }

    fn alloc(&mut self, size: u64) -> u64 {
        let c = Self::class(size);
        if c > 65536 {
            let a = self.big;
            self.big += (c + 4095) & !4095;
            return a;
        }
        if let Some(a) = self.free.get_mut(&c).and_then(|l| l.pop()) {
            return a;
        }
        let a = self.bump;
        self.bump += c;
        a
    }

    fn free(&mut self, addr: u64, size: u64) {
        let c = Self::class(size);
        if c <= 65536 {
            self.free.entry(c).or_default().push(addr);
        }
    }
}

/// Generates the sample trace as a stream of items.
pub struct Sample {
    rng: SplitMix64,
    pending: std::collections::VecDeque<OwnedItem>,
    live: Vec<(u64, u64, u64)>, // (address, size, heap)
    heaps: Vec<Heap>,
    time: u64,
    events_left: usize,
    threads: u64,
    phase: u8,
}

fn ev(kind: EventKind) -> OwnedEvent {
    OwnedEvent::new(kind)
}

impl Sample {
    /// About `events` data records from `seed`.
    pub fn new(events: usize, seed: u64) -> Self {
        Sample {
            rng: SplitMix64::new(seed),
            pending: Default::default(),
            live: Vec::new(),
            heaps: vec![Heap::new(0x7f3a_0000_0000), Heap::new(0x7f4a_0000_0000)],
            time: 1_000_000,
            events_left: events,
            threads: 3,
            phase: 0,
        }
    }

    fn size(&mut self) -> u64 {
        // Mostly small, a tail of medium, rarely large: like real programs.
        match self.rng.below(100) {
            0..=69 => 8 + 8 * self.rng.below(8),
            70..=94 => 64 + self.rng.below(960),
            95..=98 => 1024 + self.rng.below(31 * 1024),
            _ => 65536 + self.rng.below(1 << 20),
        }
    }

    fn tick(&mut self) -> u64 {
        self.time += 20 + self.rng.below(200);
        self.time
    }

    fn stamp(&mut self, mut e: OwnedEvent, thread: u64) -> OwnedItem {
        e.thread = thread;
        e.time = self.tick();
        OwnedItem::Event(e)
    }

    fn step(&mut self) {
        let thread = self.rng.below(self.threads + 1);
        let heap_id = if thread == 1 && self.rng.below(4) == 0 {
            1
        } else {
            0
        };
        let r = self.rng.below(100);
        if self.live.is_empty() || r < 52 {
            let size = self.size();
            let address = self.heaps[heap_id as usize].alloc(size);
            self.live.push((address, size, heap_id));
            let mut e = ev(EventKind::Alloc);
            e.size = size;
            e.address = address;
            e.heap = heap_id;
            if self.rng.below(50) == 0 {
                e.attributes = b"site=parse_input".to_vec();
            }
            let item = self.stamp(e, thread);
            self.pending.push_back(item);
        } else if r < 94 {
            let i = self.rng.below(self.live.len() as u64) as usize;
            let (address, size, heap) = self.live.swap_remove(i);
            self.heaps[heap as usize].free(address, size);
            let mut e = ev(EventKind::Free);
            e.address = address;
            e.heap = heap;
            let item = self.stamp(e, thread);
            self.pending.push_back(item);
        } else {
            self.realloc(thread);
        }
    }

    fn realloc(&mut self, thread: u64) {
        let i = self.rng.below(self.live.len() as u64) as usize;
        let (old, old_size, heap) = self.live[i];
        let choice = self.rng.below(10);
        let mut r = ev(EventKind::ReallocNoAlloc);
        r.heap = heap;
        if choice == 0 {
            // realloc(NULL, n): malloc only.
            let size = self.size();
            let a = self.heaps[heap as usize].alloc(size);
            self.live.push((a, size, heap));
            r.kind = EventKind::ReallocAlloc;
            r.size = size;
            r.new_address = a;
            let mut m = ev(EventKind::Alloc);
            m.size = size;
            m.address = a;
            m.heap = heap;
            let (x, y) = (self.stamp(r, thread), self.stamp(m, thread));
            self.pending.extend([x, y]);
        } else if choice == 1 {
            // realloc(p, 0): free only.
            self.live.swap_remove(i);
            self.heaps[heap as usize].free(old, old_size);
            r.kind = EventKind::ReallocFree;
            r.address = old;
            let mut f = ev(EventKind::Free);
            f.address = old;
            f.heap = heap;
            let (x, y) = (self.stamp(r, thread), self.stamp(f, thread));
            self.pending.extend([x, y]);
        } else {
            let size = old_size + self.rng.below(old_size.max(16) * 2);
            r.size = size;
            r.address = old;
            if Heap::class(size) == Heap::class(old_size) {
                r.new_address = old;
                self.live[i].1 = size;
                let x = self.stamp(r, thread);
                self.pending.push_back(x);
            } else {
                let a = self.heaps[heap as usize].alloc(size);
                self.heaps[heap as usize].free(old, old_size);
                self.live[i] = (a, size, heap);
                r.kind = EventKind::ReallocAllocFree;
                r.new_address = a;
                let mut m = ev(EventKind::Alloc);
                m.size = size;
                m.address = a;
                m.heap = heap;
                let mut f = ev(EventKind::Free);
                f.address = old;
                f.heap = heap;
                let (x, y, z) = (
                    self.stamp(r, thread),
                    self.stamp(m, thread),
                    self.stamp(f, thread),
                );
                self.pending.extend([x, y, z]);
            }
        }
    }
}

impl Iterator for Sample {
    type Item = OwnedItem;

    fn next(&mut self) -> Option<OwnedItem> {
        loop {
            if let Some(i) = self.pending.pop_front() {
                return Some(i);
            }
            match self.phase {
                0 => {
                    self.phase = 1;
                    self.pending.push_back(OwnedItem::Comment(
                        b"tramp built-in sample workload".to_vec(),
                    ));
                    for t in 1..=self.threads {
                        let mut e = ev(EventKind::CreateThread);
                        e.thread = t;
                        let item = self.stamp(e, t);
                        self.pending.push_back(item);
                    }
                    let mut h = ev(EventKind::CreateHeap);
                    h.heap = 1;
                    let item = self.stamp(h, 1);
                    self.pending.push_back(item);
                }
                1 if self.events_left > 0 => {
                    self.events_left -= 1;
                    self.step();
                }
                1 => {
                    self.phase = 2;
                    // Free what lives in heap 1, then tear down heap and threads;
                    // objects of heap 0 stay live (a leak report has content).
                    let mut keep = Vec::new();
                    for (a, s, h) in std::mem::take(&mut self.live) {
                        if h == 1 {
                            let mut f = ev(EventKind::Free);
                            f.address = a;
                            f.heap = 1;
                            let item = self.stamp(f, 1);
                            self.pending.push_back(item);
                        } else {
                            keep.push((a, s, h));
                        }
                    }
                    self.live = keep;
                    let mut h = ev(EventKind::DestroyHeap);
                    h.heap = 1;
                    let item = self.stamp(h, 1);
                    self.pending.push_back(item);
                    for t in 1..=self.threads {
                        let mut e = ev(EventKind::DestroyThread);
                        e.thread = t;
                        let item = self.stamp(e, t);
                        self.pending.push_back(item);
                    }
                }
                _ => return None,
            }
        }
    }
}

/// The sample as a tramp source of HATF records.
pub struct SampleSource {
    sample: Sample,
    buf: tramp_core::RecordBuf,
    records: u64,
}

impl SampleSource {
    pub fn new(events: usize, seed: u64) -> Self {
        SampleSource {
            sample: Sample::new(events, seed),
            buf: tramp_core::RecordBuf::new(),
            records: 0,
        }
    }
}

impl tramp_core::Source for SampleSource {
    fn schema(&self) -> &std::sync::Arc<tramp_core::Schema> {
        tramp_hatf::records::schema()
    }

    fn next_record(&mut self) -> Result<Option<tramp_core::Record<'_>>, tramp_core::Error> {
        let Some(item) = self.sample.next() else {
            return Ok(None);
        };
        tramp_hatf::records::item_to_record(&item.as_item(), &mut self.buf);
        self.records += 1;
        Ok(Some(self.buf.as_record(
            &tramp_hatf::records::schema().types[self.buf.type_index()],
        )))
    }

    fn position(&self) -> tramp_core::Position {
        tramp_core::Position::new(0, self.records)
    }
}
