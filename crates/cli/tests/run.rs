//! End-to-end tests of `tramp run` on every built-in format, with answers
//! taken from other commands (`tramp dump`) or fixtures.

use std::path::Path;

mod common;
use common::{fixture, ok, path_in as p, stderr, tramp};

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = p(dir, name);
    std::fs::write(&path, text).unwrap();
    path
}

/// (allocs, bytes) counted from `tramp dump`'s text.
fn dump_allocs(trace: &str) -> (u64, u64) {
    let dump = ok(&tramp(&["dump", trace]));
    let mut n = 0;
    let mut bytes = 0;
    for line in dump.lines().filter(|l| l.starts_with("alloc ")) {
        n += 1;
        let size = line
            .split(' ')
            .find_map(|f| f.strip_prefix("size="))
            .unwrap();
        bytes += size.parse::<u64>().unwrap();
    }
    (n, bytes)
}

const COUNT_ALLOCS: &str = "
preprocess begin set n = 0; set bytes = 0; end
procedure main begin
  if (RECORD_TYPE == alloc) then
    set n = n + 1;
    set bytes = bytes + alloc_size;
  endif
end
postprocess begin echo n, bytes; end
";

#[test]
fn hatf_tpack_and_metatf_records_are_script_variables() {
    let dir = tempfile::tempdir().unwrap();
    let hatf = p(&dir, "s.hatf.zst");
    ok(&tramp(&[
        "sample", "--events", "4000", "--seed", "8", "-o", &hatf,
    ]));
    let tpack = p(&dir, "s.tpack");
    ok(&tramp(&["convert", &hatf, &tpack]));
    let script = write(&dir, "count.tramp", COUNT_ALLOCS);
    let (n, bytes) = dump_allocs(&hatf);
    assert!(n > 1000);
    let want = format!("{n} {bytes}\n");
    assert_eq!(ok(&tramp(&["run", &script, &hatf])), want);
    assert_eq!(ok(&tramp(&["run", &script, &tpack])), want);
    // Meta-TF (a DTD-described HATF) names its records the same way.
    let dtd = fixture("hatf-splitaddr.dtd");
    let mtf = p(&dir, "s.mtf");
    ok(&tramp(&[
        "convert", "--dtd", &dtd, "--to", "metatf", &hatf, &mtf,
    ]));
    assert_eq!(ok(&tramp(&["run", &script, &mtf])), want);
    // The same through stdin.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(["run", &script, "-"])
        .stdin(std::fs::File::open(&hatf).unwrap())
        .output()
        .unwrap();
    assert_eq!(ok(&out), want);
}

#[test]
fn update_and_spit_rewrite_a_hatf_trace() {
    let dir = tempfile::tempdir().unwrap();
    let hatf = p(&dir, "s.hatf");
    ok(&tramp(&[
        "sample", "--events", "500", "--seed", "2", "-o", &hatf,
    ]));
    let copy = write(&dir, "copy.tramp", "procedure main begin spit(); end");
    let same = p(&dir, "same.hatf");
    ok(&tramp(&["run", &copy, &hatf, "-o", &same]));
    assert_eq!(ok(&tramp(&["dump", &same])), ok(&tramp(&["dump", &hatf])));
    let double = write(
        &dir,
        "double.tramp",
        "procedure main begin
           if (RECORD_TYPE == alloc) then update alloc_size = alloc_size * 2; endif
           spit();
         end",
    );
    let doubled = p(&dir, "doubled.hatf");
    ok(&tramp(&["run", &double, &hatf, "-o", &doubled]));
    let (n0, b0) = dump_allocs(&hatf);
    let (n1, b1) = dump_allocs(&doubled);
    assert_eq!((n1, b1), (n0, 2 * b0));
}

