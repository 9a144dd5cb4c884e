//! Schemas: the record types a format can produce, their typed fields, and the
//! roles that tell format-independent analyses what a field means.

use std::sync::Arc;

/// The type of a field's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// Unsigned integer up to 64 bits.
    U64,
    /// Signed integer up to 64 bits.
    I64,
    /// IEEE-754 double.
    F64,
    /// Raw bytes (not necessarily text).
    Bytes,
    /// UTF-8 text.
    Str,
    /// A homogeneous array of the element type.
    List(Box<FieldType>),
    /// A key/value attribute list: string keys, values of any type.
    Attrs,
}

/// What a field means, independent of the format it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Role {
    /// Bytes requested or resized to.
    Size,
    /// The address an event is about (for a realloc: the new address).
    Address,
    /// A realloc's old address.
    OldAddress,
    /// Thread identifier.
    Thread,
    /// Heap identifier.
    Heap,
    /// Time stamp.
    Time,
    /// Logical object identifier (object stores, object graphs).
    ObjectId,
    /// Allocation site (return address or site id).
    Site,
    /// Free-form per-record annotations.
    Attributes,
    /// Free text (comments, descriptions).
    Text,
    /// The object an edge write makes a field point to (object graphs).
    EdgeTarget,
    /// Where inside an object an access lands: an edge number, a data
    /// member's position, or a byte offset.
    Slot,
    /// The type of an object: a format (PTF) or an allocation site.
    Type,
    /// The value a memory load or store moved.
    Value,
}

impl Role {
    /// Every role, in declaration order (the index of a role's column in
    /// each record type's role table).
    pub const ALL: [Role; 14] = [
        Role::Size,
        Role::Address,
        Role::OldAddress,
        Role::Thread,
        Role::Heap,
        Role::Time,
        Role::ObjectId,
        Role::Site,
        Role::Attributes,
        Role::Text,
        Role::EdgeTarget,
        Role::Slot,
        Role::Type,
        Role::Value,
    ];

    /// How many roles there are.
    pub const COUNT: usize = Role::ALL.len();

    /// Every role by the name DTDs and descriptions give it
    /// (`size.role = size;`), in declaration order: the one list of role
    /// names.
    pub const NAMED: [(&'static str, Role); 14] = [
        ("size", Role::Size),
        ("address", Role::Address),
        ("oldAddress", Role::OldAddress),
        ("thread", Role::Thread),
        ("heap", Role::Heap),
        ("time", Role::Time),
        ("object", Role::ObjectId),
        ("site", Role::Site),
        ("attributes", Role::Attributes),
        ("text", Role::Text),
        ("edgeTarget", Role::EdgeTarget),
        ("slot", Role::Slot),
        ("type", Role::Type),
        ("value", Role::Value),
    ];

    /// The role called `name`.
    pub fn named(name: &str) -> Option<Role> {
        lookup(&Role::NAMED, name)
    }

    /// Every role's name, comma-separated (for messages).
    pub fn names() -> String {
        listing(&Role::NAMED)
    }
}

/// The outcome a realloc record reports (HATF's four realloc tags).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReallocOutcome {
    /// Resized in place: realloc called neither malloc nor free.
    InPlace,
    /// Moved: realloc called malloc and then free.
    Moved,
    /// realloc called malloc only (e.g. `realloc(NULL, n)`).
    AllocOnly,
    /// realloc called free only (e.g. `realloc(p, 0)`).
    FreeOnly,
}

