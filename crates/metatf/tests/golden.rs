//! Golden DTDs: every good DTD's checked form, and every bad DTD's
//! diagnostics (file, line, column and a marker), compared with files
//! beside them. `UPDATE_GOLDEN=1` rewrites the expectations.

use std::path::{Path, PathBuf};

fn dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/dtd")
        .join(kind)
}

fn dtds(kind: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir(kind))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "dtd"))
        .collect();
    v.sort();
    v
}

fn compare(path: &Path, ext: &str, actual: &str) {
    let expected = path.with_extension(ext);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&expected, actual).unwrap();
    }
    let want = std::fs::read_to_string(&expected)
        .unwrap_or_else(|_| panic!("missing {}", expected.display()));
    assert_eq!(
        actual,
        want,
        "{} differs (UPDATE_GOLDEN=1 regenerates)",
        expected.display()
    );
}

#[test]
fn good_dtds_check_to_their_golden_form() {
    let all = dtds("good");
    assert!(all.len() >= 3);
    for path in all {
        let src = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        match tramp_metatf::load(&src) {
            Ok(dtd) => compare(&path, "out", &dtd.to_string()),
            Err(d) => panic!("{}", tramp_metatf::render(name, &src, &d)),
        }
    }
}

#[test]
fn bad_dtds_give_their_golden_diagnostics() {
    let all = dtds("bad");
    assert!(all.len() >= 10);
    for path in all {
        let src = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        match tramp_metatf::load(&src) {
            Ok(_) => panic!("{name} was accepted"),
            Err(d) => compare(&path, "err", &tramp_metatf::render(name, &src, &d)),
        }
    }
}
