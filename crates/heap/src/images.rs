//! What a recording says of its processes: each image a process ran (its
//! `tramp:process pid= ppid=` note, one per program: a process that
//! exec'd has two) and the command line it ran with (`tramp:command`, a
//! JSON array of the arguments, `cut` first when the capture had to
//! shorten it) and when and where it was recorded (`tramp:recorded`). The
//! one place that writes and reads those notes.

use serde::{Deserialize, Serialize};
use tramp_core::{
    Analysis, Error, FieldDef, FieldType, Record, RecordBuf, RecordKind, RecordType, Role, Warning,
};

/// The note's prefix.
pub const COMMAND: &str = "tramp:command ";

/// The process note's prefix.
pub const PROCESS: &str = "tramp:process ";

/// The prefix of the note saying when and where a process was recorded:
/// `tramp:recorded at=UNIX_SECONDS host=NAME [clock0=NS]`, after its
/// process note; `clock0` is the machine's CLOCK_MONOTONIC (ns) at the
/// trace's time 0, which puts a run's processes on one time axis.
pub const RECORDED: &str = "tramp:recorded ";

/// One program a process ran.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    pub pid: u64,
    /// The parent process's pid.
    pub parent: u64,
    /// The arguments, the program first (empty when the trace does not
    /// say).
    pub command: Vec<String>,
    /// The capture shortened the command line (it keeps 8 KiB).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub command_cut: bool,
    /// When the recording of it began (seconds since 1970, UTC) and on
    /// which host, when the trace says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// CLOCK_MONOTONIC (ns) at its trace's time 0, when the trace says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock0: Option<u64>,
}

/// What a recorded note says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Seconds since 1970, UTC.
    pub at: u64,
    pub host: String,
    /// CLOCK_MONOTONIC (ns) at the trace's time 0.
    pub clock0: Option<u64>,
}

/// The recorded note of `r` (white space in the host's name becomes `_`).
pub fn recorded_note(r: &Recorded) -> String {
    let host: String = r
        .host
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect();
    match r.clock0 {
        Some(c) => format!("{RECORDED}at={} host={host} clock0={c}", r.at),
        None => format!("{RECORDED}at={} host={host}", r.at),
    }
}

/// What a recorded note says.
pub fn parse_recorded(text: &[u8]) -> Option<Recorded> {
    let rest = std::str::from_utf8(text.strip_prefix(RECORDED.as_bytes())?).ok()?;
    let mut at = None;
    let mut r = Recorded::default();
    for w in rest.split(' ') {
        if let Some(v) = w.strip_prefix("at=") {
            at = v.parse::<u64>().ok();
        } else if let Some(v) = w.strip_prefix("host=") {
            r.host = v.to_string();
        } else if let Some(v) = w.strip_prefix("clock0=") {
            r.clock0 = v.parse::<u64>().ok();
        }
    }
    r.at = at?;
    Some(r)
}

/// The command note of `args` (`cut`: shortened by the capture).
pub fn command_note(args: &[String], cut: bool) -> String {
    let json = serde_json::to_string(args).expect("strings serialize");
    match cut {
        true => format!("{COMMAND}cut {json}"),
        false => format!("{COMMAND}{json}"),
    }
}

/// The arguments and whether they were cut, when `text` is a command note.
pub fn parse_command(text: &[u8]) -> Option<(Vec<String>, bool)> {
    let rest = text.strip_prefix(COMMAND.as_bytes())?;
    let (rest, cut) = match rest.strip_prefix(b"cut ") {
        Some(r) => (r, true),
        None => (rest, false),
    };
    Some((serde_json::from_slice(rest).ok()?, cut))
}

/// The pid and parent of a process note.
pub fn parse_process(text: &[u8]) -> Option<(u64, u64)> {
    let rest = std::str::from_utf8(text.strip_prefix(PROCESS.as_bytes())?).ok()?;
    let field = |name: &str| {
        rest.split(' ')
            .find_map(|w| w.strip_prefix(name)?.parse::<u64>().ok())
    };
    Some((field("pid=")?, field("ppid=").unwrap_or(0)))
}