#[test]
fn ptf_and_heph_records_are_script_variables() {
    let dir = tempfile::tempdir().unwrap();
    let ptf = write(
        &dir,
        "ptf.tramp",
        "procedure main begin
           if (RECORD_TYPE == co) then set objects[co_oid] = co_format; endif
           if (RECORD_TYPE == ew) then set edges = edges + 1; endif
         end
         preprocess begin set edges = 0; end
         postprocess begin
           set n = 0;
           for (o in objects) begin set n = n + 1; end
           echo n, edges;
         end",
    );
    let trace = fixture("figure3.ptf.txt");
    let dump = ok(&tramp(&["dump", &trace]));
    let objects = dump.lines().filter(|l| l.starts_with("co ")).count();
    let edges = dump.lines().filter(|l| l.starts_with("ew ")).count();
    assert_eq!(
        ok(&tramp(&["run", &ptf, &trace])),
        format!("{objects} {edges}\n")
    );
    let heph = write(
        &dir,
        "heph.tramp",
        "preprocess begin set n = 0; set total = 0; end
         procedure main begin
           if (RECORD_TYPE == event) then
             set n = n + 1;
             set total = total + (event_end - event_start);
           endif
         end
         postprocess begin echo n, total; end",
    );
    let trace = fixture("heph_tracing_example.bin.log");
    let dump = ok(&tramp(&["dump", &trace]));
    let mut n = 0;
    let mut total = 0u64;
    for l in dump.lines().filter(|l| l.starts_with("event ")) {
        let get = |k: &str| -> u64 {
            l.split(' ')
                .find_map(|f| f.strip_prefix(k))
                .unwrap()
                .parse()
                .unwrap()
        };
        n += 1;
        total += get("end=") - get("start=");
    }
    assert!(n > 0);
    assert_eq!(
        ok(&tramp(&["run", &heph, &trace])),
        format!("{n} {total}\n")
    );
}

#[test]
fn a_described_trace_and_figure9_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../script/tests/scripts");
    let s = |n: &str| scripts.join(n).to_str().unwrap().to_string();
    let generated = p(&dir, "gen.bin.zst");
    ok(&tramp(&["run", &s("fig9.tramp"), "-o", &generated]));
    let out = ok(&tramp(&[
        "run",
        &s("fig8.tramp"),
        "--format",
        &s("fs.desc"),
        &generated,
    ]));
    assert!(
        out.starts_with("lru 2048 objects: 600 requests, 150 misses"),
        "{out}"
    );
    // TRAMP_FORMAT names the description, as in the paper.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tramp"))
        .args(["run", &s("fig4.tramp"), &generated])
        .env("TRAMP_FORMAT", s("fs.desc"))
        .output()
        .unwrap();
    assert_eq!(ok(&out), "600 0\n");
}

