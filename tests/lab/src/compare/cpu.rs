//! What a run costs the machine in CPU time: the servers' (user + system time from
//! `/proc/<pid>/stat`) and the load generator's (children reaped meanwhile, from
//! `getrusage(RUSAGE_CHILDREN)`), so that a benchmark can say what one write costs on two cores.

/// CPU times at the start of a run.
pub struct CpuMark {
    servers_ms: Vec<f64>,
    children_ms: f64,
}

/// CPU time spent since a [`CpuMark`], in ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuSpent {
    /// By the servers whose pids were marked (summed).
    pub servers_ms: f64,
    /// By child processes run to completion meanwhile (the load generator).
    pub generator_ms: f64,
}

impl CpuMark {
    /// Marks the CPU time of `pids` and of the children reaped so far.
    pub fn now(pids: &[u32]) -> Self {
        Self {
            servers_ms: pids
                .iter()
                .map(|p| process_cpu_ms(*p).unwrap_or(0.0))
                .collect(),
            children_ms: children_cpu_ms(),
        }
    }

    /// The CPU time spent since the mark by the same `pids` and by children reaped since.
    pub fn since(&self, pids: &[u32]) -> CpuSpent {
        let servers_ms = pids
            .iter()
            .zip(&self.servers_ms)
            .map(|(p, before)| (process_cpu_ms(*p).unwrap_or(*before) - before).max(0.0))
            .sum();
        CpuSpent {
            servers_ms,
            generator_ms: (children_cpu_ms() - self.children_ms).max(0.0),
        }
    }
}

/// User + system CPU time of process `pid` in ms, from `/proc/<pid>/stat`.
pub fn process_cpu_ms(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // SAFETY: sysconf has no preconditions.
    let ticks_per_s = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    stat_cpu_ticks(&stat).map(|t| t as f64 * 1000.0 / ticks_per_s.max(1) as f64)
}

/// utime + stime (fields 14 and 15) of a `/proc/<pid>/stat` line, in clock ticks. The command
/// name (field 2) is in parentheses and may itself hold spaces and `)`: fields are counted from
/// the last `)`.
pub fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// User + system CPU time of this process's reaped children, in ms.
fn children_cpu_ms() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    ms(usage.ru_utime) + ms(usage.ru_stime)
}

#[cfg(test)]
#[path = "cpu_test.rs"]
mod tests;
