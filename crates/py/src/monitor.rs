//! Watching a run from Python: Ctrl-C and progress.
//!
//! The core polls a [`Monitor`] every 65,536 events, and pulses it after
//! each long stretch of code or NIC firmware, while the GIL is released. Each poll takes the GIL back just long enough to run Python's
//! signal handlers (so Ctrl-C stops the run within milliseconds) and to hand
//! `(now_cycle, end_cycle)` to an optional progress callback. Whatever either
//! raises stops the run and is re-raised in place of the core's `Cancelled`.
//! Off the main thread (a dask worker's thread) signals never arrive, so
//! without a callback the monitor does not take the GIL at all.

use irqsim_core::Monitor;
use pyo3::prelude::*;

pub struct PyMonitor {
    progress: Option<Py<PyAny>>,
    signals: bool,
    raised: Option<PyErr>,
}

impl PyMonitor {
    /// Watches for signals when `signals` (on Python's main thread) and
    /// reports to `progress` if given.
    pub fn new(progress: Option<Py<PyAny>>, signals: bool) -> Self {
        Self { progress, signals, raised: None }
    }

    /// Whether the calling thread is Python's main thread, the only one
    /// signal handlers run on.
    pub fn on_main_thread(py: Python<'_>) -> PyResult<bool> {
        let threading = py.import("threading")?;
        let current = threading.call_method0("current_thread")?;
        Ok(current.is(&threading.call_method0("main_thread")?))
    }

    /// The exception that stopped the run, if Python raised one.
    pub fn take_raised(&mut self) -> Option<PyErr> {
        self.raised.take()
    }
}

impl Monitor for PyMonitor {
    fn poll(&mut self, now: u64, end: u64) -> bool {
        if !self.signals && self.progress.is_none() {
            return true;
        }
        Python::attach(|py| {
            let signals = if self.signals { py.check_signals() } else { Ok(()) };
            let outcome = signals.and_then(|()| match &self.progress {
                Some(f) => f.call1(py, (now, end)).map(drop),
                None => Ok(()),
            });
            match outcome {
                Ok(()) => true,
                Err(e) => {
                    self.raised = Some(e);
                    false
                }
            }
        })
    }
}
