//! `tramp cc`: compiling C programs whose 8-byte loads and stores `tramp
//! record --pointers` can see.
//!
//! The compiler is asked to call a hook before every memory access: gcc
//! through ThreadSanitizer's instrumentation (`-fsanitize=thread`, whose
//! hooks are plain functions; the link leaves out its runtime), clang
//! through `-fsanitize-coverage=edge,trace-loads,trace-stores`. A link also gets
//! the hook stub (`pointer_hooks.c`, compiled here without instrumentation)
//! and exports its table, which the capture library fills in.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use tramp_core::Error;

/// The stub every instrumented program links (see the file's comment).
pub const HOOKS_C: &str = include_str!("pointer_hooks.c");

/// `tramp.h`: TRAMP_ALLOC, TRAMP_REALLOC and TRAMP_FREE, for programs
/// with allocators of their own (`tramp header` prints it; `tramp cc`
/// puts it on the include path, after the user's and the system's).
pub const TRAMP_H: &str = include_str!("tramp.h");

/// The compiler families whose hooks the stub defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compiler {
    Gcc,
    Clang,
}

impl Compiler {
    /// Asks `cc --version` which compiler it is.
    pub fn detect(cc: &OsStr) -> Result<Compiler, Error> {
        let out = Command::new(cc)
            .arg("--version")
            .output()
            .map_err(|e| Error::Program(format!("cannot run {}: {e}", cc.to_string_lossy())))?;
        let text = String::from_utf8_lossy(&out.stdout).to_lowercase();
        if text.contains("clang") {
            Ok(Compiler::Clang)
        } else if text.contains("gcc") || text.contains("free software foundation") {
            Ok(Compiler::Gcc)
        } else {
            Err(Error::Program(format!(
                "{} is neither gcc nor clang (its --version says {:?})",
                cc.to_string_lossy(),
                text.lines().next().unwrap_or("")
            )))
        }
    }

    /// The flags that make the compiler call the hooks.
    pub fn instrument_flags(self) -> &'static [&'static str] {
        match self {
            // ThreadSanitizer's instrumentation without its runtime: every
            // access to memory that may escape becomes `__tsan_read8(addr)`
            // / `__tsan_write8(addr)`; no function entry/exit calls. (gcc's
            // AddressSanitizer hooks skip an access that repeats one checked
            // earlier in the block, so `p->next = q` after reading p->next
            // would go unseen.) The link must not name -fsanitize=thread,
            // which would bring libtsan: see `plan`.
            Compiler::Gcc => &[
                "-fsanitize=thread",
                "--param=tsan-instrument-func-entry-exit=0",
            ],
            // `edge` is the coverage kind the load/store tracing needs to be
            // on at all (with none, clang instruments nothing); without a
            // sanitizer runtime, whose pre-init code would run before the
            // capture library can read the environment.
            Compiler::Clang => &[
                "-fsanitize-coverage=edge,trace-loads,trace-stores",
                "-fno-sanitize-link-runtime",
            ],
        }
    }
}

/// Whether a compiler command links (no `-c`, `-S`, `-E`, `-M`, `-MM`).
pub fn links(args: &[OsString]) -> bool {
    !args
        .iter()
        .any(|a| matches!(a.to_str(), Some("-c" | "-S" | "-E" | "-M" | "-MM")))
}

/// Options whose value is the next argument.
const TAKES_VALUE: &[&str] = &[
    "-o",
    "-I",
    "-D",
    "-U",
    "-include",
    "-imacros",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-iprefix",
    "-isysroot",
    "-x",
    "-MF",
    "-MT",
    "-MQ",
    "-L",
    "-l",
    "-Xlinker",
    "-Xassembler",
    "-Xpreprocessor",
    "-u",
    "-T",
    "-z",
    "-aux-info",
    "--param",
];

/// C and C++ source extensions (what gcc compiles rather than links).
const SOURCES: &[&str] = &["c", "cc", "cp", "cpp", "cxx", "c++", "C", "i", "ii"];

/// One argument of a compiler command, classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arg {
    /// An option (with its value, if separate, as the next `Value`).
    Option,
    Value,
    /// A file compiled from source.
    Source,
    /// Any other input (objects, archives, libraries).
    Input,
}

