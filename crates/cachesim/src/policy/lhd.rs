//! LHD, least hit density (Beckmann, Chen and Cidon, NSDI '18), as
//! libCacheSim 0.3.5's `LHD/` (the authors' code) defines it: objects are
//! ranked by hit density — hits expected per unit of space and time, from
//! per-class histograms of the ages at which objects were hit and evicted
//! — divided by size. To make room, the lowest density among 8 objects
//! drawn at random (32 after 50 reconfigurations) and the last 8 admitted
//! whose density fell below the victims' average is evicted; one object in
//! 32 is an explorer (its density + 1) while a budget of 1 % of the
//! capacity lasts. Classes follow the sum of an object's last two hit ages
//! (log-spaced, 16); ages are coarsened by 2^10 (adapted at the 5th and
//! 25th reconfiguration); every 2^20 requests the histograms decay by 0.9
//! and densities are modelled again.
//!
//! The arithmetic is the code's own, in 32-bit floats where it uses them,
//! and the draws are libCacheSim's generator's, so the victims are its
//! victims. libCacheSim allocates 256 classes of 3 × 20,000 floats (61 MB
//! a cache); only the 16 its one application uses are kept here.

use rustc_hash::FxHashMap;

use super::admission::Lehmer64;
use super::{Access, Policy};

const ASSOCIATIVITY: u32 = 32;
const ADMISSIONS: usize = 8;
const EXPLORER_BUDGET_FRACTION: f32 = 0.01;
const EXPLORE_INVERSE_PROBABILITY: u64 = 32;
const HIT_AGE_CLASSES: u32 = 16;
const AGE_COARSENING_ERROR_TOLERANCE: f32 = 0.01;
const MAX_AGE: u64 = 20_000;
const ACCS_PER_RECONFIGURATION: u64 = 1 << 20;
const EWMA_DECAY: f32 = 0.9;
/// libCacheSim's application id: 1 % 16 — its classes are 16..32.
const APP: u32 = 1;

#[derive(Clone, Copy)]
struct Tag {
    timestamp: u64,
    last_hit_age: u64,
    last_last_hit_age: u64,
    id: u64,
    size: f32,
    explorer: bool,
}

struct Class {
    hits: Vec<f32>,
    evictions: Vec<f32>,
    hit_densities: Vec<f32>,
}

pub struct Lhd {
    cap: u64,
    occupied: u64,
    /// Cached ids and their sizes (libCacheSim's `sizeMap`).
    sizes: FxHashMap<u64, u64>,
    tags: Vec<Tag>,
    indices: FxHashMap<u64, usize>,
    /// Classes APP × 16 … APP × 16 + 15, by hit-age class.
    classes: Vec<Class>,
    recently_admitted: [Option<u64>; ADMISSIONS],
    recently_admitted_head: usize,
    timestamp: u64,
    next_reconfiguration: u64,
    num_reconfigurations: u32,
    age_coarsening_shift: u32,
    ewma_num_objects: f32,
    ewma_num_objects_mass: f32,
    ewma_victim_hit_density: f32,
    explorer_budget: i64,
    rng: Lehmer64,
}

fn hit_age_class(mut age: u64) -> u32 {
    if age == 0 {
        return HIT_AGE_CLASSES - 1;
    }
    let mut log = 0;
    while age < MAX_AGE && log < HIT_AGE_CLASSES - 1 {
        age <<= 1;
        log += 1;
    }
    log
}

/// `int64 += float` in C++: the sum in float, truncated back.
fn add_f32(budget: i64, v: f32) -> i64 {
    (budget as f32 + v) as i64
}

impl Lhd {
    pub fn new(capacity: u64, seed: u64) -> Lhd {
        let classes = (0..HIT_AGE_CLASSES)
            .map(|h| {
                let c = APP * HIT_AGE_CLASSES + h;
                Class {
                    hits: vec![0.0; MAX_AGE as usize],
                    evictions: vec![0.0; MAX_AGE as usize],
                    hit_densities: (0..MAX_AGE)
                        .map(|a| (1.0 * (c + 1) as f64 / (a + 1) as f64) as f32)
                        .collect(),
                }
            })
            .collect();
        Lhd {
            cap: capacity,
            occupied: 0,
            sizes: FxHashMap::default(),
            tags: Vec::new(),
            indices: FxHashMap::default(),
            classes,
            recently_admitted: [None; ADMISSIONS],
            recently_admitted_head: 0,
            timestamp: 0,
            next_reconfiguration: ACCS_PER_RECONFIGURATION,
            num_reconfigurations: 0,
            age_coarsening_shift: 10,
            ewma_num_objects: 0.0,
            ewma_num_objects_mass: 0.0,
            ewma_victim_hit_density: 0.0,
            explorer_budget: (capacity as f32 * EXPLORER_BUDGET_FRACTION) as i64,
            rng: Lehmer64::new(seed),
        }
    }

