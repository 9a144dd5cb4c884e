//! The raw log's wire format (docs/formats/capture.md): chunk header and
//! event kinds, written once. The capture library writes it; `tramp-record`
//! reads it and includes this file by `#[path]` (linking the capture
//! library would interpose on the reader's own heap). No dependencies.

/// First bytes of every chunk.
pub const CHUNK_MAGIC: [u8; 4] = *b"TRC1";
/// Chunk header: magic, tid (u32 LE), payload length (u32 LE), then the
/// clock at the chunk's start and end as (ns, TSC) pairs (u64 LE each).
/// Events carry TSC deltas; readers order every thread's events by TSC and
/// map it to ns through the pairs of all chunks.
pub const CHUNK_HEADER: usize = 44;
/// Set in a chunk header's length word when the chunk ends with a spawn
/// (`EV_SPAWN`): `tramp record` learns of the thread to come as soon as it
/// reads the chunk, before any of that thread's chunks (which the log
/// holds after it).
pub const CHUNK_SPAWN: u32 = 1 << 31;

pub const EV_ALLOC: u8 = 0;
pub const EV_FREE: u8 = 1;
pub const EV_REALLOC: u8 = 2;
pub const EV_THREAD_START: u8 = 3;
pub const EV_THREAD_END: u8 = 4;
pub const EV_MODULE: u8 = 6;
pub const EV_PROCESS: u8 = 7;
pub const EV_STALL: u8 = 8;
pub const EV_LOAD: u8 = 9;
pub const EV_STORE: u8 = 10;
/// A free with its call site (pointer captures, where the profile names
/// the code that frees each structure's nodes).
pub const EV_FREE_AT: u8 = 11;
/// This thread is about to start another (pthread_create): `tramp record`
/// then holds back later events until the new thread's first chunk comes,
/// so that its first events are not written late.
pub const EV_SPAWN: u8 = 12;
/// The thread's call stack changed: keep the outermost `keep` frames of
/// its previous one and add new inner frames, the innermost of which is the
/// site of the event that follows (stacks on).
pub const EV_FRAMES: u8 = 13;
/// How the thread's stacks were taken (at its end): stacks, early stops,
/// frames stepped, early stops checked against a full unwind, mismatches.
pub const EV_UNWIND: u8 = 14;
/// The process's resident set size in bytes (sampled about every 10 ms,
/// by whichever thread records an event when a sample is due).
pub const EV_RSS: u8 = 15;
/// A piece of the text the program's own `__lsan_default_suppressions()`
/// returns (LeakSanitizer's suppressions compiled into the program).
pub const EV_LSAN: u8 = 16;
/// A block the program reported from its own allocator (`TRAMP_ALLOC`,
/// `heaptrack_report_alloc`): size, address, site, as `EV_ALLOC`.
pub const EV_BLOCK_ALLOC: u8 = 17;
/// A reported block's end (`TRAMP_FREE`): address and site, as
/// `EV_FREE_AT`.
pub const EV_BLOCK_FREE: u8 = 18;
/// A reported block resized or moved (`TRAMP_REALLOC`): as `EV_REALLOC`.
pub const EV_BLOCK_REALLOC: u8 = 19;
/// A piece of the process's command line (`/proc/self/cmdline`: each
/// argument ended by a NUL), after its `EV_PROCESS`: a byte saying whether
/// more pieces follow (0), this is the last (1) or the last of a line cut
/// at the capture's limit (2), then the piece's length and bytes.
pub const EV_COMMAND: u8 = 20;

/// A chunk payload is never longer than one thread buffer.
pub const MAX_PAYLOAD: usize = 1 << 18;
