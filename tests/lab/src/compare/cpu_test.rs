use super::*;

#[test]
fn cpu_ticks_are_counted_after_the_last_parenthesis() {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    let line = "4242 (wr k) x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 731 269 0 0 20 0 3 0";
    assert_eq!(stat_cpu_ticks(line), Some(1000));
    assert_eq!(stat_cpu_ticks("4242 (cut short) S 1 2"), None);
    assert_eq!(stat_cpu_ticks("no parenthesis at all"), None);
}

#[test]
fn a_busy_child_shows_as_generator_time_and_a_busy_server_as_server_time() {
    let me = std::process::id();
    let mark = CpuMark::now(&[me]);
    // This process is the "server": burn 200 ms of CPU here, as getrusage counts it (a loaded
    // machine stretches the wall time, not the CPU time), within 20 s.
    let own_ms = || {
        // SAFETY: getrusage writes into the zeroed struct it is given.
        let u = unsafe {
            let mut u: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut u);
            u
        };
        let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
        ms(u.ru_utime) + ms(u.ru_stime)
    };
    let (start, started) = (own_ms(), std::time::Instant::now());
    let mut x = 0u64;
    while own_ms() - start < 200.0 && started.elapsed() < std::time::Duration::from_secs(20) {
        for _ in 0..10_000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
    // A child that burns CPU and is reaped: the "load generator".
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done")
        .status()
        .unwrap();
    assert!(status.success());
    let spent = mark.since(&[me]);
    // /proc counts in 10 ms ticks.
    assert!(spent.servers_ms >= 180.0, "{spent:?}");
    assert!(spent.generator_ms > 0.0, "{spent:?}");
}
