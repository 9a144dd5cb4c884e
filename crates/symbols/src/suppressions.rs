//! LeakSanitizer's suppressions, for the leak table: a file of
//! `leak:PATTERN` lines (`#` starts a comment) whose pattern, matched
//! against the function, source file and module of every frame of a
//! leak's stack, suppresses it. A pattern matches anywhere in the name; `*`
//! matches any run of characters, `^` at its start and `$` at its end
//! anchor it (LSan's rules, so one file serves both tools).

use serde::Serialize;

use crate::symbolizer::Place;

/// One suppression and what it suppressed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Suppression {
    pub pattern: String,
    pub objects: u64,
    pub bytes: u64,
}

/// The suppressions of one file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Suppressions {
    pub list: Vec<Suppression>,
}

impl Suppressions {
    /// Parses a suppressions file; an error names the line.
    pub fn parse(text: &str) -> Result<Suppressions, String> {
        let mut list = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let pattern = line
                .strip_prefix("leak:")
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .ok_or_else(|| {
                    format!(
                        "line {}: `{line}` is not a leak suppression (leak:PATTERN)",
                        i + 1
                    )
                })?;
            list.push(Suppression {
                pattern: pattern.to_string(),
                objects: 0,
                bytes: 0,
            });
        }
        Ok(Suppressions { list })
    }

    /// The `leak:` lines of the text a program's `__lsan_default_suppressions`
    /// returned (other kinds, which LeakSanitizer does not use for leaks,
    /// are passed over rather than refused: the program is not ours to fix).
    pub fn from_program(text: &str) -> Suppressions {
        let list = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("leak:"))
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| Suppression {
                pattern: p.to_string(),
                objects: 0,
                bytes: 0,
            })
            .collect();
        Suppressions { list }
    }

    /// The first suppression matching a frame of `stack`, if any.
    pub fn find(&self, stack: &[Place]) -> Option<usize> {
        self.list.iter().position(|s| {
            stack.iter().any(|p| {
                [
                    p.function.as_deref(),
                    p.file.as_deref(),
                    p.module.as_deref(),
                ]
                .into_iter()
                .flatten()
                .any(|name| matches(&s.pattern, name))
            })
        })
    }
}

/// Whether `pattern` (with `*`, and `^`/`$` anchors) matches in `s`.
pub fn matches(pattern: &str, s: &str) -> bool {
    let (start, p) = match pattern.strip_prefix('^') {
        Some(p) => (true, p),
        None => (false, pattern),
    };
    let (end, p) = match p.strip_suffix('$') {
        Some(p) => (true, p),
        None => (false, p),
    };
    let pieces: Vec<&str> = p.split('*').collect();
    let last = pieces.len() - 1;
    let mut at = 0;
    for (i, piece) in pieces.iter().enumerate() {
        if i == last && end {
            // The last piece ends the name, after what came before.
            return s.len() >= at + piece.len()
                && s.ends_with(piece)
                && (i > 0 || !start || s.len() == piece.len());
        }
        if i == 0 && start {
            if !s.starts_with(piece) {
                return false;
            }
            at = piece.len();
            continue;
        }
        match s[at..].find(piece) {
            Some(k) => at += k + piece.len(),
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_as_lsan_matches_them() {
        assert!(matches("FooBar", "ns::FooBar(int)"));
        assert!(!matches("FooBar", "Foo"));
        assert!(matches("^ns::", "ns::FooBar"));
        assert!(!matches("^Foo", "ns::FooBar"));
        assert!(matches("Bar(int)$", "ns::FooBar(int)"));
        assert!(!matches("Bar$", "ns::FooBar(int)"));
        assert!(matches("ns::*Bar", "ns::FooBar"));
        assert!(matches("^ns::*(int)$", "ns::FooBar(int)"));
        assert!(!matches("^ns::*(char)$", "ns::FooBar(int)"));
        assert!(matches("^main$", "main"));
        assert!(!matches("^main$", "domain"));
        assert!(matches("libc.so*", "/lib/x86_64-linux-gnu/libc.so.6"));
        assert!(matches("*", "anything"));
    }

    #[test]
    fn a_file_is_leak_lines_and_comments() {
        let s = Suppressions::parse("# known\nleak:FooBar\n\n  leak:^libfoo.so$ \n").unwrap();
        let p: Vec<&str> = s.list.iter().map(|x| x.pattern.as_str()).collect();
        assert_eq!(p, vec!["FooBar", "^libfoo.so$"]);
        assert_eq!(
            Suppressions::parse("leak:a\nrace:b\n").unwrap_err(),
            "line 2: `race:b` is not a leak suppression (leak:PATTERN)"
        );
        assert!(Suppressions::parse("leak:\n").is_err());
    }

    #[test]
    fn a_stack_is_suppressed_by_any_frames_function_file_or_module() {
        let s = Suppressions::parse("leak:parse_config\nleak:^/opt/vendor/").unwrap();
        let place = |f: &str, file: &str, m: &str| Place {
            function: Some(f.into()),
            file: Some(file.into()),
            module: Some(m.into()),
            ..Place::default()
        };
        let a = [
            place("malloc_wrapper", "w.c", "/bin/p"),
            place("parse_config", "c.c", "/bin/p"),
        ];
        assert_eq!(s.find(&a), Some(0));
        let b = [place("init", "i.c", "/opt/vendor/libv.so")];
        assert_eq!(s.find(&b), Some(1));
        let c = [place("main", "m.c", "/bin/p")];
        assert_eq!(s.find(&c), None);
    }
}
