//! Encoding policies: which metadata records a writer places so that data
//! records get smaller (the HATF paper's §3.3, and the fields its traces
//! lacked). A policy is a set of per-field [`Rules`]; each rule is a small
//! streaming planner ([`narrow`], [`runs`], [`address`]) that looks at the
//! next record (and, for addresses, a bounded look-ahead window) and
//! returns the metadata to place before it. `best` tries several rule sets
//! on every window of records and keeps the smallest ([`best`]).
//!
//! The rules and worked examples are in docs/formats/hatf.md.

pub mod address;
pub mod best;
pub mod narrow;
pub mod runs;
pub mod transition;

/// Who places metadata records, by name (`tramp convert --policy NAME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Policy {
    /// The default configuration; metadata only where a value does not fit.
    /// A field leaves its default interpretation the first time a value
    /// differs from the default and takes the smallest width that holds
    /// it; widths only grow. Metadata given by the caller is ignored.
    Naive,
    /// The caller places every metadata record; a value the current
    /// encoding cannot represent is an error.
    Explicit,
    /// "Small Size": the size field at the narrowest width that pays.
    SmallSize,
    /// "Same Size": runs of one size as `default SIZE`.
    SameSize,
    /// Small size and same size together ("Combined Size").
    CombinedSize,
    /// "BaseOffset 1-byte": address runs within 255 bytes of each other
    /// as 1-byte offsets from a base.
    BaseOffset1,
    /// "BaseOffset 2-bytes": the same with 2-byte offsets.
    BaseOffset2,
    /// "Best BaseOffset": 1- and 2-byte base-offset runs, whichever saves more.
    BestBaseOffset,
    /// "Stride": runs of addresses a constant stride apart, in zero bytes.
    Stride,
    /// Times as signed deltas from the previous record's time, at the
    /// narrowest width that pays (the paper's traces had no times).
    TimeDelta,
    /// Thread and heap fields as `default V` during runs of one value
    /// (the paper's traces had one thread and one heap).
    ThreadHeapRuns,
    /// The most effective combination, chosen per window of records by
    /// encoding the window under each candidate and keeping the smallest.
    Best,
}

/// Every policy with its name, in the order `--help` lists them.
pub const POLICIES: [(&str, Policy); 12] = [
    ("naive", Policy::Naive),
    ("explicit", Policy::Explicit),
    ("small-size", Policy::SmallSize),
    ("same-size", Policy::SameSize),
    ("combined-size", Policy::CombinedSize),
    ("baseoffset-1", Policy::BaseOffset1),
    ("baseoffset-2", Policy::BaseOffset2),
    ("best-baseoffset", Policy::BestBaseOffset),
    ("stride", Policy::Stride),
    ("time-delta", Policy::TimeDelta),
    ("thread-heap-runs", Policy::ThreadHeapRuns),
    ("best", Policy::Best),
];

impl Policy {
    pub fn parse(s: &str) -> Option<Policy> {
        POLICIES.iter().find(|(n, _)| *n == s).map(|(_, p)| *p)
    }

    pub fn name(self) -> &'static str {
        POLICIES
            .iter()
            .find(|(_, p)| *p == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }

    /// The names, comma-separated (for messages and help).
    pub fn names() -> String {
        POLICIES.map(|(n, _)| n).join(", ")
    }

    /// The rules this policy applies to every record (for `best`, the
    /// rules it starts from; the window trials change them).
    pub fn rules(self) -> Rules {
        let none = Rules::default();
        match self {
            Policy::Naive | Policy::Explicit | Policy::Best => none,
            Policy::SmallSize => Rules {
                small_size: true,
                ..none
            },
            Policy::SameSize => Rules {
                same_size: true,
                ..none
            },
            Policy::CombinedSize => Rules {
                small_size: true,
                same_size: true,
                ..none
            },
            Policy::BaseOffset1 => Rules {
                address: AddressModes::BASE1,
                ..none
            },
            Policy::BaseOffset2 => Rules {
                address: AddressModes::BASE2,
                ..none
            },
            Policy::BestBaseOffset => Rules {
                address: AddressModes::BASE1.with(AddressModes::BASE2),
                ..none
            },
            Policy::Stride => Rules {
                address: AddressModes::STRIDE,
                ..none
            },
            Policy::TimeDelta => Rules {
                time_delta: true,
                ..none
            },
            Policy::ThreadHeapRuns => Rules {
                thread_heap_runs: true,
                ..none
            },
        }
    }

    /// Records the writer holds back to look ahead at (0: none).
    pub fn lookahead(self) -> usize {
        match self {
            Policy::Best => best::WINDOW + address::LOOKAHEAD,
            p if p.rules().address.any() => address::LOOKAHEAD,
            _ => 0,
        }
    }
}

impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which address interpretations the address planner may choose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AddressModes(u8);

impl AddressModes {
    pub const NONE: AddressModes = AddressModes(0);
    /// Base-offset with 1-byte offsets.
    pub const BASE1: AddressModes = AddressModes(1);
    /// Base-offset with 2-byte offsets.
    pub const BASE2: AddressModes = AddressModes(2);
    /// Stride (zero bytes per address).
    pub const STRIDE: AddressModes = AddressModes(4);

    pub const fn with(self, o: AddressModes) -> AddressModes {
        AddressModes(self.0 | o.0)
    }

    pub fn has(self, o: AddressModes) -> bool {
        self.0 & o.0 == o.0 && o.0 != 0
    }

    pub fn any(self) -> bool {
        self.0 != 0
    }
}

/// The per-field rules of a policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Rules {
    /// Size at the narrowest width that pays ([`narrow`]).
    pub small_size: bool,
    /// Runs of one size as `default` ([`runs`]).
    pub same_size: bool,
    /// Address runs as base-offset or stride ([`address`]).
    pub address: AddressModes,
    /// Time as a narrowed delta ([`narrow`]).
    pub time_delta: bool,
    /// Thread and heap runs as `default` ([`runs`]).
    pub thread_heap_runs: bool,
}