fn classify(args: &[OsString]) -> Vec<Arg> {
    let mut out = Vec::with_capacity(args.len());
    let mut value_next = false;
    let mut lang_source: Option<bool> = None;
    let mut lang_pending = false;
    for a in args {
        let s = a.to_string_lossy();
        if value_next {
            value_next = false;
            if lang_pending {
                lang_pending = false;
                lang_source =
                    (s != "none").then(|| s.starts_with('c') || s.starts_with("objective"));
            }
            out.push(Arg::Value);
        } else if s.starts_with('-') && s.len() > 1 {
            value_next = TAKES_VALUE.contains(&s.as_ref());
            lang_pending = s == "-x";
            if let Some(lang) = s.strip_prefix("-x").filter(|l| !l.is_empty()) {
                lang_source = (lang != "none").then(|| lang.starts_with('c'));
            }
            out.push(Arg::Option);
        } else {
            let by_ext = std::path::Path::new(a)
                .extension()
                .is_some_and(|e| SOURCES.contains(&e.to_string_lossy().as_ref()));
            out.push(if lang_source.unwrap_or(by_ext) {
                Arg::Source
            } else {
                Arg::Input
            });
        }
    }
    out
}

/// The commands that build `args` with the hooks, in order; `stub` is the
/// compiled hook stub, `tmp` a directory for intermediate objects.
///
/// Compile-only commands get the instrumentation flags. A link with
/// clang is one command: flags, the user's arguments, the stub and the
/// export of its table. A link with gcc that compiles sources is split:
/// each source compiled alone with the flags (`-c`, into `tmp`), then the
/// user's link with those objects in the sources' places and no
/// -fsanitize=thread (which would link libtsan).
pub fn plan(compiler: Compiler, args: &[OsString], stub: &Path, tmp: &Path) -> Vec<Vec<OsString>> {
    let flags = || {
        // A user's own sanitizer needs its runtime.
        let sanitizer = args
            .iter()
            .any(|a| a.to_str().is_some_and(|a| a.starts_with("-fsanitize=")));
        compiler
            .instrument_flags()
            .iter()
            .filter(|f| !(sanitizer && **f == "-fno-sanitize-link-runtime"))
            .map(OsString::from)
            .collect::<Vec<_>>()
    };
    let tail = |line: &mut Vec<OsString>| {
        // `-x none`: a `-x c` among the user's arguments would otherwise
        // make the object file C source.
        line.push("-x".into());
        line.push("none".into());
        line.push(stub.as_os_str().to_owned());
        line.push("-Wl,--export-dynamic-symbol=tramp_pointer_hooks".into());
    };
    if !links(args) {
        let mut line = flags();
        line.extend(args.iter().cloned());
        return vec![line];
    }
    if compiler == Compiler::Clang {
        let mut line = flags();
        line.extend(args.iter().cloned());
        tail(&mut line);
        return vec![line];
    }
    let kinds = classify(args);
    let mut commands = Vec::new();
    let mut link = Vec::new();
    // Options for the compile steps: every option but -o and -x (and their
    // values); no inputs.
    let mut options = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let with_value = kinds.get(i + 1) == Some(&Arg::Value);
        match kinds[i] {
            Arg::Option if a == "-o" || a == "-x" || a.to_string_lossy().starts_with("-x") => {}
            Arg::Option => {
                options.push(a.clone());
                if with_value {
                    options.push(args[i + 1].clone());
                }
            }
            _ => {}
        }
        i += if kinds[i] == Arg::Option && with_value {
            2
        } else {
            1
        };
    }
    let mut n = 0;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let with_value = kinds.get(i + 1) == Some(&Arg::Value);
        match kinds[i] {
            Arg::Source => {
                let obj = tmp.join(format!("tramp-cc-{n}.o"));
                n += 1;
                let mut line = flags();
                line.extend(options.iter().cloned());
                line.push("-c".into());
                line.push(a.clone());
                line.push("-o".into());
                line.push(obj.clone().into_os_string());
                commands.push(line);
                link.push(obj.into_os_string());
            }
            // -x applies to the sources, which the link no longer has.
            Arg::Option if a == "-x" || a.to_string_lossy().starts_with("-x") => {
                i += if with_value { 2 } else { 1 };
                continue;
            }
            Arg::Option if with_value => {
                link.push(a.clone());
                link.push(args[i + 1].clone());
                i += 2;
                continue;
            }
            _ => link.push(a.clone()),
        }
        i += 1;
    }
    tail(&mut link);
    commands.push(link);
    commands
}

