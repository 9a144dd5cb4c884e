//! The RDS profile as a report: the paper's Table 3 row, a table per RDS
//! type and per instance (top N by pointer-chasing loads), and the data of
//! Figures 5–7, drawn as SVG.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use tramp_cachesim::plot::{Axis, lines_svg};

use crate::builder::{Builder, Counts, InstanceProfile, Shape};

/// The stability threshold t of the paper.
pub const RSF_THRESHOLD: f64 = 0.99;

/// Table 3's row.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub rds_types: usize,
    pub instances: usize,
    pub forward_edges: u64,
    pub backward_edges: u64,
    /// Edges per instance.
    pub average_size: f64,
    /// Lifetime as a percentage of the run, averaged over instances.
    pub average_lifetime_percent: f64,
    pub total_accesses: u64,
    /// Cycles per pointer-chasing load in the CPU-cache model.
    pub average_latency: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct TypeRow {
    pub rds_type: usize,
    /// Allocation sites (heap traces) or format ids (PTF) of the type.
    pub sites: Vec<u64>,
    pub instances: usize,
    pub nodes: u64,
    pub forward_edges: u64,
    pub backward_edges: u64,
    pub accesses: u64,
    /// Static instructions (sites) that create, traverse and free edges.
    pub create_pcs: Vec<u64>,
    pub traverse_pcs: Vec<u64>,
    pub free_pcs: Vec<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct InstanceRow {
    pub id: u64,
    pub rds_type: usize,
    pub nodes: u64,
    pub forward_edges: u64,
    pub backward_edges: u64,
    pub transient_edges: u64,
    pub lifetime_percent: f64,
    pub accesses: u64,
    pub average_latency: f64,
    pub rsf: Option<u64>,
    pub shape: Option<Shape>,
    pub chain_traversals: u64,
    pub sibling_traversals: u64,
    pub other_traversals: u64,
    pub alive_at_end: bool,
}

/// The whole profile.
#[derive(Clone, Debug, Serialize)]
pub struct RdsReport {
    pub summary: Summary,
    pub counts: Counts,
    pub types: Vec<TypeRow>,
    /// The top instances by pointer-chasing loads.
    pub instances: Vec<InstanceRow>,
    /// Figure 5: (normalized lifetime, fraction of instances ≤ it).
    pub lifetime_cdf: Vec<(f64, f64)>,
    /// Figure 6: (normalized time, live instances).
    pub live_over_time: Vec<(f64, u64)>,
    /// Figure 7: (RSF, fraction of pointer-chasing loads in instances with
    /// an RSF ≤ it).
    pub rsf_cdf: Vec<(f64, f64)>,
    /// Names of the sites and instructions above, where the trace says what
    /// code they are (a recorded program's module map): function (file:line).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub places: BTreeMap<u64, String>,
}

impl RdsReport {
    /// Names every site and instruction of the types that `name` knows:
    /// `name(number, true)` for an allocation site (or stack id),
    /// `name(address, false)` for an instruction that creates, traverses or
    /// frees edges.
    pub fn name_sites(&mut self, mut name: impl FnMut(u64, bool) -> Option<String>) {
        for t in &self.types {
            let sites = t.sites.iter().map(|a| (*a, true));
            let pcs = t
                .create_pcs
                .iter()
                .chain(&t.traverse_pcs)
                .chain(&t.free_pcs)
                .map(|a| (*a, false));
            for (a, is_site) in sites.chain(pcs) {
                if !self.places.contains_key(&a)
                    && let Some(n) = name(a, is_site)
                {
                    self.places.insert(a, n);
                }
            }
        }
    }

    fn place(&self, a: u64) -> String {
        self.places
            .get(&a)
            .cloned()
            .unwrap_or_else(|| format!("{a:#x}"))
    }

    /// Sums up a builder; `site_names` maps dense site numbers to the
    /// trace's site or format ids.
    pub fn new(b: &Builder, site_names: &[u64], top: usize) -> RdsReport {
        let all = b.instances();
        let (t0, t1) = b.span();
        let run = (t1 - t0).max(1);
        let ssg = b.ssg();
        // Types: SCC components of the static shape graph, numbered in
        // order of their smallest site.
        let mut type_of: BTreeMap<u32, usize> = BTreeMap::new();
        let mut type_sites: Vec<Vec<u64>> = Vec::new();
        for site in 0..ssg.len() as u32 {
            if ssg.is_scc(site) {
                let c = ssg.component(site);
                let next = type_of.len();
                let t = *type_of.entry(c).or_insert(next);
                if t == type_sites.len() {
                    type_sites.push(Vec::new());
                }
                type_sites[t].push(
                    site_names
                        .get(site as usize)
                        .copied()
                        .unwrap_or(site as u64),
                );
            }
        }
        let ty = |p: &InstanceProfile| -> usize {
            type_of
                .get(&ssg.component(p.site))
                .copied()
                .unwrap_or(usize::MAX)
        };
        let mut types: Vec<TypeRow> = type_sites
            .into_iter()
            .enumerate()
            .map(|(i, sites)| TypeRow {
                rds_type: i,
                sites,
                instances: 0,
                nodes: 0,
                forward_edges: 0,
                backward_edges: 0,
                accesses: 0,
                create_pcs: Vec::new(),
                traverse_pcs: Vec::new(),
                free_pcs: Vec::new(),
            })
            .collect();
        let mut pcs: Vec<[std::collections::BTreeSet<u64>; 3]> =
            vec![Default::default(); types.len()];
        for p in &all {
            let t = ty(p);
            if let Some(row) = types.get_mut(t) {
                row.instances += 1;
                row.nodes += p.nodes;
                row.forward_edges += p.forward_edges;
                row.backward_edges += p.backward_edges;
                row.accesses += p.accesses;
                pcs[t][0].extend(p.create_pcs.iter().copied().filter(|&x| x != 0));
                pcs[t][1].extend(p.traverse_pcs.iter().copied().filter(|&x| x != 0));
                pcs[t][2].extend(p.free_pcs.iter().copied().filter(|&x| x != 0));
            }
        }
        for (row, [c, tr, f]) in types.iter_mut().zip(pcs) {
            row.create_pcs = c.into_iter().collect();
            row.traverse_pcs = tr.into_iter().collect();
            row.free_pcs = f.into_iter().collect();
        }
        let lifetimes: Vec<f64> = all
            .iter()
            .map(|p| p.lifetime(t1) as f64 / run as f64)
            .collect();
        let accesses: u64 = all.iter().map(|p| p.accesses).sum();
        let latency: u64 = all.iter().map(|p| p.latency_cycles).sum();
        let fwd: u64 = all.iter().map(|p| p.forward_edges).sum();
        let bwd: u64 = all.iter().map(|p| p.backward_edges).sum();
        let n = all.len();
        let summary = Summary {
            rds_types: types.len(),
            instances: n,
            forward_edges: fwd,
            backward_edges: bwd,
            average_size: if n == 0 {
                0.0
            } else {
                (fwd + bwd) as f64 / n as f64
            },
            average_lifetime_percent: if n == 0 {
                0.0
            } else {
                100.0 * lifetimes.iter().sum::<f64>() / n as f64
            },
            total_accesses: accesses,
            average_latency: if accesses == 0 {
                0.0
            } else {
                latency as f64 / accesses as f64
            },
        };
        // Figure 5.
        let mut sorted = lifetimes.clone();
        sorted.sort_by(f64::total_cmp);
        let lifetime_cdf = sorted
            .iter()
            .enumerate()
            .map(|(i, &x)| (x, (i + 1) as f64 / n as f64))
            .collect();
        // Figure 6: live instances at 100 points of the run.
        let live_over_time = (0..=100)
            .map(|k| {
                let at = t0 + run * k / 100;
                let live = all
                    .iter()
                    .filter(|p| p.first_birth <= at && p.death.is_none_or(|d| d > at))
                    .count() as u64;
                (k as f64 / 100.0, live)
            })
            .collect();
        // Figure 7.
        let mut by_rsf: BTreeMap<u64, u64> = BTreeMap::new();
        for p in &all {
            if let Some(r) = p.rsf(RSF_THRESHOLD) {
                *by_rsf.entry(r).or_default() += p.accesses;
            }
        }
        let mut cum = 0;
        let rsf_cdf = (1..=10)
            .map(|r| {
                cum += by_rsf.get(&r).copied().unwrap_or(0);
                (
                    r as f64,
                    if accesses == 0 {
                        0.0
                    } else {
                        cum as f64 / accesses as f64
                    },
                )
            })
            .collect();
        let mut rows: Vec<InstanceRow> = all
            .iter()
            .zip(&lifetimes)
            .map(|(p, &l)| InstanceRow {
                id: p.id,
                rds_type: ty(p),
                nodes: p.nodes,
                forward_edges: p.forward_edges,
                backward_edges: p.backward_edges,
                transient_edges: p.transient_edges,
                lifetime_percent: 100.0 * l,
                accesses: p.accesses,
                average_latency: if p.accesses == 0 {
                    0.0
                } else {
                    p.latency_cycles as f64 / p.accesses as f64
                },
                rsf: p.rsf(RSF_THRESHOLD),
                shape: p.shape,
                chain_traversals: p.chain_traversals,
                sibling_traversals: p.sibling_traversals,
                other_traversals: p.other_traversals,
                alive_at_end: p.death.is_none(),
            })
            .collect();
        rows.sort_by(|a, b| b.accesses.cmp(&a.accesses).then(a.id.cmp(&b.id)));
        rows.truncate(top);
        RdsReport {
            summary,
            counts: b.counts.clone(),
            types,
            instances: rows,
            lifetime_cdf,
            live_over_time,
            rsf_cdf,
            places: BTreeMap::new(),
        }
    }

    /// Figures 5, 6 and 7 as (file name, SVG).
    pub fn figures(&self) -> Vec<(&'static str, String)> {
        let lin = |lo, hi| Axis { lo, hi, log: false };
        let max_live = self
            .live_over_time
            .iter()
            .map(|p| p.1)
            .max()
            .unwrap_or(0)
            .max(1);
        let live: Vec<(f64, f64)> = self
            .live_over_time
            .iter()
            .map(|&(x, n)| (x, n as f64 / max_live as f64))
            .collect();
        // The paper's axis runs 1 to 10; a trace whose factors pass it is
        // drawn to its own largest (every one above 10 drew a flat line).
        let rsf_hi = self
            .rsf_cdf
            .iter()
            .map(|p| p.0)
            .fold(10.0f64, f64::max)
            .ceil();
        vec![
            (
                "figure5-lifetimes.svg",
                lines_svg(
                    "Cumulative distribution of RDS lifetimes",
                    "lifetime (fraction of the run)",
                    "fraction of instances",
                    lin(0.0, 1.0),
                    &[("instances".to_string(), self.lifetime_cdf.clone())],
                ),
            ),
            (
                "figure6-live-instances.svg",
                lines_svg(
                    "Live RDS instances over time",
                    "time (fraction of the run)",
                    &format!("live instances (fraction of the maximum, {max_live})"),
                    lin(0.0, 1.0),
                    &[("live".to_string(), live)],
                ),
            ),
            (
                "figure7-rsf.svg",
                lines_svg(
                    "Cumulative distribution of the RDS stability factor",
                    "RSF (t = 0.99)",
                    "fraction of pointer-chasing loads",
                    lin(1.0, rsf_hi),
                    &[("loads".to_string(), self.rsf_cdf.clone())],
                ),
            ),
        ]
    }
}

impl fmt::Display for RdsReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.summary;
        writeln!(f, "RDS profile (Table 3)")?;
        writeln!(
            f,
            "  types {}, instances {}, forward edges {}, backward edges {}, average size {:.1} edges",
            s.rds_types, s.instances, s.forward_edges, s.backward_edges, s.average_size
        )?;
        writeln!(
            f,
            "  average lifetime {:.2}% of the run, pointer-chasing loads {}, average latency {:.2} cycles",
            s.average_lifetime_percent, s.total_accesses, s.average_latency
        )?;
        let c = &self.counts;
        write!(
            f,
            "  objects {} (freed {}), pointer stores {} ({} queued, {} joined later), traversals {} ({} in instances)",
            c.allocations,
            c.frees,
            c.edges_added,
            c.edges_queued,
            c.edges_merged_later,
            c.traversals,
            c.traversals_in_instances
        )?;
        if c.self_pointers > 0 {
            write!(f, ", self pointers {} (no edges)", c.self_pointers)?;
        }
        if c.stores_unchanged > 0 {
            write!(
                f,
                ", stores of the value held {} (no edges)",
                c.stores_unchanged
            )?;
        }
        writeln!(f)?;
        writeln!(f)?;
        writeln!(
            f,
            "{:>5} {:>9} {:>9} {:>9} {:>9} {:>10}  sites",
            "type", "instances", "nodes", "fwd", "bwd", "accesses"
        )?;
        for t in &self.types {
            let sites: Vec<String> = t.sites.iter().take(6).map(|x| self.place(*x)).collect();
            writeln!(
                f,
                "{:>5} {:>9} {:>9} {:>9} {:>9} {:>10}  {}",
                t.rds_type,
                t.instances,
                t.nodes,
                t.forward_edges,
                t.backward_edges,
                t.accesses,
                sites.join(if self.places.is_empty() { " " } else { ", " })
            )?;
        }
        if !self.places.is_empty() {
            // The code behind each type: what the paper lists per RDS.
            for t in &self.types {
                writeln!(f)?;
                writeln!(f, "type {}:", t.rds_type)?;
                for (what, pcs) in [
                    ("creates edges", &t.create_pcs),
                    ("traverses", &t.traverse_pcs),
                    ("frees", &t.free_pcs),
                ] {
                    if pcs.is_empty() {
                        continue;
                    }
                    // Instructions of one source line read the same: named
                    // once (issue 48: `ins (list.c:6), ins (list.c:6)`).
                    let mut all: Vec<String> = Vec::new();
                    for a in pcs {
                        let n = self.place(*a);
                        if !all.contains(&n) {
                            all.push(n);
                        }
                    }
                    let names: Vec<String> = all.iter().take(8).cloned().collect();
                    let more = if all.len() > 8 {
                        format!(" (+{} more)", all.len() - 8)
                    } else {
                        String::new()
                    };
                    writeln!(f, "  {what:<14} {}{more}", names.join(", "))?;
                }
            }
        }
        writeln!(f)?;
        writeln!(
            f,
            "{:>8} {:>5} {:>7} {:>7} {:>7} {:>9} {:>10} {:>8} {:>5} {:>7}  chain/sibling/other",
            "instance",
            "type",
            "nodes",
            "fwd",
            "bwd",
            "lifetime%",
            "accesses",
            "latency",
            "rsf",
            "shape"
        )?;
        for i in &self.instances {
            let shape = match i.shape {
                Some(Shape::List) => "list",
                Some(Shape::Tree) => "tree",
                Some(Shape::Dag) => "dag",
                Some(Shape::Cyclic) => "cyclic",
                None => "-",
            };
            let ty = if i.rds_type == usize::MAX {
                "-".to_string()
            } else {
                i.rds_type.to_string()
            };
            writeln!(
                f,
                "{:>8} {:>5} {:>7} {:>7} {:>7} {:>9.2} {:>10} {:>8.2} {:>5} {:>7}  {}/{}/{}",
                i.id,
                ty,
                i.nodes,
                i.forward_edges,
                i.backward_edges,
                i.lifetime_percent,
                i.accesses,
                i.average_latency,
                i.rsf.map_or("-".to_string(), |r| r.to_string()),
                shape,
                i.chain_traversals,
                i.sibling_traversals,
                i.other_traversals
            )?;
        }
        Ok(())
    }
}
