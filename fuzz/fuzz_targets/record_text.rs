//! tramp's generic record text form (Meta-TF text, `tramp dump` of formats
//! without their own): untrusted lines parsed against a schema with every
//! field type. Never a panic; a line that parses formats to text that
//! parses to the same record.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tramp_core::schema::{FieldDef, FieldType, Schema};
use tramp_core::{RecordBuf, RecordKind};

fuzz_target!(|data: &[u8]| {
    let mut schema = Schema::new("fuzz");
    schema.add_type(
        "r",
        RecordKind::Other,
        vec![
            FieldDef::new("u", FieldType::U64, None),
            FieldDef::new("i", FieldType::I64, None),
            FieldDef::new("f", FieldType::F64, None),
            FieldDef::new("b", FieldType::Bytes, None),
            FieldDef::new("s", FieldType::Str, None),
            FieldDef::new("l", FieldType::List(Box::new(FieldType::U64)), None),
            FieldDef::new("lb", FieldType::List(Box::new(FieldType::Bytes)), None),
        ],
    );
    let line = String::from_utf8_lossy(data);
    let mut buf = RecordBuf::new();
    if let Ok(ty) = tramp_core::text::parse_record(&line, &schema, &mut buf) {
        let mut text = String::new();
        tramp_core::text::format_record(&mut text, &buf.as_record(ty));
        let mut again = RecordBuf::new();
        let ty2 = tramp_core::text::parse_record(&text, &schema, &mut again)
            .unwrap_or_else(|e| panic!("{text:?} does not parse again: {e}"));
        let mut text2 = String::new();
        tramp_core::text::format_record(&mut text2, &again.as_record(ty2));
        assert_eq!(text, text2);
    }
});
