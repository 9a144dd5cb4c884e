//! Where an export's three files go: `DIR/{events,stacks,processes}/NAME.parquet`,
//! NAME the trace's file name without its extensions, and the refusal of
//! an export whose files would replace an earlier export's (several
//! traces are exported into one DIR, and two of them may share a NAME).

use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use tramp_core::Error;

/// The tables, in the order [`table_paths`] gives their files.
pub const TABLES: [&str; 3] = ["events", "stacks", "processes"];

/// The trace's file name without its extensions (`-`: `stdin`):
/// `espresso.4242.tpack` → `espresso.4242`, `x.hatf.zst` → `x`.
pub fn stem(input: &str) -> String {
    if input == "-" {
        return "stdin".to_string();
    }
    let name = Path::new(input)
        .file_name()
        .map_or("stdin".to_string(), |n| n.to_string_lossy().into_owned());
    let name = tramp_io::Compression::strip_extension(&name).to_string();
    match name.rsplit_once('.') {
        Some((s, _)) if !s.is_empty() => s.to_string(),
        _ => name,
    }
}

/// The three files of trace `input` in `dir`, or a refusal when one of
/// them exists: it is an earlier export's (named by the `trace` its
/// processes row holds), and replacing it would silently drop that
/// trace's rows from the folder's table.
pub fn table_paths(dir: &Path, input: &str) -> Result<[PathBuf; 3], Error> {
    let file = format!("{}.parquet", stem(input));
    let paths = TABLES.map(|t| dir.join(t).join(&file));
    if let Some(p) = paths.iter().find(|p| p.exists()) {
        let earlier =
            exported_trace(&paths[2]).map_or_else(String::new, |t| format!(" (the export of {t})"));
        return Err(Error::Usage(format!(
            "{} exists{earlier}: exporting {input} there would replace that table's rows; \
             export into another directory, or remove the earlier export's files \
             ({}/*/{file}) first",
            p.display(),
            dir.display()
        )));
    }
    Ok(paths)
}

/// The `trace` column of a processes table's first row, if it reads.
pub fn exported_trace(processes: &Path) -> Option<String> {
    let file = std::fs::File::open(processes).ok()?;
    let reader = SerializedFileReader::new(file).ok()?;
    let row = reader.get_row_iter(None).ok()?.next()?.ok()?;
    row.get_column_iter()
        .find_map(|(name, f)| match (name.as_str(), f) {
            ("trace", Field::Str(s)) => Some(s.clone()),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_drop_the_format_and_compression_extensions() {
        assert_eq!(stem("/r/espresso.4242.tpack"), "espresso.4242");
        assert_eq!(stem("x.hatf.zst"), "x");
        assert_eq!(stem("-"), "stdin");
        assert_eq!(stem("plain"), "plain");
    }

    #[test]
    fn an_existing_table_file_is_refused_with_the_trace_that_wrote_it() {
        let dir = tempfile::tempdir().unwrap();
        let paths = table_paths(dir.path(), "a/run.tpack").unwrap();
        std::fs::create_dir_all(paths[2].parent().unwrap()).unwrap();
        let row = crate::ProcessRow {
            trace: "a/run.tpack".into(),
            ..crate::ProcessRow::default()
        };
        let (bytes, _) = crate::write_process(Vec::new(), &row).unwrap();
        std::fs::write(&paths[2], bytes).unwrap();
        let e = table_paths(dir.path(), "b/run.hatf")
            .unwrap_err()
            .to_string();
        assert!(e.contains("(the export of a/run.tpack)"), "{e}");
        assert!(e.contains("processes/run.parquet exists"), "{e}");
    }
}
