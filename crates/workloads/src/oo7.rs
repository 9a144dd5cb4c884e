//! An OO7 workload generator, the analogue of the PTF authors' AMPS
//! models: the OO7 schema (Carey, DeWitt, Naughton 1993) as format
//! objects, the database built inside `ts`/`te` brackets, then the named
//! operations — traversals T1, T2a/b/c, T3a/b/c, T6, queries Q1–Q8, and
//! the structural modifications insert and delete. Deterministic for a
//! seed. The modelling decisions (which fields each operation reads and
//! writes, how sets and extents are objects) are in docs/formats/ptf.md.

use std::collections::BTreeMap;

use tramp_ptf::event::{Event, FormatObject, NULL, Oid};
use tramp_ptf::{EventSink, PtfError};

use tramp_core::rng::SplitMix64;

/// The OO7 parameters this generator uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub name: &'static str,
    pub atomic_per_comp: usize,
    pub conn_per_atomic: usize,
    pub document_size: u64,
    pub manual_size: u64,
    pub comp_per_module: usize,
    pub assm_per_assm: usize,
    pub assm_levels: usize,
    pub comp_per_assm: usize,
    pub modules: usize,
}

impl Config {
    /// OO7's small database.
    pub fn small() -> Config {
        Config {
            name: "small",
            atomic_per_comp: 20,
            conn_per_atomic: 3,
            document_size: 2000,
            manual_size: 100_000,
            comp_per_module: 500,
            assm_per_assm: 3,
            assm_levels: 7,
            comp_per_assm: 3,
            modules: 1,
        }
    }

    /// OO7's medium database.
    pub fn medium() -> Config {
        Config {
            name: "medium",
            atomic_per_comp: 200,
            document_size: 20_000,
            manual_size: 1_000_000,
            ..Config::small()
        }
    }

    pub fn named(name: &str) -> Option<Config> {
        match name {
            "small" => Some(Config::small()),
            "medium" => Some(Config::medium()),
            _ => None,
        }
    }
}

/// The operations, by their OO7 names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    T1,
    T2a,
    T2b,
    T2c,
    T3a,
    T3b,
    T3c,
    T6,
    Q1,
    Q2,
    Q3,
    Q4,
    Q5,
    Q6,
    Q7,
    Q8,
    Insert,
    Delete,
}

impl Op {
    pub const ALL: [(Op, &'static str); 18] = [
        (Op::T1, "t1"),
        (Op::T2a, "t2a"),
        (Op::T2b, "t2b"),
        (Op::T2c, "t2c"),
        (Op::T3a, "t3a"),
        (Op::T3b, "t3b"),
        (Op::T3c, "t3c"),
        (Op::T6, "t6"),
        (Op::Q1, "q1"),
        (Op::Q2, "q2"),
        (Op::Q3, "q3"),
        (Op::Q4, "q4"),
        (Op::Q5, "q5"),
        (Op::Q6, "q6"),
        (Op::Q7, "q7"),
        (Op::Q8, "q8"),
        (Op::Insert, "insert"),
        (Op::Delete, "delete"),
    ];

    pub fn parse(s: &str) -> Option<Op> {
        Op::ALL.iter().find(|(_, n)| *n == s).map(|(o, _)| *o)
    }

    /// A comma-separated list of operations in order (`all` for every
    /// one; empty for none); `delete` needs an `insert` before it.
    pub fn parse_list(list: &str) -> Result<Vec<Op>, OpsError> {
        let mut ops = Vec::new();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if name == "all" {
                ops.extend(Op::ALL.iter().map(|(o, _)| *o));
                continue;
            }
            ops.push(Op::parse(name).ok_or_else(|| {
                let known: Vec<&str> = Op::ALL.iter().map(|(_, n)| *n).collect();
                OpsError::Unknown {
                    name: name.to_string(),
                    known: known.join(", "),
                }
            })?);
        }
        if let Some(d) = ops.iter().position(|o| *o == Op::Delete)
            && !ops[..d].contains(&Op::Insert)
        {
            return Err(OpsError::DeleteFirst);
        }
        Ok(ops)
    }

    pub fn name(self) -> &'static str {
        Op::ALL
            .iter()
            .find(|(o, _)| *o == self)
            .map_or("?", |(_, n)| n)
    }
}

// Format object ids of the schema (the first user OIds).
const DESIGN_OBJ: Oid = 41;
const ATOMIC_PART: Oid = 42;
const CONNECTION: Oid = 43;
const COMPOSITE_PART: Oid = 44;
const DOCUMENT: Oid = 45;
const MANUAL: Oid = 46;
const ASSEMBLY: Oid = 47;
const COMPLEX_ASSEMBLY: Oid = 48;
const BASE_ASSEMBLY: Oid = 49;
const MODULE: Oid = 50;
const SUPER_ROOT: Oid = 51;
const CHAR: Oid = 10;
const INT: Oid = 11;
const CHAR_ARRAY: Oid = 30;

