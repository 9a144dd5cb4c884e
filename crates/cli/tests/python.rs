//! The Python package's tests (python/tests, pytest): the package is
//! built into this workspace's target directory with the tests' profile
//! (so nothing compiled for the Rust tests is compiled again) and
//! installed, then pytest runs with this build's `tramp` as the CLI the
//! package's numbers are checked against.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
}

/// Builds the wheel (maturin) and installs it, as setup.sh does, so
/// that pytest tests these sources and not an older install.
fn install() {
    let wheels = root().join("target/wheels");
    if let Ok(entries) = std::fs::read_dir(&wheels) {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with("tramp-") {
                std::fs::remove_file(e.path()).unwrap();
            }
        }
    }
    let built = Command::new("python3")
        .args([
            "-m",
            "maturin",
            "build",
            "--quiet",
            "-m",
            "python/Cargo.toml",
        ])
        .args([
            "--profile",
            "test-release",
            "--target-dir",
            "target",
            "-o",
            "target/wheels",
        ])
        .current_dir(root())
        .status()
        .expect("python3 -m maturin (setup.sh installs it)");
    assert!(built.success(), "maturin build failed");
    let wheel = std::fs::read_dir(&wheels)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("tramp-")
        })
        .expect("a wheel");
    let pip = |extra: &[&str]| {
        Command::new("python3")
            .args(["-m", "pip", "install", "-q", "--root-user-action", "ignore"])
            .args(["--force-reinstall", "--no-deps"])
            .args(extra)
            .arg(&wheel)
            .status()
            .unwrap()
            .success()
    };
    assert!(
        pip(&[]) || pip(&["--break-system-packages"]),
        "pip install of {wheel:?} failed"
    );
}

#[test]
fn the_python_packages_pytest_suite_passes() {
    install();
    let status = Command::new("python3")
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "python/tests",
        ])
        .env("TRAMP_BIN", env!("CARGO_BIN_EXE_tramp"))
        .current_dir(root())
        .status()
        .expect("python3 -m pytest (setup.sh installs it)");
    assert!(
        status.success(),
        "pytest python/tests failed (its output is above)"
    );
}