/// The value a name table gives `name`.
fn lookup<T: Copy>(table: &[(&str, T)], name: &str) -> Option<T> {
    table.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// A name table's names, comma-separated.
fn listing<T>(table: &[(&str, T)]) -> String {
    table.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

impl RecordKind {
    /// Every kind a DTD may declare (`tag.kind = alloc;`), by name: the one
    /// list of kind names. A plain `realloc` is one that moved.
    pub const NAMED: [(&'static str, RecordKind); 26] = [
        ("alloc", RecordKind::Alloc),
        ("free", RecordKind::Free),
        ("realloc", RecordKind::Realloc(ReallocOutcome::Moved)),
        (
            "reallocInPlace",
            RecordKind::Realloc(ReallocOutcome::InPlace),
        ),
        ("reallocMoved", RecordKind::Realloc(ReallocOutcome::Moved)),
        (
            "reallocAllocOnly",
            RecordKind::Realloc(ReallocOutcome::AllocOnly),
        ),
        (
            "reallocFreeOnly",
            RecordKind::Realloc(ReallocOutcome::FreeOnly),
        ),
        ("createHeap", RecordKind::HeapCreate),
        ("destroyHeap", RecordKind::HeapDestroy),
        ("createThread", RecordKind::ThreadCreate),
        ("destroyThread", RecordKind::ThreadDestroy),
        ("comment", RecordKind::Comment),
        ("objectCreate", RecordKind::ObjectCreate),
        ("objectDelete", RecordKind::ObjectDelete),
        ("edgeWrite", RecordKind::EdgeWrite),
        ("edgeRead", RecordKind::EdgeRead),
        ("dataRead", RecordKind::DataRead),
        ("dataWrite", RecordKind::DataWrite),
        ("rootSet", RecordKind::RootSet),
        ("rootGet", RecordKind::RootGet),
        ("load", RecordKind::Load),
        ("store", RecordKind::Store),
        ("fetch", RecordKind::Fetch),
        ("modify", RecordKind::Modify),
        ("span", RecordKind::Span),
        ("other", RecordKind::Other),
    ];

    /// The kind called `name`.
    pub fn named(name: &str) -> Option<RecordKind> {
        lookup(&RecordKind::NAMED, name)
    }

    /// Every kind's name, comma-separated (for messages).
    pub fn names() -> String {
        listing(&RecordKind::NAMED)
    }
}

/// What a record type means in the heap and object-graph views.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RecordKind {
    Alloc,
    Free,
    Realloc(ReallocOutcome),
    HeapCreate,
    HeapDestroy,
    ThreadCreate,
    ThreadDestroy,
    Comment,
    /// Format metadata (it changes how later records are encoded).
    Metadata,
    /// A type definition (PTF's format objects).
    TypeDef,
    /// An object comes into being (object id, type).
    ObjectCreate,
    /// An object is deleted explicitly.
    ObjectDelete,
    /// A pointer field of an object is written (from, slot, edge target).
    EdgeWrite,
    /// A pointer field of an object is read (from, slot).
    EdgeRead,
    /// A data member of an object is read (object, slot).
    DataRead,
    /// A data member of an object is written (object, slot).
    DataWrite,
    /// The root of the object graph is set (object id).
    RootSet,
    /// The root of the object graph is read.
    RootGet,
    /// Collection is held off until the matching [`RecordKind::GcResume`]
    /// (PTF's `ts`); holds nest.
    GcHold,
    /// Ends the innermost [`RecordKind::GcHold`] (PTF's `te`).
    GcResume,
    /// A memory load: address, value, size in bytes.
    Load,
    /// A memory store: address, value, size in bytes.
    Store,
    /// An instruction fetch: address, size in bytes.
    Fetch,
    /// A memory modify (a load then a store of the same bytes by one
    /// instruction): address, size in bytes.
    Modify,
    /// A timed span of a runtime (Heph's events: stream as the thread,
    /// start as the time, a description as the text).
    Span,
    /// Anything the views do not interpret.
    Other,
}

/// One field of a record type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDef {
    pub name: String,
    pub ty: FieldType,
    pub role: Option<Role>,
}

impl FieldDef {
    pub fn new(name: impl Into<String>, ty: FieldType, role: Option<Role>) -> Self {
        FieldDef {
            name: name.into(),
            ty,
            role,
        }
    }

    /// Unsigned integer fields, each named and given a role: how a
    /// format's code declares its record types in one line a type.
    pub fn u64s(fields: &[(&str, Role)]) -> Vec<FieldDef> {
        fields
            .iter()
            .map(|&(n, r)| FieldDef::new(n, FieldType::U64, Some(r)))
            .collect()
    }
}

/// A record type: a name, a kind and an ordered list of fields.
///
/// Built by [`Schema::add_type`], which also fills the role table: finding
/// the field of a role is one array read, never a search per record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordType {
    /// Index of this type in its schema.
    pub index: usize,
    pub name: String,
    pub kind: RecordKind,
    pub fields: Vec<FieldDef>,
    /// Per role (in [`Role::ALL`] order): the first field carrying it.
    roles: [Option<u16>; Role::COUNT],
    /// When every field is an integer at a fixed place of the record's
    /// bytes (a described trace's fixed-layout records): where each lies.
    /// A record of such a type may then come without slots, its fields
    /// read from its bytes on demand ([`crate::Record::get`]).
    pub fixed_ints: Option<Box<[crate::ints::FixedInt]>>,
}

impl RecordType {
    /// A record type; its role table is computed here, once.
    pub fn new(
        index: usize,
        name: impl Into<String>,
        kind: RecordKind,
        fields: Vec<FieldDef>,
    ) -> Self {
        let mut roles = [None; Role::COUNT];
        for (i, f) in fields.iter().enumerate().rev() {
            if let Some(r) = f.role {
                roles[r as usize] = Some(i as u16);
            }
        }
        RecordType {
            index,
            name: name.into(),
            kind,
            fields,
            roles,
            fixed_ints: None,
        }
    }

    /// Position of the field called `name`.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// Position of the first field carrying `role` (from the role table).
    #[inline]
    pub fn role_index(&self, role: Role) -> Option<usize> {
        self.roles[role as usize].map(usize::from)
    }
}

/// The domains a schema's record kinds can hold ([`Schema::domains`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Domains {
    /// Heap events: allocations, frees, reallocs.
    pub heap: bool,
    /// An object graph: objects made and deleted, pointer fields written
    /// and read.
    pub objects: bool,
    /// Memory accesses: loads and stores.
    pub accesses: bool,
    /// Timed spans of a runtime.
    pub spans: bool,
}

