//! tramp-tpack: tpack, tramp's own lossless container for heap traces
//! (extension `.tpack`). It keeps every HATF data record and comment and
//! packs them by prediction: a model of the allocator guesses each
//! allocation's address (a freed chunk of the same size class reused LIFO,
//! bump-pointer continuation, a realloc's new block) and stores only the
//! misses; frees are the age of the object they free; times are deltas;
//! sizes, threads, heaps and sites come from recent-value tables. Each
//! field goes to its own stream, and the streams of every block of records
//! are compressed independently (zstd or xz), so a reader streams block by
//! block and a damaged block loses only itself.
//!
//! * [`streams`]: the stream ids and their byte coding (LEB128, zigzag).
//! * [`model`]: the predictor state both sides keep, reset every block.
//! * [`succession`]: which attributes followed which (version 3's sites).
//! * [`writer`] / [`reader`]: the streaming codec over HATF items.
//! * [`framer`]: the block layer the readers share (headers, checksums,
//!   resynchronisation, decompression).
//! * [`parallel`]: decoding several blocks at once on threads.
//! * [`trailer`]: the document a file may end with (a recording's profile
//!   index), found from the end without reading the blocks.
//! * `table`: a block's records in memory, passed between threads.
//! * `pool`: the writer's threads, coding whole blocks at once.
//! * [`format`](mod@format): tpack in the format registry, as a Source and a Sink.
//!
//! The layout, byte for byte, is in docs/formats/tpack.md.

pub mod error;
pub mod format;
pub mod framer;
pub mod join;
pub mod model;
pub mod parallel;
mod pool;
pub mod reader;
pub mod streams;
pub mod succession;
mod table;
mod threads;
pub mod trailer;
pub mod writer;

pub use error::TpackError;
pub use reader::Reader;
pub use writer::{Codec, Options, Writer};

/// The file magic: `tpack`, a zero byte, format version 5, and a zero.
/// Readers also take versions 1 to 4 (docs/formats/tpack.md); writers
/// write 5.
pub const MAGIC: [u8; 8] = *b"tpack\x00\x05\x00";
/// Bytes of a version-4 block's summary, which opens its body: the first
/// event's time, the least and the greatest time, and the comments.
pub const SUMMARY: usize = 28;
/// The magic that starts every block.
pub const BLOCK_MAGIC: [u8; 4] = *b"TPKB";
/// Bytes of a block header: magic, record count, body length, CRC-32.
pub const BLOCK_HEADER: usize = 16;
/// The most records a block holds.
pub const MAX_BLOCK_RECORDS: usize = 1 << 24;
/// The most bytes a block's streams hold decompressed, all together (the
/// writer closes a block before: at 160 MiB of streams, checked every
/// 4,096 records, or 64 MiB of comments and attributes). A reader refuses
/// more, so damaged or forged lengths cannot ask for unbounded memory.
pub const MAX_RAW: u64 = 256 << 20;
/// The largest block body a reader accepts.
pub const MAX_BODY: u32 = MAX_RAW as u32;
