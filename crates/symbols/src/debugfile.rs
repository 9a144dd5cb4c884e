//! Where a module's separate debug information is, found as gdb, perf
//! and heaptrack find it: by build-id (`DIR/.build-id/xx/rest.debug`
//! under each debug directory), then by `.gnu_debuglink` (the named file
//! next to the module, in its `.debug/`, and under each debug directory
//! followed by the module's own directory). The debug directories are
//! `/usr/lib/debug` (where Debian's `*-dbg` packages put theirs) and those
//! given with `--debug-dir`, searched first. A candidate whose build-id
//! differs from the module's is not taken.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The system's debug directory.
pub const SYSTEM_DEBUG_DIR: &str = "/usr/lib/debug";

static EXTRA_DIRS: OnceLock<Vec<PathBuf>> = OnceLock::new();

/// Directories searched before [`SYSTEM_DEBUG_DIR`] (`--debug-dir`), set
/// once per process by the front end before anything is symbolized.
pub fn set_debug_dirs(dirs: Vec<PathBuf>) {
    let _ = EXTRA_DIRS.set(dirs);
}

fn debug_dirs() -> Vec<PathBuf> {
    let mut v = EXTRA_DIRS.get().cloned().unwrap_or_default();
    v.push(PathBuf::from(SYSTEM_DEBUG_DIR));
    v
}

/// A module's build-id and debuglink name, and whether it carries DWARF.
struct Ids {
    build_id: Option<Vec<u8>>,
    debuglink: Option<String>,
    has_dwarf: bool,
}

fn ids(data: &[u8]) -> Option<Ids> {
    use object::{Object, ObjectSection};
    let obj = object::File::parse(data).ok()?;
    Some(Ids {
        build_id: obj.build_id().ok().flatten().map(<[u8]>::to_vec),
        debuglink: obj
            .gnu_debuglink()
            .ok()
            .flatten()
            .map(|(name, _crc)| String::from_utf8_lossy(name).into_owned()),
        has_dwarf: obj
            .section_by_name(".debug_info")
            .is_some_and(|s| s.size() > 0),
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The file holding `module`'s DWARF when the module itself has none:
/// `None` when it has its own, or no separate file is found.
pub fn find(module: &Path) -> Option<PathBuf> {
    let data = std::fs::read(module).ok()?;
    let own = ids(&data)?;
    if own.has_dwarf {
        return None;
    }
    let dirs = debug_dirs();
    let mut candidates = Vec::new();
    if let Some(id) = own.build_id.as_deref().filter(|id| id.len() > 1) {
        let h = hex(id);
        for d in &dirs {
            candidates.push(
                d.join(".build-id")
                    .join(&h[..2])
                    .join(format!("{}.debug", &h[2..])),
            );
        }
    }
    if let Some(link) = &own.debuglink {
        let dir = module.parent().unwrap_or(Path::new("/"));
        candidates.push(dir.join(link));
        candidates.push(dir.join(".debug").join(link));
        // The module's directory under each debug directory, as it is
        // (/lib/x86_64-linux-gnu) and as the file resolves (/usr/lib/…).
        let mut own_dirs = vec![dir.to_path_buf()];
        if let Ok(real) = std::fs::canonicalize(module)
            && let Some(p) = real.parent()
        {
            own_dirs.push(p.to_path_buf());
        }
        for d in &dirs {
            for o in &own_dirs {
                let rel = o.strip_prefix("/").unwrap_or(o);
                candidates.push(d.join(rel).join(link));
            }
        }
    }
    candidates.into_iter().find(|c| {
        c != module
            && std::fs::read(c)
                .ok()
                .and_then(|d| ids(&d))
                .is_some_and(|i| {
                    i.has_dwarf
                        && match (&own.build_id, &i.build_id) {
                            (Some(a), Some(b)) => a == b,
                            _ => true,
                        }
                })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_ids_name_their_file_by_hex() {
        assert_eq!(hex(&[0x93, 0xac, 0x01]), "93ac01");
    }

    #[test]
    fn a_file_without_elf_finds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.so");
        std::fs::write(&p, b"not elf").unwrap();
        assert_eq!(find(&p), None);
    }
}