/// The images a trace's notes name, in order.
#[derive(Clone, Debug, Default)]
pub struct Images {
    pub list: Vec<Image>,
}

impl Images {
    /// Takes in a comment's text; whether it was a process or command note.
    pub fn note(&mut self, text: &[u8]) -> bool {
        if let Some((pid, parent)) = parse_process(text) {
            self.list.push(Image {
                pid,
                parent,
                ..Image::default()
            });
            true
        } else if let Some(r) = parse_recorded(text) {
            if let Some(last) = self.list.last_mut() {
                last.recorded_at = Some(r.at);
                last.host = Some(r.host);
                last.clock0 = r.clock0;
            }
            true
        } else if let Some((args, cut)) = parse_command(text) {
            if let Some(last) = self.list.last_mut() {
                last.command = args;
                last.command_cut = cut;
            }
            true
        } else {
            false
        }
    }
}

/// The most preamble comments a [`PerImage`] gives each image again.
pub const MAX_PREAMBLE: usize = 64;

/// An analysis run afresh for each image of a trace: a process note that
/// comes after the current image's own starts a fresh analysis (made by
/// `make`), so no heap state — live objects, the stack tree, the module
/// map, the clock — crosses from one process or program to the next. The
/// comments before the first process note (a selection's note, a format's
/// header) are the trace's, not an image's: each new image is given them
/// again, as comments of the same type name, before its process note.
///
/// Only the first [`MAX_PREAMBLE`] such comments are kept (a trace of
/// many comments and no process note stays bounded; tramp's own preambles
/// are one or two notes).
///
/// A trace of one image is one analysis fed exactly the records it would
/// have been fed alone.
pub struct PerImage<A, F> {
    make: F,
    current: A,
    /// The current analysis has seen a process note.
    named: bool,
    /// The trace's preamble: each comment's type (index and name, as
    /// analyses that count by type know it) and text.
    preamble: Vec<(usize, String, Vec<u8>)>,
    done: Vec<A>,
}

impl<A, F: FnMut() -> A> PerImage<A, F> {
    pub fn new(mut make: F) -> Self {
        let current = make();
        PerImage {
            make,
            current,
            named: false,
            preamble: Vec::new(),
            done: Vec::new(),
        }
    }

    /// Images begun so far (at least one).
    pub fn images(&self) -> usize {
        self.done.len() + 1
    }
}

/// The text of a comment record.
fn comment_text<'a>(rec: &Record<'a>) -> Option<&'a [u8]> {
    if rec.record_type().kind != RecordKind::Comment {
        return None;
    }
    rec.role(Role::Text).and_then(|v| v.as_bytes())
}

impl<A: Analysis, F: FnMut() -> A> PerImage<A, F> {
    /// Feeds a fresh analysis the preamble.
    fn begin(&mut self) -> Result<(), Error> {
        let fresh = (self.make)();
        self.done.push(std::mem::replace(&mut self.current, fresh));
        let mut buf = RecordBuf::new();
        for (index, name, text) in &self.preamble {
            let field = FieldDef::new("text", FieldType::Bytes, Some(Role::Text));
            let ty = RecordType::new(*index, name.clone(), RecordKind::Comment, vec![field]);
            buf.reset(&ty);
            buf.set_bytes(0, text);
            self.current.observe(&buf.as_record(&ty))?;
        }
        Ok(())
    }
}

impl<A: Analysis, F: FnMut() -> A> Analysis for PerImage<A, F> {
    /// Each image's report, in the trace's order.
    type Report = Vec<A::Report>;

    #[inline]
    fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        if let Some(text) = comment_text(rec) {
            if text.starts_with(PROCESS.as_bytes()) {
                if self.named {
                    self.begin()?;
                }
                self.named = true;
            } else if !self.named && self.preamble.len() < MAX_PREAMBLE {
                let ty = rec.record_type();
                self.preamble
                    .push((ty.index, ty.name.clone(), text.to_vec()));
            }
        }
        self.current.observe(rec)
    }

    fn warning(&mut self, warning: &Warning) {
        self.current.warning(warning);
    }

    fn finish(self) -> Vec<A::Report> {
        let mut out: Vec<A::Report> = self.done.into_iter().map(Analysis::finish).collect();
        out.push(self.current.finish());
        out
    }
}

