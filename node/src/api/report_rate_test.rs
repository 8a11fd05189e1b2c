//! The report budget with time passed in: a bucket's burst, refill, debt and wait; a token's two
//! buckets, one token's refusal leaving another's budget whole; the refusal naming token and limit; the
//! bounded map of entries; one summary line per interval.

use std::time::{Duration, Instant};

use super::*;

fn rates(bytes_per_sec: u64, requests_per_sec: u64) -> Rates {
    Rates {
        bytes_per_sec,
        requests_per_sec,
    }
}

#[test]
fn a_bucket_takes_its_burst_then_refills_at_its_rate() {
    let t0 = Instant::now();
    let mut b = Bucket::full(1_000, 100, t0);
    assert_eq!(b.take(600, t0), Ok(()));
    assert_eq!(b.take(400, t0), Ok(()));
    // Empty: 50 units need half a second.
    assert_eq!(b.take(50, t0), Err(Duration::from_millis(500)));
    assert_eq!(b.level(), 0.0, "a refusal takes nothing");
    assert_eq!(b.take(50, t0 + Duration::from_millis(500)), Ok(()));
    // Twenty idle seconds (twice what it needs) refill it only up to its capacity.
    let later = t0 + Duration::from_secs(20);
    assert!(b.is_full(later));
    assert_eq!(b.take(1_000, later), Ok(()));
    assert!(b.take(1, later).is_err());
}

#[test]
fn a_charge_after_reading_can_put_a_bucket_into_debt() {
    let t0 = Instant::now();
    let mut b = Bucket::full(1_000, 100, t0);
    b.charge(1_500, t0);
    assert_eq!(b.level(), -500.0);
    // Nothing is let in until the debt is paid: 5 s at 100 units/s.
    assert_eq!(b.take(0, t0), Err(Duration::from_secs(5)));
    assert_eq!(b.take(0, t0 + Duration::from_secs(5)), Ok(()));
}

#[test]
fn a_cost_above_the_capacity_is_taken_from_a_full_bucket_only() {
    let t0 = Instant::now();
    let mut b = Bucket::full(1_000, 100, t0);
    assert_eq!(b.take(5_000, t0), Ok(()), "else it could never pass");
    assert_eq!(b.take(5_000, t0), Err(Duration::from_secs(50)));
}

#[test]
fn time_going_backwards_refills_nothing() {
    let t0 = Instant::now() + Duration::from_secs(1);
    let mut b = Bucket::full(100, 10, t0);
    assert_eq!(b.take(100, t0), Ok(()));
    assert!(b.take(1, t0 - Duration::from_secs(1)).is_err());
}

#[test]
fn the_byte_burst_holds_the_largest_body_and_four_seconds_of_the_rate() {
    assert_eq!(rates(1024, 1).byte_burst(), BODY_LIMIT);
    assert_eq!(rates(10 * 1024 * 1024, 1).byte_burst(), 40 * 1024 * 1024);
    assert_eq!(rates(1, 500).request_burst(), 2_000);
    assert_eq!(
        Rates::default(),
        rates(DEFAULT_BYTES_PER_SEC, DEFAULT_REQUESTS_PER_SEC)
    );
}

#[test]
fn one_token_over_its_bytes_is_refused_naming_it_and_the_limit_while_another_goes_on() {
    let t0 = Instant::now();
    let limiter = ReportRate::new(rates(1024 * 1024, 1_000));
    let report = 62 * 1024;
    let mut taken = 0;
    let refused = loop {
        match limiter.admit("flooder", Some(report), t0) {
            Ok(()) => taken += 1,
            Err(refused) => break refused,
        }
    };
    assert_eq!(
        taken,
        (BODY_LIMIT / report) as usize,
        "the burst, then no more"
    );
    assert_eq!(refused.token, "flooder");
    assert!(
        refused.limit.contains("1048576 report bytes/s"),
        "{}",
        refused.limit
    );
    assert_eq!(
        refused.retry_after_secs, 1,
        "62 KB at 1 MiB/s: under a second, said as 1"
    );
    let text = refused.to_string();
    assert!(
        text.contains("\"flooder\"") && text.contains("retry after 1 s"),
        "{text}"
    );
    assert_eq!(limiter.admit("calm", Some(report), t0), Ok(()));
    // A second later the flooder's bucket holds 1 MiB again: 16 reports of 62 KB.
    let later = t0 + Duration::from_secs(1);
    let again = (0..100)
        .take_while(|_| limiter.admit("flooder", Some(report), later).is_ok())
        .count();
    assert_eq!(again, 16);
}

