//! The binary heap libCacheSim 0.3.5's priority-queue policies use
//! (`dataStructure/pqueue.c`, itself libpqueue): 1-based, the greatest
//! priority on top, strict comparisons (equal priorities never swap), each
//! entry's position kept so that it can be found, re-prioritised and
//! removed. Its mechanics decide which of several equal-priority objects
//! goes first — with every object of size 1, all of them — so they are
//! followed to the letter; this is our own code for that algorithm.

/// One entry: its priority and the id it stands for.
#[derive(Clone, Copy, Debug)]
struct Entry {
    pri: f64,
    id: u64,
}

/// A max-heap of ids by priority; `pos` maps an entry handle to its place.
#[derive(Default)]
pub(crate) struct PQueue {
    /// `heap[0]` unused, as in pqueue.c.
    heap: Vec<u32>,
    entries: Vec<Entry>,
    /// Per handle: its index in `heap` (0 when free).
    pos: Vec<usize>,
    free: Vec<u32>,
}

impl PQueue {
    pub fn new() -> PQueue {
        PQueue {
            heap: vec![u32::MAX],
            ..PQueue::default()
        }
    }

    fn pri(&self, h: u32) -> f64 {
        self.entries[h as usize].pri
    }

    fn set(&mut self, i: usize, h: u32) {
        self.heap[i] = h;
        self.pos[h as usize] = i;
    }

    fn bubble_up(&mut self, mut i: usize) {
        let moving = self.heap[i];
        let p = self.pri(moving);
        while i > 1 && self.pri(self.heap[i >> 1]) < p {
            let parent = self.heap[i >> 1];
            self.set(i, parent);
            i >>= 1;
        }
        self.set(i, moving);
    }

    fn max_child(&self, i: usize) -> usize {
        let c = i << 1;
        if c >= self.heap.len() {
            return 0;
        }
        if c + 1 < self.heap.len() && self.pri(self.heap[c]) < self.pri(self.heap[c + 1]) {
            c + 1
        } else {
            c
        }
    }

    fn percolate_down(&mut self, mut i: usize) {
        let moving = self.heap[i];
        let p = self.pri(moving);
        loop {
            let c = self.max_child(i);
            // (priorities are never NaN: `>=` is `!(<)`)
            if c == 0 || p >= self.pri(self.heap[c]) {
                break;
            }
            let child = self.heap[c];
            self.set(i, child);
            i = c;
        }
        self.set(i, moving);
    }

    /// Adds `id` at priority `pri`; gives its handle.
    pub fn insert(&mut self, id: u64, pri: f64) -> u32 {
        let e = Entry { pri, id };
        let h = match self.free.pop() {
            Some(h) => {
                self.entries[h as usize] = e;
                h
            }
            None => {
                self.entries.push(e);
                self.pos.push(0);
                (self.entries.len() - 1) as u32
            }
        };
        self.heap.push(h);
        let i = self.heap.len() - 1;
        self.set(i, h);
        self.bubble_up(i);
        h
    }

    /// Takes the top entry out.
    pub fn pop(&mut self) -> Option<u64> {
        if self.heap.len() <= 1 {
            return None;
        }
        let top = self.heap[1];
        let last = self.heap.pop().expect("not empty");
        if self.heap.len() > 1 {
            self.set(1, last);
            self.percolate_down(1);
        }
        self.release(top);
        Some(self.entries[top as usize].id)
    }

    /// Gives entry `h` a new priority, moving it as pqueue.c does.
    pub fn change(&mut self, h: u32, pri: f64) {
        let old = self.pri(h);
        self.entries[h as usize].pri = pri;
        let i = self.pos[h as usize];
        if old < pri {
            self.bubble_up(i);
        } else {
            self.percolate_down(i);
        }
    }

    fn release(&mut self, h: u32) {
        self.pos[h as usize] = 0;
        self.free.push(h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greatest_first_and_equal_priorities_in_heap_order() {
        let mut q = PQueue::new();
        for (id, p) in [(1, 5.0), (2, 9.0), (3, 1.0), (4, 9.0), (5, 7.0)] {
            q.insert(id, p);
        }
        // 9 (id 2, inserted first, stays above the other 9), 9, 7, 5, 1.
        let order: Vec<u64> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![2, 4, 5, 1, 3]);
        // All equal: the heap's own order, as pqueue.c leaves it: the
        // first on top, then each pop moves the last entry to the top.
        let mut q = PQueue::new();
        for id in 1..=6 {
            q.insert(id, 1.0);
        }
        let order: Vec<u64> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![1, 6, 5, 4, 3, 2]);
    }

    #[test]
    fn a_changed_priority_moves_its_entry() {
        let mut q = PQueue::new();
        let h: Vec<u32> = (0..50).map(|i| q.insert(i, (i * 7 % 13) as f64)).collect();
        q.change(h[3], 100.0);
        q.change(h[10], -1.0);
        assert_eq!(q.pop(), Some(3));
        let mut last = f64::INFINITY;
        let mut order = Vec::new();
        while let Some(id) = q.pop() {
            let p = if id == 10 { -1.0 } else { (id * 7 % 13) as f64 };
            assert!(p <= last);
            last = p;
            order.push(id);
        }
        assert_eq!((order.len(), order.last()), (49, Some(&10)));
    }
}
