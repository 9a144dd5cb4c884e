//! The seed's Figures 4–9 run by `tramp_script::run` on traces generated
//! here, against answers computed independently in the test; every Algol
//! script also in Lisp form with the same output.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};

use tramp_script::run::{Failure, Job, Summary, run};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/scripts")
        .join(name)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// Runs script `text` (called `name`) over `traces` in the fs.desc layout,
/// spitting to `output`: the run's result and its stdout.
fn run_text(
    text: &str,
    name: &str,
    traces: &[&Path],
    output: Option<&Path>,
) -> (Result<Summary, Failure>, String) {
    let desc = read(&script("fs.desc"));
    let traces: Vec<String> = traces
        .iter()
        .map(|p| p.to_str().unwrap().to_string())
        .collect();
    let job = Job {
        script: (text, name),
        desc: Some((&desc, "fs.desc")),
        traces: &traces,
        output: output.map(|o| o.to_str().unwrap()),
        format: None,
        select: &Default::default(),
        windows: &[],
    };
    let mut stdout = Vec::new();
    let r = run(&job, &mut stdout);
    (r, String::from_utf8(stdout).unwrap())
}

/// Runs `name` over `traces` with the fs.desc layout; (stdout, spit bytes).
fn go(name: &str, traces: &[&Path], dir: &tempfile::TempDir) -> (String, Vec<u8>) {
    let out = dir.path().join(format!("{name}.out"));
    let (r, stdout) = run_text(&read(&script(name)), name, traces, Some(&out));
    if let Err(e) = r {
        panic!("{name}: {e}");
    }
    (stdout, std::fs::read(&out).unwrap_or_default())
}

#[derive(Clone, Copy, Debug)]
enum Rec {
    Io {
        pid: u32,
        file: u32,
        page: u32,
        write: bool,
    },
    End {
        pid: u32,
    },
}

fn encode(recs: &[Rec]) -> Vec<u8> {
    let mut b = Vec::new();
    for r in recs {
        match *r {
            Rec::Io {
                pid,
                file,
                page,
                write,
            } => {
                b.push(0);
                b.extend(pid.to_ne_bytes());
                b.extend(file.to_ne_bytes());
                b.extend(page.to_ne_bytes());
                b.push(write as u8);
            }
            Rec::End { pid } => {
                b.push(1);
                b.extend(pid.to_ne_bytes());
            }
        }
    }
    b
}

/// A deterministic mixed trace: pids reused after their END_XACT.
fn mixed(n: usize, seed: u64) -> Vec<Rec> {
    let mut x = seed;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|_| {
            let r = next();
            if r % 10 == 0 {
                Rec::End {
                    pid: (r >> 8) as u32 % 7,
                }
            } else {
                Rec::Io {
                    pid: (r >> 8) as u32 % 7,
                    file: (r >> 16) as u32 % 13,
                    page: (r >> 24) as u32 % 40,
                    write: (r >> 40) % 3 == 0,
                }
            }
        })
        .collect()
}

fn write_trace(dir: &tempfile::TempDir, name: &str, recs: &[Rec]) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, encode(recs)).unwrap();
    p
}

#[test]
fn figure9_generates_the_two_cyclic_processes() {
    let dir = tempfile::tempdir().unwrap();
    let mut want = Vec::new();
    for _ in 0..3 {
        for c in 0..100 {
            want.push(Rec::Io {
                pid: 0,
                file: 0,
                page: c,
                write: false,
            });
            want.push(Rec::Io {
                pid: 1,
                file: 1,
                page: c % 50,
                write: false,
            });
        }
    }
    let (_, algol) = go("fig9.tramp", &[], &dir);
    let (_, lisp) = go("fig9.lisp", &[], &dir);
    assert_eq!(algol, encode(&want));
    assert_eq!(lisp, algol);
}

/// LRU by hand: a deque of keys, most recent at the back.
fn lru_misses(keys: &[(u32, u32)], size: usize) -> u64 {
    let mut q: VecDeque<(u32, u32)> = VecDeque::new();
    let mut misses = 0;
    for k in keys {
        if let Some(i) = q.iter().position(|x| x == k) {
            q.remove(i);
        } else {
            misses += 1;
            if q.len() == size {
                q.pop_front();
            }
        }
        q.push_back(*k);
    }
    misses
}