// Data member positions (1-based; super class members first, arrays after
// the data members) and edge numbers.
const P_ID: u64 = 1;
const P_BUILD_DATE: u64 = 2;
const P_AP_X: u64 = 3;
const P_AP_Y: u64 = 4;
const P_AP_DOC_ID: u64 = 5;
const P_AP_TYPE: i64 = 6;
const P_DESIGN_TYPE: i64 = 3;
const P_CONN_LENGTH: u64 = 1;
const P_CONN_TYPE: i64 = 2;
const P_DOC_ID: u64 = 1;
const P_DOC_TITLE: i64 = 2;
const E_AP_TO: u64 = 0;
const E_AP_FROM: u64 = 1;
const E_AP_PART_OF: u64 = 2;
const E_CONN_FROM: u64 = 0;
const E_CONN_TO: u64 = 1;
const E_CP_DOC: u64 = 0;
const E_CP_USED_PRIV: u64 = 1;
const E_CP_PARTS: u64 = 3;
const E_CP_ROOT: u64 = 4;
const E_DOC_PART: u64 = 0;
const E_DOC_TEXT: u64 = 1;
const E_ASM_SUPER: u64 = 0;
const E_ASM_MODULE: u64 = 1;
const E_CA_SUBS: u64 = 2;
const E_BA_PRIV: u64 = 2;
const E_MOD_MAN: u64 = 0;
const E_MOD_ROOT: u64 = 1;
const E_MOD_EXTENT: u64 = 2;

/// Marks a base assembly's slot whose composite part was deleted.
const GONE: usize = usize::MAX;

const MIN_ATOMIC_DATE: u64 = 1000;
const MAX_ATOMIC_DATE: u64 = 1999;

struct AtomicPart {
    oid: Oid,
    to_set: Oid,
    from_set: Oid,
    build_date: u64,
    /// (connection, target atomic part index within the composite part)
    conns: Vec<(Oid, usize)>,
}

struct CompositePart {
    oid: Oid,
    doc: Oid,
    doc_text: Oid,
    parts_set: Oid,
    used_set: Oid,
    atoms: Vec<AtomicPart>,
    /// Base assemblies that use it (indices into `bases`).
    used_in: Vec<usize>,
}

struct BaseAssembly {
    oid: Oid,
    set: Oid,
    /// Composite part indices; `GONE` where a deleted one was.
    comps: Vec<usize>,
}

struct ComplexAssembly {
    oid: Oid,
    set: Oid,
    /// Children: complex assembly indices, or base assembly indices at
    /// the last level.
    children: Vec<usize>,
    children_are_base: bool,
}

struct Module {
    oid: Oid,
    extent: Oid,
    design_root: usize,
}

/// Why a list of operations is not one.
#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    #[error("unknown operation `{name}` (known: {known}, all)")]
    Unknown { name: String, known: String },
    #[error("`delete` removes what an earlier `insert` added: put insert before it")]
    DeleteFirst,
}

/// The note a generated trace carries: configuration, seed, operations.
pub fn note(cfg: &Config, seed: u64, ops: &[Op]) -> String {
    let names: Vec<&str> = ops.iter().map(|o| o.name()).collect();
    format!(
        "OO7 {} seed {} ops {}",
        cfg.name,
        seed,
        if names.is_empty() {
            "(build only)".to_string()
        } else {
            names.join(",")
        }
    )
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} events; {} composite parts, {} atomic parts, {} connections, {} base and {} complex assemblies",
            self.events,
            self.composite_parts,
            self.atomic_parts,
            self.connections,
            self.base_assemblies,
            self.complex_assemblies
        )
    }
}

/// Counts of what the generator built.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub modules: u64,
    pub complex_assemblies: u64,
    pub base_assemblies: u64,
    pub composite_parts: u64,
    pub atomic_parts: u64,
    pub connections: u64,
    pub documents: u64,
    pub events: u64,
}

/// The generator: it writes events to a sink as it goes.
pub struct Generator<'a> {
    cfg: Config,
    rng: SplitMix64,
    out: &'a mut dyn EventSink,
    next_oid: Oid,
    set_formats: BTreeMap<u64, Oid>,
    root: Oid,
    modules: Vec<Module>,
    complex: Vec<ComplexAssembly>,
    bases: Vec<BaseAssembly>,
    comps: Vec<CompositePart>,
    /// Composite parts made by `insert` and not yet deleted.
    inserted: Vec<usize>,
    pub counts: Counts,
}

impl<'a> Generator<'a> {
    pub fn new(cfg: Config, seed: u64, out: &'a mut dyn EventSink) -> Self {
        Generator {
            cfg,
            rng: SplitMix64::new(seed),
            out,
            next_oid: SUPER_ROOT + 1,
            set_formats: BTreeMap::new(),
            root: NULL,
            modules: Vec::new(),
            complex: Vec::new(),
            bases: Vec::new(),
            comps: Vec::new(),
            inserted: Vec::new(),
            counts: Counts::default(),
        }
    }

    fn emit(&mut self, e: Event) -> Result<(), PtfError> {
        self.counts.events += 1;
        self.out.write_event(&e)
    }

    fn oid(&mut self) -> Oid {
        let o = self.next_oid;
        self.next_oid += 1;
        o
    }