#[test]
fn errors_exit_1_with_positions() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        &dir,
        "bad.tramp",
        "procedure main begin\n  echo alloc_sise;\nend\n",
    );
    let hatf = p(&dir, "s.hatf");
    ok(&tramp(&["sample", "--events", "50", "-o", &hatf]));
    let out = tramp(&["run", &bad, &hatf]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("bad.tramp:2:8: error: unknown name `alloc_sise`"),
        "{err}"
    );
    assert!(err.contains("record `alloc` has no field `sise`"), "{err}");
    let needs = write(&dir, "main.tramp", "procedure main begin echo 1; end");
    let out = tramp(&["run", &needs]);
    assert!(stderr(&out).contains("give a trace"), "{}", stderr(&out));
    let desc = write(&dir, "bad.desc", "record A { bytes(3) X; };");
    let out = tramp(&["run", &needs, "--format", &desc, &hatf]);
    assert!(
        stderr(&out).contains("bad.desc:1:18: error: `bytes(3)`"),
        "{}",
        stderr(&out)
    );
    let div = write(
        &dir,
        "div.tramp",
        "procedure main begin set x = 1 / (RECORD_TYPE - RECORD_TYPE); end",
    );
    let out = tramp(&["run", &div, &hatf]);
    assert!(
        stderr(&out).contains("record 0: division by zero"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn every_command_reads_a_described_trace_with_desc() {
    let dir = tempfile::tempdir().unwrap();
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../script/tests/scripts");
    let s = |n: &str| scripts.join(n).to_str().unwrap().to_string();
    let generated = p(&dir, "gen.bin");
    ok(&tramp(&["run", &s("fig9.tramp"), "-o", &generated]));
    let dump = ok(&tramp(&["dump", "--desc", &s("fs.desc"), &generated]));
    let lines: Vec<&str> = dump.lines().collect();
    assert_eq!(lines.len(), 600);
    assert_eq!(lines[0], "IO PID=0 FILE=0 PAGE=0 FUNCTION=0");
    assert_eq!(lines[3], "IO PID=1 FILE=1 PAGE=1 FUNCTION=0");
    let stats = ok(&tramp(&["stats", "--desc", &s("fs.desc"), &generated]));
    assert!(
        stats.starts_with("records                                   600"),
        "{stats}"
    );
    // Read-only: a conversion to it is refused before writing anything.
    let out = tramp(&[
        "convert",
        &generated,
        "--desc",
        &s("fs.desc"),
        "--to",
        "tramp-desc",
        &p(&dir, "x.bin"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("read-only"), "{}", stderr(&out));
    assert!(!Path::new(&p(&dir, "x.bin")).exists());
    // A bad description names its file and place.
    let bad = write(&dir, "bad.desc", "record A { bytes(5) X; };");
    let out = tramp(&["dump", "--desc", &bad, &generated]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("bad.desc:1:18: error: `bytes(5)`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn cachesim_with_keys_agrees_with_figure8s_script() {
    let dir = tempfile::tempdir().unwrap();
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../script/tests/scripts");
    let s = |n: &str| scripts.join(n).to_str().unwrap().to_string();
    let generated = p(&dir, "gen.bin");
    ok(&tramp(&["run", &s("fig9.tramp"), "-o", &generated]));
    let script = ok(&tramp(&[
        "run",
        &s("fig8.tramp"),
        "-f",
        &s("fs.desc"),
        &generated,
    ]));
    let json: serde_json::Value = serde_json::from_str(&ok(&tramp(&[
        "cachesim",
        "--desc",
        &s("fs.desc"),
        "--key",
        "IO.FILE,IO.PAGE",
        "--write",
        "FUNCTION=1",
        "-p",
        "lru",
        "-s",
        "2048",
        "--json",
        &generated,
    ])))
    .unwrap();
    let c = &json["table"]["caches"][0];
    let misses = c["reads"].as_u64().unwrap() + c["writes"].as_u64().unwrap()
        - c["read_hits"].as_u64().unwrap()
        - c["write_hits"].as_u64().unwrap();
    assert!(
        script.starts_with(&format!("lru 2048 objects: 600 requests, {misses} misses")),
        "{script}"
    );
    assert_eq!(misses, 150);
    let bad = tramp(&[
        "cachesim",
        "--desc",
        &s("fs.desc"),
        "--key",
        "IO.FILES",
        "-s",
        "5",
        &generated,
    ]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad)
            .contains("record `IO` has no field `FILES` (fields: PID, FILE, PAGE, FUNCTION)"),
        "{}",
        stderr(&bad)
    );
}

/// The paper's Figure 1: a trace reduced to a format of one's own. A HATF
/// trace's allocations become 9-byte records of a described layout
/// (type byte, size as 4 bytes, address's low 4 bytes), read back with
/// --desc and checked against `tramp dump` of the original.
#[test]
fn a_hatf_trace_reduced_to_a_described_layout() {
    let dir = tempfile::tempdir().unwrap();
    let hatf = p(&dir, "s.hatf");
    ok(&tramp(&[
        "sample", "--events", "400", "--seed", "5", "-o", &hatf,
    ]));
    let desc = write(
        &dir,
        "allocs.desc",
        "record A { byte RECORD_TYPE; bytes(4) SIZE; bytes(4) LOW; };",
    );
    let reduce = write(
        &dir,
        "reduce.tramp",
        "procedure main begin
           if (RECORD_TYPE == alloc) then
             spit_char 0;
             spit_int alloc_size;
             spit_int alloc_address modulo 4294967296;
           endif
         end",
    );
    let out = p(&dir, "allocs.bin");
    ok(&tramp(&["run", &reduce, &hatf, "-o", &out]));
    let back = ok(&tramp(&["dump", "--desc", &desc, &out]));
    let want: Vec<String> = ok(&tramp(&["dump", &hatf]))
        .lines()
        .filter(|l| l.starts_with("alloc "))
        .map(|l| {
            let get = |k: &str| -> u64 {
                let v = l.split(' ').find_map(|f| f.strip_prefix(k)).unwrap();
                match v.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
                    None => v.parse().unwrap(),
                }
            };
            format!(
                "A SIZE={} LOW={}",
                get("size="),
                get("address=") % (1 << 32)
            )
        })
        .collect();
    assert!(!want.is_empty());
    assert_eq!(back.lines().collect::<Vec<_>>(), want);
}
