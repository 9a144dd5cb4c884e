//! The allocation traces in the format registry: read as HATF's records
//! (through HATF's `ItemSource`), so every heap analysis and heap format
//! takes them.

use std::sync::{Arc, OnceLock};

use tramp_core::{Error, FieldDef, FormatDesc, Holds, RecordKind, Role, Schema, Sniff};
use tramp_hatf::records::ItemSource;

use crate::android::{AndroidReader, AndroidSink};
use crate::mtrace::MtraceReader;
use crate::tracerun::TraceRunSink;
use crate::weealloc::WeeAllocReader;

/// glibc's mtrace log: text that starts `= Start`.
pub static MTRACE: FormatDesc = FormatDesc {
    name: "mtrace",
    family: "mtrace",
    about: "glibc's mtrace() log (MALLOC_TRACE with libc_malloc_debug.so): allocations, frees, reallocs and their callers",
    extensions: &[".mtrace"],
    sniff: |head| Sniff::magic(head, &[b"= Start\n"]),
    text_form: Some("hatf-text"),
    holds: Holds::Nothing,
    open: |input, _| Ok(Box::new(ItemSource::from_reader(MtraceReader::new(input)))),
    create: |_, _| {
        Err(Error::Usage(
            "tramp reads mtrace logs; it does not write them (convert to tpack or HATF)".into(),
        ))
    },
};

/// Android's malloc_debug record_allocs text: `TID: TYPE 0xPTR …` lines.
pub static ANDROID: FormatDesc = FormatDesc {
    name: "android",
    family: "android",
    about: "Android malloc_debug record_allocs text (TID: malloc 0xPTR SIZE [START END] …), read and written",
    extensions: &[".android"],
    sniff: sniff_android,
    text_form: Some("hatf-text"),
    holds: Holds::ByRole(android_written),
    open: |input, _| Ok(Box::new(ItemSource::from_reader(AndroidReader::new(input)))),
    create: |out, _| Ok(Box::new(AndroidSink::new(out))),
};

/// A first line `TID: OP 0x…` with one of record_allocs' operations.
fn sniff_android(head: &[u8]) -> Sniff {
    let line = head.split(|&b| b == b'\n').next().unwrap_or(head);
    let Ok(line) = std::str::from_utf8(line) else {
        return Sniff::No;
    };
    let Some((tid, rest)) = line.split_once(": ") else {
        return Sniff::No;
    };
    let op = rest.split(' ').next().unwrap_or("");
    let ops = [
        "malloc",
        "calloc",
        "memalign",
        "realloc",
        "free",
        "thread_done",
    ];
    if !tid.is_empty() && tid.bytes().all(|b| b.is_ascii_digit()) && ops.contains(&op) {
        Sniff::Yes
    } else {
        Sniff::No
    }
}

/// What record_allocs holds: threads, times, addresses, sizes; no call
/// sites, heaps or thread starts.
fn android_written() -> Arc<Schema> {
    static SCHEMA: OnceLock<Arc<Schema>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let (thread, time) = (("thread", Role::Thread), ("time", Role::Time));
            let mut s = Schema::new("android");
            let (address, size) = (("address", Role::Address), ("size", Role::Size));
            s.add_type(
                "alloc",
                RecordKind::Alloc,
                FieldDef::u64s(&[thread, time, address, size]),
            );
            s.add_type(
                "free",
                RecordKind::Free,
                FieldDef::u64s(&[thread, time, address]),
            );
            s.add_realloc_types(|| {
                FieldDef::u64s(&[thread, time, ("old", Role::OldAddress), address, size])
            });
            s.add_type(
                "threadDone",
                RecordKind::ThreadDestroy,
                FieldDef::u64s(&[thread, time]),
            );
            Arc::new(s)
        })
        .clone()
}

/// wee_alloc's traces: `Alloc(SIZE),` and `Free(K),` lines.
pub static WEE_ALLOC: FormatDesc = FormatDesc {
    name: "wee_alloc",
    family: "wee_alloc",
    about: "wee_alloc's allocation traces (Alloc(n), / Free(k), lines), read with synthetic addresses",
    extensions: &[".trace"],
    sniff: |head| Sniff::magic(head, &[b"Alloc(", b"Free("]),
    text_form: Some("hatf-text"),
    holds: Holds::Nothing,
    open: |input, _| {
        Ok(Box::new(ItemSource::from_reader(WeeAllocReader::new(
            input,
        ))))
    },
    create: |_, _| {
        Err(Error::Usage(
            "tramp reads wee_alloc traces; it does not write them (convert to tpack or HATF)"
                .into(),
        ))
    },
};

/// glibc's trace_run workload (`.wl`), written only.
pub static TRACE_RUN: FormatDesc = FormatDesc {
    name: "trace_run",
    family: "trace_run",
    about: "glibc's trace_run workload (.wl: per-thread VLQ streams with SYNC pairs), written only",
    extensions: &[".wl"],
    sniff: |_| Sniff::No,
    text_form: None,
    holds: Holds::ByRole(trace_run_written),
    open: |_, _| {
        Err(Error::Usage(
            "tramp writes trace_run workloads; it does not read them".into(),
        ))
    },
    create: |out, _| Ok(Box::new(TraceRunSink::new(out))),
};

/// What a workload holds: each thread's allocations, frees and reallocs
/// with their sizes, addresses as slots; no times, sites or heaps.
fn trace_run_written() -> Arc<Schema> {
    static SCHEMA: OnceLock<Arc<Schema>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let mut s = Schema::new("trace_run");
            s.add_type(
                "malloc",
                RecordKind::Alloc,
                FieldDef::u64s(&[
                    ("thread", Role::Thread),
                    ("address", Role::Address),
                    ("size", Role::Size),
                ]),
            );
            s.add_type(
                "free",
                RecordKind::Free,
                FieldDef::u64s(&[("thread", Role::Thread), ("address", Role::Address)]),
            );
            s.add_realloc_types(|| {
                FieldDef::u64s(&[
                    ("thread", Role::Thread),
                    ("old", Role::OldAddress),
                    ("address", Role::Address),
                    ("size", Role::Size),
                ])
            });
            Arc::new(s)
        })
        .clone()
}
