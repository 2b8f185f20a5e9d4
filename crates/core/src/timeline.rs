//! Timelines: what each hardware context ran, and when, as a Chrome/Perfetto
//! trace (`chrome://tracing`, <https://ui.perfetto.dev>).
//!
//! Recording is off unless asked for; when off, every call returns at the
//! first branch so the event loop pays nothing. A cap on the number of spans
//! keeps a long run from filling memory; what was cut is reported.
//!
//! Spans carry their job's arguments (the frame, the controller input, the
//! interrupt). Flows are arrows from a device event to the handler it starts:
//! whoever posts an interrupt activity says where its arrow starts
//! ([`Timeline::flow_from`]), and the thread ends it when the activity starts
//! ([`Timeline::flow_to`]); activities at one level of one thread start in
//! the order they were posted, so the arrows pair up in that order.

use crate::engine::Time;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Write};

/// Up to two named numbers describing a job (`("frame", arrival cycle)`).
pub type Args = [Option<(&'static str, u64)>; 2];

/// One interval of activity on a track.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    pub thread: usize,
    pub context: usize,
    pub start: Time,
    pub end: Time,
    pub label: &'static str,
    pub args: Args,
}

/// An arrow from a device event at `from` to the activity it started on
/// `(thread, context)` at `to`.
#[derive(Debug, Clone, Copy)]
pub struct Flow {
    pub from: Time,
    pub thread: usize,
    pub context: usize,
    pub to: Time,
    pub label: &'static str,
}

/// A point event on the device track (packet arrival, interrupt raised, ...).
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    pub time: Time,
    pub label: &'static str,
}

/// A transaction in flight on the bus (device track "bus"): from leaving its
/// sender to arriving, like a bus analyzer's view (delivery model).
#[derive(Debug, Clone, Copy)]
pub struct Transfer {
    pub start: Time,
    pub end: Time,
    pub label: &'static str,
}

#[derive(Debug, Default)]
pub struct Timeline {
    enabled: bool,
    max_items: usize,
    spans: Vec<Span>,
    marks: Vec<Mark>,
    transfers: Vec<Transfer>,
    flows: Vec<Flow>,
    /// Arrows waiting for their activity to start, per (thread, level).
    pending: BTreeMap<(usize, u8), VecDeque<(Time, &'static str)>>,
    dropped: u64,
    /// Name of the device track the marks go on.
    device: &'static str,
}

impl Timeline {
    pub fn disabled() -> Self {
        Self::default()
    }

    /// Records up to `max_items` spans and marks; marks go on a track named `device`.
    pub fn recording(max_items: usize, device: &'static str) -> Self {
        Self { enabled: true, max_items, device, ..Self::default() }
    }

    #[inline]
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    fn full(&mut self) -> bool {
        let full = self.spans.len() + self.marks.len() + self.transfers.len() + self.flows.len() >= self.max_items;
        self.dropped += u64::from(full);
        full
    }

    #[inline]
    pub fn span(&mut self, thread: usize, context: usize, start: Time, end: Time, label: &'static str, args: Args) {
        if !self.enabled || self.full() {
            return;
        }
        // Merge with the previous span when it simply continues.
        if let Some(last) = self.spans.last_mut()
            && last.thread == thread
            && last.context == context
            && last.label == label
            && last.args == args
            && last.end == start
        {
            last.end = end;
            return;
        }
        self.spans.push(Span { thread, context, start, end, label, args });
    }

    /// An interrupt activity was posted at `level` of `thread` for a device
    /// event at `from`: its arrow starts there.
    #[inline]
    pub fn flow_from(&mut self, thread: usize, level: u8, from: Time, label: &'static str) {
        if self.enabled {
            self.pend(thread, level, from, label);
        }
    }

    #[cold]
    fn pend(&mut self, thread: usize, level: u8, from: Time, label: &'static str) {
        self.pending.entry((thread, level)).or_default().push_back((from, label));
    }

    /// The oldest activity posted at `level` of `thread` starts now, in
    /// `context`: its arrow, if it has one, ends here.
    #[inline]
    pub fn flow_to(&mut self, thread: usize, level: u8, context: usize, to: Time) {
        if self.enabled {
            self.land(thread, level, context, to);
        }
    }

    #[cold]
    fn land(&mut self, thread: usize, level: u8, context: usize, to: Time) {
        let Some((from, label)) = self.pending.get_mut(&(thread, level)).and_then(VecDeque::pop_front) else { return };
        if !self.full() {
            self.flows.push(Flow { from, thread, context, to, label });
        }
    }

    /// Inline up to the test of `enabled` (a mark is on the network path).
    #[inline(always)]
    pub fn mark(&mut self, time: Time, label: &'static str) {
        if self.enabled {
            self.add_mark(time, label);
        }
    }

    #[cold]
    fn add_mark(&mut self, time: Time, label: &'static str) {
        if !self.full() {
            self.marks.push(Mark { time, label });
        }
    }

