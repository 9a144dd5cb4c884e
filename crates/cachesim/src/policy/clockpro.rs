//! CLOCK-Pro (Jiang, Chen and Zhang, USENIX ATC '05) as libCacheSim
//! 0.3.5's `ClockPro.c` defines it: one circular list of cold and hot
//! resident pages and non-resident test pages, three hands (hot, cold,
//! test), and an adaptive cold share (`init-ratio-cold`, 0.5 as its Python
//! binding sets it; `init-ref`, 0). A hit sets the page's reference bit. A
//! miss needs the cold share to have room (else it is not admitted); the
//! cold hand then turns until there is room: a referenced cold page is
//! promoted to hot, an unreferenced one leaves and a test page takes its
//! place (the test hand retiring test pages, each shrinking the cold share,
//! while tests exceed the capacity); promotion turns the hot hand, which
//! demotes unreferenced hot pages. A miss whose id has a test page promotes
//! that page, as libCacheSim does — which makes the page hot without
//! entering the cache's table, so its next request misses again; this is
//! why libCacheSim's CLOCK-Pro misses far more than LRU on the Twitter
//! fixture (0.63 at 1,000 objects against 0.36), and this port keeps it.
//!
//! The list operations are libCacheSim's own helpers, which were written
//! for linear lists, applied to the circular one exactly as `ClockPro.c`
//! applies them. A hand that would turn forever (libCacheSim's would: no
//! page of the kind it looks for) stops after going round the list twice.

use rustc_hash::FxHashMap;

use super::{Access, Policy, part};

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Cold,
    Hot,
    Test,
}

#[derive(Clone, Copy)]
struct Node {
    id: u64,
    size: i64,
    status: Status,
    referenced: bool,
    prev: u32,
    next: u32,
}

pub struct ClockPro {
    cap: i64,
    n: Vec<Node>,
    free: Vec<u32>,
    /// libCacheSim's cache table (resident pages it inserted) and test
    /// table.
    main: FxHashMap<u64, u32>,
    test: FxHashMap<u64, u32>,
    hand_hot: u32,
    hand_cold: u32,
    hand_test: u32,
    mem_cold_max: i64,
    mem_cold: i64,
    mem_test: i64,
    mem_hot: i64,
    /// libCacheSim's `occupied_byte`: inserts add, evictions subtract.
    occupied: i64,
    init_ref: bool,
    /// Hand steps left before a turning hand gives up.
    budget: u64,
    /// Ids evicted by the request in progress.
    out: Vec<u64>,
}

/// libCacheSim's `remove_obj_from_list`.
fn remove_from_list(n: &mut [Node], head: &mut u32, tail: &mut u32, o: u32) {
    if o == *head {
        *head = n[o as usize].next;
        if n[o as usize].next != NIL {
            let nx = n[o as usize].next as usize;
            n[nx].prev = NIL;
        }
    }
    if o == *tail {
        *tail = n[o as usize].prev;
        if n[o as usize].prev != NIL {
            let pv = n[o as usize].prev as usize;
            n[pv].next = NIL;
        }
    }
    let (pv, nx) = (n[o as usize].prev, n[o as usize].next);
    if pv != NIL {
        n[pv as usize].next = nx;
    }
    if nx != NIL {
        n[nx as usize].prev = pv;
    }
    n[o as usize].prev = NIL;
    n[o as usize].next = NIL;
}

/// libCacheSim's `move_obj_to_tail`.
fn move_to_tail(n: &mut [Node], head: &mut u32, tail: &mut u32, o: u32) {
    if *head == *tail {
        return;
    }
    if o == *head {
        *head = n[o as usize].next;
        let nx = n[o as usize].next as usize;
        n[nx].prev = NIL;
        n[*tail as usize].next = o;
        n[o as usize].next = NIL;
        n[o as usize].prev = *tail;
        *tail = o;
        return;
    }
    if o == *tail {
        return;
    }
    let (pv, nx) = (n[o as usize].prev as usize, n[o as usize].next as usize);
    n[pv].next = n[o as usize].next;
    n[nx].prev = n[o as usize].prev;
    n[*tail as usize].next = o;
    n[o as usize].next = NIL;
    n[o as usize].prev = *tail;
    *tail = o;
}

