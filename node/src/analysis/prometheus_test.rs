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
