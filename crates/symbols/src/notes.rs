//! What a recording says about itself, in comment records a trace keeps:
//! the process (`tramp:process pid= ppid= stack=`), its modules
//! (`tramp:module 0xBASE PATH`, for symbolization), its call stacks
//! (`tramp:frames FIRST PARENT 0xPC …`, nodes of the stack tree; older
//! recordings: `tramp:stack ID 0xPC …`), how they were unwound, stalls of the capture and an interruption.
//! `tramp record` writes them; whatever names code reads them.

/// A comment that annotates a recorded trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Annotation {
    Process {
        pid: u64,
        ppid: u64,
        stack_depth: u64,
    },
    /// When (seconds since 1970, UTC) and on which host the process's
    /// recording began, after its process note (`tramp_heap::images`).
    Recorded(tramp_heap::images::Recorded),
    /// The process's command line, after its process note; `cut` when
    /// the capture shortened it (`tramp_heap::images`).
    Command {
        args: Vec<String>,
        cut: bool,
    },
    Module {
        base: u64,
        path: String,
    },
    /// A whole call stack (recordings before the stack tree).
    Stack {
        id: u64,
        frames: Vec<u64>,
    },
    /// Nodes of the stack tree (`crate::stacks`): ids `first`, `first + 1`,
    /// …, each a frame under its parent node.
    Frames {
        first: u64,
        nodes: Vec<(u64, u64)>,
    },
    /// A code address symbolized at the end of the recording, on the
    /// machine that ran the program: readers name it from here, after a
    /// rebuild or on another machine.
    Symbol(crate::symbolizer::Place),
    /// A piece of the suppressions the program compiled in for
    /// LeakSanitizer (`__lsan_default_suppressions`); pieces join in order.
    LsanSuppressions(String),
    /// The process's resident set size at `time` (the trace's clock),
    /// sampled about every 10 ms.
    Rss {
        time: u64,
        bytes: u64,
    },
    /// How a thread's call stacks were taken by the capture's unwinder.
    Unwind {
        thread: u64,
        stacks: u64,
        early_stops: u64,
        frames_unwound: u64,
        checks: u64,
        mismatches: u64,
    },
    /// A thread waited `waited_ns` for `tramp record` (back-pressure).
    Stall {
        thread: u64,
        waited_ns: u64,
    },
    /// The recording was interrupted by `signal` (SIGINT, SIGTERM or
    /// SIGHUP to tramp or its program); the trace holds everything the
    /// program did until it ended.
    Interrupted {
        signal: i32,
    },
    /// The recording is sampled (`--sample`): the heap view weighs each
    /// recorded block (`tramp_heap::sampling`).
    Sampling(tramp_heap::sampling::Sampling),
    /// The trace starts at an attach to the running process (`record -p`).
    Attached,
}

impl Annotation {
    /// The comment text.
    pub fn to_comment(&self) -> String {
        match self {
            Annotation::Process {
                pid,
                ppid,
                stack_depth,
            } => {
                format!("tramp:process pid={pid} ppid={ppid} stack={stack_depth}")
            }
            Annotation::Command { args, cut } => tramp_heap::images::command_note(args, *cut),
            Annotation::Recorded(r) => tramp_heap::images::recorded_note(r),
            Annotation::Module { base, path } => format!("tramp:module {base:#x} {path}"),
            Annotation::Stack { id, frames } => {
                let mut s = format!("tramp:stack {id}");
                for f in frames {
                    s.push_str(&format!(" {f:#x}"));
                }
                s
            }
            Annotation::Symbol(p) => {
                // Tab-separated, empty for what is unknown; a tab or a line
                // break inside a name would split it, so it becomes a space.
                let clean = |t: Option<&str>| t.unwrap_or("").replace(['\t', '\n'], " ");
                let line = |l: Option<u32>| l.map_or(String::new(), |l| l.to_string());
                let mut s = format!(
                    "tramp:symbol {:#x}\t{}\t{}\t{}\t{}\t{}",
                    p.address,
                    clean(p.module.as_deref()),
                    p.offset.map_or(String::new(), |o| format!("{o:#x}")),
                    clean(p.function.as_deref()),
                    clean(p.file.as_deref()),
                    line(p.line)
                );
                // The functions it was inlined into: three fields each.
                for i in &p.inlined {
                    s.push_str(&format!(
                        "\t{}\t{}\t{}",
                        clean(i.function.as_deref()),
                        clean(i.file.as_deref()),
                        line(i.line)
                    ));
                }
                s
            }
            Annotation::Rss { time, bytes } => format!("tramp:rss time={time} bytes={bytes}"),
            Annotation::LsanSuppressions(text) => format!("tramp:lsan-suppressions {text}"),
            Annotation::Frames { first, nodes } => {
                let mut s = format!("tramp:frames {first}");
                for (parent, frame) in nodes {
                    s.push_str(&format!(" {parent} {frame:#x}"));
                }
                s
            }
            Annotation::Unwind {
                thread,
                stacks,
                early_stops,
                frames_unwound,
                checks,
                mismatches,
            } => format!(
                "tramp:unwind thread={thread} stacks={stacks} early_stops={early_stops} \
                 frames_unwound={frames_unwound} checks={checks} mismatches={mismatches}"
            ),
            Annotation::Stall { thread, waited_ns } => {
                format!("tramp:stall thread={thread} waited_ns={waited_ns}")
            }
            Annotation::Interrupted { signal } => format!("tramp:interrupted signal={signal}"),
            Annotation::Sampling(s) => s.to_comment(),
            Annotation::Attached => tramp_heap::attach::COMMENT.to_string(),
        }
    }

