//! The read and write times of the HATF paper (Tables 5 and 6), in µs per
//! data record, for every form of Table 4, uncompressed and through gzip
//! (the paper's compressor), plus the paper's ASCII/Perl column: `perl`
//! reading and writing the ASCII form. Timed on a prefix of the trace held
//! in memory (so that the disk does not time itself), best of three.

use std::fmt;
use std::io::{self, BufReader, Read, Write};
use std::process::Command;
use std::time::Instant;

use serde::Serialize;
use tramp_core::Error;
use tramp_hatf::splitaddr::{Joiner, Splitter};
use tramp_hatf::{Event, Policy};
use tramp_tpack::Codec;

use crate::ascii::{AsciiReader, write_line};
use crate::simple::{SimpleReader, SimpleWriter};
use crate::split::{SplitReader, SplitWriter};

/// One form's times, µs per record.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimingRow {
    pub name: String,
    pub read: f64,
    pub write: f64,
    /// Through gzip (None for ASCII/Perl, which the paper timed uncompressed).
    pub read_gzip: Option<f64>,
    pub write_gzip: Option<f64>,
}

/// Tables 5 and 6.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimingReport {
    /// Data records timed (the first ones of the trace).
    pub records: u64,
    pub rows: Vec<TimingRow>,
    /// Why the ASCII/Perl row is missing, if it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub perl: Option<String>,
}