    fn age(&self, tag: &Tag) -> u64 {
        let age = (self.timestamp - tag.timestamp) >> self.age_coarsening_shift;
        age.min(MAX_AGE - 1)
    }

    fn class(&self, tag: &Tag) -> usize {
        hit_age_class(tag.last_hit_age + tag.last_last_hit_age) as usize
    }

    fn hit_density(&self, tag: &Tag) -> f32 {
        let age = self.age(tag);
        if age == MAX_AGE - 1 {
            return f32::MIN;
        }
        let mut density = self.classes[self.class(tag)].hit_densities[age as usize] / tag.size;
        if tag.explorer {
            density += 1.0;
        }
        density
    }

    /// The victim's id (libCacheSim's `LHD::rank`).
    fn rank(&mut self) -> u64 {
        let mut victim = usize::MAX;
        let mut victim_rank = f32::MAX;
        let candidates = if self.num_reconfigurations > 50 {
            ASSOCIATIVITY
        } else {
            8
        };
        for _ in 0..candidates {
            let idx = (self.rng.next_u64() % self.tags.len() as u64) as usize;
            let rank = self.hit_density(&self.tags[idx]);
            if rank < victim_rank {
                victim = idx;
                victim_rank = rank;
            }
        }
        for i in 0..ADMISSIONS {
            let Some(idx) = self.recently_admitted[i].and_then(|id| self.indices.get(&id).copied())
            else {
                continue;
            };
            let rank = self.hit_density(&self.tags[idx]);
            if rank < victim_rank {
                victim = idx;
                victim_rank = rank;
            }
        }
        self.ewma_victim_hit_density =
            EWMA_DECAY * self.ewma_victim_hit_density + (1.0 - EWMA_DECAY) * victim_rank;
        // Every density is below f32::MAX, so a victim was found; a NaN
        // (which libCacheSim would assert on) takes the first object.
        self.tags[if victim == usize::MAX { 0 } else { victim }].id
    }

    /// A request for a cached object, or an admission (`LHD::update`).
    fn update(&mut self, id: u64, size: u64) {
        let insert = !self.indices.contains_key(&id);
        let idx = if insert {
            self.tags.push(Tag {
                timestamp: 0,
                last_hit_age: 0,
                last_last_hit_age: MAX_AGE,
                id,
                size: 0.0,
                explorer: false,
            });
            self.indices.insert(id, self.tags.len() - 1);
            self.tags.len() - 1
        } else {
            let idx = self.indices[&id];
            let tag = self.tags[idx];
            let age = self.age(&tag);
            let c = self.class(&tag);
            self.classes[c].hits[age as usize] += 1.0;
            if tag.explorer {
                self.explorer_budget = add_f32(self.explorer_budget, tag.size);
            }
            let t = &mut self.tags[idx];
            t.last_last_hit_age = t.last_hit_age;
            t.last_hit_age = age;
            idx
        };
        let timestamp = self.timestamp;
        let t = &mut self.tags[idx];
        t.timestamp = timestamp;
        t.size = size as f32;
        let explore = self
            .rng
            .next_u64()
            .is_multiple_of(EXPLORE_INVERSE_PROBABILITY);
        if explore && self.explorer_budget > 0 && self.num_reconfigurations < 50 {
            t.explorer = true;
            self.explorer_budget = add_f32(self.explorer_budget, -t.size);
        } else {
            t.explorer = false;
        }
        if insert && !explore && self.hit_density(&self.tags[idx]) < self.ewma_victim_hit_density {
            self.recently_admitted[self.recently_admitted_head % ADMISSIONS] = Some(id);
            self.recently_admitted_head += 1;
        }
        self.timestamp += 1;
        self.next_reconfiguration -= 1;
        if self.next_reconfiguration == 0 {
            self.reconfigure();
            self.next_reconfiguration = ACCS_PER_RECONFIGURATION;
            self.num_reconfigurations += 1;
        }
    }

    /// An eviction (`LHD::replaced`).
    fn replaced(&mut self, id: u64) {
        let Some(index) = self.indices.remove(&id) else {
            return;
        };
        let tag = self.tags[index];
        let age = self.age(&tag);
        let c = self.class(&tag);
        self.classes[c].evictions[age as usize] += 1.0;
        if tag.explorer {
            self.explorer_budget = add_f32(self.explorer_budget, tag.size);
        }
        self.tags.swap_remove(index);
        if index < self.tags.len() {
            self.indices.insert(self.tags[index].id, index);
        }
    }