    /// Parses a comment written by [`to_comment`](Self::to_comment).
    pub fn parse(comment: &[u8]) -> Option<Annotation> {
        let s = std::str::from_utf8(comment).ok()?;
        let rest = s.strip_prefix("tramp:")?;
        if tramp_heap::attach::is_attached_note(comment) {
            return Some(Annotation::Attached);
        }
        if let Some(sampling) = tramp_heap::sampling::Sampling::parse(comment) {
            return Some(Annotation::Sampling(sampling));
        }
        if let Some(t) = rest.strip_prefix("lsan-suppressions ") {
            return Some(Annotation::LsanSuppressions(t.to_string()));
        }
        if let Some((args, cut)) = tramp_heap::images::parse_command(comment) {
            return Some(Annotation::Command { args, cut });
        }
        if let Some(r) = tramp_heap::images::parse_recorded(comment) {
            return Some(Annotation::Recorded(r));
        }
        if let Some(t) = rest.strip_prefix("symbol ") {
            let f: Vec<&str> = t.split('\t').collect();
            if f.len() < 6 || !(f.len() - 6).is_multiple_of(3) {
                return None;
            }
            let [address, module, offset, function, file, line] = f[..6] else {
                return None;
            };
            let hex = |t: &str| u64::from_str_radix(t.strip_prefix("0x")?, 16).ok();
            let text = |t: &str| (!t.is_empty()).then(|| t.to_string());
            let number = |t: &str| -> Option<Option<u32>> {
                if t.is_empty() {
                    Some(None)
                } else {
                    Some(Some(t.parse().ok()?))
                }
            };
            let mut inlined = Vec::new();
            for c in f[6..].chunks(3) {
                inlined.push(crate::symbolizer::Inlined {
                    function: text(c[0]),
                    file: text(c[1]),
                    line: number(c[2])?,
                });
            }
            return Some(Annotation::Symbol(crate::symbolizer::Place {
                address: hex(address)?,
                module: text(module),
                offset: if offset.is_empty() {
                    None
                } else {
                    Some(hex(offset)?)
                },
                function: text(function),
                file: text(file),
                line: number(line)?,
                inlined,
            }));
        }
        let (word, args) = rest.split_once(' ')?;
        let hex = |t: &str| u64::from_str_radix(t.strip_prefix("0x")?, 16).ok();
        match word {
            "process" => {
                let v: [u64; 3] = values(args)?;
                Some(Annotation::Process {
                    pid: v[0],
                    ppid: v[1],
                    stack_depth: v[2],
                })
            }
            "module" => {
                let (base, path) = args.split_once(' ')?;
                Some(Annotation::Module {
                    base: hex(base)?,
                    path: path.to_string(),
                })
            }
            "stack" => {
                let mut it = args.split(' ');
                let id = it.next()?.parse().ok()?;
                let frames = it.map(hex).collect::<Option<Vec<_>>>()?;
                Some(Annotation::Stack { id, frames })
            }
            "frames" => {
                let mut it = args.split(' ');
                let first = it.next()?.parse().ok()?;
                let mut nodes = Vec::new();
                while let Some(parent) = it.next() {
                    nodes.push((parent.parse().ok()?, hex(it.next()?)?));
                }
                Some(Annotation::Frames { first, nodes })
            }
            "rss" => {
                let v: [u64; 2] = values(args)?;
                Some(Annotation::Rss {
                    time: v[0],
                    bytes: v[1],
                })
            }
            "unwind" => {
                let v: [u64; 6] = values(args)?;
                Some(Annotation::Unwind {
                    thread: v[0],
                    stacks: v[1],
                    early_stops: v[2],
                    frames_unwound: v[3],
                    checks: v[4],
                    mismatches: v[5],
                })
            }
            "stall" => {
                let v: [u64; 2] = values(args)?;
                Some(Annotation::Stall {
                    thread: v[0],
                    waited_ns: v[1],
                })
            }
            "interrupted" => {
                let [signal]: [u64; 1] = values(args)?;
                Some(Annotation::Interrupted {
                    signal: i32::try_from(signal).ok()?,
                })
            }
            _ => None,
        }
    }
}

