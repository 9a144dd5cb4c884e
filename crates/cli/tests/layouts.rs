//! libCacheSim's vscsi, twr and lcs layouts (issue 36): files made here
//! from the Twitter fixture by the transform bench/cachesim/layouts.py
//! repeats, simulated by tramp, and the misses compared with what
//! libCacheSim 0.3.5's own readers and policies give on the same files
//! (golden values from that script); tramp's lcs is read back by tramp here
//! and by libCacheSim there. docs/formats/libcachesim.md.

use std::io::Read;

mod common;
use common::{fixture, ok, path_in as p, tramp};

/// (time, object, size, next access) of the fixture's requests.
fn requests() -> Vec<(u32, u64, u32, i64)> {
    let mut text = String::new();
    zstd::Decoder::new(std::fs::File::open(fixture("twitter_cluster52.csv.zst")).unwrap())
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            )
        })
        .collect()
}

const MAGIC: u64 = 0x1234_5678_9abc_def0;

fn lcs_header(version: u64, n: usize) -> Vec<u8> {
    let mut h = vec![0u8; 8192];
    h[0..8].copy_from_slice(&MAGIC.to_le_bytes());
    h[8..16].copy_from_slice(&version.to_le_bytes());
    h[16..24].copy_from_slice(&1i64.to_le_bytes());
    h[24..32].copy_from_slice(&(n as i64).to_le_bytes());
    h[8184..].copy_from_slice(&MAGIC.to_le_bytes());
    h
}

/// The five files of bench/cachesim/layouts.py: (name, path).
fn files(dir: &tempfile::TempDir) -> Vec<(&'static str, String)> {
    let reqs = requests();
    let mut v1 = Vec::new();
    let mut v2 = Vec::new();
    let mut twr = Vec::new();
    let mut l1 = lcs_header(1, reqs.len());
    let mut l3 = lcs_header(3, reqs.len());
    for (i, &(t, o, s, n)) in reqs.iter().enumerate() {
        let i = i as u32;
        let ts = t as u64 * 1_000_000;
        for x in [i, s, 1] {
            v1.extend_from_slice(&x.to_le_bytes());
        }
        v1.extend_from_slice(&0x28u16.to_le_bytes());
        v1.extend_from_slice(&0x0100u16.to_le_bytes());
        v1.extend_from_slice(&o.to_le_bytes());
        v1.extend_from_slice(&ts.to_le_bytes());
        v2.extend_from_slice(&0x28u16.to_le_bytes());
        v2.extend_from_slice(&0x0200u16.to_le_bytes());
        for x in [i, s, 1] {
            v2.extend_from_slice(&x.to_le_bytes());
        }
        for x in [o, ts, 0] {
            v2.extend_from_slice(&x.to_le_bytes());
        }
        let k = s.min(10);
        let op: u32 = if i.is_multiple_of(7) { 3 } else { 1 };
        twr.extend_from_slice(&t.to_le_bytes());
        twr.extend_from_slice(&o.to_le_bytes());
        twr.extend_from_slice(&((k << 22) | (s - k)).to_le_bytes());
        twr.extend_from_slice(&(op << 24).to_le_bytes());
        l1.extend_from_slice(&t.to_le_bytes());
        l1.extend_from_slice(&o.to_le_bytes());
        l1.extend_from_slice(&s.to_le_bytes());
        l1.extend_from_slice(&n.to_le_bytes());
        l3.extend_from_slice(&t.to_le_bytes());
        l3.extend_from_slice(&o.to_le_bytes());
        l3.extend_from_slice(&(s as i64).to_le_bytes());
        l3.extend_from_slice(&(op | (5 << 8)).to_le_bytes());
        l3.extend_from_slice(&0u32.to_le_bytes());
        l3.extend_from_slice(&n.to_le_bytes());
    }
    assert_eq!(
        (v1.len(), v2.len(), twr.len()),
        (32 * reqs.len(), 40 * reqs.len(), 20 * reqs.len())
    );
    let mut out = Vec::new();
    for (name, file, bytes) in [
        ("vscsi1", "t.v1.vscsi", v1),
        ("vscsi2", "t.v2.vscsi", v2),
        ("twr", "t.twr", twr),
        ("lcs1", "t.v1.lcs", l1),
        ("lcs3", "t.v3.lcs", l3),
    ] {
        let path = p(dir, file);
        std::fs::write(&path, bytes).unwrap();
        out.push((name, path));
    }
    out
}

