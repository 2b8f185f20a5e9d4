//! Why a run of the NIC failed, each one line.

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The program is not the NIC firmware.
    Input(String),
    /// A setting is invalid (names the key).
    Config(String),
    /// The firmware faulted, left its loop or made too little progress
    /// (names the program, the function and the PC where it can).
    Stopped(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (Error::Input(m) | Error::Config(m) | Error::Stopped(m)) = self;
        f.write_str(m)
    }
}