    fn fo(
        &mut self,
        id: Oid,
        super_id: Oid,
        pointers: u64,
        data: &[Oid],
        arrays: &[(Oid, u64)],
        name: &str,
    ) -> Result<(), PtfError> {
        self.emit(Event::FormatObject(FormatObject {
            id,
            super_id,
            pointers,
            data: data.to_vec(),
            arrays: arrays.to_vec(),
            name: name.into(),
        }))
    }

    /// The format of a pointer set of `n` elements (defined on first use).
    fn set_format(&mut self, n: u64) -> Result<Oid, PtfError> {
        if let Some(f) = self.set_formats.get(&n) {
            return Ok(*f);
        }
        let f = self.oid();
        self.fo(f, NULL, n, &[], &[], &format!("Set<{n}>"))?;
        self.set_formats.insert(n, f);
        Ok(f)
    }

    fn co(&mut self, format: Oid) -> Result<Oid, PtfError> {
        let oid = self.oid();
        self.emit(Event::CreateObject { format, oid })?;
        Ok(oid)
    }

    /// A pointer set object holding `items`.
    fn new_set(&mut self, items: &[Oid]) -> Result<Oid, PtfError> {
        let f = self.set_format(items.len() as u64)?;
        let set = self.co(f)?;
        for (i, it) in items.iter().enumerate() {
            self.ew(f, set, i as u64, *it)?;
        }
        Ok(set)
    }

    fn set_fmt_of(&self, n: usize) -> Oid {
        self.set_formats[&(n as u64)]
    }

    fn ew(&mut self, format: Oid, from: Oid, edge: u64, to: Oid) -> Result<(), PtfError> {
        self.emit(Event::EdgeWrite {
            format,
            from,
            edge,
            to,
        })
    }

    fn er(&mut self, format: Oid, from: Oid, edge: u64) -> Result<(), PtfError> {
        self.emit(Event::EdgeRead { format, from, edge })
    }

    fn dr(&mut self, format: Oid, oid: Oid, offset: u64) -> Result<(), PtfError> {
        self.emit(Event::DataRead {
            format,
            oid,
            offset,
        })
    }

    fn dw(&mut self, format: Oid, oid: Oid, offset: u64) -> Result<(), PtfError> {
        self.emit(Event::DataWrite {
            format,
            oid,
            offset,
        })
    }

    fn adw(&mut self, format: Oid, oid: Oid, offset: i64, length: u64) -> Result<(), PtfError> {
        self.emit(Event::ArrayDataWrite {
            format,
            oid,
            offset,
            index: 0,
            length,
        })
    }

    fn adr(&mut self, format: Oid, oid: Oid, offset: i64, length: u64) -> Result<(), PtfError> {
        self.emit(Event::ArrayDataRead {
            format,
            oid,
            offset,
            index: 0,
            length,
        })
    }

    /// Writes the schema's format objects.
    fn schema(&mut self) -> Result<(), PtfError> {
        self.fo(
            DESIGN_OBJ,
            NULL,
            0,
            &[INT, INT],
            &[(CHAR_ARRAY, 10)],
            "DesignObject",
        )?;
        self.fo(
            ATOMIC_PART,
            DESIGN_OBJ,
            3,
            &[INT, INT, INT],
            &[],
            "AtomicPart",
        )?;
        self.fo(
            CONNECTION,
            NULL,
            2,
            &[INT],
            &[(CHAR_ARRAY, 10)],
            "Connection",
        )?;
        self.fo(COMPOSITE_PART, DESIGN_OBJ, 5, &[], &[], "CompositePart")?;
        self.fo(DOCUMENT, NULL, 2, &[INT], &[(CHAR_ARRAY, 40)], "Document")?;
        self.fo(MANUAL, NULL, 2, &[INT], &[(CHAR_ARRAY, 40)], "Manual")?;
        self.fo(ASSEMBLY, DESIGN_OBJ, 2, &[], &[], "Assembly")?;
        self.fo(COMPLEX_ASSEMBLY, ASSEMBLY, 1, &[], &[], "ComplexAssembly")?;
        self.fo(BASE_ASSEMBLY, ASSEMBLY, 2, &[], &[], "BaseAssembly")?;
        self.fo(MODULE, DESIGN_OBJ, 3, &[], &[], "Module")?;
        let m = self.cfg.modules as u64;
        self.fo(SUPER_ROOT, NULL, m, &[], &[], "SuperRoot")
    }

    /// Data writes that initialise a design object's id, date and type.
    fn init_design(&mut self, format: Oid, oid: Oid, type_pos: i64) -> Result<(), PtfError> {
        self.dw(format, oid, P_ID)?;
        self.dw(format, oid, P_BUILD_DATE)?;
        self.adw(CHAR_ARRAY, oid, type_pos, 10)
    }

