//! Inputs and outputs: a path or `-` (stdin/stdout), compressed input
//! unwrapped by its magic bytes (zstd, gzip, xz), output compressed by file
//! extension or by explicit choice. An output path is written through a
//! temporary file in the same directory, renamed over the path only when
//! [`Output::finish`] succeeds: a failed or interrupted run leaves no
//! partial file behind (nor an old file half-overwritten). A device or a
//! named pipe (`/dev/null`, a FIFO) is written into directly, and a
//! symbolic link is written through to the file it names.
//!
//! Two promises are kept here, in one place, for every command: no output
//! is ever written over a file the same process reads (inputs and outputs
//! are compared by device and inode, so a link or another spelling of the
//! path is caught too), and the temporary files of unfinished outputs can
//! be removed from a signal handler ([`remove_unfinished`]).
//!
//! [`progress`] is the progress bar on stderr the driver reports to.

pub mod progress;
pub use progress::Progress;

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Cursor, Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

mod compression;
mod guard;
mod input;
mod output;
#[allow(unused_imports)]
pub use compression::*;
#[allow(unused_imports)]
pub use guard::*;
#[allow(unused_imports)]
pub use input::*;
#[allow(unused_imports)]
pub use output::*;

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(c: Compression) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.bin");
        let path = path.to_str().unwrap();
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_be_bytes())
            .collect();
        let mut out = Output::create(path, Some(c)).unwrap();
        out.write_all(&data).unwrap();
        out.finish().unwrap();
        let mut input = Input::open(path).unwrap();
        assert_eq!(input.compression, c);
        assert_eq!(&input.head[..], &data[..HEAD_LEN]);
        let mut back = Vec::new();
        input.reader.read_to_end(&mut back).unwrap();
        assert_eq!(back, data);
    }

    #[test]
    fn every_compression_round_trips_and_is_detected_by_magic() {
        for c in [
            Compression::None,
            Compression::Zstd,
            Compression::Gzip,
            Compression::Xz,
        ] {
            round_trip(c);
        }
    }

    #[test]
    fn a_tail_compressed_apart_reads_as_the_rest_of_the_output() {
        for c in [
            Compression::None,
            Compression::Zstd,
            Compression::Gzip,
            Compression::Xz,
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.txt");
            let path = path.to_str().unwrap();
            // The tail, compressed as it is made, into a file of its own.
            let mut tail = tempfile::tempfile().unwrap();
            let mut t = Output::to_writer(Box::new(tail.try_clone().unwrap()), c).unwrap();
            t.write_all(b"and the body after it\n").unwrap();
            t.finish().unwrap();
            io::Seek::seek(&mut tail, io::SeekFrom::Start(0)).unwrap();
            let mut out = Output::create(path, Some(c)).unwrap();
            assert_eq!(out.compression(), c);
            out.write_all(b"the head, known last\n").unwrap();
            out.finish_with_tail(&mut tail).unwrap();
            let mut back = String::new();
            // Not `Input::open`: it would record the file as this test
            // process's input, and a file of another test given the same
            // inode after this one is gone would be refused as output.
            let raw = Box::new(File::open(path).unwrap());
            let mut input = Input::from_reader(path, raw, None).unwrap();
            input.reader.read_to_string(&mut back).unwrap();
            assert_eq!(
                back, "the head, known last\nand the body after it\n",
                "{c:?}"
            );
        }
    }

    /// Names in `dir`, sorted.
    fn listing(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn an_output_appears_only_when_finished() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.hatf.zst");
        let name = path.to_str().unwrap();
        std::fs::write(&path, b"the old file").unwrap();
        // Dropped unfinished (a failed conversion): the old file stays as
        // it was and nothing else is left in the directory.
        let mut out = Output::create(name, None).unwrap();
        out.write_all(b"partial").unwrap();
        assert_eq!(
            listing(dir.path()).len(),
            2,
            "the temporary file exists meanwhile"
        );
        drop(out);
        assert_eq!(listing(dir.path()), vec!["t.hatf.zst".to_string()]);
        assert_eq!(std::fs::read(&path).unwrap(), b"the old file");
        // Finished: the new content replaces it, readable by others.
        let mut out = Output::create(name, None).unwrap();
        out.write_all(b"complete").unwrap();
        out.finish().unwrap();
        assert_eq!(listing(dir.path()), vec!["t.hatf.zst".to_string()]);
        let mut back = Vec::new();
        Input::open(name)
            .unwrap()
            .reader
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, b"complete");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o644);
        }
    }

    #[test]
    fn an_output_into_a_missing_directory_or_onto_a_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no/such/dir/t.hatf");
        assert!(Output::create(missing.to_str().unwrap(), None).is_err());
        assert!(Output::create(dir.path().to_str().unwrap(), None).is_err());
        assert!(listing(dir.path()).is_empty());
    }

    #[test]
    fn a_device_is_written_into_not_replaced() {
        // Only checked, never finished: were the output a temporary file,
        // finishing would rename it over /dev/null.
        let out = Output::create("/dev/null", None).unwrap();
        assert!(out.commit.is_none(), "/dev/null must be written directly");
        drop(out);
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            let t = std::fs::metadata("/dev/null").unwrap().file_type();
            assert!(t.is_char_device());
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_written_into_and_stays_a_pipe() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let mut out = Output::create(fifo.to_str().unwrap(), None).unwrap();
        out.write_all(b"through the pipe").unwrap();
        out.finish().unwrap();
        // Checked before joining: a pipe replaced by a file would leave
        // the reader waiting forever.
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        assert_eq!(listing(dir.path()), vec!["pipe".to_string()]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_stays_and_its_file_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.hatf");
        let link = dir.path().join("link.hatf");
        std::fs::write(&real, b"old").unwrap();
        std::os::unix::fs::symlink("real.hatf", &link).unwrap();
        let mut out = Output::create(link.to_str().unwrap(), None).unwrap();
        out.write_all(b"new").unwrap();
        out.finish().unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        // A dangling link gets the file it names.
        let dangling = dir.path().join("dangling.hatf");
        std::os::unix::fs::symlink("made.hatf", &dangling).unwrap();
        let mut out = Output::create(dangling.to_str().unwrap(), None).unwrap();
        out.write_all(b"made").unwrap();
        out.finish().unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("made.hatf")).unwrap(),
            b"made"
        );
        // A loop is an error, and nothing is written.
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert!(Output::create(a.to_str().unwrap(), None).is_err());
    }

    #[test]
    fn extension_chooses_compression() {
        assert_eq!(Compression::from_path("a.hatf.zst"), Compression::Zstd);
        assert_eq!(Compression::from_path("a.hatf.gz"), Compression::Gzip);
        assert_eq!(Compression::from_path("a.hatf.xz"), Compression::Xz);
        assert_eq!(Compression::from_path("a.hatf"), Compression::None);
        assert_eq!(Compression::strip_extension("a.hatf.zst"), "a.hatf");
    }

    #[test]
    fn short_and_empty_inputs_open() {
        for data in [&b""[..], b"\x28", b"abc"] {
            let mut input =
                Input::from_reader("mem", Box::new(Cursor::new(data.to_vec())), None).unwrap();
            let mut back = Vec::new();
            input.reader.read_to_end(&mut back).unwrap();
            assert_eq!(back, data);
        }
    }

    #[test]
    fn corrupt_compressed_input_is_an_error_not_a_panic() {
        let mut data = vec![0x28, 0xB5, 0x2F, 0xFD];
        data.extend_from_slice(&[0xFF; 32]);
        match Input::from_reader("mem", Box::new(Cursor::new(data)), None) {
            Err(_) => {}
            Ok(mut input) => {
                let mut back = Vec::new();
                assert!(input.reader.read_to_end(&mut back).is_err());
            }
        }
    }
}
