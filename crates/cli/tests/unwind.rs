//! The capture's unwinder against glibc's `backtrace()` (issue 34): the
//! same program, built with and without frame pointers at -O0 and -O2,
//! allocates through call sites reached from several callers, recursion,
//! a shared library and a signal handler; before each allocation it prints
//! the frames `backtrace()` sees. The recording's stack of that allocation
//! must hold the same frames, and every early stop of the unwinder is
//! compared with a full unwind (TRAMP_CAPTURE_UNWIND_CHECK) and must agree.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// Allocation sizes are BASE + the id the program printed.
const BASE: u64 = 50_000;

fn programs() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/unwind")
}

fn cc(args: &[&str]) {
    let st = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(args)
        .status()
        .expect("the C compiler runs");
    assert!(st.success(), "cc {args:?}");
}

/// LEB128 from hex digits (a site attribute after its `02` tag).
fn leb(hex: &str) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    for i in (0..hex.len()).step_by(2) {
        let b = u8::from_str_radix(&hex[i..i + 2], 16).unwrap();
        v |= ((b & 0x7f) as u64) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            break;
        }
    }
    v
}

/// Reads a HATF text recording by hand (not through tramp's reader): the
/// stack tree's nodes, each traced allocation's frames by id, and the
/// unwinder's counts (stacks, early stops, checks, mismatches).
fn recorded(text: &str) -> (HashMap<u64, Vec<u64>>, [u64; 4]) {
    let mut nodes: HashMap<u64, (u64, u64)> = HashMap::new();
    let mut stacks = HashMap::new();
    let mut counts = [0u64; 4];
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("comment \"tramp:frames ") {
            let t: Vec<&str> = rest.trim_end_matches('"').split(' ').collect();
            let first: u64 = t[0].parse().unwrap();
            for (k, pair) in t[1..].chunks(2).enumerate() {
                let pc = u64::from_str_radix(pair[1].trim_start_matches("0x"), 16).unwrap();
                nodes.insert(first + k as u64, (pair[0].parse().unwrap(), pc));
            }
        } else if let Some(rest) = line.strip_prefix("comment \"tramp:unwind ") {
            for kv in rest.trim_end_matches('"').split(' ') {
                let (k, v) = kv.split_once('=').unwrap();
                let at = ["stacks", "early_stops", "checks", "mismatches"]
                    .iter()
                    .position(|n| *n == k);
                if let Some(at) = at {
                    counts[at] += v.parse::<u64>().unwrap();
                }
            }
        } else if line.starts_with("alloc ") {
            let field = |name: &str| {
                line.split(' ')
                    .find_map(|f| f.strip_prefix(&format!("{name}=")))
                    .unwrap()
                    .to_string()
            };
            let size: u64 = field("size").parse().unwrap();
            if size < BASE {
                continue;
            }
            let attrs = field("attrs");
            assert!(attrs.starts_with("02"), "a stack node: {line}");
            let mut id = leb(&attrs[2..]);
            let mut frames = Vec::new();
            while id != 0 {
                let (parent, pc) = nodes[&id];
                frames.push(pc);
                id = parent;
            }
            stacks.insert(size - BASE, frames);
        }
    }
    (stacks, counts)
}

fn check(flags: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let lib = programs().join("lib.c");
    let prog = programs().join("unwind.c");
    let mut a = flags.to_vec();
    a.extend(["-g", "-shared", "-fPIC", lib.to_str().unwrap(), "-o"]);
    let so = d("libuw.so");
    a.push(&so);
    cc(&a);
    let mut a = flags.to_vec();
    let rpath = format!("-Wl,-rpath,{}", dir.path().display());
    let exe = d("uw");
    let dirs = format!("-L{}", dir.path().display());
    a.extend([
        "-g",
        prog.to_str().unwrap(),
        "-o",
        &exe,
        &dirs,
        "-luw",
        &rpath,
    ]);
    cc(&a);
    let trace = d("t.hatf.txt");
    let out = Command::new(env!("CARGO_BIN_EXE_tramp"))
        .env("TRAMP_CAPTURE_UNWIND_CHECK", "1")
        .args(["record", "-o", &trace, "--", &exe])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).unwrap();
    let (stacks, [taken, early, checks, mismatches]) =
        recorded(&std::fs::read_to_string(&trace).unwrap());
    let mut compared = 0;
    for line in printed.lines().filter(|l| l.starts_with("bt ")) {
        let mut t = line.split(' ').skip(1);
        let id: u64 = t.next().unwrap().parse().unwrap();
        let bt: Vec<u64> = t
            .map(|h| u64::from_str_radix(h.trim_start_matches("0x"), 16).unwrap())
            .collect();
        let got = &stacks[&id];
        // Frame 0 is the return address in traced() after its malloc
        // call; backtrace() was called from another spot in traced().
        assert_eq!(
            &got[1..],
            &bt[..],
            "{flags:?}: allocation {id}: recorded {got:x?}, backtrace() {bt:x?}"
        );
        compared += 1;
    }
    // 20 rounds of 10 allocations, and one more in every fifth round's
    // signal handler.
    assert_eq!(compared, 20 * 8 + 4, "{flags:?}");
    assert!(taken >= compared, "{flags:?}: {taken} stacks");
    assert!(
        early * 2 > taken,
        "{flags:?}: most stacks stop early ({early} of {taken})"
    );
    assert_eq!(checks, early, "{flags:?}: every early stop was checked");
    assert_eq!(mismatches, 0, "{flags:?}: an early stop differed");
}

#[test]
fn stacks_match_backtrace_at_o0_with_frame_pointers() {
    check(&["-O0", "-fno-omit-frame-pointer"]);
}

#[test]
fn stacks_match_backtrace_at_o0_without_frame_pointers() {
    check(&["-O0", "-fomit-frame-pointer"]);
}

#[test]
fn stacks_match_backtrace_at_o2_with_frame_pointers() {
    check(&["-O2", "-fno-omit-frame-pointer"]);
}

#[test]
fn stacks_match_backtrace_at_o2_without_frame_pointers() {
    check(&["-O2", "-fomit-frame-pointer"]);
}
