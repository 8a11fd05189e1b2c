use super::*;

fn m(status: u16, body: &str) -> Measured {
    parse_answer(status, body.as_bytes())
}

#[test]
fn a_scalar_or_one_series_is_a_value() {
    assert_eq!(
        m(
            200,
            r#"{"status":"success","data":{"resultType":"scalar","result":[1700000000.1,"0.25"]}}"#
        ),
        Measured::Value(0.25)
    );
    assert_eq!(
        m(
            200,
            r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"3"]}]}}"#
        ),
        Measured::Value(3.0)
    );
    assert_eq!(
        m(
            200,
            r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"+Inf"]}]}}"#
        ),
        Measured::Value(f64::INFINITY)
    );
}

#[test]
fn no_series_is_empty_and_nan_is_nan() {
    assert_eq!(
        m(
            200,
            r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#
        ),
        Measured::Empty
    );
    assert_eq!(
        m(
            200,
            r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"NaN"]}]}}"#
        ),
        Measured::Nan
    );
}

#[test]
fn everything_else_is_an_error_measurement() {
    let two = r#"{"status":"success","data":{"resultType":"vector","result":[{"value":[1,"1"]},{"value":[1,"2"]}]}}"#;
    for (status, body, want) in [
        (200, two, "2 series"),
        (
            200,
            r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#,
            "matrix",
        ),
        (200, "not json", "bad JSON"),
        (
            400,
            r#"{"status":"error","errorType":"bad_data","error":"parse error at char 3"}"#,
            "HTTP 400 from Prometheus: parse error",
        ),
        (502, "<html>bad gateway</html>", "HTTP 502"),
        (
            503,
            r#"{"status":"success","data":{"resultType":"scalar","result":[1,"0"]}}"#,
            "HTTP 503 from Prometheus",
        ),
        (
            200,
            r#"{"status":"success","data":{"resultType":"scalar","result":[1,"abc"]}}"#,
            "not a number",
        ),
        (
            200,
            r#"{"status":"success","data":{"resultType":"scalar","result":[1]}}"#,
            "not [time",
        ),
        (200, r#"{"status":"success"}"#, "no data"),
    ] {
        match m(status, body) {
            Measured::Error(e) => assert!(e.contains(want), "{body}: {e}"),
            other => panic!("{body}: {other:?}"),
        }
    }
}

/// Serves every connection with `answer`; counts the connections and keeps the last request's head.
async fn serve(
    answer: String,
) -> (
    String,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
    std::sync::Arc<std::sync::Mutex<String>>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let (h, s) = (hits.clone(), seen.clone());
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            h.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = vec![0u8; 8192];
            let n = sock.read(&mut buf).await.unwrap_or(0);
            *s.lock().unwrap() = String::from_utf8_lossy(&buf[..n]).into_owned();
            let _ = sock.write_all(answer.as_bytes()).await;
        }
    });
    (addr, hits, seen)
}

fn http(status: &str, extra: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\n{extra}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[tokio::test]
async fn a_redirect_is_an_error_naming_its_status_and_is_not_followed_with_the_headers() {
    let good = r#"{"status":"success","data":{"resultType":"scalar","result":[1,"0.5"]}}"#;
    let (elsewhere, hits, _) = serve(http("200 OK", "", good)).await;
    let location = format!("Location: http://{elsewhere}/api/v1/query?query=up\r\n");
    let (redirector, _, request) = serve(http("302 Found", &location, "")).await;
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("authorization", "Bearer s3cret".parse().unwrap());
    let provider = Provider {
        name: "prom".into(),
        base: format!("http://{redirector}").parse().unwrap(),
        timeout: Duration::from_secs(5),
        headers,
    };
    let measured = query(&client().unwrap(), &provider, "up").await;
    let Measured::Error(why) = measured else {
        panic!("a redirect counted as a measurement: {measured:?}");
    };
    assert!(why.contains("302"), "{why}");
    assert!(!why.contains(&elsewhere), "names the Location: {why}");
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the redirect was followed"
    );
    assert!(
        request.lock().unwrap().contains("s3cret"),
        "the provider got its headers"
    );
}

#[test]
fn error_text_from_an_answer_is_short_and_printable() {
    let hostile = format!(
        "{{\"status\":\"error\",\"error\":\"bad \\u202e\\u200bquery\\u001b[2J{}\"}}",
        "x".repeat(500)
    );
    let Measured::Error(why) = parse_answer(400, hostile.as_bytes()) else {
        panic!("not an error");
    };
    assert!(why.contains("bad ??query?[2J"), "{why}");
    assert!(why.chars().count() < 200, "{why}");
    assert!(why
        .chars()
        .all(|c| !c.is_control() && c != '\u{202e}' && c != '\u{200b}'));
    let Measured::Error(why) = parse_answer(502, "<html>\u{2066}gateway\u{7}</html>".as_bytes())
    else {
        panic!("not an error");
    };
    assert!(why.contains("?gateway?"), "{why}");
}
