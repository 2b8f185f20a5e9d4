//! Input files (scenarios, pcaps, strace logs) must be regular files.
//!
//! irqsim reads each input to its end, a trace twice. A FIFO, a terminal or a
//! socket may never end, and opening a FIFO blocks until a writer comes,
//! where no Ctrl-C reaches the process; a device such as `/dev/zero` never
//! ends. So the path is looked at first (a `stat`, which never blocks) and
//! anything but a regular file is refused by name.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// Opens `path` for reading if it is a regular file (symbolic links followed).
pub fn open_regular(path: &Path) -> io::Result<File> {
    let kind = std::fs::metadata(path)?.file_type();
    let what = if kind.is_file() {
        return File::open(path);
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    };
    Err(io::Error::new(io::ErrorKind::InvalidInput, format!("not a regular file ({what}); give a file")))
}

/// The text of `path` if it is a regular file.
pub fn read_regular(path: &Path) -> io::Result<String> {
    io::read_to_string(open_regular(path)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_open() {
        let e = open_regular(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a character device); give a file");
        assert!(open_regular(Path::new("/")).unwrap_err().to_string().contains("(a directory)"));
        assert_eq!(open_regular(Path::new("/nonexistent/x")).unwrap_err().kind(), io::ErrorKind::NotFound);
        assert!(open_regular(Path::new(file!())).is_ok() || open_regular(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))).is_ok());
    }
}