/// Compiles the hook stub with `cc` (no instrumentation) into `dir`.
pub fn build_stub(cc: &OsStr, dir: &Path) -> Result<PathBuf, Error> {
    let src = dir.join("tramp_pointer_hooks.c");
    let obj = dir.join("tramp_pointer_hooks.o");
    std::fs::write(&src, HOOKS_C)?;
    let out = Command::new(cc)
        .args(["-O2", "-fPIC", "-c", "-o"])
        .arg(&obj)
        .arg(&src)
        .output()
        .map_err(|e| Error::Program(format!("cannot run {}: {e}", cc.to_string_lossy())))?;
    if !out.status.success() {
        return Err(Error::Program(format!(
            "compiling the pointer hooks with {} failed: {}",
            cc.to_string_lossy(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(obj)
}

/// Runs `CC ARGS` with the hooks; returns the exit status of the first
/// command that failed, or of the last.
pub fn compile(cmd: &[OsString]) -> Result<ExitStatus, Error> {
    let (cc, args) = cmd
        .split_first()
        .ok_or_else(|| Error::Usage("no compiler command given".into()))?;
    let compiler = Compiler::detect(cc)?;
    let dir = tempfile::Builder::new().prefix("tramp-cc-").tempdir()?;
    let stub = if links(args) {
        build_stub(cc, dir.path())?
    } else {
        PathBuf::new()
    };
    let include = dir.path().join("include");
    std::fs::create_dir(&include)?;
    std::fs::write(include.join("tramp.h"), TRAMP_H)?;
    let mut last = None;
    for line in plan(compiler, args, &stub, dir.path()) {
        let status = Command::new(cc)
            .arg("-idirafter")
            .arg(&include)
            .args(&line)
            .status()
            .map_err(|e| Error::Program(format!("cannot run {}: {e}", cc.to_string_lossy())))?;
        if !status.success() {
            return Ok(status);
        }
        last = Some(status);
    }
    Ok(last.expect("a plan has at least one command"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn compile_only_commands_do_not_link() {
        assert!(links(&os(&["a.c", "-o", "a"])));
        assert!(!links(&os(&["-c", "a.c"])));
        assert!(!links(&os(&["-E", "a.c"])));
    }

    fn strs(line: &[OsString]) -> Vec<&str> {
        line.iter().map(|s| s.to_str().unwrap()).collect()
    }

    #[test]
    fn a_clang_link_is_one_command_with_the_stub_last() {
        let p = plan(
            Compiler::Clang,
            &os(&["-x", "c", "a.c", "-o", "a"]),
            Path::new("/t/h.o"),
            Path::new("/t"),
        );
        assert_eq!(p.len(), 1);
        let line = strs(&p[0]);
        assert_eq!(line[0], "-fsanitize-coverage=edge,trace-loads,trace-stores");
        let user = line.iter().position(|a| *a == "a.c").unwrap();
        let stub = line.iter().position(|a| *a == "/t/h.o").unwrap();
        assert!(stub > user);
        assert_eq!(&line[stub - 2..stub], ["-x", "none"]);
        assert_eq!(
            line.last(),
            Some(&"-Wl,--export-dynamic-symbol=tramp_pointer_hooks")
        );
    }

    #[test]
    fn a_gcc_link_compiles_each_source_alone_then_links_without_the_sanitizer() {
        let p = plan(
            Compiler::Gcc,
            &os(&[
                "-O0", "-I", "inc", "a.c", "lib.o", "b.cpp", "-o", "prog", "-lm",
            ]),
            Path::new("/t/h.o"),
            Path::new("/t"),
        );
        assert_eq!(p.len(), 3);
        assert_eq!(
            strs(&p[0]),
            [
                "-fsanitize=thread",
                "--param=tsan-instrument-func-entry-exit=0",
                "-O0",
                "-I",
                "inc",
                "-lm",
                "-c",
                "a.c",
                "-o",
                "/t/tramp-cc-0.o"
            ]
        );
        assert_eq!(strs(&p[1])[7], "b.cpp");
        assert_eq!(
            strs(&p[2]),
            [
                "-O0",
                "-I",
                "inc",
                "/t/tramp-cc-0.o",
                "lib.o",
                "/t/tramp-cc-1.o",
                "-o",
                "prog",
                "-lm",
                "-x",
                "none",
                "/t/h.o",
                "-Wl,--export-dynamic-symbol=tramp_pointer_hooks"
            ]
        );
    }

    #[test]
    fn a_language_option_makes_any_file_a_source() {
        let p = plan(
            Compiler::Gcc,
            &os(&["-x", "c", "prog.txt", "-o", "prog"]),
            Path::new("/t/h.o"),
            Path::new("/t"),
        );
        assert_eq!(p.len(), 2);
        assert!(strs(&p[0]).contains(&"prog.txt"));
        assert!(
            !strs(&p[1]).contains(&"-x")
                || strs(&p[1]).ends_with(&[
                    "-x",
                    "none",
                    "/t/h.o",
                    "-Wl,--export-dynamic-symbol=tramp_pointer_hooks"
                ])
        );
        assert!(!strs(&p[1]).contains(&"c"));
    }

    #[test]
    fn compile_only_commands_get_the_flags_alone() {
        let p = plan(
            Compiler::Gcc,
            &os(&["-c", "a.c"]),
            Path::new(""),
            Path::new("/t"),
        );
        assert_eq!(
            strs(&p[0]),
            [
                "-fsanitize=thread",
                "--param=tsan-instrument-func-entry-exit=0",
                "-c",
                "a.c"
            ]
        );
    }
}
