//! Helpers the end-to-end test files share: running the `tramp` binary and
//! naming files in a test's temporary directory or its fixtures.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Runs `tramp args` and collects its output.
pub fn tramp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(args)
        .output()
        .expect("tramp runs")
}

/// `name` inside a test's temporary directory, as a string argument.
pub fn path_in(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_str().unwrap().to_string()
}

/// A fixture: the CLI's own (crates/cli/tests/fixtures), else one the
/// crates share (tests/fixtures/*/, each file in one place).
pub fn fixture(name: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let own = root.join("tests/fixtures").join(name);
    let shared = ["heph", "ptf", "cache"]
        .iter()
        .map(|d| root.join("../../tests/fixtures").join(d).join(name))
        .find(|p| p.exists());
    let path = if own.exists() {
        own
    } else {
        shared.unwrap_or(own)
    };
    path.to_str().unwrap().to_string()
}

/// Names in `dir`, sorted (hidden temporary files included).
pub fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Bytes that no reader takes for anything (a fixed pseudo-random stream
/// from `seed`).
pub fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// A command's stderr as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A successful command's stdout (a failure shows its status and stderr).
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "tramp failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// Compares `actual` with tests/golden/`name`; `UPDATE_GOLDEN=1` rewrites
/// the golden file instead.
pub fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        actual, want,
        "golden {name} differs; UPDATE_GOLDEN=1 regenerates it"
    );
}

/// Runs `exe` under heaptrack (installed by setup.sh) in `dir`, its file
/// named from `name` (`heaptrack -o DIR/NAME`, plus `opts`); the path of
/// the file heaptrack wrote.
pub fn heaptrack_file(dir: &tempfile::TempDir, exe: &str, name: &str, opts: &[&str]) -> String {
    let out = path_in(dir, name);
    let run = Command::new("heaptrack")
        .args(opts)
        .args(["-o", &out, exe])
        .output()
        .expect("heaptrack runs (setup.sh installs it)");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let prefix = format!("{name}.");
    std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|f| {
            f.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&prefix)
        })
        .expect("heaptrack's file")
        .to_string_lossy()
        .into_owned()
}

/// heaptrack_print's report of a heaptrack file.
pub fn heaptrack_print(file: &str) -> String {
    let printed = Command::new("heaptrack_print").arg(file).output().unwrap();
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    String::from_utf8_lossy(&printed.stdout).into_owned()
}

/// `fixtures/heap/NAME.c` built with `cc -O0 -g` in `dir` (at -O1 gcc
/// removes malloc/free pairs); the program's path.
pub fn build_heap_fixture(dir: &tempfile::TempDir, name: &str) -> String {
    let exe = path_in(dir, name);
    let src = fixture(&format!("heap/{name}.c"));
    let built = Command::new("cc")
        .args(["-O0", "-g", &src, "-o", &exe])
        .status()
        .unwrap();
    assert!(built.success(), "cc {src}");
    exe
}

/// Builds `crates/cli/tests/programs/SRC` into `dir/OUT` with the C
/// compiler (CC, else cc) and `flags`; returns the program's path.
pub fn cc_program(dir: &Path, src: &str, out: &str, flags: &[&str]) -> String {
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let out = dir.join(out);
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(programs.join(src))
        .status()
        .expect("the C compiler runs");
    assert!(status.success(), "building {src}");
    out.to_str().unwrap().to_string()
}

/// A new directory holding handoff.c (four threads passing heap objects
/// between them) built and recorded as `h.tpack`, and the recording's path.
pub fn handoff_recording() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let exe = cc_program(
        dir.path(),
        "handoff.c",
        "handoff",
        &["-O1", "-g", "-pthread"],
    );
    let trace = path_in(&dir, "h.tpack");
    ok(&tramp(&["record", "-o", &trace, "--", &exe]));
    (dir, trace)
}

/// Runs the Playwright script `tests/browser/NAME` with `args` and parses
/// the JSON it prints (a failure shows its stderr).
pub fn browser(name: &str, args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/browser")
        .join(name);
    let out = Command::new("python3")
        .arg(&script)
        .args(args)
        .output()
        .expect("python3 runs (./setup.sh installs Playwright)");
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
