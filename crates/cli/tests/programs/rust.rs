// Rust's default (System) allocator calls malloc and free.
fn main() {
    let mut keep = Vec::new();
    for i in 0..50u8 {
        let mut v: Vec<u8> = Vec::with_capacity(6666);
        v.push(i);
        keep.push(v);
    }
    std::hint::black_box(&keep);
    let mut grow: Vec<u8> = Vec::with_capacity(10);
    grow.extend(std::iter::repeat(1).take(100_000));
    std::hint::black_box(&grow);
}