    fn reconfigure(&mut self) {
        for cl in &mut self.classes {
            for a in 0..MAX_AGE as usize {
                cl.hits[a] *= EWMA_DECAY;
                cl.evictions[a] *= EWMA_DECAY;
            }
        }
        self.adapt_age_coarsening();
        self.model_hit_density();
    }

    fn model_hit_density(&mut self) {
        let last = MAX_AGE as usize - 1;
        for cl in &mut self.classes {
            let mut total_events = cl.hits[last] + cl.evictions[last];
            let mut total_hits = cl.hits[last];
            let mut lifetime_unconditioned = total_events;
            for a in (0..last).rev() {
                total_hits += cl.hits[a];
                total_events += cl.hits[a] + cl.evictions[a];
                lifetime_unconditioned += total_events;
                cl.hit_densities[a] = if total_events as f64 > 1e-5 {
                    total_hits / lifetime_unconditioned
                } else {
                    0.0
                };
            }
        }
    }

    fn adapt_age_coarsening(&mut self) {
        self.ewma_num_objects *= EWMA_DECAY;
        self.ewma_num_objects_mass *= EWMA_DECAY;
        self.ewma_num_objects += self.sizes.len() as f32;
        self.ewma_num_objects_mass += 1.0;
        let num_objects = self.ewma_num_objects / self.ewma_num_objects_mass;
        let optimal = (1.0 * num_objects as f64
            / (AGE_COARSENING_ERROR_TOLERANCE * MAX_AGE as f32) as f64)
            as f32;
        if self.num_reconfigurations == 5 || self.num_reconfigurations == 25 {
            let mut log2: u32 = 1;
            while ((1u64 << log2) as f32) < optimal {
                log2 += 1;
            }
            let delta = log2 as i32 - self.age_coarsening_shift as i32;
            self.age_coarsening_shift = log2;
            self.ewma_num_objects *= 8.0;
            self.ewma_num_objects_mass *= 8.0;
            let max = MAX_AGE as usize;
            if delta < 0 {
                let d = (-delta) as u32;
                for cl in &mut self.classes {
                    for a in (max >> d)..max - 1 {
                        cl.hits[max - 1] += cl.hits[a];
                        cl.evictions[max - 1] += cl.evictions[a];
                    }
                    for a in (0..max - 1).rev() {
                        cl.hits[a] = cl.hits[a >> d] / (1u32 << d) as f32;
                        cl.evictions[a] = cl.evictions[a >> d] / (1u32 << d) as f32;
                    }
                }
            } else if delta > 0 {
                let d = delta as u32;
                for cl in &mut self.classes {
                    for a in 0..max >> d {
                        cl.hits[a] = cl.hits[a << d];
                        cl.evictions[a] = cl.evictions[a << d];
                        for i in 1..(1usize << d) {
                            cl.hits[a] += cl.hits[(a << d) + i];
                            cl.evictions[a] += cl.evictions[(a << d) + i];
                        }
                    }
                    for a in (max >> d)..max - 1 {
                        cl.hits[a] = 0.0;
                        cl.evictions[a] = 0.0;
                    }
                }
            }
        }
    }
}

impl Lhd {
    /// Evicts until `charge` more fits.
    fn make_room(&mut self, charge: u64, evicted: &mut Vec<u64>) {
        while self.occupied + charge > self.cap && !self.tags.is_empty() {
            let victim = self.rank();
            let size = self.sizes.remove(&victim).unwrap_or(0);
            self.occupied -= size;
            self.replaced(victim);
            evicted.push(victim);
        }
    }
}

impl Policy for Lhd {
    named!("lhd", cap);
    fn get(&mut self, a: Access, evicted: &mut Vec<u64>) -> bool {
        if let Some(size) = self.sizes.get_mut(&a.id) {
            let grew = *size < a.charge;
            if *size != a.charge {
                self.occupied = self.occupied - *size + a.charge;
                *size = a.charge;
            }
            self.update(a.id, a.charge);
            // libCacheSim takes the new size of a hit object and lets the
            // cache run over its capacity; here it evicts back under it.
            if grew {
                self.make_room(0, evicted);
            }
            return true;
        }
        if a.charge > self.cap {
            return false;
        }
        self.make_room(a.charge, evicted);
        self.sizes.insert(a.id, a.charge);
        self.update(a.id, a.charge);
        self.occupied += a.charge;
        false
    }
    held_in!(map sizes, occupied);
}