/// A job that reads one image only (one address space in one output:
/// the Parquet export's object ids): an error at a trace's second process
/// note, saying how to take one process.
#[derive(Clone, Debug)]
pub struct OneImage {
    job: &'static str,
    seen: bool,
}

impl OneImage {
    pub fn new(job: &'static str) -> OneImage {
        OneImage { job, seen: false }
    }
}

impl Analysis for OneImage {
    type Report = ();

    #[inline]
    fn observe(&mut self, rec: &Record<'_>) -> Result<(), Error> {
        if let Some(text) = comment_text(rec)
            && text.starts_with(PROCESS.as_bytes())
        {
            if self.seen {
                return Err(Error::Usage(format!(
                    "{} reads one process image, and this trace holds several (a run's \
                     processes, or a process that exec'd): `tramp stats` lists them; `--pid` \
                     takes one process, `tramp convert --split` makes a file of each",
                    self.job
                )));
            }
            self.seen = true;
        }
        Ok(())
    }

    fn finish(self) {}
}

impl Image {
    /// The program it ran: its command's first word without the
    /// directories, `?` when the trace does not say.
    pub fn program(&self) -> &str {
        self.command.first().map_or("?", |c| program_name(c))
    }
}

/// A program's name as the tables show it: the file name of its path.
pub fn program_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The index of the largest of `peaks`, the first of equals (0 when none):
/// the image that used the most.
pub fn largest(peaks: impl DoubleEndedIterator<Item = u64> + ExactSizeIterator) -> usize {
    peaks
        .enumerate()
        .rev()
        .max_by_key(|&(_, p)| p)
        .map_or(0, |(i, _)| i)
}

/// The most other images [`choose`]'s note names.
const NAMED: usize = 8;

/// The one report a single-image job shows of a trace's images: the
/// only one, else the one whose heap peaked highest (the first of equals;
/// `of` gives each report's peak and image), with a note naming the
/// others and how to choose one. Decision (docs/recording.md): a heap
/// profile is of one address space; the image that used the most is what
/// a run's user looks for first (a pyenv shim's 78 bash and env images
/// before its python).
pub fn choose<T>(
    mut images: Vec<T>,
    of: impl Fn(&T) -> (u64, Option<Image>),
) -> (T, Option<String>) {
    if images.len() == 1 {
        return (images.remove(0), None);
    }
    let at = largest(images.iter().map(|t| of(t).0));
    let name = |t: &T| match of(t).1 {
        Some(i) => format!("pid {} {}", i.pid, i.program()),
        None => "the records before any process note".to_string(),
    };
    let mut others: Vec<String> = images
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != at)
        .take(NAMED)
        .map(|(_, t)| name(t))
        .collect();
    if images.len() - 1 > NAMED {
        others.push(format!("and {} more", images.len() - 1 - NAMED));
    }
    let n = images.len();
    let chosen = images.swap_remove(at);
    let note = format!(
        "the trace holds {n} images (processes, or programs an exec started); this is of {}, \
         whose heap peaked highest; the others: {} (`tramp stats` lists them all; `--pid` \
         chooses a process, `tramp convert --split` makes a file of each)",
        name(&chosen),
        others.join(", ")
    );
    (chosen, Some(note))
}