    /// Builds one composite part with its document, atomic parts and
    /// connections, inside a bracket; returns its index.
    fn composite(&mut self, extent: Option<(Oid, u64)>) -> Result<usize, PtfError> {
        let cfg = self.cfg.clone();
        self.emit(Event::NoGcStart)?;
        let cp = self.co(COMPOSITE_PART)?;
        self.init_design(COMPOSITE_PART, cp, P_DESIGN_TYPE)?;
        if let Some((ext, slot)) = extent {
            let f = self.set_fmt_of(cfg.comp_per_module);
            self.ew(f, ext, slot, cp)?;
        }
        let doc = self.co(DOCUMENT)?;
        self.dw(DOCUMENT, doc, P_DOC_ID)?;
        self.adw(CHAR_ARRAY, doc, P_DOC_TITLE, 40)?;
        self.ew(DOCUMENT, doc, E_DOC_PART, cp)?;
        self.ew(COMPOSITE_PART, cp, E_CP_DOC, doc)?;
        let text = self.oid();
        self.emit(Event::CreateArrayObject {
            format: CHAR,
            oid: text,
            container: doc,
            elements: cfg.document_size,
        })?;
        self.ew(DOCUMENT, doc, E_DOC_TEXT, text)?;
        self.adw(CHAR, text, -1, cfg.document_size)?;
        self.counts.documents += 1;
        // Atomic parts.
        let n = cfg.atomic_per_comp;
        let parts_fmt = self.set_format(n as u64)?;
        let parts_set = self.co(parts_fmt)?;
        self.ew(COMPOSITE_PART, cp, E_CP_PARTS, parts_set)?;
        let to_fmt = self.set_format(cfg.conn_per_atomic as u64)?;
        let mut atoms = Vec::with_capacity(n);
        for j in 0..n {
            let ap = self.co(ATOMIC_PART)?;
            self.dw(ATOMIC_PART, ap, P_ID)?;
            self.dw(ATOMIC_PART, ap, P_BUILD_DATE)?;
            self.dw(ATOMIC_PART, ap, P_AP_X)?;
            self.dw(ATOMIC_PART, ap, P_AP_Y)?;
            self.dw(ATOMIC_PART, ap, P_AP_DOC_ID)?;
            self.adw(CHAR_ARRAY, ap, P_AP_TYPE, 10)?;
            self.ew(parts_fmt, parts_set, j as u64, ap)?;
            self.ew(ATOMIC_PART, ap, E_AP_PART_OF, cp)?;
            let to_set = self.co(to_fmt)?;
            self.ew(ATOMIC_PART, ap, E_AP_TO, to_set)?;
            let span = MAX_ATOMIC_DATE - MIN_ATOMIC_DATE + 1;
            let build_date = MIN_ATOMIC_DATE + self.rng.next_u64() % span;
            atoms.push(AtomicPart {
                oid: ap,
                to_set,
                from_set: NULL,
                build_date,
                conns: Vec::new(),
            });
        }
        self.ew(COMPOSITE_PART, cp, E_CP_ROOT, atoms[0].oid)?;
        // Connections: the first closes a ring (the graph is connected),
        // the others go to random parts of the same composite part.
        let mut incoming: Vec<Vec<Oid>> = vec![Vec::new(); n];
        for j in 0..n {
            for k in 0..cfg.conn_per_atomic {
                let target = if k == 0 {
                    (j + 1) % n
                } else {
                    self.rng.index(n)
                };
                let c = self.co(CONNECTION)?;
                self.dw(CONNECTION, c, P_CONN_LENGTH)?;
                self.adw(CHAR_ARRAY, c, P_CONN_TYPE, 10)?;
                self.ew(CONNECTION, c, E_CONN_FROM, atoms[j].oid)?;
                self.ew(CONNECTION, c, E_CONN_TO, atoms[target].oid)?;
                self.ew(to_fmt, atoms[j].to_set, k as u64, c)?;
                atoms[j].conns.push((c, target));
                incoming[target].push(c);
                self.counts.connections += 1;
            }
        }
        for (j, inc) in incoming.iter().enumerate() {
            let set = self.new_set(inc)?;
            self.ew(ATOMIC_PART, atoms[j].oid, E_AP_FROM, set)?;
            atoms[j].from_set = set;
        }
        self.emit(Event::NoGcEnd)?;
        self.counts.composite_parts += 1;
        self.counts.atomic_parts += n as u64;
        self.comps.push(CompositePart {
            oid: cp,
            doc,
            doc_text: text,
            parts_set,
            used_set: NULL,
            atoms,
            used_in: Vec::new(),
        });
        Ok(self.comps.len() - 1)
    }

    /// Builds the database: schema, super root, modules with their
    /// manuals, composite parts and assembly hierarchies.
    pub fn build(&mut self) -> Result<(), PtfError> {
        let cfg = self.cfg.clone();
        self.schema()?;
        self.emit(Event::NoGcStart)?;
        self.root = self.co(SUPER_ROOT)?;
        self.emit(Event::SetRoot {
            format: SUPER_ROOT,
            oid: self.root,
        })?;
        self.emit(Event::NoGcEnd)?;
        for m in 0..cfg.modules {
            self.emit(Event::NoGcStart)?;
            let module = self.co(MODULE)?;
            self.init_design(MODULE, module, P_DESIGN_TYPE)?;
            self.ew(SUPER_ROOT, self.root, m as u64, module)?;
            let man = self.co(MANUAL)?;
            self.dw(MANUAL, man, P_DOC_ID)?;
            self.adw(CHAR_ARRAY, man, P_DOC_TITLE, 40)?;
            self.ew(MANUAL, man, 0, module)?;
            self.ew(MODULE, module, E_MOD_MAN, man)?;
            let text = self.oid();
            self.emit(Event::CreateArrayObject {
                format: CHAR,
                oid: text,
                container: man,
                elements: cfg.manual_size,
            })?;
            self.ew(MANUAL, man, 1, text)?;
            self.adw(CHAR, text, -1, cfg.manual_size)?;
            let ext_fmt = self.set_format(cfg.comp_per_module as u64)?;
            let extent = self.co(ext_fmt)?;
            self.ew(MODULE, module, E_MOD_EXTENT, extent)?;
            self.emit(Event::NoGcEnd)?;
            self.counts.modules += 1;
            let first_comp = self.comps.len();
            for i in 0..cfg.comp_per_module {
                self.composite(Some((extent, i as u64)))?;
            }
            let module_comps: Vec<usize> = (first_comp..self.comps.len()).collect();
            let root = self.assemblies(module, &module_comps)?;
            self.modules.push(Module {
                oid: module,
                extent,
                design_root: root,
            });
        }
        Ok(())
    }

