//! Traces written by the Heph runtime itself decode to exactly what Heph's
//! own converter made of them (its JSON, copied beside each trace): every
//! event's stream (pid), substream (tid), start (ts, µs after the epoch),
//! duration (dur, µs), description (name) and attributes (args).

use tramp_heph::{OptionValue, Packet, Reader, Value};

fn decode(bytes: &[u8]) -> (Option<u64>, Vec<tramp_heph::Event>, usize) {
    let mut r = Reader::new(bytes);
    let mut epoch = None;
    let mut events = Vec::new();
    while let Some(p) = r.next_packet().unwrap() {
        match p {
            Packet::Metadata(m) => {
                if let OptionValue::Epoch(ns) = m.value {
                    epoch = Some(ns);
                }
            }
            Packet::Event(e) => events.push(e),
        }
    }
    (epoch, events, r.take_warnings().len())
}

fn json_of(v: &Value) -> serde_json::Value {
    match v {
        Value::U64(x) => (*x).into(),
        Value::I64(x) => (*x).into(),
        Value::F64(x) => {
            serde_json::Number::from_f64(*x).map_or(serde_json::Value::Null, Into::into)
        }
        Value::Str(s) => s.clone().into(),
        other => panic!("the fixtures hold no arrays, found {other:?}"),
    }
}

fn check(name: &str, events_expected: usize, differ_expected: usize) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/heph/");
    let bytes = std::fs::read(format!("{dir}{name}.bin.log")).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}{name}.json")).unwrap())
            .unwrap();
    let (epoch, events, warnings) = decode(&bytes);
    assert_eq!(warnings, 0);
    let epoch = epoch.expect("the runtime writes the epoch first");
    let want = json["traceEvents"].as_array().unwrap();
    assert_eq!(
        (events.len(), want.len()),
        (events_expected, events_expected)
    );
    let mut differ = 0;
    for (i, (e, j)) in events.iter().zip(want).enumerate() {
        let ctx = format!("{name} event {i}: {e:?} vs {j}");
        assert_eq!(j["pid"], e.stream as u64, "{ctx}");
        assert_eq!(j["tid"], e.substream, "{ctx}");
        // Heph's converter loses precision: its ts is 0–4 µs below
        // (epoch + start) / 1000 and its end 0–1 µs below (epoch + end) /
        // 1000 (docs/formats/heph.md, decision 6); ours are exact.
        let (ts, end) = ((epoch + e.start) / 1000, (epoch + e.end) / 1000);
        let (jts, jdur) = (j["ts"].as_u64().unwrap(), j["dur"].as_u64().unwrap());
        assert!(ts >= jts && ts - jts <= 4, "{ctx}");
        assert!(end >= jts + jdur && end - (jts + jdur) <= 1, "{ctx}");
        if (jts, jdur) != (ts, e.duration() / 1000) {
            differ += 1;
        }
        assert_eq!(j["name"], e.description.as_str(), "{ctx}");
        let want_args = j
            .get("args")
            .cloned()
            .unwrap_or_else(|| serde_json::json!({}));
        let want_args = want_args.as_object().unwrap();
        assert_eq!(want_args.len(), e.attributes.len(), "{ctx}");
        for a in &e.attributes {
            let w = &want_args[&a.name];
            // Heph prints 0.0 as `0`: floats compare as numbers.
            match &a.value {
                Value::F64(x) => assert_eq!(w.as_f64(), Some(*x), "{ctx}"),
                v => assert_eq!(*w, json_of(v), "{ctx}"),
            }
        }
    }
    assert_eq!(differ, differ_expected);
}

#[test]
fn heph_tracing_example_decodes_as_heph_converts_it() {
    check("heph_tracing_example", 96, 7);
}

#[test]
fn scalar_decodes_as_heph_converts_it() {
    check("scalar", 410, 98);
}
