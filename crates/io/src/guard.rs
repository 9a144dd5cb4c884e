//! The promises every command keeps, kept once: no output is written over a
//! file this process reads (by device and inode), directories and temporary
//! files of unfinished outputs are removed on failure or signal.

#![allow(unused_imports)]

use super::*;

/// A regular file's identity: (device, inode).
pub(crate) type FileId = (u64, u64);

/// What this process reads and writes, for the promises above.
#[derive(Default)]
pub(crate) struct Guard {
    /// Regular files opened as inputs: identity and the name given.
    pub(crate) inputs: Vec<(FileId, String)>,
    /// Existing files that unfinished outputs will replace.
    pub(crate) outputs: Vec<(FileId, String)>,
    /// Temporary files of outputs not yet finished.
    pub(crate) unfinished: Vec<std::path::PathBuf>,
    /// Directories made for outputs not yet finished (parents first).
    pub(crate) made_dirs: Vec<std::path::PathBuf>,
}

pub(crate) static GUARD: std::sync::Mutex<Option<Guard>> = std::sync::Mutex::new(None);

pub(crate) fn with_guard<T>(f: impl FnOnce(&mut Guard) -> T) -> T {
    // A poisoned lock still holds valid lists (each change is one push or
    // one retain).
    let mut g = GUARD.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Guard::default))
}

/// The identity of a regular file (devices, pipes and missing paths have
/// none that matters: they are never replaced).
pub(crate) fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    m.is_file().then(|| (m.dev(), m.ino()))
}

pub(crate) fn same_file_error(output: &str, input: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        if output == input {
            format!(
                "{output} is also this command's input: tramp never writes over its input; choose another output"
            )
        } else {
            format!(
                "{output} is the same file as this command's input {input}: tramp never writes over its input; choose another output"
            )
        },
    )
}

/// Notes that this process reads the file `name` (a path; `-` and
/// non-files are ignored): an output onto the same file is then refused,
/// and reading a file an unfinished output will replace is refused too.
/// [`Input::open`] notes its inputs itself; commands note the other files
/// they read (scripts, descriptions).
pub fn note_input(name: &str) -> io::Result<()> {
    if name == "-" {
        return Ok(());
    }
    let Some(id) = file_id(Path::new(name)) else {
        return Ok(());
    };
    with_guard(|g| {
        if let Some((_, out)) = g.outputs.iter().find(|(o, _)| *o == id) {
            return Err(same_file_error(out, name));
        }
        if !g.inputs.iter().any(|(i, _)| *i == id) {
            g.inputs.push((id, name.to_string()));
        }
        Ok(())
    })
}

/// Refuses an output whose file (after links) is one of this process's
/// inputs. Commands call it for every output before any work, so that a
/// run that would be refused at its end is refused at its start; every
/// [`Output::create`] checks again.
pub fn check_output(name: &str) -> io::Result<()> {
    if name == "-" {
        return Ok(());
    }
    let target = resolve_links(std::path::PathBuf::from(name))?;
    let Some(id) = file_id(&target) else {
        return Ok(());
    };
    with_guard(|g| match g.inputs.iter().find(|(i, _)| *i == id) {
        Some((_, input)) => Err(same_file_error(name, input)),
        None => Ok(()),
    })
}

/// Removes the temporary file of every output not yet finished. For a
/// signal handler: the process is about to exit without unwinding, so no
/// destructor would remove them.
pub fn remove_unfinished() {
    let (paths, dirs) = with_guard(|g| {
        (
            std::mem::take(&mut g.unfinished),
            std::mem::take(&mut g.made_dirs),
        )
    });
    for p in paths {
        let _ = std::fs::remove_file(p);
    }
    // Innermost first; a directory something else wrote into stays.
    for d in dirs.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
}

/// Directories a run made for its outputs: removed when it fails or is
/// interrupted (those left empty: a file something else put there keeps
/// its directory), kept once [`MadeDirs::keep`] says the run succeeded.
#[derive(Debug, Default)]
pub struct MadeDirs {
    pub(crate) dirs: Vec<std::path::PathBuf>,
}

impl MadeDirs {
    pub fn new() -> MadeDirs {
        MadeDirs::default()
    }

    /// Creates `dir` and its missing parents, noting the ones it made.
    pub fn create(&mut self, dir: &Path) -> io::Result<()> {
        let mut missing = Vec::new();
        let mut d = Some(dir);
        while let Some(p) = d.filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
            missing.push(p.to_path_buf());
            d = p.parent();
        }
        std::fs::create_dir_all(dir)?;
        for m in missing.into_iter().rev() {
            with_guard(|g| g.made_dirs.push(m.clone()));
            self.dirs.push(m);
        }
        Ok(())
    }

    /// The run succeeded: the directories stay.
    pub fn keep(mut self) {
        let dirs = std::mem::take(&mut self.dirs);
        with_guard(|g| g.made_dirs.retain(|d| !dirs.contains(d)));
    }
}

impl Drop for MadeDirs {
    fn drop(&mut self) {
        let dirs = std::mem::take(&mut self.dirs);
        with_guard(|g| g.made_dirs.retain(|d| !dirs.contains(d)));
        for d in dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
}