    /// The assembly hierarchy of a module, level by level from the design
    /// root, each complex assembly with its children in one bracket; base
    /// assemblies pick private composite parts at random.
    fn assemblies(&mut self, module: Oid, comps: &[usize]) -> Result<usize, PtfError> {
        let cfg = self.cfg.clone();
        self.emit(Event::NoGcStart)?;
        let root = self.co(COMPLEX_ASSEMBLY)?;
        self.init_design(COMPLEX_ASSEMBLY, root, P_DESIGN_TYPE)?;
        self.ew(COMPLEX_ASSEMBLY, root, E_ASM_MODULE, module)?;
        self.ew(MODULE, module, E_MOD_ROOT, root)?;
        self.emit(Event::NoGcEnd)?;
        self.counts.complex_assemblies += 1;
        self.complex.push(ComplexAssembly {
            oid: root,
            set: NULL,
            children: Vec::new(),
            children_are_base: false,
        });
        let root_idx = self.complex.len() - 1;
        let mut level = vec![root_idx];
        for depth in 2..=cfg.assm_levels {
            let base = depth == cfg.assm_levels;
            let mut next = Vec::new();
            for &parent in &level {
                self.emit(Event::NoGcStart)?;
                let p = self.complex[parent].oid;
                let mut kids = Vec::new();
                let mut kid_oids = Vec::new();
                for _ in 0..cfg.assm_per_assm {
                    let format = if base {
                        BASE_ASSEMBLY
                    } else {
                        COMPLEX_ASSEMBLY
                    };
                    let a = self.co(format)?;
                    self.init_design(format, a, P_DESIGN_TYPE)?;
                    self.ew(format, a, E_ASM_SUPER, p)?;
                    self.ew(format, a, E_ASM_MODULE, module)?;
                    kid_oids.push(a);
                    if base {
                        let mut picks = Vec::new();
                        for _ in 0..cfg.comp_per_assm {
                            picks.push(comps[self.rng.index(comps.len())]);
                        }
                        let items: Vec<Oid> = picks.iter().map(|c| self.comps[*c].oid).collect();
                        let set = self.new_set(&items)?;
                        self.ew(BASE_ASSEMBLY, a, E_BA_PRIV, set)?;
                        self.bases.push(BaseAssembly {
                            oid: a,
                            set,
                            comps: picks.clone(),
                        });
                        let b = self.bases.len() - 1;
                        for c in picks {
                            self.comps[c].used_in.push(b);
                        }
                        self.counts.base_assemblies += 1;
                        kids.push(b);
                    } else {
                        self.complex.push(ComplexAssembly {
                            oid: a,
                            set: NULL,
                            children: Vec::new(),
                            children_are_base: false,
                        });
                        self.counts.complex_assemblies += 1;
                        kids.push(self.complex.len() - 1);
                        next.push(self.complex.len() - 1);
                    }
                }
                let set = self.new_set(&kid_oids)?;
                self.ew(COMPLEX_ASSEMBLY, p, E_CA_SUBS, set)?;
                let ca = &mut self.complex[parent];
                ca.set = set;
                ca.children = kids;
                ca.children_are_base = base;
                self.emit(Event::NoGcEnd)?;
            }
            level = next;
        }
        // Each composite part's list of the base assemblies using it.
        self.emit(Event::NoGcStart)?;
        for &c in comps {
            let items: Vec<Oid> = self.comps[c]
                .used_in
                .iter()
                .map(|b| self.bases[*b].oid)
                .collect();
            let set = self.new_set(&items)?;
            self.ew(COMPOSITE_PART, self.comps[c].oid, E_CP_USED_PRIV, set)?;
            self.comps[c].used_set = set;
        }
        self.emit(Event::NoGcEnd)?;
        Ok(root_idx)
    }

    /// `gr` and the edge from the super root to module `m`.
    fn enter(&mut self, m: usize) -> Result<(), PtfError> {
        self.emit(Event::GetRoot)?;
        self.er(SUPER_ROOT, self.root, m as u64)
    }

