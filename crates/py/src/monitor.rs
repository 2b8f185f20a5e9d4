//! Watching a run from Python: Ctrl-C and progress.
//!
//! The core polls a [`Monitor`] every 65,536 events while the GIL is
//! released. Each poll takes the GIL back just long enough to run Python's
//! signal handlers (so Ctrl-C stops the run within milliseconds) and to hand
//! `(now_cycle, end_cycle)` to an optional progress callback. Whatever either
//! raises stops the run and is re-raised in place of the core's `Cancelled`.

use irqsim_core::Monitor;
use pyo3::prelude::*;

pub struct PyMonitor {
    progress: Option<Py<PyAny>>,
    raised: Option<PyErr>,
}

impl PyMonitor {
    pub fn new(progress: Option<Py<PyAny>>) -> Self {
        Self {
            progress,
            raised: None,
        }
    }

    /// The exception that stopped the run, if Python raised one.
    pub fn take_raised(&mut self) -> Option<PyErr> {
        self.raised.take()
    }
}

impl Monitor for PyMonitor {
    fn poll(&mut self, now: u64, end: u64) -> bool {
        Python::attach(|py| {
            let outcome = py.check_signals().and_then(|()| match &self.progress {
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