/// Misses per (policy, size) from `tramp cachesim --json`.
fn misses(args: &[&str]) -> Vec<(String, u64, u64)> {
    let json: serde_json::Value = serde_json::from_str(&ok(&tramp(args))).unwrap();
    json["table"]["caches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let reqs = c["reads"].as_u64().unwrap() + c["writes"].as_u64().unwrap();
            let hits = c["read_hits"].as_u64().unwrap() + c["write_hits"].as_u64().unwrap();
            (
                c["policy"].as_str().unwrap().to_string(),
                c["capacity"].as_u64().unwrap(),
                reqs - hits,
            )
        })
        .collect()
}

#[test]
fn each_layout_gives_libcachesims_own_misses() {
    let dir = tempfile::tempdir().unwrap();
    // libCacheSim 0.3.5 on these files (bench/cachesim/layouts.py): every
    // layout carries the same requests, and its readers give each the
    // same counts.
    let objects = [
        ("lru", 1000, 358717),
        ("lru", 10000, 224922),
        ("fifo", 1000, 385756),
        ("fifo", 10000, 249962),
        ("s3fifo", 1000, 327709),
        ("s3fifo", 10000, 200199),
    ];
    let bytes = [("lru", 1000000, 271140), ("lru", 10000000, 159887)];
    for (name, path) in files(&dir) {
        let got = misses(&[
            "cachesim",
            "--json",
            "-p",
            "lru,fifo,s3fifo",
            "-s",
            "1000,10000",
            &path,
        ]);
        let want: Vec<(String, u64, u64)> = objects
            .iter()
            .map(|&(p, s, m)| (p.to_string(), s, m))
            .collect();
        assert_eq!(got, want, "{name}");
        let got = misses(&[
            "cachesim",
            "--json",
            "--bytes",
            "-s",
            "1000000,10000000",
            &path,
        ]);
        let want: Vec<(String, u64, u64)> = bytes
            .iter()
            .map(|&(p, s, m)| (p.to_string(), s, m))
            .collect();
        assert_eq!(got, want, "{name} by bytes");
    }
}