    /// Records a bus transaction in flight from `start` to `end`.
    #[inline]
    pub fn bus(&mut self, start: Time, end: Time, label: &'static str) {
        if !self.enabled || self.full() {
            return;
        }
        self.transfers.push(Transfer { start, end, label });
    }

    pub fn transfers(&self) -> &[Transfer] {
        &self.transfers
    }

    pub fn spans(&self) -> &[Span] {
        &self.spans
    }

    pub fn marks(&self) -> &[Mark] {
        &self.marks
    }

    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }

    /// Spans and marks not recorded because the cap was reached.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Chrome trace-event JSON. Process 1 is the CPU, one track per hardware
    /// thread and context (named by `context_name`); process 2 is the device.
    pub fn to_chrome(&self, clock_mhz: f64, threads: usize, contexts: usize, context_name: impl Fn(usize) -> String) -> Value {
        let mut events = Vec::new();
        self.chrome_events(clock_mhz, threads, contexts, context_name, |e| {
            events.push(e);
            Ok(())
        })
        .expect("collecting never fails");
        json!({"traceEvents": events, "displayTimeUnit": "ns", "otherData": self.other_data(clock_mhz)})
    }

    /// The same document as [`Self::to_chrome`], written to `w` one event at
    /// a time: memory stays that of one event, whatever the trace's size.
    /// Returns the number of events written that are not metadata.
    pub fn write_chrome(&self, w: &mut impl Write, clock_mhz: f64, threads: usize, contexts: usize, context_name: impl Fn(usize) -> String) -> io::Result<u64> {
        let (mut first, mut events) = (true, 0);
        w.write_all(b"{\"traceEvents\":[")?;
        self.chrome_events(clock_mhz, threads, contexts, context_name, |e| {
            if !first {
                w.write_all(b",")?;
            }
            first = false;
            events += u64::from(e["ph"] != "M");
            serde_json::to_writer(&mut *w, &e).map_err(io::Error::from)
        })?;
        w.write_all(b"],\"displayTimeUnit\":\"ns\",\"otherData\":")?;
        serde_json::to_writer(&mut *w, &self.other_data(clock_mhz)).map_err(io::Error::from)?;
        w.write_all(b"}")?;
        w.flush()?;
        Ok(events)
    }

    fn other_data(&self, clock_mhz: f64) -> Value {
        json!({"clock_mhz": clock_mhz, "dropped": self.dropped})
    }

    /// Hands each trace event to `emit`, in the document's order.
    fn chrome_events(
        &self,
        clock_mhz: f64,
        threads: usize,
        contexts: usize,
        context_name: impl Fn(usize) -> String,
        mut emit: impl FnMut(Value) -> io::Result<()>,
    ) -> io::Result<()> {
        let us = |t: Time| t as f64 / clock_mhz;
        let tid = |thread: usize, ctx: usize| (thread * contexts + ctx) as u64;
        emit(json!({"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "CPU"}}))?;
        emit(json!({"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "device"}}))?;
        emit(json!({"ph": "M", "pid": 2, "tid": 0, "name": "thread_name", "args": {"name": self.device}}))?;
        for thread in 0..threads {
            for ctx in 0..contexts {
                let name = format!("thread {thread} / {}", context_name(ctx));
                emit(json!({"ph": "M", "pid": 1, "tid": tid(thread, ctx), "name": "thread_name", "args": {"name": name}}))?;
            }
        }
        for s in &self.spans {
            let mut args = Map::new();
            args.insert("start_cycle".into(), json!(s.start));
            args.insert("cycles".into(), json!(s.end - s.start));
            for (k, v) in s.args.iter().flatten() {
                args.insert((*k).into(), json!(v));
            }
            emit(json!({
                "ph": "X", "pid": 1, "tid": tid(s.thread, s.context), "name": s.label,
                "ts": us(s.start), "dur": us(s.end) - us(s.start), "args": args,
            }))?;
        }
        // Flow arrows: from the device track to the slice the handler starts
        // (`bp: "e"` binds the end to the enclosing slice).
        for (id, f) in self.flows.iter().enumerate() {
            emit(json!({"ph": "s", "id": id, "cat": "interrupt", "pid": 2, "tid": 0, "name": f.label, "ts": us(f.from)}))?;
            emit(json!({"ph": "f", "bp": "e", "id": id, "cat": "interrupt", "pid": 1, "tid": tid(f.thread, f.context), "name": f.label, "ts": us(f.to)}))?;
        }
        for m in &self.marks {
            emit(json!({"ph": "i", "s": "t", "pid": 2, "tid": 0, "name": m.label, "ts": us(m.time), "args": {"cycle": m.time}}))?;
        }
        if !self.transfers.is_empty() {
            emit(json!({"ph": "M", "pid": 2, "tid": 1, "name": "thread_name", "args": {"name": "bus"}}))?;
        }
        for t in &self.transfers {
            emit(json!({
                "ph": "X", "pid": 2, "tid": 1, "name": t.label, "ts": us(t.start), "dur": us(t.end) - us(t.start),
                "args": {"start_cycle": t.start, "cycles": t.end - t.start},
            }))?;
        }
        Ok(())
    }
}
