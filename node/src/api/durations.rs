//! Durations in request bodies as people write them (issue 23): `"bake": "10m"` as well as
//! `"bake_ms": 600000`. [`Durations`] is a JSON body extractor that rewrites every such field, at any
//! depth, into its `_ms` twin through the one duration parser (`convoy_time::parse_duration`) before the
//! body is read into its type, so the domain keeps its milliseconds. Both spellings of one field, a
//! duration without a unit, a string that is no duration or one over [`MAX_MS`] are refused (400) naming the
//! field and the value (cut).

use std::future::Future;
use std::pin::Pin;

use actix_web::{dev::Payload, web, FromRequest, HttpRequest};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::error::ApiError;

/// The fields written as a duration (`"10m"`) beside their `_ms` twin.
pub const NAMES: &[&str] = &[
    "min_healthy",
    "pulse_interval",
    "timeout",
    "bake",
    "healthy_deadline",
    "download_deadline",
    "progress_deadline",
    "interval",
    "initial_delay",
    "window",
];

/// The longest duration a body may write: 10 years (every setting's own bound is shorter).
pub const MAX_MS: u64 = 10 * 365 * 86_400_000;

/// How much of a refused value an error repeats.
const SHOWN: usize = 64;

/// A JSON body of type `T` whose duration fields may be written `"10m"` (see the module).
pub struct Durations<T>(pub T);

impl<T> Durations<T> {
    /// The body.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for Durations<T> {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let json = web::Json::<Value>::from_request(req, payload);
        Box::pin(async move {
            let mut value = json.await?.into_inner();
            normalise(&mut value, "")?;
            serde_json::from_value(value)
                .map(Durations)
                .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")).into())
        })
    }
}

/// Rewrites, in `value` and everything in it, each duration field of [`NAMES`] into its `_ms` twin.
/// `at` is where `value` sits in the body (`analysis.metrics[0]`), for the errors.
pub fn normalise(value: &mut Value, at: &str) -> Result<(), ApiError> {
    match value {
        Value::Object(map) => {
            rewrite(map, at)?;
            for (k, v) in map.iter_mut() {
                normalise(v, &join(at, k))?;
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                normalise(v, &format!("{at}[{i}]"))?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

/// `value` cut to [`SHOWN`] characters.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}... ({} bytes)", &text[..end], text.len()),
        None => text,
    }
}

/// The duration fields of one object, each into its `_ms` twin.
fn rewrite(map: &mut Map<String, Value>, at: &str) -> Result<(), ApiError> {
    for name in NAMES {
        let Some(value) = map.get(*name) else {
            continue;
        };
        // A field of this name that is an object or a list is something else (a window's schedule...).
        if value.is_object() || value.is_array() {
            continue;
        }
        let field = join(at, name);
        let twin = format!("{name}_ms");
        if map.contains_key(&twin) {
            return Err(ApiError::BadRequest(format!(
                "both {field} and {} are given: give one",
                join(at, &twin)
            )));
        }
        let value = map.remove(*name).expect("read above");
        let ms = match &value {
            Value::Null => Value::Null,
            Value::String(s) => Value::from(millis(&field, &value, s)?),
            _ => {
                return Err(ApiError::BadRequest(format!(
                    "{field} = {} is not a duration: write it with its unit (\"30s\", \"10m\") or give {} in milliseconds",
                    shown(&value),
                    join(at, &twin)
                )))
            }
        };
        map.insert(twin, ms);
    }
    Ok(())
}

/// The milliseconds of `raw` (the value of `field`), at most [`MAX_MS`].
fn millis(field: &str, value: &Value, raw: &str) -> Result<u64, ApiError> {
    let bad =
        |why: String| ApiError::BadRequest(format!("{field} = {} is invalid: {why}", shown(value)));
    let d = convoy_time::parse_duration(raw).map_err(|e| bad(without_value(&e)))?;
    match u64::try_from(d.as_millis()) {
        Ok(ms) if ms <= MAX_MS => Ok(ms),
        _ => Err(bad("a duration is at most 10 years".into())),
    }
}

/// The parser's reason without the value it repeats (the error names the value, cut, itself).
fn without_value(e: &convoy_time::DurationError) -> String {
    match e {
        convoy_time::DurationError::BareNumber { value } => {
            format!("a duration needs its unit: write {value}s or {value}ms")
        }
        convoy_time::DurationError::Invalid { reason, .. } => {
            let reason: String = reason.chars().take(SHOWN).collect();
            format!("not a duration ({reason}): write e.g. 30s, 10m, 1h30m or 250ms")
        }
        convoy_time::DurationError::TooLong { .. } => "a duration is at most 10 years".into(),
    }
}

#[cfg(test)]
#[path = "durations_test.rs"]
mod tests;
