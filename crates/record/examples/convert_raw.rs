//! Converts a directory of raw capture logs to HATF, for profiling the
//! converter: `cargo run --release -p tramp-record --example convert_raw -- DIR OUT.hatf.zst [PACK]`.
fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("DIR"));
    let out = std::path::PathBuf::from(args.next().expect("OUT"));
    let t = std::time::Instant::now();
    let mut opts = tramp_record::RecordOptions::new(out);
    if let Some(pack) = args.next() {
        opts.set_pack(&pack).unwrap();
    }
    let traces = tramp_record::launch::convert_all(&dir, 0, &opts).unwrap();
    for (pid, path, st) in traces {
        eprintln!("{pid}: {} records -> {}", st.records, path.display());
    }
    eprintln!("{:.3} s", t.elapsed().as_secs_f64());
}
