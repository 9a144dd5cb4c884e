//! Parse errors name the place (golden text) and runtime errors the record.

use tramp_core::{FieldDef, FieldType, RecordKind, Schema};
use tramp_script::{Syntax, compile};

fn schema() -> Schema {
    let mut s = Schema::new("t");
    s.add_type(
        "IO",
        RecordKind::Other,
        vec![
            FieldDef::new("FILE", FieldType::U64, None),
            FieldDef::new("FUNCTION", FieldType::U64, None),
        ],
    );
    s.add_type(
        "END_XACT",
        RecordKind::Other,
        vec![FieldDef::new("PID", FieldType::U64, None)],
    );
    s
}

fn err(src: &str) -> String {
    let syntax = Syntax::detect(src);
    let e = compile(src, syntax, &schema()).unwrap_err();
    tramp_diag::render("s.tramp", src, &[e])
}

#[test]
fn parse_errors_are_golden() {
    let cases: &[(&str, &str)] = &[
        (
            "procedure main begin\n  if (IO_FUNCTON == 0) then echo 1; endif\nend",
            "s.tramp:2:7: error: unknown name `IO_FUNCTON`: no statement sets it",
        ),
        (
            "procedure main begin\n  helper();\nend",
            "s.tramp:2:3: error: no procedure `helper`",
        ),
        (
            "procedure main begin\n  if (x = 1) then endif\nend",
            "s.tramp:2:9: error: `=` assigns; compare with `==`",
        ),
        (
            "procedure main begin set IO_FILE = 3; end",
            "s.tramp:1:26: error: `IO_FILE` names a record or field; it cannot be set (use `update`)",
        ),
        (
            "procedure main begin update IO_NOPE = 3; end",
            "s.tramp:1:29: error: `IO_NOPE` is not a field of any record",
        ),
        (
            "preprocess begin set a[1] = 2; set b = a; end",
            "s.tramp:1:40: error: `a` is an array; it has no value of its own",
        ),
        (
            "preprocess begin set b = make_buffer(MRU, 10); end",
            "s.tramp:1:38: error: unknown policy \"MRU\"",
        ),
        (
            "preprocess begin set b = make_buffer(OPT, 10); end",
            "s.tramp:1:38: error: OPT needs every request's next-access time",
        ),
        (
            "preprocess begin set x = 1 end\npostprocess begin echo x",
            "s.tramp:2:25: error: expected `end` to close the block, found the end of the text",
        ),
        (
            "(defun main (eq (IO_FILE) 1)",
            "s.tramp:1:1: error: `(` never closed",
        ),
        (
            "(defun main (frobnicate))",
            "s.tramp:1:14: error: no procedure, field or form `frobnicate`",
        ),
        (
            "(defun main (setq))",
            "s.tramp:1:13: error: `setq` takes 2 arguments, not 0",
        ),
    ];
    for (src, want) in cases {
        let got = err(src);
        assert!(got.starts_with(want), "{src}\n--- got:\n{got}");
        assert!(got.contains(" | "), "no excerpt:\n{got}");
    }
    // A misspelt field is explained.
    let got = err("procedure main begin\n  if (IO_FUNCTON == 0) then echo 1; endif\nend");
    assert!(
        got.contains("record `IO` has no field `FUNCTON`; its fields: IO_FILE, IO_FUNCTION"),
        "{got}"
    );
}

#[test]
fn runtime_errors_name_the_record() {
    use tramp_core::{Record, Slot};
    let s = schema();
    let script = compile(
        "procedure main begin set x = IO_FILE / IO_FUNCTION; end",
        Syntax::Algol,
        &s,
    )
    .unwrap();
    let mut out = Vec::new();
    let mut m = Machine::new(&script, &mut out, None);
    m.preprocess().unwrap();
    let ok = [Slot::U(4), Slot::U(2)];
    m.main(&Record::new(&s.types[0], &ok, &[])).unwrap();
    let zero = [Slot::U(4), Slot::U(0)];
    let e = m.main(&Record::new(&s.types[0], &zero, &[])).unwrap_err();
    assert_eq!(e.to_string(), "record 1: division by zero");
    let end = [Slot::U(9)];
    let e = m.main(&Record::new(&s.types[1], &end, &[])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "record 1: field `FILE` of a `IO` record read while the record is a `END_XACT`"
    );
    let script = compile("postprocess begin echo IO_FILE; end", Syntax::Algol, &s).unwrap();
    let mut out = Vec::new();
    let mut m = Machine::new(&script, &mut out, None);
    let e = m.postprocess().unwrap_err();
    assert_eq!(
        e.to_string(),
        "in postprocess: record fields exist only in main and the procedures it calls"
    );
}

#[test]
fn loops_arrays_and_two_keys() {
    let src = "postprocess begin
        set i = 0;
        while (i < 5) begin set sq[i] = i * i; set grid[i, i + 1] = 1; set i = i + 1; end
        delete 2 from sq;
        set n = 0;
        for (k in sq) begin set n = n + sq[k]; end
        echo n, 2 found in sq, (3, 4) found in grid, (4, 3) not found in grid, 7 modulo 4, -7 / 2;
        echo \"text\", 1.5 * 2;
    end";
    let script = compile(src, Syntax::Algol, &schema()).unwrap();
    let mut out = Vec::new();
    let mut m = Machine::new(&script, &mut out, None);
    m.postprocess().unwrap();
    drop(m);
    // 0 + 1 + 9 + 16 = 26 without 2*2.
    assert_eq!(String::from_utf8(out).unwrap(), "26 0 1 1 3 -3\ntext 3\n");
}

use tramp_script::Machine;

#[test]
fn nesting_and_recursion_are_bounded() {
    let deep = format!(
        "postprocess begin echo {}1{}; end",
        "(".repeat(500),
        ")".repeat(500)
    );
    assert!(err(&deep).contains("nested more than 200 levels deep"));
    let lisp = format!(
        "(defun end (echo {}1{}))",
        "(add 1 ".repeat(500),
        ")".repeat(500)
    );
    assert!(err(&lisp).contains("nested more than 200 levels deep"));
    let rec = "procedure r begin set d = d + 1; r(); end\npostprocess begin set d = 0; r(); end";
    // On a thread with the stack `tramp run` gives scripts.
    let e = std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(move || {
            let script = compile(rec, Syntax::Algol, &schema()).unwrap();
            let mut out = Vec::new();
            let mut m = Machine::new(&script, &mut out, None);
            m.postprocess().map_err(|e| e.to_string())
        })
        .unwrap()
        .join()
        .unwrap()
        .unwrap_err();
    assert_eq!(
        e,
        "in postprocess: procedures call each other more than 1000 deep"
    );
}