#[test]
fn lcs_written_by_tramp_holds_the_requests_and_their_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let out = p(&dir, "t.lcs");
    let csv = fixture("twitter_cluster52.csv.zst");
    ok(&tramp(&["cachesim", "-s", "1", &csv, "--lcs", &out]));
    let b = std::fs::read(&out).unwrap();
    let reqs = requests();
    // lcs v3: 36-byte records.
    assert_eq!(b.len(), 8192 + 36 * reqs.len());
    let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let i64_at = |at: usize| u64_at(at) as i64;
    assert_eq!((u64_at(0), u64_at(8), u64_at(8184)), (MAGIC, 3, MAGIC));
    // The statistics, counted here from the csv.
    let objects: std::collections::HashMap<u64, u32> = reqs.iter().map(|r| (r.1, r.2)).collect();
    let req_bytes: i64 = reqs.iter().map(|r| r.2 as i64).sum();
    assert_eq!(i64_at(24), reqs.len() as i64, "n_req");
    assert_eq!(i64_at(32), objects.len() as i64, "n_obj");
    assert_eq!(i64_at(40), req_bytes, "n_req_byte");
    assert_eq!(i64_at(72), reqs.len() as i64, "n_read");
    // Each record: the request's number as its time, the object, the size
    // (i64), `get`, no TTL, and the 1-based number of the object's next request in the
    // file, −1 for none (computed here; the csv's own point past its
    // million requests, into the trace it was cut from).
    let mut nexts = vec![-1i64; reqs.len()];
    let mut later = std::collections::HashMap::new();
    for (i, r) in reqs.iter().enumerate().rev() {
        if let Some(&j) = later.get(&r.1) {
            nexts[i] = j as i64 + 1;
        }
        later.insert(r.1, i);
    }
    for (i, r) in reqs.iter().enumerate().step_by(997) {
        let at = 8192 + 36 * i;
        let u32_at = |k: usize| u32::from_le_bytes(b[at + k..at + k + 4].try_into().unwrap());
        assert_eq!(u32_at(0), i as u32);
        assert_eq!(u64_at(at + 4), r.1);
        assert_eq!(i64_at(at + 12), r.2 as i64);
        assert_eq!(u32_at(20) & 0xff, 1);
        assert_eq!(u32_at(24), 0);
        assert_eq!(i64_at(at + 28), nexts[i], "record {i}");
    }
    // Read back: the same misses, OPT included (next access from the file).
    let a = misses(&["cachesim", "--json", "-p", "lru,opt", "-s", "1000", &csv]);
    let b = misses(&["cachesim", "--json", "-p", "lru,opt", "-s", "1000", &out]);
    assert_eq!(a, b);
}

#[test]
fn lcs_output_needs_a_file_and_damage_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let csv = fixture("twitter_cluster52.csv.zst");
    let out = tramp(&["cachesim", "-s", "1", &csv, "--lcs", "-"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("seek back"));
    // A twr file cut inside its third record.
    let path = p(&dir, "cut.twr");
    std::fs::write(&path, vec![0x11u8; 50]).unwrap();
    let out = tramp(&["cachesim", "-s", "10", &path]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("record 2") && err.contains("byte offset 40") && err.contains("10 of 20"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 requests"));
    // An lcs header with a wrong end magic.
    let mut h = lcs_header(2, 0);
    h[8184] ^= 1;
    let path = p(&dir, "bad.lcs");
    std::fs::write(&path, h).unwrap();
    let out = tramp(&["cachesim", "-s", "10", &path]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("end magic"));
}

#[test]
fn block_requests_split_into_pages() {
    let dir = tempfile::tempdir().unwrap();
    // vscsi v1: sectors 0 (4 KiB), 8 (4 KiB), 4 (8 KiB: pages 0 and 1 of
    // 4 KiB, and page 0 again counts once per request).
    let mut v = Vec::new();
    for (i, (lbn, len)) in [(0u64, 4096u32), (8, 4096), (4, 8192), (0, 512)]
        .iter()
        .enumerate()
    {
        for x in [i as u32, *len, 1] {
            v.extend_from_slice(&x.to_le_bytes());
        }
        v.extend_from_slice(&0x28u16.to_le_bytes());
        v.extend_from_slice(&0x0100u16.to_le_bytes());
        v.extend_from_slice(&lbn.to_le_bytes());
        v.extend_from_slice(&0u64.to_le_bytes());
    }
    let path = p(&dir, "t.vscsi");
    std::fs::write(&path, v).unwrap();
    let json: serde_json::Value = serde_json::from_str(&ok(&tramp(&[
        "cachesim", "--json", "--page", "4096", "-s", "10", &path,
    ])))
    .unwrap();
    // Pages: 0 | 1 | 0, 1, 2 | 0  →  6 requests, 3 distinct pages.
    let c = &json["table"]["caches"][0];
    assert_eq!(json["requests"].as_u64(), Some(6));
    assert_eq!(c["read_hits"].as_u64(), Some(3));
    // Tramp's own formats are cut by --line, not --page.
    let ptf = fixture("figure3.ptf.txt");
    assert!(std::path::Path::new(&ptf).exists());
    let out = tramp(&["cachesim", "--page", "4096", "-s", "10", &ptf]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--line"));
}
