//! Buffers simulated on their own thread: which scripts qualify (every
//! request's answer unread while records run), and that they print exactly
//! what the same script prints with the buffers simulated in line.

use proptest::prelude::*;
use tramp_core::{FieldDef, FieldType, RecordBuf, RecordKind, Schema, Value};
use tramp_script::deferred::answers_unread;
use tramp_script::{Machine, Syntax, compile};

fn schema() -> Schema {
    let mut s = Schema::new("t");
    s.add_type(
        "IO",
        RecordKind::Other,
        vec![
            FieldDef::new("FILE", FieldType::U64, None),
            FieldDef::new("PAGE", FieldType::U64, None),
            FieldDef::new("FUNCTION", FieldType::U64, None),
        ],
    );
    s
}

fn unread(src: &str) -> bool {
    answers_unread(&compile(src, Syntax::detect(src), &schema()).unwrap())
}

const MAKE: &str = "preprocess begin set b = make_buffer(LRU, 4); end\n";

#[test]
fn statement_requests_qualify_and_read_answers_do_not() {
    let yes = [
        "procedure main begin read_buffer(b, IO_FILE, IO_PAGE); end",
        "procedure main begin if (IO_FUNCTION == 0) then read_buffer(b, IO_FILE); \
         else write_buffer(b, IO_FILE); endif end",
        "procedure main begin set f = IO_FILE; while (f > 0) begin \
         prefetch_buffer(b, f); set f = f - 1; end end",
        "procedure main begin touch(); end procedure touch begin read_buffer(b, 1); end",
        "procedure main begin set n = n + 1; end postprocess begin print_buffer(b); end",
    ];
    for s in yes {
        assert!(unread(&format!("{MAKE}{s}")), "should qualify: {s}");
    }
    // In the Algol syntax buffer calls are statements only; the Lisp
    // syntax can use their answers.
    let no = [
        // The answer decides a branch, is stored, printed or combined.
        "(defun main (if (read_buffer b (IO_FILE)) (setq h (add h 1))))",
        "(defun main (setq h (read_buffer b (IO_FILE))))",
        "(defun main (echo (read_buffer b (IO_FILE))))",
        "(defun main (setq h (add h (write_buffer b (IO_FILE)))))",
        // Lisp's `and` sequences are conditions: a request there is read.
        "(defun main (and (read_buffer b (IO_FILE)) (setq h 1)))",
        // A buffer looked at, or made, while records run.
        "procedure main begin read_buffer(b, IO_FILE); print_buffer(b); end",
        "procedure main begin set c = make_buffer(FIFO, 2); end",
        "procedure main begin read_buffer(b, 1); set h = hits(b); end",
        "procedure main begin read_buffer(b, 1); end procedure p begin print_buffer(b); end",
    ];
    for s in no {
        let src = if s.starts_with('(') {
            format!("(defun begin (setq b (make_buffer LRU 4)))\n{s}")
        } else {
            format!("{MAKE}{s}")
        };
        assert!(!unread(&src), "should not qualify: {s}");
    }
}

/// Runs `src` over `recs` ((file, page, function) IO records); returns
/// what it printed and whether the buffers were simulated apart.
fn run(src: &str, recs: &[(u64, u64, u64)], in_line: bool) -> (String, bool) {
    let schema = schema();
    let script = compile(src, Syntax::detect(src), &schema).unwrap();
    let mut out = Vec::new();
    let mut apart = false;
    {
        let mut m = Machine::new(&script, &mut out, None);
        if in_line {
            m.simulate_in_line();
        }
        m.preprocess().unwrap();
        apart = apart || m.simulates_apart();
        let ty = &schema.types[0];
        let mut buf = RecordBuf::new();
        for &(f, p, op) in recs {
            buf.reset(ty);
            buf.set(0, Value::U64(f));
            buf.set(1, Value::U64(p));
            buf.set(2, Value::U64(op));
            m.main(&buf.as_record(ty)).unwrap();
        }
        m.postprocess().unwrap();
    }
    (String::from_utf8(out).unwrap(), apart)
}

/// Several buffers of several policies, reads, writes (write-backs) and
/// prefetches; the counts printed at the end and read in postprocess.
const MANY: &str = "preprocess begin
  set lru = make_buffer(LRU, 8);
  set arc = make_buffer(ARC, 6);
  set s3 = make_buffer(S3FIFO, 10);
end
procedure main begin
  set f = IO_FILE;
  set p = IO_PAGE;
  if (IO_FUNCTION == 0) then
    read_buffer(lru, f, p);
    read_buffer(arc, p);
  else if (IO_FUNCTION == 1) then
    write_buffer(lru, f, p);
    write_buffer(s3, f);
  else
    prefetch_buffer(arc, p + 1);
    read_buffer(s3, f);
  endif
end
postprocess begin
  print_buffer(lru);
  print_buffer(arc);
  print_buffer(s3);
  echo hits(lru), misses(arc);
end
";

#[test]
fn many_buffers_print_the_same_apart_and_in_line() {
    let recs: Vec<(u64, u64, u64)> = (0..50_000u64)
        .map(|i| {
            let x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
            (x % 5, x % 23, (x >> 8) % 3)
        })
        .collect();
    let (apart, was_apart) = run(MANY, &recs, false);
    let (in_line, was_in_line) = run(MANY, &recs, true);
    assert!(was_apart && !was_in_line);
    assert_eq!(apart, in_line);
    assert!(apart.contains("lru 8 objects: "), "{apart}");
}

proptest! {
    #[test]
    fn apart_and_in_line_agree(
        recs in proptest::collection::vec((0u64..6, 0u64..9, 0u64..3), 0..3000),
    ) {
        let (a, _) = run(MANY, &recs, false);
        let (b, _) = run(MANY, &recs, true);
        prop_assert_eq!(a, b);
    }
}
