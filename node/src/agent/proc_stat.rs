//! What `/proc/<pid>/stat` says of a process: its state, process group and start time (clock ticks
//! after boot). A pid and its start time name one process: a pid the kernel gave to another process
//! since has another start time, so the agent never adopts or signals a stranger.

use std::path::Path;

/// The fields of `/proc/<pid>/stat` the agent reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStat {
    /// `R`, `S`, `D`, `Z` (exited, not reaped), `X` (dead), ...
    pub state: char,
    /// Its process group.
    pub pgrp: i32,
    /// When it started, in clock ticks after boot (field 22).
    pub start_ticks: u64,
}

impl ProcStat {
    /// Still running: neither a zombie nor dead.
    pub fn running(&self) -> bool {
        !matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Parses the text of a `stat` file. The command name (field 2) is in parentheses and may hold
/// spaces and parentheses itself, so the fields are counted from the last `)`.
pub fn parse(text: &str) -> Option<ProcStat> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state): field n is fields[n - 3].
    Some(ProcStat {
        state: fields.first()?.chars().next()?,
        pgrp: fields.get(2)?.parse().ok()?,
        start_ticks: fields.get(19)?.parse().ok()?,
    })
}

/// The process `pid` now, if there is one.
pub fn read(pid: i32) -> Option<ProcStat> {
    read_at(&Path::new("/proc").join(pid.to_string()).join("stat"))
}

fn read_at(path: &Path) -> Option<ProcStat> {
    parse(&std::fs::read_to_string(path).ok()?)
}

/// Whether the process that started at `start_ticks` with pid `pid` still runs.
pub fn same_and_running(pid: i32, start_ticks: u64) -> bool {
    read(pid).is_some_and(|s| s.start_ticks == start_ticks && s.running())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_counted_from_the_last_parenthesis() {
        let line =
            "4242 (my (odd) app) S 1 4242 4242 0 -1 4194560 120 0 0 0 1 2 0 0 20 0 1 0 987654 \
                    8192000 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        assert_eq!(
            parse(line),
            Some(ProcStat {
                state: 'S',
                pgrp: 4242,
                start_ticks: 987654
            })
        );
        assert_eq!(parse("4242 (cut short) S 1"), None);
        assert!(!parse(&line.replace(") S", ") Z")).unwrap().running());
    }

    #[test]
    fn this_process_is_found_and_another_start_time_is_not_it() {
        let me = std::process::id() as i32;
        let stat = read(me).expect("our own stat");
        assert!(stat.running());
        assert!(same_and_running(me, stat.start_ticks));
        assert!(!same_and_running(me, stat.start_ticks + 1));
    }
}
