//! Fused shapes (`RECORD_TYPE == c`, `FIELD op c`, `x = x + c`, `x = x +
//! FIELD`, `x = FIELD`, buffer calls on variables and on fields,
//! one-statement blocks) mean what the
//! unfused forms mean: the same script
//! written so that nothing fuses gives the same output on random records;
//! and main compiled to closures gives what the tree walker gives, over
//! records with slots and over fixed-layout records read from their bytes.

use proptest::prelude::*;
use tramp_core::ints::{FixedInt, IntRead};
use tramp_core::{FieldDef, FieldType, Record, RecordKind, Schema, Slot};
use tramp_script::{Machine, Syntax, compile};

fn schema() -> Schema {
    let mut s = Schema::new("t");
    s.add_type(
        "A",
        RecordKind::Other,
        vec![FieldDef::new("X", FieldType::U64, None)],
    );
    s.add_type(
        "B",
        RecordKind::Other,
        vec![FieldDef::new("Y", FieldType::I64, None)],
    );
    s
}

/// Fused: constants on the right, increments of the variable itself.
/// (`else if` continues the chain: one `endif` closes it, as in Figure 6.)
const FUSED: &str = "
preprocess begin set n = 0; set m = 0; set k = 0; set b = make_buffer(LRU, 7); set g = 1; set t = 0; set h = 0; end
procedure main begin
  if (RECORD_TYPE == A) then
    if (A_X < C1) then set n = n + 1; endif
    if (A_X == C2) then set m = m - 2; endif
    if (A_X >= C1) then set k = k + A_X; endif
    set f = A_X;
    set h = A_X;
    set t = t + f;
    if (A_X == C1) then set n = n + 5;
    else if (A_X == C2) then set m = m + 7;
    else set h = h + 1;
    endif
    read_buffer(b, f, g);
    write_buffer(b + 0, f + 0, g + 0);
    write_buffer(b, f);
    read_buffer(b, A_X, g);
    write_buffer(b, g, A_X);
  else
    if (B_Y != C2) then set n = n + 3;
    set m = m + B_Y;
    read_buffer(b, B_Y, g);
  endif
end
postprocess begin echo n, m, k, t, h, hits(b), misses(b); end";

/// The same, written so that nothing fuses.
const PLAIN: &str = "
preprocess begin set n = 0; set m = 0; set k = 0; set b = make_buffer(LRU, 7); set g = 1; set t = 0; set h = 0; end
procedure main begin
  if (A == RECORD_TYPE + 0) then
    if (C1 > A_X) then set n = 1 + n; endif
    if (C2 == A_X) then set m = 0 - 2 + m; endif
    if (C1 <= A_X) then set k = A_X + k; endif
    set f = A_X + 0;
    set h = A_X + 0;
    set t = f + t;
    if (C1 == A_X) then set n = 5 + n;
    else if (C2 == A_X) then set m = 7 + m;
    else set h = 1 + h;
    endif
    read_buffer(b + 0, f + 0, g);
    write_buffer(b + 0, f + 0, g + 0);
    write_buffer(b + 0, f + 0);
    read_buffer(b + 0, A_X + 0, g);
    write_buffer(b + 0, g + 0, A_X + 0);
  else
    if (C2 != B_Y) then set n = 3 + n;
    set m = B_Y + m;
    read_buffer(b + 0, B_Y + 0, g);
  endif
end
postprocess begin echo n, m, k, t, h, hits(b), misses(b); end";

/// The same types with fixed layouts, as a description would give them
/// (a type byte, then A's X as a big-endian u16, B's Y as a little-endian
/// i32 after a padding byte), so records can come as their bytes.
fn fixed_schema() -> Schema {
    let mut s = schema();
    s.types[0].fixed_ints = Some(Box::new([FixedInt {
        off: 1,
        read: IntRead::U16Be,
    }]));
    s.types[1].fixed_ints = Some(Box::new([FixedInt {
        off: 2,
        read: IntRead::I32Le,
    }]));
    s
}

/// Record `(a, v)`'s bytes in [`fixed_schema`]'s layout.
fn fixed_bytes(a: bool, v: u64) -> Vec<u8> {
    if a {
        let mut b = vec![0];
        b.extend_from_slice(&(v as u16).to_be_bytes());
        b
    } else {
        let mut b = vec![1, 0xee];
        b.extend_from_slice(&(v as i32 - 50).to_le_bytes());
        b
    }
}

fn run(src: &str, recs: &[(bool, u64)]) -> String {
    run_by(src, recs, false, false)
}

/// Lisp's `and`/`or` sequences over record tests and statements (Figure
/// 5's shape), for the compiled-against-walked comparison.
const LISP: &str = "
(defun begin (and (setq n 0) (setq k 0) (setq f 0)))
(defun main
  (or (and (eq (RECORD_TYPE) A)
           (or (and (or (eq (A_X) C1) (eq (A_X) C2)) (setq f (add f 100)) (eq 1 0))
               (and (lt (A_X) C1) (setq n (add n 1)))
               (and (setq f (A_X)) (setq k (add k (A_X))) (ge (A_X) C2))
               (setq n (sub n 2))))
      (and (ne (B_Y) C2) (setq k (add k (B_Y))))))
(defun end (echo n k f))";

/// Runs `src` with main compiled to closures, or walked (`walk`), over
/// records with slots, or (`fixed`) over records that are their bytes.
fn run_by(src: &str, recs: &[(bool, u64)], walk: bool, fixed: bool) -> String {
    let s = if fixed { fixed_schema() } else { schema() };
    let script = compile(src, Syntax::detect(src), &s).unwrap();
    let mut out = Vec::new();
    let mut m = Machine::new(&script, &mut out, None);
    if walk {
        m.walk_only();
    }
    m.preprocess().unwrap();
    for &(a, v) in recs {
        let ty = &s.types[if a { 0 } else { 1 }];
        let slots = [if a {
            Slot::U(v)
        } else {
            Slot::I(v as i64 - 50)
        }];
        let bytes = fixed_bytes(a, v);
        let rec = if fixed {
            Record::fixed(ty, &bytes)
        } else {
            Record::new(ty, &slots, &[])
        };
        m.main(&rec).unwrap();
    }
    m.postprocess().unwrap();
    drop(m);
    String::from_utf8(out).unwrap()
}

proptest! {
    #[test]
    fn fused_and_plain_forms_agree(
        c1 in 0u64..100,
        c2 in 0u64..100,
        recs in proptest::collection::vec((any::<bool>(), 0u64..100), 0..200),
    ) {
        let fused = FUSED.replace("C1", &c1.to_string()).replace("C2", &c2.to_string());
        let plain = PLAIN.replace("C1", &c1.to_string()).replace("C2", &c2.to_string());
        prop_assert_eq!(run(&fused, &recs), run(&plain, &recs));
    }

    /// Main compiled to closures means what the walker does, fused or not.
    #[test]
    fn compiled_and_walked_agree(
        c1 in 0u64..100,
        c2 in 0u64..100,
        recs in proptest::collection::vec((any::<bool>(), 0u64..100), 0..200),
    ) {
        for src in [FUSED, PLAIN, LISP] {
            let src = src.replace("C1", &c1.to_string()).replace("C2", &c2.to_string());
            let walked = run_by(&src, &recs, true, false);
            prop_assert_eq!(&run_by(&src, &recs, false, false), &walked);
            // Fixed-layout records read from their bytes, compiled and walked.
            prop_assert_eq!(&run_by(&src, &recs, false, true), &walked);
            prop_assert_eq!(&run_by(&src, &recs, true, true), &walked);
        }
    }
}
