//! Property tests: random valid traces (made by a small model of a store)
//! survive ASCII → binary → ASCII byte for byte, read back as the same
//! events from both forms, and verify with no violation (reachability
//! aside: the model leaves array objects unlinked).

use proptest::prelude::*;
use tramp_graph::verify::{self, Options};
use tramp_ptf::ascii::{AsciiReader, AsciiWriter};
use tramp_ptf::binary::{BinaryReader, BinaryWriter};
use tramp_ptf::{Event, EventSink, EventSource, FormatObject};

/// A format in the model: id, pointers, data members, fixed arrays (all
/// with the super class's folded in).
type ModelFormat = (u64, u64, usize, Vec<(u64, u64)>);

/// Builds a valid trace from a stream of choices.
fn model(choices: &[(u8, u32, u32)], names: &[String]) -> Vec<Event> {
    let mut ev = Vec::new();
    let mut next = 41u64;
    // Formats: (id, pointers, data members, arrays).
    let mut formats: Vec<ModelFormat> = Vec::new();
    let mut objects: Vec<(u64, usize)> = Vec::new(); // (oid, format index)
    let mut arrays: Vec<(u64, u64, u64)> = Vec::new(); // (oid, element format, elements)
    let mut root = None;
    let mut open = 0;
    for (i, &(kind, a, b)) in choices.iter().enumerate() {
        match kind % 12 {
            0 | 1 if formats.len() < 6 || kind % 12 == 0 => {
                let id = next;
                next += 1;
                let pointers = (a % 5) as u64;
                let data: Vec<u64> = (0..b % 4)
                    .map(|k| 10 + (k as u64 + a as u64) % 10)
                    .collect();
                let arr: Vec<(u64, u64)> = (0..a % 3)
                    .map(|k| (30 + (k as u64 + b as u64) % 10, 1 + (b % 50) as u64))
                    .collect();
                let sup = if !formats.is_empty() && a % 4 == 0 {
                    formats[(b as usize) % formats.len()].clone()
                } else {
                    (0, 0, 0, vec![])
                };
                let mut all_arrays = sup.3.clone();
                all_arrays.extend(arr.iter().copied());
                ev.push(Event::FormatObject(FormatObject {
                    id,
                    super_id: sup.0,
                    pointers,
                    data: data.clone(),
                    arrays: arr,
                    name: names[i % names.len()].clone(),
                }));
                formats.push((id, sup.1 + pointers, sup.2 + data.len(), all_arrays));
            }
            2 | 3 if !formats.is_empty() => {
                let f = (a as usize) % formats.len();
                let oid = next;
                next += 1;
                ev.push(Event::NoGcStart);
                ev.push(Event::CreateObject {
                    format: formats[f].0,
                    oid,
                });
                if root.is_none() {
                    ev.push(Event::SetRoot {
                        format: formats[f].0,
                        oid,
                    });
                    root = Some(oid);
                }
                ev.push(Event::NoGcEnd);
                objects.push((oid, f));
            }
            4 if !objects.is_empty() => {
                let (container, _) = objects[(a as usize) % objects.len()];
                let oid = next;
                next += 1;
                let elem = 10 + (b % 10) as u64;
                ev.push(Event::CreateArrayObject {
                    format: elem,
                    oid,
                    container,
                    elements: 1 + (a % 1000) as u64,
                });
                arrays.push((oid, elem, 1 + (a % 1000) as u64));
            }
            5 | 6 if !objects.is_empty() => {
                let (oid, f) = objects[(a as usize) % objects.len()];
                let (fid, p, _, _) = formats[f];
                if p > 0 {
                    let to = if b % 3 == 0 {
                        0
                    } else {
                        objects[(b as usize) % objects.len()].0
                    };
                    let edge = (b as u64) % p;
                    ev.push(if kind % 2 == 0 {
                        Event::EdgeRead {
                            format: fid,
                            from: oid,
                            edge,
                        }
                    } else {
                        Event::EdgeWrite {
                            format: fid,
                            from: oid,
                            edge,
                            to,
                        }
                    });
                }
            }
            7 | 8 if !objects.is_empty() => {
                let (oid, f) = objects[(a as usize) % objects.len()];
                let (fid, _, d, ref arrs) = formats[f];
                if d > 0 {
                    let offset = 1 + (b as u64) % d as u64;
                    ev.push(if kind % 2 == 0 {
                        Event::DataWrite {
                            format: fid,
                            oid,
                            offset,
                        }
                    } else {
                        Event::DataRead {
                            format: fid,
                            oid,
                            offset,
                        }
                    });
                } else if !arrs.is_empty() {
                    let k = (b as usize) % arrs.len();
                    let (af, n) = arrs[k];
                    let index = (a as u64) % n;
                    ev.push(Event::ArrayDataRead {
                        format: af,
                        oid,
                        offset: (d + k + 1) as i64,
                        index,
                        length: n - index,
                    });
                }
            }
            9 if !arrays.is_empty() => {
                let (oid, elem, n) = arrays[(a as usize) % arrays.len()];
                let index = (b as u64) % n;
                ev.push(Event::ArrayDataWrite {
                    format: elem,
                    oid,
                    offset: -1,
                    index,
                    length: n - index,
                });
            }
            10 => {
                if root.is_some() {
                    ev.push(Event::GetRoot);
                }
                if open > 0 {
                    ev.push(Event::NoGcEnd);
                    open -= 1;
                }
            }
            _ => {
                if open < 3 {
                    ev.push(Event::NoGcStart);
                    open += 1;
                }
            }
        }
    }
    for _ in 0..open {
        ev.push(Event::NoGcEnd);
    }
    ev
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_valid_traces_round_trip_and_verify(
        choices in prop::collection::vec((any::<u8>(), any::<u32>(), any::<u32>()), 0..300),
        names in prop::collection::vec("[A-Za-z_][A-Za-z0-9_ <>:]{0,20}", 1..4),
        notes in prop::collection::vec("[ -~]{0,30}", 0..3),
    ) {
        prop_assume!(notes.iter().all(|n| n != "$" && n.trim_end() != "Trace begin"));
        let events = model(&choices, &names);
        let mut a = AsciiWriter::new(Vec::new(), &notes).unwrap();
        for e in &events {
            a.write_event(e).unwrap();
        }
        a.finish().unwrap();
        let text = a.into_inner();
        let mut r = AsciiReader::new(&text[..]).unwrap();
        let mut w = BinaryWriter::new(Vec::new(), r.notes()).unwrap();
        let mut from_text = Vec::new();
        while let Some(e) = r.next_event().unwrap() {
            w.write_event(&e).unwrap();
            from_text.push(e);
        }
        w.finish().unwrap();
        prop_assert_eq!(&from_text, &events);
        let bin = w.into_inner();
        let mut b = BinaryReader::new(&bin[..]).unwrap();
        prop_assert_eq!(b.notes(), &notes[..]);
        let mut t = AsciiWriter::new(Vec::new(), b.notes()).unwrap();
        let mut from_bin = Vec::new();
        while let Some(e) = b.next_event().unwrap() {
            t.write_event(&e).unwrap();
            from_bin.push(e);
        }
        t.finish().unwrap();
        prop_assert_eq!(&from_bin, &events);
        prop_assert_eq!(t.into_inner(), text);
        let report = verify::verify(&mut BinaryReader::new(&bin[..]).unwrap(), Options { gc: false, max_violations: 5 });
        prop_assert_eq!(report.violations, vec![]);
        // The model does not link array objects, so with reachability they
        // may be collected; the simulation still sees every event.
        let gc = verify::verify(&mut BinaryReader::new(&bin[..]).unwrap(), Options { gc: true, max_violations: 5 });
        prop_assert_eq!(gc.events, events.len() as u64);
    }
}