    /// Every base assembly in hierarchy order (edge reads included).
    fn walk_assemblies(
        &mut self,
        m: usize,
        on_base: &mut dyn FnMut(&mut Self, usize) -> Result<(), PtfError>,
        on_complex: &mut dyn FnMut(&mut Self, usize) -> Result<(), PtfError>,
    ) -> Result<(), PtfError> {
        let module = self.modules[m].oid;
        self.er(MODULE, module, E_MOD_ROOT)?;
        let mut stack = vec![self.modules[m].design_root];
        while let Some(ci) = stack.pop() {
            let (oid, set, kids, base) = {
                let c = &self.complex[ci];
                (c.oid, c.set, c.children.clone(), c.children_are_base)
            };
            on_complex(self, ci)?;
            self.er(COMPLEX_ASSEMBLY, oid, E_CA_SUBS)?;
            let f = self.set_fmt_of(kids.len());
            for (k, kid) in kids.iter().enumerate() {
                self.er(f, set, k as u64)?;
                if base {
                    on_base(self, *kid)?;
                }
            }
            if !base {
                stack.extend(kids.iter().rev());
            }
        }
        Ok(())
    }

    /// Depth-first search over a composite part's atomic parts from its
    /// root part; `visit` is called once per atomic part.
    fn dfs(
        &mut self,
        c: usize,
        visit: &mut dyn FnMut(&mut Self, Oid) -> Result<(), PtfError>,
    ) -> Result<(), PtfError> {
        let cp = self.comps[c].oid;
        self.er(COMPOSITE_PART, cp, E_CP_ROOT)?;
        let n = self.comps[c].atoms.len();
        let mut seen = vec![false; n];
        let mut stack = vec![0usize];
        let to_fmt = self.set_fmt_of(self.cfg.conn_per_atomic);
        while let Some(j) = stack.pop() {
            if seen[j] {
                continue;
            }
            seen[j] = true;
            let (ap, to_set, conns) = {
                let a = &self.comps[c].atoms[j];
                (a.oid, a.to_set, a.conns.clone())
            };
            visit(self, ap)?;
            self.er(ATOMIC_PART, ap, E_AP_TO)?;
            for (k, (conn, target)) in conns.iter().enumerate().rev() {
                self.er(to_fmt, to_set, k as u64)?;
                self.er(CONNECTION, *conn, E_CONN_TO)?;
                if !seen[*target] {
                    stack.push(*target);
                }
            }
        }
        Ok(())
    }

    /// Traversals T1/T2/T3/T6: `update` says how each visited atomic part
    /// is updated (or nothing), `all` whether every part or only the root.
    fn traverse(&mut self, op: Op) -> Result<(), PtfError> {
        for m in 0..self.modules.len() {
            self.enter(m)?;
            let mut on_base = |g: &mut Self, b: usize| -> Result<(), PtfError> {
                let (oid, set, comps) = (g.bases[b].oid, g.bases[b].set, g.bases[b].comps.clone());
                g.er(BASE_ASSEMBLY, oid, E_BA_PRIV)?;
                let f = g.set_fmt_of(comps.len());
                for (k, c) in comps.iter().enumerate() {
                    g.er(f, set, k as u64)?;
                    if *c == GONE {
                        continue;
                    }
                    if op == Op::T6 {
                        let cp = g.comps[*c].oid;
                        g.er(COMPOSITE_PART, cp, E_CP_ROOT)?;
                        let root = g.comps[*c].atoms[0].oid;
                        g.dr(ATOMIC_PART, root, P_ID)?;
                        continue;
                    }
                    let mut first = true;
                    g.dfs(*c, &mut |g, ap| {
                        g.dr(ATOMIC_PART, ap, P_ID)?;
                        let touch = match op {
                            Op::T2a | Op::T3a => first,
                            Op::T2b | Op::T2c | Op::T3b | Op::T3c => true,
                            _ => false,
                        };
                        first = false;
                        if !touch {
                            return Ok(());
                        }
                        let times = if matches!(op, Op::T2c | Op::T3c) {
                            4
                        } else {
                            1
                        };
                        for _ in 0..times {
                            if matches!(op, Op::T2a | Op::T2b | Op::T2c) {
                                // Swap x and y.
                                g.dr(ATOMIC_PART, ap, P_AP_X)?;
                                g.dr(ATOMIC_PART, ap, P_AP_Y)?;
                                g.dw(ATOMIC_PART, ap, P_AP_X)?;
                                g.dw(ATOMIC_PART, ap, P_AP_Y)?;
                            } else {
                                // The indexed build date, incremented.
                                g.dr(ATOMIC_PART, ap, P_BUILD_DATE)?;
                                g.dw(ATOMIC_PART, ap, P_BUILD_DATE)?;
                            }
                        }
                        Ok(())
                    })?;
                }
                Ok(())
            };
            self.walk_assemblies(m, &mut on_base, &mut |_, _| Ok(()))?;
        }
        Ok(())
    }

