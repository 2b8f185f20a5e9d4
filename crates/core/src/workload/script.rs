//! Scripted workload: stimuli at exact cycles, given inline
//! (`workload.events`, bounded by the scenario's size) or in a file
//! (`workload.events_file`), read a line at a time as the run advances, so
//! memory stays the same whatever the number of events.
//!
//! An events file holds one event a line, `at_cycle,action,bytes`
//! (`1200,receive,1500`; `bytes` may be left out of a `syscall`). Blank lines,
//! lines starting with `#` and a first line `at_cycle,action,bytes` are
//! skipped. Like a trace, the file is read through once when the run is set up
//! (in constant memory), so that a bad line anywhere is reported before the
//! run starts, naming the file and the line; the run then reads it again.

use super::Stimulus;
use super::config::{Action, MAX_PACKET_BYTES, ScriptEvent};
use crate::engine::Time;
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The longest line an events file may have; an event takes about 20 bytes.
pub const MAX_LINE_BYTES: usize = 1024;
/// The header line an events file may start with.
const HEADER: &str = "at_cycle,action,bytes";

/// Where a script's events come from.
pub enum Script {
    Inline { events: Vec<ScriptEvent>, at: usize },
    File(EventsFile),
}

impl Script {
    /// Inline events (already checked with the scenario).
    pub fn inline(events: &[ScriptEvent]) -> Self {
        Script::Inline { events: events.to_vec(), at: 0 }
    }

    /// The events of `path`, checked whole before the first is returned;
    /// without `sends` (kernel code, whose application sends by itself) a
    /// `send` event is refused at its line.
    pub fn file(path: &Path, rx_buffer_bytes: u64) -> Result<Self> {
        let mut check = EventsFile::open(path, rx_buffer_bytes)?;
        while check.next_event()?.is_some() {}
        Ok(Script::File(EventsFile::open(path, rx_buffer_bytes)?))
    }

    pub fn next_stimulus(&mut self) -> Result<Option<(Time, Stimulus)>> {
        let event = match self {
            Script::Inline { events, at } => {
                let e = events.get(*at).cloned();
                *at += 1;
                e
            }
            Script::File(f) => f.next_event()?,
        };
        Ok(event.map(|e| (e.at_cycle, stimulus(&e))))
    }
}

fn stimulus(e: &ScriptEvent) -> Stimulus {
    match e.action {
        Action::Receive => Stimulus::Receive { bytes: e.bytes },
        Action::Send => Stimulus::Send { bytes: e.bytes },
        Action::Syscall => Stimulus::Syscall,
    }
}

/// Why `e` cannot follow an event at cycle `last` on a NIC of `rx_buffer_bytes`:
/// `(key, message)`. The rules of inline events and of an events file's lines alike.
pub fn check_event(e: &ScriptEvent, last: Time, rx_buffer_bytes: u64) -> std::result::Result<(), (&'static str, String)> {
    if e.at_cycle < last {
        return Err(("at_cycle", format!("{} comes before the previous event's {last}", e.at_cycle)));
    }
    if e.action != Action::Syscall {
        let what = if e.action == Action::Send { "send" } else { "receive" };
        if !(1..=MAX_PACKET_BYTES).contains(&e.bytes) {
            return Err(("bytes", format!("a `{what}` needs a frame size of 1..={MAX_PACKET_BYTES} bytes")));
        }
        if u64::from(e.bytes) > rx_buffer_bytes {
            return Err(("bytes", format!("{}-byte packets never fit the {rx_buffer_bytes}-byte nic.rx_buffer_bytes", e.bytes)));
        }
    }
    Ok(())
}

/// An events file being read, one line at a time.
pub struct EventsFile {
    reader: BufReader<File>,
    path: String,
    line: usize,
    last: Time,
    rx_buffer_bytes: u64,
    buf: String,
}

impl EventsFile {
    fn open(path: &Path, rx_buffer_bytes: u64) -> Result<Self> {
        let name = path.display().to_string();
        let file = crate::input::open_regular(path).map_err(|source| Error::Io { path: name.clone(), source })?;
        Ok(Self { reader: BufReader::new(file), path: name, line: 0, last: 0, rx_buffer_bytes, buf: String::new() })
    }

    fn error(&self, key: &str, msg: String) -> Error {
        Error::Config { file: self.path.clone(), key: key.into(), line: Some(self.line), msg }
    }

    /// The next event, or `None` at the end of the file.
    fn next_event(&mut self) -> Result<Option<ScriptEvent>> {
        loop {
            self.buf.clear();
            self.line += 1;
            let n = (&mut self.reader)
                .take(MAX_LINE_BYTES as u64 + 1)
                .read_line(&mut self.buf)
                .map_err(|e| self.error(HEADER, format!("cannot read the line: {e}")))?;
            if n == 0 {
                return Ok(None);
            }
            if n > MAX_LINE_BYTES {
                return Err(self.error(HEADER, format!("line is longer than {MAX_LINE_BYTES} bytes; an event is one short line")));
            }
            let text = self.buf.trim();
            if text.is_empty() || text.starts_with('#') || (self.line == 1 && text.replace(' ', "") == HEADER) {
                continue;
            }
            let e = self.parse(text)?;
            check_event(&e, self.last, self.rx_buffer_bytes).map_err(|(key, msg)| self.error(key, msg))?;
            self.last = e.at_cycle;
            return Ok(Some(e));
        }
    }

    fn parse(&self, text: &str) -> Result<ScriptEvent> {
        let fields: Vec<&str> = text.split(',').map(str::trim).collect();
        if !(2..=3).contains(&fields.len()) {
            return Err(self.error(HEADER, format!("`{text}`: expected 2 or 3 comma-separated fields")));
        }
        let at_cycle = fields[0]
            .parse::<u64>()
            .ok()
            .filter(|&c| c <= i64::MAX as u64)
            .ok_or_else(|| self.error("at_cycle", format!("`{}` is not a cycle count (0..={})", fields[0], i64::MAX)))?;
        let action = match fields[1] {
            "receive" => Action::Receive,
            "send" => Action::Send,
            "syscall" => Action::Syscall,
            other => return Err(self.error("action", format!("`{other}` is not one of `receive`, `send`, `syscall`"))),
        };
        let bytes = match fields.get(2) {
            None => 0,
            Some(b) => b.parse::<u32>().map_err(|_| self.error("bytes", format!("`{b}` is not a frame size")))?,
        };
        Ok(ScriptEvent { at_cycle, action, bytes })
    }
}