#[test]
fn figure8_simulates_lru_on_figure9s_trace_and_a_mixed_one() {
    let dir = tempfile::tempdir().unwrap();
    let (_, generated) = go("fig9.tramp", &[], &dir);
    let trace = dir.path().join("gen.bin");
    std::fs::write(&trace, &generated).unwrap();
    // 150 distinct (file, page) pairs fit 2048 buffers: 150 misses of 600.
    let (out, _) = go("fig8.tramp", &[&trace], &dir);
    assert!(
        out.starts_with("lru 2048 objects: 600 requests, 150 misses"),
        "{out}"
    );
    assert_eq!(go("fig8.lisp", &[&trace], &dir).0, out);
    let recs = mixed(5000, 7);
    let keys: Vec<(u32, u32)> = recs
        .iter()
        .filter_map(|r| match r {
            Rec::Io { file, page, .. } => Some((*file, *page)),
            _ => None,
        })
        .collect();
    let small = read(&script("fig8.tramp")).replace("2048", "64");
    let t = write_trace(&dir, "mixed.bin", &recs);
    let (r, out) = run_text(&small, "small", &[&t], None);
    r.unwrap();
    let want = format!(
        "lru 64 objects: {} requests, {} misses",
        keys.len(),
        lru_misses(&keys, 64)
    );
    assert!(out.starts_with(&want), "{out}\nwant {want}");
}

#[test]
fn figures4_and_5_count_reads_and_writes() {
    let dir = tempfile::tempdir().unwrap();
    let recs = mixed(20000, 3);
    let reads = recs
        .iter()
        .filter(|r| matches!(r, Rec::Io { write: false, .. }))
        .count();
    let writes = recs
        .iter()
        .filter(|r| matches!(r, Rec::Io { write: true, .. }))
        .count();
    let t = write_trace(&dir, "t.bin", &recs);
    let want = format!("{reads} {writes}\n");
    assert_eq!(go("fig4.tramp", &[&t], &dir).0, want);
    assert_eq!(go("fig5.lisp", &[&t], &dir).0, want);
}

#[test]
fn figure6_makes_process_ids_unique_and_spits_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    let recs = mixed(3000, 11);
    let t = write_trace(&dir, "t.bin", &recs);
    // The same algorithm, by hand.
    let mut table: HashMap<u32, u32> = HashMap::new();
    let mut next = 0;
    let mut want = Vec::new();
    for r in &recs {
        match *r {
            Rec::Io {
                pid,
                file,
                page,
                write,
            } => {
                let id = *table.entry(pid).or_insert_with(|| {
                    next += 1;
                    next - 1
                });
                want.push(Rec::Io {
                    pid: id,
                    file,
                    page,
                    write,
                });
            }
            Rec::End { pid } => {
                if let Some(id) = table.remove(&pid) {
                    want.push(Rec::End { pid: id });
                }
            }
        }
    }
    let (_, algol) = go("fig6.tramp", &[&t], &dir);
    assert_eq!(algol, encode(&want));
    assert_eq!(go("fig6.lisp", &[&t], &dir).1, algol);
}

#[test]
fn spit_without_update_copies_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let recs = mixed(1000, 5);
    let t = write_trace(&dir, "t.bin", &recs);
    let out = dir.path().join("copy.bin");
    let copy = "procedure main begin spit(); end";
    run_text(copy, "copy", &[&t], Some(&out)).0.unwrap();
    assert_eq!(std::fs::read(out).unwrap(), encode(&recs));
}

#[test]
fn figure7_counts_references_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let recs = mixed(8000, 13);
    let t = write_trace(&dir, "t.bin", &recs);
    let mut counts: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for r in &recs {
        if let Rec::Io { file, write, .. } = *r {
            let e = counts.entry(file).or_default();
            if write { e.1 += 1 } else { e.0 += 1 }
        }
    }
    let want: String = counts
        .iter()
        .map(|(f, (r, w))| format!("{f} {r} {w}\n"))
        .collect();
    assert_eq!(go("fig7.tramp", &[&t], &dir).0, want);
    assert_eq!(go("fig7.lisp", &[&t], &dir).0, want);
}

#[test]
fn damage_runs_postprocess_on_what_came_before() {
    let dir = tempfile::tempdir().unwrap();
    let recs = mixed(100, 17);
    let mut bytes = encode(&recs);
    let reads = recs
        .iter()
        .filter(|r| matches!(r, Rec::Io { write: false, .. }))
        .count();
    bytes.push(0);
    bytes.extend([1, 2, 3]); // an IO record cut after 4 of its 14 bytes
    let t = dir.path().join("cut.bin");
    std::fs::write(&t, &bytes).unwrap();
    let (r, out) = run_text(&read(&script("fig4.tramp")), "fig4", &[&t], None);
    let e = r.unwrap_err();
    assert!(matches!(e, Failure::Read { .. }), "{e}");
    assert!(e.to_string().contains("record 100"), "{e}");
    assert!(out.starts_with(&format!("{reads} ")));
}
