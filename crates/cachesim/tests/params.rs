//! Every parameter's bounds walked against libCacheSim 0.3.5's Python
//! binding (issue 48, case 6): at each bound and past it, tramp refuses a
//! policy exactly where libCacheSim does. On the main of 2026-12-01,
//! `s3fifo:small=0` and `wtinylfu:window-size=1` ran and reported a miss
//! ratio of 1.0 at every size; libCacheSim refuses both.
//! Needs `pip install libcachesim==0.3.5` (setup.sh installs it).

use std::io::Write;
use std::process::{Command, Stdio};

use tramp_cachesim::PolicySpec;

/// (tramp's spec, the binding's class, its keyword, the value, the size).
#[rustfmt::skip]
const CASES: &[(&str, &str, &str, &str, u64)] = &[
    ("s3fifo:small-size-ratio=0", "S3FIFO", "small_size_ratio", "0.0", 1000),
    ("s3fifo:small-size-ratio=0.0005", "S3FIFO", "small_size_ratio", "0.0005", 1000),
    ("s3fifo:small-size-ratio=0.001", "S3FIFO", "small_size_ratio", "0.001", 1000),
    ("s3fifo:small-size-ratio=0.999", "S3FIFO", "small_size_ratio", "0.999", 1000),
    ("s3fifo:small-size-ratio=1", "S3FIFO", "small_size_ratio", "1.0", 1000),
    ("s3fifo:ghost-size-ratio=0", "S3FIFO", "ghost_size_ratio", "0.0", 1000),
    ("s3fifo:ghost-size-ratio=64", "S3FIFO", "ghost_size_ratio", "64.0", 1000),
    ("s3fifo:move-to-main-threshold=1", "S3FIFO", "move_to_main_threshold", "1", 1000),
    ("s3fifo:move-to-main-threshold=255", "S3FIFO", "move_to_main_threshold", "255", 1000),
    ("wtinylfu:window-size=0", "WTinyLFU", "window_size", "0.0", 1000),
    ("wtinylfu:window-size=0.99", "WTinyLFU", "window_size", "0.99", 1000),
    ("wtinylfu:window-size=1", "WTinyLFU", "window_size", "1.0", 1000),
    ("2q:Ain-size-ratio=0", "TwoQ", "a_in_size_ratio", "0.0", 1000),
    ("2q:Aout-size-ratio=64", "TwoQ", "a_out_size_ratio", "64.0", 1000),
    ("mq:n-queue=0", "MQ", "n_queue", "0", 1000),
    ("mq:n-queue=1", "MQ", "n_queue", "1", 1000),
    ("mq:n-queue=64", "MQ", "n_queue", "64", 1000),
    ("mq:n-queue=65", "MQ", "n_queue", "65", 1000),
    ("mq:lifetime=0", "MQ", "lifetime", "0", 1000),
    ("mq:lifetime=1", "MQ", "lifetime", "1", 1000),
    ("mq:Qout-size-ratio=0", "MQ", "qout_size_ratio", "0.0", 1000),
    ("mq:Qout-size-ratio=64", "MQ", "qout_size_ratio", "64.0", 1000),
    ("clock:n-bit-counter=1", "Clock", "n_bit_counter", "1", 1000),
    ("clock:n-bit-counter=3", "Clock", "n_bit_counter", "3", 1000),
    ("lruk:k=0", "LRUK", "k", "0", 1000),
    ("lruk:k=1", "LRUK", "k", "1", 1000),
    ("lruk:k=64", "LRUK", "k", "64", 1000),
    ("lruprob:prob=0", "LRUProb", "prob", "0.0", 1000),
    ("lruprob:prob=1", "LRUProb", "prob", "1.0", 1000),
    ("clock2qplus:fifo-size-ratio=0", "Clock2QPlus", "fifo_size_ratio", "0.0", 1000),
    ("clock2qplus:fifo-size-ratio=1", "Clock2QPlus", "fifo_size_ratio", "1.0", 1000),
    ("clock2qplus:corr-window-ratio=0", "Clock2QPlus", "corr_window_ratio", "0.0", 1000),
    ("clock2qplus:corr-window-ratio=1", "Clock2QPlus", "corr_window_ratio", "1.0", 1000),
    ("clock2qplus:move-to-main-threshold=1", "Clock2QPlus", "move_to_main_threshold", "1", 1000),
    ("clockpro:init-ratio-cold=0", "ClockPro", "init_ratio_cold", "0.0", 1000),
    ("clockpro:init-ratio-cold=1", "ClockPro", "init_ratio_cold", "1.0", 1000),
    ("clockpro:init-ref=1", "ClockPro", "init_ref", "1", 1000),
    ("flashprob:ram-size-ratio=0", "FlashProb", "ram_size_ratio", "0.0", 1000),
    ("flashprob:ram-size-ratio=0.05", "FlashProb", "ram_size_ratio", "0.05", 1000),
    ("flashprob:ram-size-ratio=1", "FlashProb", "ram_size_ratio", "1.0", 1000),
    ("flashprob:disk-admit-prob=0", "FlashProb", "disk_admit_prob", "0.0", 1000),
    ("flashprob:disk-admit-prob=1", "FlashProb", "disk_admit_prob", "1.0", 1000),
    ("lecar:lru-weight=0", "LeCaR", "lru_weight", "0.0", 1000),
    ("lecar:lru-weight=1", "LeCaR", "lru_weight", "1.0", 1000),
];

/// Whether tramp refuses `spec` at `size` (its parse, then the size check).
fn tramp_refuses(spec: &str, size: u64) -> bool {
    match spec.parse::<PolicySpec>() {
        Err(_) => true,
        Ok(p) => p.check_capacity(size).is_err(),
    }
}

#[test]
fn every_parameter_bound_is_refused_where_libcachesim_refuses_it() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peer/refuses.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut input = String::new();
    for (_, class, kw, value, size) in CASES {
        input += &format!("{class} {kw} {value} {size}\n");
    }
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "libcachesim==0.3.5 is needed (setup.sh installs it)"
    );
    let verdicts: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(verdicts.len(), CASES.len());
    let mut wrong = Vec::new();
    for ((spec, .., size), peer) in CASES.iter().zip(&verdicts) {
        let ours = tramp_refuses(spec, *size);
        if ours != (peer == "refused") {
            wrong.push(format!(
                "{spec} at {size}: libCacheSim {peer}, tramp refuses: {ours}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // The refusals say which range libCacheSim takes.
    let e = "wtinylfu:window-size=1"
        .parse::<PolicySpec>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("outside [0, 1)"), "{e}");
    let e = "s3fifo:small=0.1:small=0.2"
        .parse::<PolicySpec>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("given twice"), "{e}");
}
