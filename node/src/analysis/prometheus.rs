//! One instant query to Prometheus' HTTP API (`GET /api/v1/query`) and how its answer becomes a measurement:
//! a scalar or a one-series vector gives its value, no series is empty, `NaN` is NaN; anything else
//! (timeout, HTTP error, bad JSON, several series, a matrix) is an error measurement, never a panic.
//! The client follows no redirect (issue 37): an answer of 3xx is an error naming the status only, so the
//! provider's headers go nowhere else and nothing but the provider counts as a measurement. Error text taken
//! from an answer is short and printable only (readers see it).

use std::time::Duration;

use convoy_actors::domain::analysis::run::Measured;
use convoy_actors::domain::text;
use serde::Deserialize;

use crate::analysis::provider::Provider;

/// The largest answer read, in bytes; a longer one is an error measurement.
pub const MAX_ANSWER: usize = 1 << 20;

#[derive(Deserialize)]
struct Answer {
    status: String,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Data {
    result_type: String,
    result: serde_json::Value,
}

fn value_of(pair: &serde_json::Value) -> Result<f64, String> {
    let text = pair
        .get(1)
        .and_then(serde_json::Value::as_str)
        .ok_or("a sample is not [time, \"value\"]")?;
    match text {
        "NaN" => Ok(f64::NAN),
        "+Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        t => t
            .parse::<f64>()
            .map_err(|_| format!("a sample's value is not a number: {:?}", clip(t, 40))),
    }
}

/// At most `n` characters of `s`, each control, bidi or zero-width one
/// ([`convoy_actors::domain::text::is_hidden`]) shown as `?`: the text reaches every reader's terminal
/// and browser.
pub fn clip(s: &str, n: usize) -> String {
    s.chars()
        .take(n)
        .map(|c| if text::is_hidden(c) { '?' } else { c })
        .collect()
}

/// The HTTP client of every query: it follows no redirect.
pub fn client() -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
}

/// The measurement an answer (`status`, `body`) gives.
pub fn parse_answer(status: u16, body: &[u8]) -> Measured {
    if (300..400).contains(&status) {
        return Measured::Error(format!(
            "HTTP {status} from Prometheus: a redirect, not followed (point the provider at the address that answers)"
        ));
    }
    if !(200..300).contains(&status) {
        // Any HTTP error is an error, whatever its body says (issue 36: a 503 whose body said
        // `"status": "success"` was read as a value).
        let why = serde_json::from_slice::<Answer>(body)
            .ok()
            .and_then(|a| a.error)
            .map(|e| clip(&e, 150))
            .unwrap_or_else(|| clip(&String::from_utf8_lossy(body), 120));
        return Measured::Error(format!("HTTP {status} from Prometheus: {why}"));
    }
    let answer: Answer = match serde_json::from_slice(body) {
        Ok(a) => a,
        Err(e) if status == 200 => {
            return Measured::Error(format!(
                "bad JSON from Prometheus: {}",
                clip(&e.to_string(), 150)
            ))
        }
        Err(_) => {
            return Measured::Error(format!(
                "HTTP {status} from Prometheus: {}",
                clip(&String::from_utf8_lossy(body), 120)
            ))
        }
    };
    if answer.status != "success" {
        return Measured::Error(format!(
            "HTTP {status} from Prometheus: {}",
            clip(answer.error.as_deref().unwrap_or("error"), 150)
        ));
    }
    let Some(data) = answer.data else {
        return Measured::Error("Prometheus answered no data".into());
    };
    let value = match data.result_type.as_str() {
        "scalar" => value_of(&data.result),
        "vector" => match data.result.as_array().map(Vec::as_slice) {
            Some([]) => return Measured::Empty,
            Some([one]) => one
                .get("value")
                .ok_or_else(|| "a series has no value".to_string())
                .and_then(value_of),
            Some(many) => Err(format!(
                "the query returned {} series; it must return one (aggregate it, e.g. sum(...))",
                many.len()
            )),
            None => Err("a vector result is not a list".into()),
        },
        other => Err(format!(
            "the query returned a {}; it must return a scalar or one series",
            clip(other, 20)
        )),
    };
    match value {
        Ok(v) if v.is_nan() => Measured::Nan,
        Ok(v) => Measured::Value(v),
        Err(e) => Measured::Error(e),
    }
}

/// Asks `provider` for `query` now, within its timeout.
pub async fn query(client: &reqwest::Client, provider: &Provider, query: &str) -> Measured {
    let mut url = provider.base.clone();
    if let Ok(mut segments) = url.path_segments_mut() {
        segments.pop_if_empty().extend(["api", "v1", "query"]);
    }
    let request = client
        .get(url)
        .query(&[("query", query)])
        .headers(provider.headers.clone())
        .timeout(provider.timeout);
    match tokio::time::timeout(
        provider.timeout + Duration::from_millis(100),
        fetch(request),
    )
    .await
    {
        Ok(m) => m,
        Err(_) => Measured::Error(format!("timed out after {:?}", provider.timeout)),
    }
}

async fn fetch(request: reqwest::RequestBuilder) -> Measured {
    let response = match request.send().await {
        Ok(r) => r,
        Err(e) if e.is_timeout() => return Measured::Error("Prometheus timed out".into()),
        Err(e) if e.is_connect() => return Measured::Error("cannot connect to Prometheus".into()),
        Err(e) => {
            return Measured::Error(format!(
                "request to Prometheus failed: {}",
                clip(&e.to_string(), 150)
            ))
        }
    };
    let status = response.status().as_u16();
    let mut response = response;
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(None) => break,
            Ok(Some(c)) if body.len() + c.len() > MAX_ANSWER => {
                return Measured::Error(format!("Prometheus answered more than {MAX_ANSWER} bytes"))
            }
            Ok(Some(c)) => body.extend_from_slice(&c),
            Err(e) => {
                return Measured::Error(format!(
                    "reading Prometheus' answer failed: {}",
                    clip(&e.to_string(), 150)
                ))
            }
        }
    }
    parse_answer(status, &body)
}

#[cfg(test)]
#[path = "prometheus_test.rs"]
mod tests;
