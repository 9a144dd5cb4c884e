//! Compiles the capture library (crates/capture, no dependencies) with the
//! same rustc and embeds it in `tramp`, so that `tramp record` works from a
//! plain `cargo build` or `cargo install` without hunting for files.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let src = manifest.join("../capture/src");
    println!("cargo:rerun-if-changed={}", src.display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"))
        .join("libtramp_capture.so");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let status = Command::new(rustc)
        .args([
            "--edition=2024",
            "--crate-type=cdylib",
            "--crate-name=tramp_capture",
            "-C",
            "opt-level=3",
            "-C",
            "panic=abort",
            "-C",
            "debuginfo=0",
            "-C",
            "strip=debuginfo",
            "-o",
        ])
        .arg(&out)
        .arg(src.join("lib.rs"))
        .status()
        .expect("rustc runs");
    assert!(status.success(), "building the capture library failed");
}
