//! End-to-end tests of trust (issue 11): damage is a non-zero exit with
//! everything around it kept, outputs appear only when complete, and a
//! closed pipe ends a command quietly.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn tramp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(args)
        .output()
        .expect("tramp runs")
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Bytes that no reader takes for anything (a fixed pseudo-random stream).
fn noise(n: usize) -> Vec<u8> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// The Heph runtime's own trace with the second packet's size field
/// claiming 2 GiB: the reader resynchronises at the next packet.
fn heph_with_a_bad_size() -> Vec<u8> {
    let mut d = std::fs::read(fixture("heph_tracing_example.bin.log")).unwrap();
    let first = u32::from_be_bytes(d[4..8].try_into().unwrap()) as usize;
    d[first + 4..first + 8].copy_from_slice(&0x7fff_fff0u32.to_be_bytes());
    d
}

#[test]
fn heph_damage_is_a_nonzero_exit_after_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let random = dir.path().join("random.heph");
    std::fs::write(&random, noise(5000)).unwrap();
    let damaged = dir.path().join("damaged.heph");
    std::fs::write(&damaged, heph_with_a_bad_size()).unwrap();
    let clean = fixture("heph_tracing_example.bin.log");
    let json = dir.path().join("out.json");
    let json = json.to_str().unwrap();
    for file in [random.to_str().unwrap(), damaged.to_str().unwrap()] {
        for args in [
            vec!["stats", "-f", "heph", file],
            vec!["spans", "-f", "heph", file],
            vec!["dump", "-f", "heph", file],
            vec!["export", "-f", "heph", "--chrome", json, file],
        ] {
            let out = tramp(&args);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
            let err = stderr(&out);
            assert!(err.contains("tramp: warning:"), "{args:?}: {err}");
            assert!(err.contains("the trace is damaged"), "{args:?}: {err}");
        }
    }
    // The damaged trace still reports every packet around the damage.
    let out = tramp(&["stats", damaged.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    let clean_out = tramp(&["stats", &clean]);
    assert!(clean_out.status.success());
    let packets = |t: &str| -> u64 {
        t.lines()
            .find_map(|l| l.strip_prefix("packets"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let all = packets(&String::from_utf8(clean_out.stdout).unwrap());
    assert_eq!(packets(&text), all - 1, "only the damaged packet is lost");
}

/// Runs `tramp args`, reads `keep` bytes of its stdout and closes the pipe.
fn read_then_close(args: &[&str], keep: usize) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut buf = vec![0u8; keep];
    stdout.read_exact(&mut buf).unwrap();
    drop(stdout);
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let hatf = dir.path().join("s.hatf");
    let hatf = hatf.to_str().unwrap();
    assert!(
        tramp(&["sample", "--events", "200000", "-o", hatf])
            .status
            .success()
    );
    let ptf = dir.path().join("o.ptf");
    let ptf = ptf.to_str().unwrap();
    assert!(
        tramp(&["workload", "oo7", "--ops", "t1", "-o", ptf])
            .status
            .success()
    );
    let heph = fixture("scalar.bin.log");
    for args in [
        vec!["dump", hatf],
        vec!["dump", ptf],
        vec!["dump", &heph],
        vec!["convert", hatf, "-", "--to", "hatf-text"],
        vec!["convert", ptf, "-", "--to", "ptf-text"],
        vec!["export", "--chrome", "-", &heph],
        vec!["sample", "--events", "200000", "-o", "-"],
    ] {
        let out = read_then_close(&args, 64);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
    }
}

#[test]
fn text_records_with_missing_fields_or_cut_short_are_errors_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let dtd = fixture("fstrace.dtd");
    let records = std::fs::read_to_string(fixture("fstrace-records.txt")).unwrap();
    let out_path = dir.path().join("out.mtf");
    let out_path = out_path.to_str().unwrap();
    let cases = [
        // A Meta-TF record without its `length`.
        (
            records.replacen(" length=4096", "", 1),
            "line 2",
            "`read` lacks field `length`",
        ),
        // Cut in the middle of the last line.
        (
            records[..records.len() - 3].to_string(),
            "line 4",
            "ends in the middle of this line",
        ),
    ];
    for (text, line, msg) in cases {
        let input = dir.path().join("in.mtf.txt");
        std::fs::write(&input, &text).unwrap();
        let out = tramp(&[
            "convert",
            "--dtd",
            &dtd,
            "--format",
            "metatf-text",
            input.to_str().unwrap(),
            out_path,
        ]);
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        assert!(err.contains(line) && err.contains(msg), "{err}");
    }
    // HATF text: `alloc size=5` and `free` are not records of address 0.
    for (text, msg) in [
        ("alloc size=5\n", "alloc lacks `address=`"),
        ("free\n", "free lacks `address=`"),
    ] {
        let input = dir.path().join("in.hatf.txt");
        std::fs::write(&input, format!("# tramp hatf-text 1\n{text}")).unwrap();
        let out = tramp(&["stats", input.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        assert!(err.contains("line 2") && err.contains(msg), "{err}");
    }
}