impl ClockPro {
    pub fn new(capacity: u64, init_ref: bool, init_ratio_cold: f64) -> ClockPro {
        ClockPro {
            cap: capacity as i64,
            n: Vec::new(),
            free: Vec::new(),
            main: FxHashMap::default(),
            test: FxHashMap::default(),
            hand_hot: NIL,
            hand_cold: NIL,
            hand_test: NIL,
            mem_cold_max: part(capacity, init_ratio_cold) as i64,
            mem_cold: 0,
            mem_test: 0,
            mem_hot: 0,
            occupied: 0,
            init_ref,
            budget: 0,
            out: Vec::new(),
        }
    }

    fn alloc(&mut self, node: Node) -> u32 {
        match self.free.pop() {
            Some(s) => {
                self.n[s as usize] = node;
                s
            }
            None => {
                self.n.push(node);
                (self.n.len() - 1) as u32
            }
        }
    }

    fn next(&self, o: u32) -> u32 {
        self.n[o as usize].next
    }

    /// One step of a hand; false when the hand has turned too long.
    fn step(&mut self) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        true
    }

    fn run_test(&mut self) {
        let o = self.hand_test;
        if o == NIL || !self.step() {
            return;
        }
        if self.n[o as usize].status != Status::Test {
            self.hand_test = self.next(o);
            return;
        }
        let size = self.n[o as usize].size;
        self.mem_test -= size;
        self.mem_cold_max = if self.mem_cold_max > size {
            self.mem_cold_max - size
        } else {
            0
        };
        if self.hand_hot == o {
            self.hand_hot = self.next(o);
        }
        if self.hand_cold == o {
            self.hand_cold = self.next(o);
        }
        let mut head = self.hand_test;
        let mut tail = self.n[head as usize].prev;
        remove_from_list(&mut self.n, &mut head, &mut tail, o);
        self.hand_test = head;
        let id = self.n[o as usize].id;
        if self.test.get(&id) == Some(&o) {
            self.test.remove(&id);
        }
        self.free.push(o);
        while self.mem_cold > self.mem_cold_max && self.budget > 0 {
            self.run_cold();
        }
    }

    fn run_cold(&mut self) {
        let o = self.hand_cold;
        if o == NIL || !self.step() {
            return;
        }
        if self.n[o as usize].status != Status::Cold {
            self.hand_cold = self.next(o);
            return;
        }
        if self.n[o as usize].referenced {
            self.promote(o);
            return;
        }
        let (id, size) = (self.n[o as usize].id, self.n[o as usize].size);
        self.mem_cold -= size;
        while self.mem_test + size > self.cap && self.budget > 0 {
            self.run_test();
        }
        let demoted = self.alloc(Node {
            id,
            size,
            status: Status::Test,
            referenced: self.init_ref,
            prev: NIL,
            next: NIL,
        });
        self.test.insert(id, demoted);
        self.mem_test += size;
        let hc = self.hand_cold as usize;
        let (hc_prev, hc_next) = (self.n[hc].prev, self.n[hc].next);
        self.n[demoted as usize].next = hc_next;
        self.n[demoted as usize].prev = hc_prev;
        self.n[hc_next as usize].prev = demoted;
        self.n[hc_prev as usize].next = demoted;
        if self.hand_hot == o {
            self.hand_hot = demoted;
        }
        if self.hand_test == o {
            self.hand_test = demoted;
        }
        // cache_evict_base: out of the cache's table (when it is there).
        if self.main.get(&id) == Some(&o) {
            self.main.remove(&id);
        }
        self.occupied -= size;
        self.free.push(o);
        self.out.push(id);
        self.hand_cold = self.next(demoted);
    }

    fn run_hot(&mut self) {
        let o = self.hand_hot;
        if o == NIL || !self.step() {
            return;
        }
        if self.n[o as usize].status != Status::Hot {
            self.hand_hot = self.next(o);
            return;
        }
        if self.n[o as usize].referenced {
            self.n[o as usize].referenced = false;
            self.hand_hot = self.next(o);
            return;
        }
        let size = self.n[o as usize].size;
        while self.mem_cold + size > self.mem_cold_max && self.budget > 0 {
            self.run_cold();
        }
        self.n[o as usize].status = Status::Cold;
        self.n[o as usize].referenced = self.init_ref;
        if self.hand_cold == o {
            self.hand_cold = self.next(o);
        }
        if self.hand_test == o {
            self.hand_test = self.next(o);
        }
        let mut head = self.next(self.hand_hot);
        let mut tail = self.hand_hot;
        move_to_tail(&mut self.n, &mut head, &mut tail, o);
        self.hand_hot = tail;
        self.hand_hot = self.next(o);
        self.mem_hot -= size;
        self.mem_cold += size;
    }

    fn promote(&mut self, o: u32) {
        let size = self.n[o as usize].size;
        if self.n[o as usize].status == Status::Test {
            self.mem_cold_max = if self.mem_cold_max + size > self.cap {
                self.cap
            } else {
                self.mem_cold_max + size
            };
        }
        while self.mem_hot + size > self.cap - self.mem_cold_max && self.budget > 0 {
            self.run_hot();
        }
        if self.hand_cold == o {
            self.hand_cold = self.next(o);
        }
        if self.hand_test == o {
            self.hand_test = self.next(o);
        }
        let old = self.n[o as usize].status;
        self.n[o as usize].status = Status::Hot;
        self.n[o as usize].referenced = self.init_ref;
        let mut head = self.next(self.hand_hot);
        let mut tail = self.hand_hot;
        move_to_tail(&mut self.n, &mut head, &mut tail, o);
        self.hand_hot = tail;
        self.n[o as usize].next = head;
        self.n[head as usize].prev = o;
        self.hand_hot = self.next(o);
        match old {
            Status::Cold => self.mem_cold -= size,
            Status::Test => self.mem_test -= size,
            Status::Hot => {}
        }
        self.mem_hot += size;
    }

    fn insert(&mut self, id: u64, size: i64) {
        if let Some(&t) = self.test.get(&id) {
            self.promote(t);
            return;
        }
        let o = self.alloc(Node {
            id,
            size,
            status: Status::Cold,
            referenced: self.init_ref,
            prev: NIL,
            next: NIL,
        });
        self.main.insert(id, o);
        self.occupied += size;
        if self.hand_hot == NIL {
            self.n[o as usize].next = o;
            self.n[o as usize].prev = o;
            self.hand_hot = o;
            self.hand_cold = o;
            self.hand_test = o;
        } else {
            let hh = self.hand_hot;
            let hh_prev = self.n[hh as usize].prev;
            self.n[o as usize].next = hh;
            self.n[hh as usize].prev = o;
            self.n[o as usize].prev = hh_prev;
            self.n[hh_prev as usize].next = o;
            self.hand_hot = self.next(o);
        }
        self.mem_cold += size;
    }
}

impl Policy for ClockPro {
    fn name(&self) -> &'static str {
        "clockpro"
    }
    fn capacity(&self) -> u64 {
        self.cap as u64
    }
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some(&o) = self.main.get(&a.id) {
            self.n[o as usize].referenced = true;
            return true;
        }
        let size = a.charge as i64;
        if size > self.cap || self.mem_cold + size > self.mem_cold_max {
            return false;
        }
        // The hands may go round the list twice for this request.
        self.budget = 2 * self.n.len() as u64 + 64;
        while self.occupied + size > self.cap && self.budget > 0 {
            self.run_cold();
        }
        self.insert(a.id, size);
        evicted.append(&mut self.out);
        false
    }
    fn contains(&self, id: u64) -> bool {
        self.main.contains_key(&id)
    }
    fn occupied(&self) -> u64 {
        self.occupied.max(0) as u64
    }
    fn len(&self) -> usize {
        self.main.len()
    }
}
