//! Compiles the capture library and the replay driver (crates/capture, no
//! dependencies) with the same rustc, for `src/lib.rs` to carry as bytes,
//! so that `tramp record`, `tramp replay` and the Python package work
//! from a plain `cargo build`, `cargo install` or wheel.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let src = manifest.join("../capture/src");
    println!("cargo:rerun-if-changed={}", src.display());
    // The replay plan's layout, which the driver includes from tramp-heap.
    println!(
        "cargo:rerun-if-changed={}",
        manifest.join("../heap/src/replay/plan_format.rs").display()
    );
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    build(
        &rustc,
        &src.join("lib.rs"),
        "cdylib",
        "tramp_capture",
        &out_dir.join("libtramp_capture.so"),
    );
    build(
        &rustc,
        &src.join("bin/tramp-replay/main.rs"),
        "bin",
        "tramp_replay",
        &out_dir.join("tramp-replay"),
    );
}

fn build(rustc: &OsStr, src: &Path, kind: &str, name: &str, out: &Path) {
    let status = Command::new(rustc)
        .arg("--edition=2024")
        .arg(format!("--crate-type={kind}"))
        .arg(format!("--crate-name={name}"))
        .args([
            "-C",
            "opt-level=3",
            // One unit: the capture library's hot paths cross its module
            // files (recording → buffers → unwind), and one unit inlines
            // across them whatever rustc's partitioning.
            "-C",
            "codegen-units=1",
            "-C",
            "panic=abort",
            "-C",
            "debuginfo=0",
            "-C",
            "strip=debuginfo",
            "-o",
        ])
        .arg(out)
        .arg(src)
        .status()
        .expect("rustc runs");
    assert!(status.success(), "building {name} failed");
}
