//! Rules of kernel code: the cores' keys, checked at load where errors get
//! their line, and which CPUs run the program (`code.cpus`).

use crate::config::Scenario;
use crate::intc::IntcKind;

/// Checks between the cores' keys (a thread a pin names, a cache's
/// geometry, a pin's syntax) at load, where errors get their line. The
/// workloads' sends all go through the program's send entry (`code.send`).
pub(crate) fn code(s: &Scenario) -> Result<(), (String, String)> {
    if !s.code.selected() {
        return Ok(());
    }
    let exec = irqsim_mips::config::ExecConfig::from_table(&s.code.core).map_err(crate::code::core_problem)?;
    kernels(s, exec.system.threads)
}

/// The CPUs a NIC's interrupts go to: its `queues` vectors from `first`
/// on, as the controllers route them (`Delivery::wired`), or CPU 0 alone
/// behind a controller that delivers only there.
fn nic_cpus(first: usize, queues: usize, threads: usize, kind: IntcKind) -> Vec<usize> {
    if kind.kind().cpu0_only {
        return vec![0];
    }
    (0..queues).map(|i| (first + i) % threads).collect()
}

/// A kernel per core (`code.cpus`): what runs code on the CPUs it names
/// must stay there. The application, the tick and the first NIC (its ring
/// and registers are the program's memory) are code's, and the abstract
/// kernel's application runs on one of its own CPUs; a device has one
/// driver (a kernel binds one to a device, which programs its every ring
/// and vector: queues split between two kernels have no counterpart), so
/// a NIC's interrupts go to code CPUs only or to abstract ones only; the two threads of an SMT core share its pipeline, which the
/// abstract costs do not model, so they run one kernel.
fn kernels(s: &Scenario, threads_per_core: usize) -> Result<(), (String, String)> {
    let Some(cpus) = &s.code.cpus else { return Ok(()) };
    let threads = s.cpu.threads;
    let err = |key: &str, msg: String| Err((key.to_string(), msg));
    if cpus.is_empty() {
        return err("code.cpus", "no CPU runs the program: name at least one, or remove code.program for the abstract kernel".into());
    }
    for (i, &c) in cpus.iter().enumerate() {
        if c >= threads {
            return err("code.cpus", format!("CPU {c} does not exist (cpu.threads = {threads})"));
        }
        if cpus[..i].contains(&c) {
            return err("code.cpus", format!("CPU {c} is named twice"));
        }
    }
    let runs = s.code.runs(threads);
    if let Some(core) =
        (0..threads / threads_per_core.max(1)).find(|k| runs[k * threads_per_core..(k + 1) * threads_per_core].iter().any(|&r| r != runs[k * threads_per_core]))
    {
        let first = core * threads_per_core;
        return err(
            "code.cpus",
            format!(
                "core {core}'s hardware threads {first}..={} would run two kernels: an SMT core's threads share its pipeline, which the abstract costs do not model; name all of them or none",
                first + threads_per_core - 1
            ),
        );
    }
    let abstract_cpu = |key: &str, what: &str, t: usize| {
        err(key, format!("{what} runs on CPU {t}, which runs the abstract-cost kernel (code.cpus = {cpus:?}); it is the program's"))
    };
    if !runs[s.code.app_thread] {
        return abstract_cpu("code.app_thread", "the application (and the workload's sends)", s.code.app_thread);
    }
    if s.app.background && runs[s.app.thread] {
        let msg = format!(
            "the abstract kernel's application (`app.background`) runs on CPU {}, which runs the program (code.cpus = {cpus:?}), whose application is its own (`code.app_thread`); name a CPU of the abstract kernel",
            s.app.thread
        );
        return err("app.thread", msg);
    }
    if let Some(t) = s.code.tx_irq_thread.filter(|&t| !runs[t]) {
        return abstract_cpu("code.tx_irq_thread", "NIC 1's (the forwarding side's) interrupt", t);
    }
    let vectors = s.rss.vectors() as usize;
    if let Some(t) = nic_cpus(s.nic.irq_thread, vectors, threads, s.intc.kind).into_iter().find(|&t| !runs[t]) {
        let key = if vectors > 1 { "rss.queues" } else { "nic.irq_thread" };
        return abstract_cpu(key, "the first NIC's interrupt (its rings and registers are the program's memory)", t);
    }
    if s.rss.rps()
        && let Some(t) = (0..s.rss.rps_cpus as usize).find(|&t| !runs[t])
    {
        return abstract_cpu("rss.rps_cpus", "an RPS backlog's poll (the program's)", t);
    }
    for (i, n) in s.nics.others.iter().enumerate() {
        let at = nic_cpus(n.irq_thread, n.queues as usize, threads, n.intc.unwrap_or(s.intc.kind));
        if at.iter().any(|&t| runs[t] != runs[at[0]]) {
            let msg = format!(
                "its queues' interrupts go to CPUs {at:?}, some running the program and some the abstract costs (code.cpus = {cpus:?}): a NIC has one driver, which programs all its rings and vectors, so its queues go to CPUs of one kernel"
            );
            return err(&format!("nics.others[{i}].irq_thread"), msg);
        }
    }
    Ok(())
}