/// A command line as a person reads it: the arguments space-separated,
/// each quoted for a POSIX shell only where it needs to be.
pub fn shell_words(args: &[String]) -> String {
    let quote = |a: &String| {
        let plain = !a.is_empty()
            && a.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
        match plain {
            true => a.clone(),
            false => format!("'{}'", a.replace('\'', "'\\''")),
        }
    };
    args.iter().map(quote).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_round_trip_and_images_follow_execs() {
        let args = vec!["/bin/sh".to_string(), "-c".into(), "echo 'hi' there".into()];
        let note = command_note(&args, false);
        assert_eq!(note, r#"tramp:command ["/bin/sh","-c","echo 'hi' there"]"#);
        assert_eq!(parse_command(note.as_bytes()), Some((args.clone(), false)));
        let cut = command_note(&args, true);
        assert_eq!(parse_command(cut.as_bytes()), Some((args.clone(), true)));
        assert_eq!(shell_words(&args), r#"/bin/sh -c 'echo '\''hi'\'' there'"#);
        let mut im = Images::default();
        for n in [
            "tramp:process pid=7 ppid=1 stack=64",
            &note,
            "tramp:module 0x1000 /bin/sh",
            "tramp:process pid=7 ppid=1 stack=64",
            r#"tramp:command ["/bin/echo","hi"]"#,
        ] {
            im.note(n.as_bytes());
        }
        let got: Vec<(u64, u64, usize)> = im
            .list
            .iter()
            .map(|i| (i.pid, i.parent, i.command.len()))
            .collect();
        assert_eq!(got, [(7, 1, 3), (7, 1, 2)]);
        assert_eq!(parse_process(b"tramp:process pid=x"), None);
        let mut r = Recorded {
            at: 1_796_611_500,
            host: "build box".into(),
            clock0: None,
        };
        let note = recorded_note(&r);
        assert_eq!(note, "tramp:recorded at=1796611500 host=build_box");
        r.host = "build_box".into();
        assert_eq!(parse_recorded(note.as_bytes()), Some(r.clone()));
        r.clock0 = Some(123_456_789);
        let note = recorded_note(&r);
        assert_eq!(
            note,
            "tramp:recorded at=1796611500 host=build_box clock0=123456789"
        );
        assert_eq!(parse_recorded(note.as_bytes()), Some(r));
        assert_eq!(parse_command(b"tramp:command [1]"), None);
    }

    /// Feeds `a` a comment of type `name`.
    fn comment<A: Analysis>(a: &mut A, name: &str, text: &str) {
        let field = FieldDef::new("text", FieldType::Str, Some(Role::Text));
        let ty = RecordType::new(10, name, RecordKind::Comment, vec![field]);
        let mut buf = RecordBuf::new();
        buf.reset(&ty);
        buf.set_str(0, text);
        a.observe(&buf.as_record(&ty)).unwrap();
    }

    #[test]
    fn each_image_is_analysed_afresh_with_the_preamble() {
        use crate::HeapStats;
        use crate::view::testing::Trace;
        let mut per = PerImage::new(HeapStats::new);
        let mut tr = Trace::new();
        comment(&mut per, "note", "a header of the trace");
        comment(&mut per, "note", "tramp:process pid=5 ppid=1 stack=64");
        tr.alloc(16, 0x10, 1, |r| per.observe(r).unwrap());
        tr.alloc(32, 0x20, 1, |r| per.observe(r).unwrap());
        // An exec: the same addresses again, which in one heap view would
        // be allocations over live blocks and frees of their sizes.
        comment(&mut per, "note", "tramp:process pid=5 ppid=1 stack=64");
        comment(&mut per, "note", r#"tramp:command ["/bin/true"]"#);
        tr.alloc(8, 0x10, 1, |r| per.observe(r).unwrap());
        tr.free(0x10, 1, |r| per.observe(r).unwrap());
        tr.free(0x20, 1, |r| per.observe(r).unwrap());
        assert_eq!(per.images(), 2);
        let reports = Analysis::finish(per);
        let (a, b) = (&reports[0], &reports[1]);
        assert_eq!(
            (a.records, a.max_live_bytes, a.live_bytes_at_end),
            (4, 48, 48)
        );
        // The second image: its preamble (1), its notes (2) and 3 events;
        // 0x20 was the first image's, so its free is of an unknown block.
        assert_eq!(
            (b.records, b.max_live_bytes, b.live_bytes_at_end),
            (6, 8, 0)
        );
        assert_eq!(
            (a.allocs_of_live_addresses, b.frees_of_unknown_addresses),
            (0, 1)
        );
        assert_eq!(b.records_by_type["note"], 3, "{:?}", b.records_by_type);
        assert_eq!(b.processes.len(), 1);
        assert_eq!(b.processes[0].command, ["/bin/true"]);
    }
}