impl Domains {
    /// Whether the records make cache requests by their kind: heap events,
    /// loads and stores touch addresses; object events touch objects.
    pub fn requests(self) -> bool {
        self.heap || self.objects || self.accesses
    }

    /// Whether the records carry memory addresses (what a CPU-cache
    /// hierarchy is fed): heap events, loads and stores.
    pub fn addresses(self) -> bool {
        self.heap || self.accesses
    }

    /// The names of the domains held, for messages (`heap events, memory
    /// accesses`), or `nothing tramp analyses`.
    pub fn describe(self) -> String {
        let mut v = Vec::new();
        if self.heap {
            v.push("heap events");
        }
        if self.objects {
            v.push("an object graph");
        }
        if self.accesses {
            v.push("memory accesses");
        }
        if self.spans {
            v.push("timed spans");
        }
        if v.is_empty() {
            "nothing tramp analyses (no heap events, object graph or memory accesses)".into()
        } else {
            v.join(", ")
        }
    }
}

/// The record types of one format (fixed, or built at run time from a DTD).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    /// Short format name, e.g. `hatf`.
    pub format: String,
    pub types: Vec<RecordType>,
}

impl Schema {
    /// Starts an empty schema for `format`.
    pub fn new(format: impl Into<String>) -> Self {
        Schema {
            format: format.into(),
            types: Vec::new(),
        }
    }

    /// Adds a record type and returns its index.
    pub fn add_type(
        &mut self,
        name: impl Into<String>,
        kind: RecordKind,
        fields: Vec<FieldDef>,
    ) -> usize {
        let index = self.types.len();
        self.types.push(RecordType::new(index, name, kind, fields));
        index
    }

    /// Adds one record type per realloc outcome (`reallocInPlace`,
    /// `reallocMoved`, `reallocAllocOnly`, `reallocFreeOnly`, as
    /// [`RecordKind::NAMED`] names them), each with `fields()`.
    pub fn add_realloc_types(&mut self, fields: impl Fn() -> Vec<FieldDef>) {
        for (name, kind) in RecordKind::NAMED {
            if matches!(kind, RecordKind::Realloc(_)) && name != "realloc" {
                self.add_type(name, kind, fields());
            }
        }
    }

    /// The record type called `name`.
    pub fn type_named(&self, name: &str) -> Option<&RecordType> {
        self.types.iter().find(|t| t.name == name)
    }

    /// What the schema's record kinds can express, whatever the format:
    /// what decides which views and analyses have anything to work on.
    pub fn domains(&self) -> Domains {
        let mut d = Domains::default();
        for t in &self.types {
            match t.kind {
                RecordKind::Alloc | RecordKind::Free | RecordKind::Realloc(_) => d.heap = true,
                RecordKind::ObjectCreate
                | RecordKind::ObjectDelete
                | RecordKind::EdgeWrite
                | RecordKind::EdgeRead => d.objects = true,
                RecordKind::Load | RecordKind::Store | RecordKind::Fetch | RecordKind::Modify => {
                    d.accesses = true
                }
                RecordKind::Span => d.spans = true,
                _ => {}
            }
        }
        d
    }

    /// Wraps the schema for sharing between a source and its records.
    pub fn shared(self) -> Arc<Schema> {
        Arc::new(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_and_role_names_are_one_list_each() {
        // Every role has one name, in the order of Role::ALL.
        assert_eq!(Role::NAMED.map(|(_, r)| r), Role::ALL);
        for (name, role) in Role::NAMED {
            assert_eq!(Role::named(name), Some(role));
        }
        for (name, kind) in RecordKind::NAMED {
            assert_eq!(RecordKind::named(name), Some(kind), "{name}");
        }
        assert_eq!(Role::named("nope"), None);
        assert_eq!(RecordKind::named("nope"), None);
        assert!(RecordKind::names().starts_with("alloc, free, realloc,"));
    }

    #[test]
    fn role_table_names_the_first_field_of_each_role() {
        let mut s = Schema::new("t");
        let i = s.add_type(
            "ew",
            RecordKind::EdgeWrite,
            vec![
                FieldDef::new("format", FieldType::U64, Some(Role::Type)),
                FieldDef::new("from", FieldType::U64, Some(Role::ObjectId)),
                FieldDef::new("edge", FieldType::U64, Some(Role::Slot)),
                FieldDef::new("to", FieldType::U64, Some(Role::EdgeTarget)),
                FieldDef::new("again", FieldType::U64, Some(Role::ObjectId)),
            ],
        );
        let ty = &s.types[i];
        for role in Role::ALL {
            let searched = ty.fields.iter().position(|f| f.role == Some(role));
            assert_eq!(ty.role_index(role), searched, "{role:?}");
        }
        assert_eq!(ty.role_index(Role::ObjectId), Some(1));
        assert_eq!(ty.role_index(Role::Size), None);
        assert!(Role::ALL.iter().enumerate().all(|(i, r)| *r as usize == i));
    }
}
