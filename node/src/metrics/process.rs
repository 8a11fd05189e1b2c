//! The process's resident memory and open file descriptors, read from `/proc/self` (Linux; zero elsewhere).

/// Resident set size in bytes: `VmRSS` of `/proc/self/status`.
pub fn resident_bytes() -> u64 {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return 0;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Open file descriptors: the entries of `/proc/self/fd`, less the one this count opens.
pub fn open_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count().saturating_sub(1) as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_process_has_memory_and_files() {
        let before = open_fds();
        let file = std::fs::File::open("/proc/self/status").expect("open");
        assert_eq!(open_fds(), before + 1);
        drop(file);
        assert!(resident_bytes() > 1 << 20, "{}", resident_bytes());
    }
}
