//! wrk's report parsed as it prints it.

use super::*;

const REPORT: &str = "Running 10s test @ http://127.0.0.1:7700
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     4.10ms    2.91ms  89.22ms   91.02%
    Req/Sec     8.12k   601.44     9.40k    71.00%
  Latency Distribution
     50%    3.52ms
     75%    4.60ms
     90%    6.05ms
     99%   12.31ms
  161600 requests in 10.00s, 27.12MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 16
Requests/sec:  16157.84
Transfer/sec:      2.71MB
";

#[test]
fn a_report_with_latencies_and_errors_is_read_whole() {
    let r = parse(REPORT).unwrap();
    assert_eq!(r.requests, 161_600);
    assert_eq!(r.non_2xx, 16);
    assert_eq!(r.socket_errors, 3);
    assert_eq!(r.p50_ms, Some(3.52));
    assert_eq!(r.p99_ms, Some(12.31));
    assert!((r.requests_per_sec - 16157.84).abs() < 1e-6);
    // 16 of 161,600 answers were refused: they are not writes.
    let expected = 16157.84 * (161_600.0 - 16.0) / 161_600.0;
    assert!((r.writes_per_sec() - expected).abs() < 1e-6);
}

#[test]
fn durations_in_every_unit_wrk_prints() {
    assert_eq!(parse_ms("456.00us"), Some(0.456));
    assert_eq!(parse_ms("1.50ms"), Some(1.5));
    assert_eq!(parse_ms("1.02s"), Some(1020.0));
    assert_eq!(parse_ms("2.00m"), Some(120_000.0));
    assert_eq!(parse_ms("12"), None);
}

#[test]
fn output_without_a_rate_is_an_error_naming_it() {
    let e = parse("unable to connect to 127.0.0.1:1 Connection refused").unwrap_err();
    assert!(e.to_string().contains("Requests/sec"), "{e}");
}