/// The numbers of `k1=v1 k2=v2 …`, in order (the keys are the writer's).
fn values<const N: usize>(args: &str) -> Option<[u64; N]> {
    let mut v = [0u64; N];
    for (i, kv) in args.split(' ').enumerate().take(N) {
        v[i] = kv.split_once('=')?.1.parse().ok()?;
    }
    Some(v)
}

/// The RSS samples a recording carries (`tramp:rss` notes), at most
/// `2 × limit` kept: past that, neighbours merge in pairs keeping the
/// larger (constant memory, the peaks kept).
pub struct RssSamples {
    limit: usize,
    samples: Vec<(u64, u64)>,
}

impl RssSamples {
    pub fn new(limit: usize) -> RssSamples {
        RssSamples {
            limit: limit.max(1),
            samples: Vec::new(),
        }
    }
}

impl tramp_core::Analysis for RssSamples {
    type Report = Vec<(u64, u64)>;

    fn observe(&mut self, rec: &tramp_core::Record<'_>) -> Result<(), tramp_core::Error> {
        if rec.record_type().kind != tramp_core::RecordKind::Comment {
            return Ok(());
        }
        if let Some(Annotation::Rss { time, bytes }) = rec
            .role(tramp_core::Role::Text)
            .and_then(|v| v.as_bytes())
            .and_then(Annotation::parse)
        {
            self.samples.push((time, bytes));
            if self.samples.len() >= 2 * self.limit {
                self.samples = self
                    .samples
                    .chunks(2)
                    .map(|p| (p[0].0, p.iter().map(|s| s.1).max().unwrap_or(0)))
                    .collect();
            }
        }
        Ok(())
    }

    fn finish(self) -> Vec<(u64, u64)> {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_round_trip() {
        for a in [
            Annotation::Process {
                pid: 12,
                ppid: 1,
                stack_depth: 8,
            },
            Annotation::Sampling(tramp_heap::sampling::Sampling { mean_bytes: 4096 }),
            Annotation::Attached,
            Annotation::Module {
                base: 0x7f00_0000_0000,
                path: "/usr/lib/x86_64-linux-gnu/libc.so.6".into(),
            },
            Annotation::Stack {
                id: 3,
                frames: vec![0x401000, 0x7f00_0000_1234],
            },
            Annotation::Frames {
                first: 5,
                nodes: vec![(0, 0x401000), (5, 0x7f00_0000_1234)],
            },
            Annotation::Symbol(crate::symbolizer::Place {
                address: 0x5555_0000_1234,
                module: Some("/usr/bin/prog".into()),
                offset: Some(0x1234),
                function: Some("main".into()),
                file: Some("/src/main.c".into()),
                line: Some(12),
                inlined: Vec::new(),
            }),
            Annotation::Symbol(crate::symbolizer::Place {
                address: 0x5555_0000_1240,
                module: Some("/usr/bin/prog".into()),
                offset: Some(0x1240),
                function: Some("push".into()),
                file: Some("/src/list.h".into()),
                line: Some(3),
                inlined: vec![
                    crate::symbolizer::Inlined {
                        function: Some("build".into()),
                        file: Some("/src/list.c".into()),
                        line: Some(20),
                    },
                    crate::symbolizer::Inlined {
                        function: Some("main".into()),
                        file: None,
                        line: None,
                    },
                ],
            }),
            Annotation::Symbol(crate::symbolizer::Place {
                address: 0x10,
                ..Default::default()
            }),
            Annotation::LsanSuppressions("leak:keep_forever\nleak:^cache_".into()),
            Annotation::Command {
                args: vec!["./prog".into(), "two words".into(), "".into()],
                cut: false,
            },
            Annotation::Command {
                args: vec!["x\ty\"z".into()],
                cut: true,
            },
            Annotation::Recorded(tramp_heap::images::Recorded {
                at: 1_796_611_500,
                host: "ci-7".into(),
                clock0: Some(5_000_000_123),
            }),
            Annotation::Rss {
                time: 10_000_000,
                bytes: 1 << 22,
            },
            Annotation::Unwind {
                thread: 9,
                stacks: 100,
                early_stops: 90,
                frames_unwound: 250,
                checks: 90,
                mismatches: 0,
            },
            Annotation::Stall {
                thread: 77,
                waited_ns: 1_500_000,
            },
            Annotation::Interrupted { signal: 15 },
        ] {
            assert_eq!(Annotation::parse(a.to_comment().as_bytes()), Some(a));
        }
        assert_eq!(Annotation::parse(b"hello"), None);
    }
}
