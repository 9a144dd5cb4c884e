//! The fourteen PTF events of §3 and the format objects they refer to.

use std::fmt;

/// A logical object identifier; 0 is the null object, 10–40 are the
/// primitive format objects (Table 2).
pub type Oid = u64;

/// The null object.
pub const NULL: Oid = 0;
/// The first identifier available to formats and objects: 10–40 are
/// reserved for primitive formats, and 1–9 are left unused (decision 4).
pub const FIRST_USER_OID: Oid = 41;

/// Primitive scalar formats (Table 2) with the byte sizes tramp assumes
/// (ILP64-free LP64: decision 5).
pub const PRIMITIVES: [(Oid, &str, u64); 10] = [
    (10, "char", 1),
    (11, "int", 4),
    (12, "short", 2),
    (13, "long", 8),
    (14, "unsigned", 4),
    (15, "unsigned char", 1),
    (16, "unsigned long", 8),
    (17, "float", 4),
    (18, "double", 8),
    (19, "long double", 16),
];

/// The scalar primitive format `id` (10–19): name and size.
pub fn scalar(id: Oid) -> Option<(&'static str, u64)> {
    PRIMITIVES
        .iter()
        .find(|(i, _, _)| *i == id)
        .map(|(_, n, s)| (*n, *s))
}

/// The array primitive format `id` (30–39): its element's scalar format.
pub fn array_element(id: Oid) -> Option<Oid> {
    (30..=39).contains(&id).then(|| id - 20)
}

/// Whether `id` is reserved for primitive formats (10–40).
pub fn is_primitive(id: Oid) -> bool {
    (10..=40).contains(&id)
}

/// A format object (`fo`): the layout of one persistent class.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct FormatObject {
    pub id: Oid,
    /// 0 when the class has no super class.
    pub super_id: Oid,
    pub pointers: u64,
    /// Format ids of the primitive data members, in position order.
    pub data: Vec<Oid>,
    /// Fixed-size array members: (array format id, number of elements).
    pub arrays: Vec<(Oid, u64)>,
    pub name: String,
}

impl FormatObject {
    /// Every integer of the format object in parameter order: the six
    /// counts and ids, the data member ids, then (array id, elements)
    /// pairs — what both forms write before the class name.
    pub fn ints(&self) -> impl Iterator<Item = u64> + '_ {
        [
            self.id,
            self.super_id,
            self.pointers,
            self.data.len() as u64,
            self.arrays.len() as u64,
            self.name.len() as u64,
        ]
        .into_iter()
        .chain(self.data.iter().copied())
        .chain(self.arrays.iter().flat_map(|(a, k)| [*a, *k]))
    }
}

/// One PTF event. Field order follows the parameter order of the ASCII
/// form (for `ew`: format, from, edge, to — Figure 3, decision 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    FormatObject(FormatObject),
    CreateObject {
        format: Oid,
        oid: Oid,
    },
    CreateArrayObject {
        format: Oid,
        oid: Oid,
        container: Oid,
        elements: u64,
    },
    DeleteObject {
        format: Oid,
        oid: Oid,
    },
    SetRoot {
        format: Oid,
        oid: Oid,
    },
    GetRoot,
    DataRead {
        format: Oid,
        oid: Oid,
        offset: u64,
    },
    DataWrite {
        format: Oid,
        oid: Oid,
        offset: u64,
    },
    /// `offset` is -1 for a dynamic array object, else the position of a
    /// fixed array member in its containing object.
    ArrayDataRead {
        format: Oid,
        oid: Oid,
        offset: i64,
        index: u64,
        length: u64,
    },
    ArrayDataWrite {
        format: Oid,
        oid: Oid,
        offset: i64,
        index: u64,
        length: u64,
    },
    EdgeRead {
        format: Oid,
        from: Oid,
        edge: u64,
    },
    EdgeWrite {
        format: Oid,
        from: Oid,
        edge: u64,
        to: Oid,
    },
    NoGcStart,
    NoGcEnd,
}

/// The event types, numbered as the binary form's type byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum EventType {
    Fo = 1,
    Co = 2,
    Cao = 3,
    Do = 4,
    Sr = 5,
    Gr = 6,
    Dr = 7,
    Dw = 8,
    Adr = 9,
    Adw = 10,
    Er = 11,
    Ew = 12,
    Ts = 13,
    Te = 14,
}

impl EventType {
    pub const ALL: [EventType; 14] = [
        EventType::Fo,
        EventType::Co,
        EventType::Cao,
        EventType::Do,
        EventType::Sr,
        EventType::Gr,
        EventType::Dr,
        EventType::Dw,
        EventType::Adr,
        EventType::Adw,
        EventType::Er,
        EventType::Ew,
        EventType::Ts,
        EventType::Te,
    ];