#[test]
fn many_small_requests_run_into_the_request_rate() {
    let t0 = Instant::now();
    let limiter = ReportRate::new(rates(1024 * 1024, 10));
    let taken = (0..1_000)
        .take_while(|_| limiter.admit("chatty", Some(10), t0).is_ok())
        .count();
    assert_eq!(taken, 40, "four seconds of 10 requests/s");
    let refused = limiter.admit("chatty", Some(10), t0).unwrap_err();
    assert!(refused.limit.contains("10 reports/s"), "{}", refused.limit);
}

#[test]
fn a_request_without_a_length_passes_until_its_bytes_put_the_token_in_debt() {
    let t0 = Instant::now();
    let limiter = ReportRate::new(rates(1024 * 1024, 1_000));
    assert_eq!(limiter.admit("relay", None, t0), Ok(()));
    limiter.charge("relay", BODY_LIMIT + 1024 * 1024, t0);
    let refused = limiter.admit("relay", None, t0).unwrap_err();
    assert_eq!(refused.retry_after_secs, 1, "1 MiB of debt at 1 MiB/s");
    assert_eq!(
        limiter.admit("relay", None, t0 + Duration::from_secs(1)),
        Ok(())
    );
}

#[test]
fn the_map_stays_within_its_cap() {
    let t0 = Instant::now();
    let limiter = ReportRate::new(rates(1024, 1));
    for i in 0..MAX_ENTRIES + 50 {
        // Each token spends some budget, so no entry is full again and the oldest ones go.
        let _ = limiter.admit(
            &format!("t{i}"),
            Some(1),
            t0 + Duration::from_micros(i as u64),
        );
    }
    assert_eq!(limiter.entries(), MAX_ENTRIES);
    // Full buckets are the same as no entry: dropped first when a new token comes.
    let later = t0 + Duration::from_secs(3_600);
    let _ = limiter.admit("new", Some(1), later);
    assert_eq!(limiter.entries(), 1);
}

#[test]
fn refusals_are_summarised_once_per_interval() {
    let t0 = Instant::now();
    let mut inner = Inner::default();
    let refused = RateLimited {
        token: "flooder".into(),
        limit: "1 reports/s, burst 4".into(),
        retry_after_secs: 1,
    };
    let first = inner
        .record_refusal(&refused, t0)
        .expect("the first at once");
    assert!(
        first.contains("refused 1 ") && first.contains("flooder"),
        "{first}"
    );
    for i in 1..100 {
        assert_eq!(
            inner.record_refusal(&refused, t0 + Duration::from_millis(i)),
            None
        );
    }
    let next = inner
        .record_refusal(&refused, t0 + LOG_INTERVAL)
        .expect("one per interval");
    assert!(next.contains("refused 100 "), "{next}");
}

#[test]
fn a_token_past_its_cap_in_flight_is_refused_until_one_ends() {
    let t0 = Instant::now();
    let rate = Arc::new(ReportRate::new(Rates::default()));
    let held: Vec<InFlight> = (0..MAX_IN_FLIGHT)
        .map(|_| rate.enter("fleet", t0).expect("under the cap"))
        .collect();
    assert_eq!(rate.in_flight("fleet"), MAX_IN_FLIGHT);
    let refused = rate.enter("fleet", t0).expect_err("one past the cap");
    assert_eq!(refused.retry_after_secs, 1);
    assert!(
        refused.to_string().contains("\"fleet\"") && refused.to_string().contains("in flight"),
        "{refused}"
    );
    // Another token is not held back by this one's requests.
    let other = rate.enter("calm", t0).expect("another token");
    drop(other);
    assert_eq!(rate.in_flight("calm"), 0);
    // One ends: the next is let in; when all end, the token has no entry left.
    let mut held = held;
    held.pop();
    let again = rate.enter("fleet", t0).expect("a slot freed");
    drop(again);
    drop(held);
    assert_eq!(rate.in_flight("fleet"), 0);
    assert!(
        rate.inner.lock().unwrap().in_flight.is_empty(),
        "no entry is left behind"
    );
}
