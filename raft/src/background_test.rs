use super::*;

#[cfg(target_os = "linux")]
fn nice_of_this_thread() -> i32 {
    // SAFETY: reads the calling thread's own priority.
    unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn background_work_runs_at_a_lower_priority_and_leaves_the_caller_alone() {
    let caller = nice_of_this_thread();
    let (reported, seen, name) = run("convoy-test-bg", || {
        let reported = lower_this_thread();
        let name = std::thread::current().name().map(str::to_string);
        (reported, nice_of_this_thread(), name)
    })
    .await
    .unwrap();
    assert_eq!(reported, Some(seen));
    assert!(seen >= BACKGROUND_NICE, "nice {seen}");
    assert_eq!(name.as_deref(), Some("convoy-test-bg"));
    assert_eq!(
        nice_of_this_thread(),
        caller,
        "the caller's priority changed"
    );
}

#[tokio::test]
async fn a_panic_in_background_work_is_an_error_not_a_hang() {
    let err = run("convoy-test-panic", || -> u32 { panic!("boom") })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("convoy-test-panic"), "{err}");
}
