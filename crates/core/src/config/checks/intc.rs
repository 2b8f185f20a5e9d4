//! Rules between the controllers' keys and the devices wired to them: which
//! CPU a controller can reach, vectors and lines, rates a clock can carry.
//! [`nic_wiring`] is also what the machine builds its wiring from, so that a
//! machine never meets wiring its check did not see.

use crate::config::{Scenario, WorkloadConfig};
use crate::device::sources::{SourceConfig, SourceKind};
use crate::intc;

/// Checks of the delivery sections that span keys (each key's own range is
/// in its table): `(key, message)`.
pub(crate) fn exerciser(s: &Scenario) -> Result<(), (String, String)> {
    let WorkloadConfig::Exerciser(w) = &s.workload else { return Ok(()) };
    let err = |k: &str, m: String| Err((k.to_string(), m));
    per_cycle(s, "workload.rate_per_s", w.rate_hz)?;
    let kind = s.intc.kind;
    if kind.kind().cpu0_only && s.cpu.threads > 1 {
        return err(
            "cpu.threads",
            format!(
                "the {} delivers to one CPU only (uniprocessor), got {} threads; use intc.kind = \"ioapic\" or \"msi\" for SMP",
                kind.name(),
                s.cpu.threads
            ),
        );
    }
    let v = s.intc.vectors;
    if v > 1 && kind.kind().vectors.is_none() {
        // Allowed by the key's rule when another source's controller is MSI.
        return err(
            "intc.vectors",
            format!(
                "the exerciser's vectors need intc.kind = \"msi\" or \"msix\" (it is `{}`); the other sources' controllers take one input each",
                kind.name()
            ),
        );
    }
    if let Some((most, true)) = kind.kind().vectors
        && (v > most || !v.is_power_of_two())
    {
        let grants: Vec<String> = (0..=most.ilog2()).map(|k| (1u32 << k).to_string()).collect();
        let (last, rest) = grants.split_last().expect("at least one vector");
        return err("intc.vectors", format!("{} grants {} or {last} vectors per function, got {v}", kind.name(), rest.join(", ")));
    }
    cpu(s, "workload.cpu", w.cpu)?;
    check_others(s, &w.others, "workload.others")?;
    // Wiring: every input in range, MSI never shared, enough inputs for all.
    intc::assign(kind, intc::First { key: "workload.line", line: w.line, vectors: s.intc.vectors }, SourceConfig::requests(&w.others, "workload.others"))
        .map(|_| ())
}

/// Checks of the NIC's interrupt delivery: where the controller can route
/// it, and the sources beside it, wired after its line: `(key, message)`.
pub(crate) fn nic(s: &Scenario) -> Result<(), (String, String)> {
    if s.intc.kind.kind().cpu0_only && s.nic.irq_thread != 0 {
        let msg = format!(
            "the {} delivers to CPU 0 only, not thread {}; use intc.kind = \"ioapic\" or \"msi\" to route elsewhere",
            s.intc.kind.name(),
            s.nic.irq_thread
        );
        return Err(("nic.irq_thread".into(), msg));
    }
    let others = &s.sources.others;
    if others.is_empty() && s.nics.others.is_empty() {
        return Ok(());
    }
    check_others(s, others, "sources.others")?;
    nic_wiring(s).map(|_| ())
}

/// The NIC's inputs (one vector per RSS queue, on the first free ones), the
/// other sources' after them, then the other NICs': checked at load and
/// built from by the same call, so a machine never meets wiring its check
/// did not see.
pub fn nic_wiring(s: &Scenario) -> Result<intc::Wiring, (String, String)> {
    let vectors = s.rss.vectors();
    let nics = s.nics.others.iter().enumerate().map(|(i, n)| (format!("nics.others[{i}]"), n.request()));
    let requests = SourceConfig::requests(&s.sources.others, "sources.others").chain(nics).collect::<Vec<_>>();
    let wiring = intc::assign(s.intc.kind, intc::First { key: "nic", line: None, vectors }, requests.into_iter());
    wiring.map_err(|(key, msg)| match vectors {
        1 => (key, msg),
        n => (key, format!("{msg} (the NIC's {n} RSS queues take vectors 0..={})", n - 1)),
    })
}

/// Each other source's rate and CPU; `prefix` names the list.
fn check_others(s: &Scenario, others: &[SourceConfig], prefix: &str) -> Result<(), (String, String)> {
    for (i, o) in others.iter().enumerate() {
        per_cycle(s, &format!("{prefix}[{i}].rate_per_s"), o.rate_hz)?;
        cpu(s, &format!("{prefix}[{i}].cpu"), o.cpu)?;
        if o.dma_bytes > 0 && o.kind != SourceKind::Exerciser {
            return Err((
                format!("{prefix}[{i}].dma_bytes"),
                "only an exerciser DMA-writes before its interrupt: set kind = \"exerciser\" or remove the key".into(),
            ));
        }
    }
    Ok(())
}

/// A rate no faster than one event per cycle of the clock.
fn per_cycle(s: &Scenario, key: &str, rate: f64) -> Result<(), (String, String)> {
    if rate > s.cpu.clock_mhz * 1e6 {
        return Err((key.into(), format!("{rate} per second is more than one per cycle of the {} MHz clock", s.cpu.clock_mhz)));
    }
    Ok(())
}

/// A CPU that exists.
fn cpu(s: &Scenario, key: &str, c: usize) -> Result<(), (String, String)> {
    if c >= s.cpu.threads {
        return Err((key.into(), format!("CPU {c} does not exist (cpu.threads = {})", s.cpu.threads)));
    }
    Ok(())
}
