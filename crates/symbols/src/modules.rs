//! The module map and call stacks a recorded trace carries in its notes,
//! and the names they give a trace's code addresses and allocation sites.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use tramp_core::{Record, RecordKind, Role};

use crate::notes::Annotation;
use crate::stacks::Stacks;
use crate::symbolizer::{Place, Symbolizer};

/// The module map a recorded trace carries in its `tramp:module` notes:
/// what names the code addresses of any analysis (allocation sites,
/// instructions of a pointer trace) afterwards, with [`Modules::names`].
#[derive(Default)]
pub struct ModuleMap {
    modules: Vec<(u64, String)>,
    /// Places the recording symbolized itself.
    symbols: Vec<Place>,
    /// The program's own LeakSanitizer suppressions.
    lsan: String,
    stacks: Vec<(u64, Vec<u64>)>,
    tree: Stacks,
    stack_depth: u64,
    /// The recorded process's id (its process note).
    pid: Option<u64>,
}

impl ModuleMap {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes in what a comment record says about modules, stacks and the
    /// stack depth (other records are ignored).
    pub fn note(&mut self, rec: &Record<'_>) {
        if rec.record_type().kind != RecordKind::Comment {
            return;
        }
        match rec
            .role(Role::Text)
            .and_then(|v| v.as_bytes())
            .and_then(Annotation::parse)
        {
            Some(Annotation::Module { base, path }) => self.modules.push((base, path)),
            Some(Annotation::Stack { id, frames }) => self.stacks.push((id, frames)),
            Some(Annotation::Frames { first, nodes }) => {
                self.tree.define(first, &nodes);
            }
            Some(Annotation::Symbol(place)) => self.symbols.push(place),
            Some(Annotation::LsanSuppressions(text)) => self.lsan.push_str(&text),
            Some(Annotation::Process {
                stack_depth, pid, ..
            }) => {
                self.stack_depth = stack_depth;
                self.pid = Some(pid);
            }
            _ => {}
        }
    }

    /// How many modules and stacks are known (it grows as annotations
    /// are noted).
    pub fn len(&self) -> usize {
        self.modules.len() + self.stacks.len() + self.tree.len() + usize::from(self.stack_depth > 0)
    }

    /// Whether nothing is known yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Frames per allocation site the process notes gave (0: sites are
    /// return addresses).
    pub fn stack_depth(&self) -> u64 {
        self.stack_depth
    }

    /// Names for what was seen so far.
    pub fn names(&self) -> Names {
        Names {
            symbolizer: {
                let mut s = Symbolizer::default();
                for (base, path) in &self.modules {
                    s.add_module(*base, path);
                }
                for p in &self.symbols {
                    s.know(p.clone());
                }
                s
            },
            stacks: self.stacks.iter().cloned().collect(),
            tree: self.tree.clone(),
            stack_depth: self.stack_depth,
        }
    }
}

/// A trace's modules: (load address, path); and, for a recording with
/// stacks, its call stacks by id (the stack tree; whole stacks in
/// recordings made before it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Modules {
    pub modules: Vec<(u64, String)>,
    /// Places stored by the recording (named without the module files).
    pub symbols: Vec<Place>,
    /// The suppressions the program compiled in for LeakSanitizer
    /// (`__lsan_default_suppressions`), as text.
    pub lsan_suppressions: String,
    pub stacks: Vec<(u64, Vec<u64>)>,
    pub tree: Stacks,
    /// Frames per allocation site (0: sites are return addresses).
    pub stack_depth: u64,
    /// The recorded process's id, when the trace says it.
    pub pid: Option<u64>,
}

impl Modules {
    /// The recorded program: a recording's first module.
    pub fn program(&self) -> Option<&str> {
        self.modules.first().map(|(_, p)| p.as_str())
    }

    /// Names code addresses and allocation sites of the trace.
    pub fn names(&self) -> Names {
        ModuleMap {
            modules: self.modules.clone(),
            symbols: self.symbols.clone(),
            lsan: self.lsan_suppressions.clone(),
            stacks: self.stacks.clone(),
            tree: self.tree.clone(),
            stack_depth: self.stack_depth,
            pid: self.pid,
        }
        .names()
    }
}

/// Names for a trace's numbers: code addresses by function and line, and
/// allocation sites — with `--stack`, a site is a stack id, named by its
/// first two frames (`operator new ← main (list.cpp:5)`: what tells C++
/// allocations apart, which all come from `operator new`).
pub struct Names {
    symbolizer: Symbolizer,
    stacks: FxHashMap<u64, Vec<u64>>,
    tree: Stacks,
    stack_depth: u64,
}

impl Names {
    /// A code address (a return address or an instrumented instruction).
    pub fn code(&mut self, address: u64) -> Option<String> {
        self.symbolizer.name(address)
    }

    /// An allocation site.
    pub fn site(&mut self, site: u64) -> Option<String> {
        if self.stack_depth == 0 {
            return self.code(site);
        }
        let frames = self.stack(site);
        let names: Vec<String> = frames
            .iter()
            .take(2)
            .map(|f| self.code(*f).unwrap_or_else(|| format!("{f:#x}")))
            .collect();
        (!names.is_empty()).then(|| names.join(" ← "))
    }
}

impl std::fmt::Display for Modules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (base, path) in &self.modules {
            writeln!(f, "{base:#x} {path}")?;
        }
        Ok(())
    }
}

impl tramp_core::Analysis for ModuleMap {
    type Report = Modules;

    fn observe(&mut self, rec: &Record<'_>) -> Result<(), tramp_core::Error> {
        self.note(rec);
        Ok(())
    }

    fn finish(self) -> Modules {
        Modules {
            modules: self.modules,
            symbols: self.symbols,
            lsan_suppressions: self.lsan,
            stacks: self.stacks,
            tree: self.tree,
            stack_depth: self.stack_depth,
            pid: self.pid,
        }
    }
}

impl Names {
    /// The place of a code address.
    pub fn place(&mut self, address: u64) -> Place {
        self.symbolizer.symbolize(address)
    }

    /// The innermost frame of a recorded call stack that is the program's
    /// (the first of [`Names::stack`]), without making the whole stack.
    pub fn innermost(&self, id: u64) -> Option<u64> {
        match self.stacks.get(&id) {
            Some(v) => v
                .iter()
                .copied()
                .find(|&pc| !self.symbolizer.in_capture_library(pc)),
            None => self
                .tree
                .innermost(id, |pc| !self.symbolizer.in_capture_library(pc)),
        }
    }

    /// The frames of a recorded call stack, innermost first, without the
    /// capture library's own (its `pthread_create` wrapper, its hooks): a
    /// recording's stacks are the program's.
    pub fn stack(&self, id: u64) -> Vec<u64> {
        let mut v = match self.stacks.get(&id) {
            Some(v) => v.clone(),
            None => self.tree.frames(id),
        };
        v.retain(|&pc| !self.symbolizer.in_capture_library(pc));
        v
    }
}