    /// The ASCII mnemonic (Table 1's abbreviation).
    pub fn mnemonic(self) -> &'static str {
        match self {
            EventType::Fo => "fo",
            EventType::Co => "co",
            EventType::Cao => "cao",
            EventType::Do => "do",
            EventType::Sr => "sr",
            EventType::Gr => "gr",
            EventType::Dr => "dr",
            EventType::Dw => "dw",
            EventType::Adr => "adr",
            EventType::Adw => "adw",
            EventType::Er => "er",
            EventType::Ew => "ew",
            EventType::Ts => "ts",
            EventType::Te => "te",
        }
    }

    /// The event's name in §3.
    pub fn long_name(self) -> &'static str {
        match self {
            EventType::Fo => "format object",
            EventType::Co => "create object",
            EventType::Cao => "create array object",
            EventType::Do => "delete object",
            EventType::Sr => "set root",
            EventType::Gr => "get root",
            EventType::Dr => "data read",
            EventType::Dw => "data write",
            EventType::Adr => "array data read",
            EventType::Adw => "array data write",
            EventType::Er => "edge read",
            EventType::Ew => "edge write",
            EventType::Ts => "begin no collection",
            EventType::Te => "end no collection",
        }
    }

    pub fn from_mnemonic(s: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.mnemonic() == s)
    }

    pub fn from_code(b: u8) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| *t as u8 == b)
    }

    /// Number of integer parameters of a fixed-size event (`fo` varies).
    pub fn arity(self) -> usize {
        match self {
            EventType::Fo => 6,
            EventType::Co | EventType::Do | EventType::Sr => 2,
            EventType::Cao | EventType::Ew => 4,
            EventType::Gr | EventType::Ts | EventType::Te => 0,
            EventType::Dr | EventType::Dw | EventType::Er => 3,
            EventType::Adr | EventType::Adw => 5,
        }
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mnemonic())
    }
}

impl Event {
    /// The integer parameters of an event other than `fo`, in ASCII order
    /// (the signed `Offset` of `adr`/`adw` as its two's complement), and
    /// how many there are. `fo` gives none: its lists need their own code.
    pub fn ints(&self) -> ([u64; 5], usize) {
        let mut p = [0u64; 5];
        let n = match *self {
            Event::FormatObject(_) | Event::GetRoot | Event::NoGcStart | Event::NoGcEnd => 0,
            Event::CreateObject { format, oid }
            | Event::DeleteObject { format, oid }
            | Event::SetRoot { format, oid } => {
                p[..2].copy_from_slice(&[format, oid]);
                2
            }
            Event::CreateArrayObject {
                format,
                oid,
                container,
                elements,
            } => {
                p[..4].copy_from_slice(&[format, oid, container, elements]);
                4
            }
            Event::DataRead {
                format,
                oid,
                offset,
            }
            | Event::DataWrite {
                format,
                oid,
                offset,
            } => {
                p[..3].copy_from_slice(&[format, oid, offset]);
                3
            }
            Event::ArrayDataRead {
                format,
                oid,
                offset,
                index,
                length,
            }
            | Event::ArrayDataWrite {
                format,
                oid,
                offset,
                index,
                length,
            } => {
                p = [format, oid, offset as u64, index, length];
                5
            }
            Event::EdgeRead { format, from, edge } => {
                p[..3].copy_from_slice(&[format, from, edge]);
                3
            }
            Event::EdgeWrite {
                format,
                from,
                edge,
                to,
            } => {
                p[..4].copy_from_slice(&[format, from, edge, to]);
                4
            }
        };
        (p, n)
    }

    /// The event of type `ty` (not `fo`) with integer parameters `p`, in
    /// the order of [`Event::ints`].
    pub fn from_ints(ty: EventType, p: &[u64; 5]) -> Option<Event> {
        Some(match ty {
            EventType::Fo => return None,
            EventType::Co => Event::CreateObject {
                format: p[0],
                oid: p[1],
            },
            EventType::Do => Event::DeleteObject {
                format: p[0],
                oid: p[1],
            },
            EventType::Sr => Event::SetRoot {
                format: p[0],
                oid: p[1],
            },
            EventType::Cao => Event::CreateArrayObject {
                format: p[0],
                oid: p[1],
                container: p[2],
                elements: p[3],
            },
            EventType::Gr => Event::GetRoot,
            EventType::Ts => Event::NoGcStart,
            EventType::Te => Event::NoGcEnd,
            EventType::Dr => Event::DataRead {
                format: p[0],
                oid: p[1],
                offset: p[2],
            },
            EventType::Dw => Event::DataWrite {
                format: p[0],
                oid: p[1],
                offset: p[2],
            },
            EventType::Adr => Event::ArrayDataRead {
                format: p[0],
                oid: p[1],
                offset: p[2] as i64,
                index: p[3],
                length: p[4],
            },
            EventType::Adw => Event::ArrayDataWrite {
                format: p[0],
                oid: p[1],
                offset: p[2] as i64,
                index: p[3],
                length: p[4],
            },
            EventType::Er => Event::EdgeRead {
                format: p[0],
                from: p[1],
                edge: p[2],
            },
            EventType::Ew => Event::EdgeWrite {
                format: p[0],
                from: p[1],
                edge: p[2],
                to: p[3],
            },
        })
    }

    pub fn event_type(&self) -> EventType {
        match self {
            Event::FormatObject(_) => EventType::Fo,
            Event::CreateObject { .. } => EventType::Co,
            Event::CreateArrayObject { .. } => EventType::Cao,
            Event::DeleteObject { .. } => EventType::Do,
            Event::SetRoot { .. } => EventType::Sr,
            Event::GetRoot => EventType::Gr,
            Event::DataRead { .. } => EventType::Dr,
            Event::DataWrite { .. } => EventType::Dw,
            Event::ArrayDataRead { .. } => EventType::Adr,
            Event::ArrayDataWrite { .. } => EventType::Adw,
            Event::EdgeRead { .. } => EventType::Er,
            Event::EdgeWrite { .. } => EventType::Ew,
            Event::NoGcStart => EventType::Ts,
            Event::NoGcEnd => EventType::Te,
        }
    }
}
