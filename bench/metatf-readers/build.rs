//! Generates the reader for `bench/hatf-bench.dtd` with the same code
//! generator `tramp gen --rust` uses.
use std::path::PathBuf;

fn main() {
    let dtd_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../hatf-bench.dtd");
    println!("cargo::rerun-if-changed={}", dtd_path.display());
    let dtd = std::fs::read_to_string(&dtd_path).expect("bench/hatf-bench.dtd");
    let code = tramp_metatf::codegen::rust(&dtd, "hatf-bench.dtd").expect("the DTD compiles");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out.join("generated.rs"), code).unwrap();
    // `#[path]` takes a literal, so the module declaration is generated too
    // (an included file cannot hold the module's inner attributes).
    std::fs::write(
        out.join("module.rs"),
        format!("#[path = {:?}]\nmod generated;\n", out.join("generated.rs")),
    )
    .unwrap();
}
