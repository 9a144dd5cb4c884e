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
}

/// A record type: a name, a kind and an ordered list of fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordType {
    /// Index of this type in its schema.
    pub index: usize,
    pub name: String,
    pub kind: RecordKind,
    pub fields: Vec<FieldDef>,
}

impl RecordType {
    /// Position of the field called `name`.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// Position of the first field carrying `role`.
    #[inline]
    pub fn role_index(&self, role: Role) -> Option<usize> {
        self.fields.iter().position(|f| f.role == Some(role))
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
        self.types.push(RecordType {
            index,
            name: name.into(),
            kind,
            fields,
        });
        index
    }

    /// The record type called `name`.
    pub fn type_named(&self, name: &str) -> Option<&RecordType> {
        self.types.iter().find(|t| t.name == name)
    }

    /// Wraps the schema for sharing between a source and its records.
    pub fn shared(self) -> Arc<Schema> {
        Arc::new(self)
    }
}