type Enc = fn(&[Event<'static>], &mut dyn Write) -> Result<(), Error>;
type Dec = fn(&mut dyn Read) -> Result<u64, Error>;

fn gz_writer(out: &mut Vec<u8>) -> flate2::write::GzEncoder<&mut Vec<u8>> {
    flate2::write::GzEncoder::new(out, flate2::Compression::new(6))
}

fn enc_simple(ev: &[Event<'static>], out: &mut dyn Write) -> Result<(), Error> {
    let mut w = SimpleWriter::new(out, 8)?;
    for e in ev {
        w.write(e)?;
    }
    w.into_inner()?;
    Ok(())
}

fn dec_simple(input: &mut dyn Read) -> Result<u64, Error> {
    let mut r = SimpleReader::new(BufReader::with_capacity(1 << 16, input))?;
    let mut n = 0;
    while r.next_event()?.is_some() {
        n += 1;
    }
    Ok(n)
}

fn enc_ascii(ev: &[Event<'static>], out: &mut dyn Write) -> Result<(), Error> {
    let mut w = io::BufWriter::with_capacity(1 << 16, out);
    for e in ev {
        write_line(&mut w, e)?;
    }
    w.flush()?;
    Ok(())
}

fn dec_ascii(input: &mut dyn Read) -> Result<u64, Error> {
    let mut r = AsciiReader::new(BufReader::with_capacity(1 << 16, input));
    let mut n = 0;
    while r.next_event()?.is_some() {
        n += 1;
    }
    Ok(n)
}

fn enc_hatf(ev: &[Event<'static>], out: &mut dyn Write, p: Policy) -> Result<(), Error> {
    let mut w = tramp_hatf::Writer::new(out, p);
    for e in ev {
        w.write_event(e)?;
    }
    w.into_inner()?;
    Ok(())
}

fn enc_naive(ev: &[Event<'static>], out: &mut dyn Write) -> Result<(), Error> {
    enc_hatf(ev, out, Policy::Naive)
}

fn enc_best(ev: &[Event<'static>], out: &mut dyn Write) -> Result<(), Error> {
    enc_hatf(ev, out, Policy::Best)
}

fn dec_hatf(input: &mut dyn Read) -> Result<u64, Error> {
    let mut r = tramp_hatf::Reader::new(input);
    let mut n = 0;
    while r.next_item()?.is_some() {
        n += 1;
    }
    Ok(n)
}

fn enc_tpack(ev: &[Event<'static>], out: &mut dyn Write, codec: Codec) -> Result<(), Error> {
    let mut w = tramp_tpack::Writer::new(
        out,
        tramp_tpack::Options {
            codec,
            ..Default::default()
        },
    )?;
    for e in ev {
        w.write_event(e)?;
    }
    w.into_inner()?;
    Ok(())
}

fn dec_tpack(input: &mut dyn Read) -> Result<u64, Error> {
    let mut r = tramp_tpack::Reader::new(input);
    let mut n = 0;
    while r.next_item()?.is_some() {
        n += 1;
    }
    Ok(n)
}

/// Best of three runs of `f`, in seconds.
fn best_of<T>(mut f: impl FnMut() -> Result<T, Error>) -> Result<(f64, T), Error> {
    let mut best = f64::MAX;
    let mut last = None;
    for _ in 0..3 {
        let t = Instant::now();
        let v = f()?;
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(v);
    }
    Ok((best, last.expect("three runs")))
}

fn check(n: u64, want: usize, name: &str) -> Result<(), Error> {
    if n as usize != want {
        return Err(Error::Usage(format!(
            "{name}: read back {n} records of {want}"
        )));
    }
    Ok(())
}

/// Times a single-stream form.
fn time_form(ev: &[Event<'static>], name: &str, enc: Enc, dec: Dec) -> Result<TimingRow, Error> {
    let us = |s: f64| s * 1e6 / ev.len().max(1) as f64;
    let (w, bytes) = best_of(|| {
        let mut out = Vec::new();
        enc(ev, &mut out)?;
        Ok(out)
    })?;
    let (r, n) = best_of(|| dec(&mut &bytes[..]))?;
    check(n, ev.len(), name)?;
    let (wg, gz) = best_of(|| {
        let mut out = Vec::new();
        let mut g = gz_writer(&mut out);
        enc(ev, &mut g)?;
        g.finish()?;
        Ok(out)
    })?;
    let (rg, n) = best_of(|| dec(&mut flate2::read::GzDecoder::new(&gz[..])))?;
    check(n, ev.len(), name)?;
    Ok(TimingRow {
        name: name.into(),
        read: us(r),
        write: us(w),
        read_gzip: Some(us(rg)),
        write_gzip: Some(us(wg)),
    })
}

fn time_split(ev: &[Event<'static>], gzip: bool) -> Result<(f64, f64), Error> {
    let (w, outs) = best_of(|| {
        if gzip {
            let mut w = SplitWriter::new([0, 1, 2, 3].map(|_| gz_writer_owned()), 8);
            for e in ev {
                w.write(e)?;
            }
            let outs = w.into_inner().map(|g| g.finish());
            let [a, b, c, d] = outs;
            Ok([a?, b?, c?, d?])
        } else {
            let mut w = SplitWriter::new([0, 1, 2, 3].map(|_| io::BufWriter::new(Vec::new())), 8);
            for e in ev {
                w.write(e)?;
            }
            let [a, b, c, d] = w
                .into_inner()
                .map(|b| b.into_inner().map_err(|e| e.into_error()));
            Ok([a?, b?, c?, d?])
        }
    })?;
    let (r, n) = best_of(|| {
        let mut n = 0u64;
        if gzip {
            let ins =
                [0, 1, 2, 3].map(|i| BufReader::new(flate2::read::GzDecoder::new(&outs[i][..])));
            let mut r = SplitReader::new(ins, 8);
            while r.next_event()?.is_some() {
                n += 1;
            }
        } else {
            let ins = [0, 1, 2, 3].map(|i| &outs[i][..]);
            let mut r = SplitReader::new(ins, 8);
            while r.next_event()?.is_some() {
                n += 1;
            }
        }
        Ok(n)
    })?;
    check(n, ev.len(), "Split Stream")?;
    Ok((r, w))
}

fn gz_writer_owned() -> flate2::write::GzEncoder<Vec<u8>> {
    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6))
}

fn time_splitaddr(ev: &[Event<'static>], gzip: bool) -> Result<(f64, f64), Error> {
    let (w, (main, addrs)) = best_of(|| {
        if gzip {
            let mut w = tramp_hatf::Writer::new(
                Splitter::new(gz_writer_owned(), gz_writer_owned()),
                Policy::Best,
            );
            for e in ev {
                w.write_event(e)?;
            }
            let (m, a) = w.into_inner()?.finish()?;
            Ok((m.finish()?, a.finish()?))
        } else {
            let mut w =
                tramp_hatf::Writer::new(Splitter::new(Vec::new(), Vec::new()), Policy::Best);
            for e in ev {
                w.write_event(e)?;
            }
            Ok(w.into_inner()?.finish()?)
        }
    })?;
    let (r, n) = best_of(|| {
        if gzip {
            dec_hatf(&mut Joiner::new(
                BufReader::new(flate2::read::GzDecoder::new(&main[..])),
                BufReader::new(flate2::read::GzDecoder::new(&addrs[..])),
            ))
        } else {
            dec_hatf(&mut Joiner::new(&main[..], &addrs[..]))
        }
    })?;
    check(n, ev.len(), "HATF SplitAddr")?;
    Ok((r, w))
}

/// The Perl script: reads the ASCII file, splitting every line into its
/// fields, then writes them back as lines; prints both times in seconds.
const PERL: &str = r#"
use strict; use Time::HiRes qw(time);
my ($in, $out) = @ARGV;
open(my $f, '<', $in) or die "$in: $!";
my $t = time; my @recs;
while (my $l = <$f>) { chomp $l; push @recs, [split / /, $l]; }
my $read = time - $t;
open(my $o, '>', $out) or die "$out: $!";
$t = time;
for my $r (@recs) { print $o join(' ', @$r), "\n"; }
close $o;
my $write = time - $t;
printf "%.9f %.9f %d\n", $read, $write, scalar @recs;
"#;

fn time_perl(ev: &[Event<'static>]) -> Result<(f64, f64), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let input = dir.path().join("trace.txt");
    let output = dir.path().join("out.txt");
    let mut bytes = Vec::new();
    enc_ascii(ev, &mut bytes).map_err(|e| e.to_string())?;
    std::fs::write(&input, &bytes).map_err(|e| e.to_string())?;
    let mut best = (f64::MAX, f64::MAX);
    for _ in 0..3 {
        let out = Command::new("perl")
            .arg("-e")
            .arg(PERL)
            .arg(&input)
            .arg(&output)
            .output()
            .map_err(|e| format!("perl: {e}"))?;
        if !out.status.success() {
            return Err(format!("perl: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let s = String::from_utf8_lossy(&out.stdout);
        let v: Vec<&str> = s.split_whitespace().collect();
        let (r, w, n) = match v[..] {
            [r, w, n] => (r.parse::<f64>(), w.parse::<f64>(), n.parse::<usize>()),
            _ => return Err(format!("perl printed {s:?}")),
        };
        let (Ok(r), Ok(w), Ok(n)) = (r, w, n) else {
            return Err(format!("perl printed {s:?}"));
        };
        if n != ev.len() {
            return Err(format!("perl read {n} records of {}", ev.len()));
        }
        best = (best.0.min(r), best.1.min(w));
    }
    let written = std::fs::read(&output).map_err(|e| e.to_string())?;
    if written != bytes {
        return Err("perl wrote different lines than it read".into());
    }
    Ok(best)
}

/// Times every form on `events` (the paper's content of a trace prefix).
pub fn measure(events: &[Event<'static>]) -> Result<TimingReport, Error> {
    let us = |s: f64| s * 1e6 / events.len().max(1) as f64;
    let what = |form: &str| {
        format!(
            "timing reads and writes of {} records (Tables 5-6): {form}",
            events.len()
        )
    };
    let stage = tramp_io::progress::Stage::start(&what("Simple Binary"));
    let mut rows = vec![time_form(events, "Simple Binary", enc_simple, dec_simple)?];
    stage.set(&what("ASCII"));
    rows.push(time_form(events, "ASCII", enc_ascii, dec_ascii)?);
    stage.set(&what("HATF (naive)"));
    rows.push(time_form(events, "HATF (naive)", enc_naive, dec_hatf)?);
    stage.set(&what("HATF (best)"));
    rows.push(time_form(events, "HATF (best)", enc_best, dec_hatf)?);
    // The multi-stream forms: (read, write) seconds without and with gzip.
    type Timer = fn(&[Event<'static>], bool) -> Result<(f64, f64), Error>;
    let multi: [(&str, Timer); 2] = [
        ("Split Stream", time_split),
        ("HATF SplitAddr", time_splitaddr),
    ];
    for (name, timer) in multi {
        stage.set(&what(name));
        let (r, w) = timer(events, false)?;
        let (rg, wg) = timer(events, true)?;
        rows.push(TimingRow {
            name: name.into(),
            read: us(r),
            write: us(w),
            read_gzip: Some(us(rg)),
            write_gzip: Some(us(wg)),
        });
    }
    // tpack: its raw codec, and its gzip codec (it compresses per stream).
    stage.set(&what("tpack"));
    let mut t = time_form(
        events,
        "tpack",
        |e, o| enc_tpack(e, o, Codec::Raw),
        dec_tpack,
    )?;
    let (wg, bytes) = best_of(|| {
        let mut out = Vec::new();
        enc_tpack(events, &mut out, Codec::Gzip(6))?;
        Ok(out)
    })?;
    let (rg, n) = best_of(|| dec_tpack(&mut &bytes[..]))?;
    check(n, events.len(), "tpack")?;
    t.read_gzip = Some(us(rg));
    t.write_gzip = Some(us(wg));
    rows.push(t);
    stage.set(&what("ASCII/Perl"));
    let perl = match time_perl(events) {
        Ok((r, w)) => {
            rows.push(TimingRow {
                name: "ASCII/Perl".into(),
                read: us(r),
                write: us(w),
                read_gzip: None,
                write_gzip: None,
            });
            None
        }
        Err(e) => Some(e),
    };
    Ok(TimingReport {
        records: events.len() as u64,
        rows,
        perl,
    })
}

impl fmt::Display for TimingReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Tables 5 and 6: µs per data record, read / write, uncompressed and gzip (first {} records, in memory, best of 3)",
            self.records
        )?;
        writeln!(
            f,
            "  {:<22} {:>9} {:>9} {:>11} {:>11}",
            "", "read", "write", "read gzip", "write gzip"
        )?;
        let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.4}"));
        for r in &self.rows {
            writeln!(
                f,
                "  {:<22} {:>9.4} {:>9.4} {:>11} {:>11}",
                r.name,
                r.read,
                r.write,
                opt(r.read_gzip),
                opt(r.write_gzip)
            )?;
        }
        if let Some(p) = &self.perl {
            writeln!(f, "  ASCII/Perl not timed: {p}")?;
        }
        writeln!(f)
    }
}