    /// All atomic parts (in composite part order) of live composite parts.
    fn live_atoms(&self) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        for (c, cp) in self.comps.iter().enumerate() {
            if cp.oid == NULL {
                continue;
            }
            for j in 0..cp.atoms.len() {
                v.push((c, j));
            }
        }
        v
    }

    fn query(&mut self, op: Op) -> Result<(), PtfError> {
        self.enter(0)?;
        match op {
            Op::Q1 => {
                // 10 random atomic parts looked up by id.
                let atoms = self.live_atoms();
                for _ in 0..10 {
                    let (c, j) = atoms[self.rng.index(atoms.len())];
                    let ap = self.comps[c].atoms[j].oid;
                    self.dr(ATOMIC_PART, ap, P_ID)?;
                }
            }
            Op::Q2 | Op::Q3 | Op::Q7 => {
                // Range on the (indexed) build date: the last 1 %, 10 %, all.
                let span = MAX_ATOMIC_DATE - MIN_ATOMIC_DATE + 1;
                let from = match op {
                    Op::Q2 => MAX_ATOMIC_DATE + 1 - span / 100,
                    Op::Q3 => MAX_ATOMIC_DATE + 1 - span / 10,
                    _ => MIN_ATOMIC_DATE,
                };
                for (c, j) in self.live_atoms() {
                    let a = &self.comps[c].atoms[j];
                    if a.build_date >= from {
                        let ap = a.oid;
                        self.dr(ATOMIC_PART, ap, P_BUILD_DATE)?;
                        self.dr(ATOMIC_PART, ap, P_ID)?;
                    }
                }
            }
            Op::Q4 => {
                // 100 random documents by title; the base assemblies using
                // their composite parts.
                let live: Vec<usize> = (0..self.comps.len())
                    .filter(|c| self.comps[*c].oid != NULL)
                    .collect();
                for _ in 0..100 {
                    let c = live[self.rng.index(live.len())];
                    let (doc, cp, used_set, used) = {
                        let x = &self.comps[c];
                        (x.doc, x.oid, x.used_set, x.used_in.clone())
                    };
                    self.adr(CHAR_ARRAY, doc, P_DOC_TITLE, 40)?;
                    self.er(DOCUMENT, doc, E_DOC_PART)?;
                    self.er(COMPOSITE_PART, cp, E_CP_USED_PRIV)?;
                    if used.is_empty() {
                        continue;
                    }
                    let f = self.set_fmt_of(used.len());
                    for (k, b) in used.iter().enumerate() {
                        self.er(f, used_set, k as u64)?;
                        let ba = self.bases[*b].oid;
                        self.dr(BASE_ASSEMBLY, ba, P_ID)?;
                    }
                }
            }
            Op::Q5 | Op::Q6 => {
                // Base assemblies (Q6: and complex ones) with a component
                // built later than themselves.
                let q6 = op == Op::Q6;
                let mut on_base = |g: &mut Self, b: usize| -> Result<(), PtfError> {
                    let (oid, set, comps) =
                        (g.bases[b].oid, g.bases[b].set, g.bases[b].comps.clone());
                    g.dr(BASE_ASSEMBLY, oid, P_BUILD_DATE)?;
                    g.er(BASE_ASSEMBLY, oid, E_BA_PRIV)?;
                    let f = g.set_fmt_of(comps.len());
                    for (k, c) in comps.iter().enumerate() {
                        g.er(f, set, k as u64)?;
                        if *c == GONE {
                            continue;
                        }
                        let cp = g.comps[*c].oid;
                        g.dr(COMPOSITE_PART, cp, P_BUILD_DATE)?;
                    }
                    Ok(())
                };
                let mut on_complex = |g: &mut Self, ci: usize| -> Result<(), PtfError> {
                    if q6 {
                        let oid = g.complex[ci].oid;
                        g.dr(COMPLEX_ASSEMBLY, oid, P_BUILD_DATE)?;
                    }
                    Ok(())
                };
                self.walk_assemblies(0, &mut on_base, &mut on_complex)?;
            }
            Op::Q8 => {
                // Join atomic parts with documents on docId = document id,
                // documents found through the composite part extent.
                for (c, j) in self.live_atoms() {
                    let ap = self.comps[c].atoms[j].oid;
                    self.dr(ATOMIC_PART, ap, P_AP_DOC_ID)?;
                }
                let (module, extent) = (self.modules[0].oid, self.modules[0].extent);
                self.er(MODULE, module, E_MOD_EXTENT)?;
                let f = self.set_fmt_of(self.cfg.comp_per_module);
                for k in 0..self.cfg.comp_per_module {
                    self.er(f, extent, k as u64)?;
                    let (cp, doc) = (self.comps[k].oid, self.comps[k].doc);
                    self.er(COMPOSITE_PART, cp, E_CP_DOC)?;
                    self.dr(DOCUMENT, doc, P_DOC_ID)?;
                }
            }
            _ => unreachable!("not a query"),
        }
        Ok(())
    }

    /// OO7's insert: five new composite parts, each installed in two
    /// randomly chosen base assemblies (ten in all), whose component sets
    /// grow by one: a new set object replaces the old, which is deleted.
    fn insert(&mut self) -> Result<(), PtfError> {
        self.enter(0)?;
        for _ in 0..5 {
            // The new part is unreachable until linked: one bracket
            // around both (the composite's own bracket nests inside).
            self.emit(Event::NoGcStart)?;
            let c = self.composite(None)?;
            self.inserted.push(c);
            let mut users = Vec::new();
            for _ in 0..2 {
                let b = self.rng.index(self.bases.len());
                let (ba, old, mut comps) = (
                    self.bases[b].oid,
                    self.bases[b].set,
                    self.bases[b].comps.clone(),
                );
                let f_old = self.set_fmt_of(comps.len());
                let mut items = Vec::new();
                for (k, x) in comps.iter().enumerate() {
                    self.er(f_old, old, k as u64)?;
                    items.push(if *x == GONE { NULL } else { self.comps[*x].oid });
                }
                items.push(self.comps[c].oid);
                let set = self.new_set(&items)?;
                self.ew(BASE_ASSEMBLY, ba, E_BA_PRIV, set)?;
                self.emit(Event::DeleteObject {
                    format: f_old,
                    oid: old,
                })?;
                comps.push(c);
                self.bases[b].set = set;
                self.bases[b].comps = comps;
                users.push(b);
            }
            let items: Vec<Oid> = users.iter().map(|b| self.bases[*b].oid).collect();
            let set = self.new_set(&items)?;
            let cp = self.comps[c].oid;
            self.ew(COMPOSITE_PART, cp, E_CP_USED_PRIV, set)?;
            self.comps[c].used_set = set;
            self.comps[c].used_in = users;
            self.emit(Event::NoGcEnd)?;
        }
        Ok(())
    }

    /// OO7's delete: the composite parts the last insert made, with their
    /// atomic parts, connections, documents and sets; references to them
    /// are cleared from the base assemblies first.
    fn delete(&mut self) -> Result<(), PtfError> {
        self.enter(0)?;
        let victims = std::mem::take(&mut self.inserted);
        for c in victims {
            let cp = self.comps[c].oid;
            if cp == NULL {
                continue;
            }
            // Unlinking makes the part garbage; the explicit deletes that
            // follow must not race a collector.
            self.emit(Event::NoGcStart)?;
            for b in self.comps[c].used_in.clone() {
                let (set, comps) = (self.bases[b].set, self.bases[b].comps.clone());
                let f = self.set_fmt_of(comps.len());
                for (k, x) in comps.iter().enumerate() {
                    if *x == c {
                        self.ew(f, set, k as u64, NULL)?;
                    }
                }
                self.bases[b].comps = comps
                    .into_iter()
                    .map(|x| if x == c { GONE } else { x })
                    .collect();
            }
            let (doc, text, parts_set, used_set) = {
                let x = &self.comps[c];
                (x.doc, x.doc_text, x.parts_set, x.used_set)
            };
            let atoms = std::mem::take(&mut self.comps[c].atoms);
            let n = atoms.len();
            let to_fmt = self.set_fmt_of(self.cfg.conn_per_atomic);
            for a in &atoms {
                for (conn, _) in &a.conns {
                    self.emit(Event::DeleteObject {
                        format: CONNECTION,
                        oid: *conn,
                    })?;
                }
                self.emit(Event::DeleteObject {
                    format: to_fmt,
                    oid: a.to_set,
                })?;
            }
            // From-sets: their format depends on how many came in.
            let mut incoming = vec![0u64; n];
            for a in &atoms {
                for (_, t) in &a.conns {
                    incoming[*t] += 1;
                }
            }
            for (j, a) in atoms.iter().enumerate() {
                let f = self.set_formats[&incoming[j]];
                self.emit(Event::DeleteObject {
                    format: f,
                    oid: a.from_set,
                })?;
                self.emit(Event::DeleteObject {
                    format: ATOMIC_PART,
                    oid: a.oid,
                })?;
            }
            let pf = self.set_fmt_of(n);
            self.emit(Event::DeleteObject {
                format: pf,
                oid: parts_set,
            })?;
            let uf = self.set_fmt_of(self.comps[c].used_in.len());
            self.emit(Event::DeleteObject {
                format: uf,
                oid: used_set,
            })?;
            self.emit(Event::DeleteObject {
                format: CHAR,
                oid: text,
            })?;
            self.emit(Event::DeleteObject {
                format: DOCUMENT,
                oid: doc,
            })?;
            self.emit(Event::DeleteObject {
                format: COMPOSITE_PART,
                oid: cp,
            })?;
            self.emit(Event::NoGcEnd)?;
            self.comps[c].oid = NULL;
            self.counts.composite_parts -= 1;
            self.counts.atomic_parts -= n as u64;
            self.counts.connections -= (n * self.cfg.conn_per_atomic) as u64;
            self.counts.documents -= 1;
        }
        Ok(())
    }

    /// Runs one operation on the built database.
    pub fn run(&mut self, op: Op) -> Result<(), PtfError> {
        match op {
            Op::T1 | Op::T2a | Op::T2b | Op::T2c | Op::T3a | Op::T3b | Op::T3c | Op::T6 => {
                self.traverse(op)
            }
            Op::Insert => self.insert(),
            Op::Delete => self.delete(),
            q => self.query(q),
        }
    }
}

/// Builds the database and runs `ops` on it, writing events to `out`.
pub fn generate(
    cfg: Config,
    seed: u64,
    ops: &[Op],
    out: &mut dyn EventSink,
) -> Result<Counts, PtfError> {
    let mut g = Generator::new(cfg, seed, out);
    g.build()?;
    for op in ops {
        g.run(*op)?;
    }
    Ok(g.counts.clone())
}
