//! Times decoding a tpack file into HATF items (no other work), best of 3,
//! with everything on one thread, with the blocks read and decompressed on
//! a thread of their own (`Reader::read_ahead`), and with whole blocks
//! decoded on 2 and 3 threads (`Reader::parallel`), each pulled item by
//! item and pushed (`Reader::each_entry`):
//! `cargo run --release -p tramp-tpack --example decode FILE.tpack`.

use std::io::Read;
use std::sync::Arc;
use std::time::Instant;

use tramp_hatf::records::Entry;
use tramp_tpack::Reader;

/// Records read and their checksum (so that nothing is optimised away),
/// pulled one by one or (`push`) pushed by the reader.
fn drain<R: Read>(mut r: Reader<R>, push: bool) -> (u64, u64) {
    let (mut n, mut sum) = (0u64, 0u64);
    let mut take = |i: &tramp_hatf::Item<'_>| {
        if let tramp_hatf::Item::Event(e) = i {
            sum = sum.wrapping_add(e.address ^ e.time);
        }
        n += 1;
    };
    if push {
        r.each_entry(|e| {
            if let Entry::Item(i) = e {
                take(i);
            }
            std::ops::ControlFlow::Continue(())
        })
        .expect("decodes");
    } else {
        while let Some(i) = r.next_item().expect("decodes") {
            take(&i);
        }
    }
    (n, sum)
}

/// A shared file image, readable from any thread.
struct Shared(Arc<Vec<u8>>, usize);

impl Read for Shared {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let rest = &self.0[self.1..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.1 += n;
        Ok(n)
    }
}

fn main() {
    let path = std::env::args().nth(1).expect("a tpack file");
    let bytes = Arc::new(std::fs::read(&path).expect("readable"));
    // Which ways, by number (0 one thread, 1 read ahead, N ≥ 2 workers
    // parallel, 1000 one worker): all of them unless listed after the file.
    // and `push` or `pull` for only that way of taking the items.
    let args: Vec<String> = std::env::args().skip(2).collect();
    let takes = |push: bool| {
        !args
            .iter()
            .any(|a| a == ["push", "pull"][usize::from(push)])
    };
    let only: Vec<u32> = args
        .iter()
        .filter(|a| *a != "push" && *a != "pull")
        .map(|a| a.parse().expect("a number"))
        .collect();
    let ways = [
        ("one thread", 0),
        ("read ahead", 1),
        ("1 worker", 1000),
        ("2 workers", 2),
        ("3 workers", 3),
    ];
    for ((name, mode), push) in ways.into_iter().flat_map(|w| [(w, false), (w, true)]) {
        if !only.is_empty() && !only.contains(&mode) || !takes(push) {
            continue;
        }
        let name = format!("{name}, {}", if push { "pushed" } else { "pulled" });
        let mut best = f64::MAX;
        let mut n = 0;
        for _ in 0..3 {
            let t = Instant::now();
            let (count, sum) = match mode {
                0 => drain(Reader::new(&bytes[..]), push),
                1 => drain(
                    Reader::read_ahead(Shared(bytes.clone(), 0)).expect("a thread"),
                    push,
                ),
                w => drain(
                    Reader::parallel(Shared(bytes.clone(), 0), w as usize % 999).expect("threads"),
                    push,
                ),
            };
            std::hint::black_box(sum);
            n = count;
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{name}: {n} records in {best:.3} s: {:.1} M records/s",
            n as f64 / best / 1e6
        );
    }
}
