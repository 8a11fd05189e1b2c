//! The probe `openapi_responses` drives every route with: it sends a request, checks the answer's status,
//! media type and JSON body against the operation the OpenAPI document declares, and checks each streamed
//! event (`{event, id, data}`) against the item schema its answer declares (`x-itemSchema`).

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_node::api::auth::table;
use convoy_node::sse::{SseEvent, SseReader};
use convoy_tests::schema::validate;
use serde_json::{json, Value};

/// One server, its spec, and the operations exercised so far.
pub(crate) struct Probe {
    pub(crate) base: String,
    pub(crate) admin: String,
    pub(crate) spec: Value,
    pub(crate) http: reqwest::Client,
    pub(crate) seen: BTreeSet<(String, String)>,
    pub(crate) checked: usize,
    /// `(path pattern, event name)` of every streamed event validated.
    pub(crate) events: BTreeSet<(String, String)>,
    /// An open stream kept for later (the `closed` event of a revoked token).
    pub(crate) kept: Option<(String, SseReader)>,
}

/// The events a stream sends soon: the first within 10 s, then those that follow within half a second
/// (at most 10), until the stream ends.
async fn first_events(reader: &mut SseReader) -> anyhow::Result<Vec<SseEvent>> {
    let mut events = Vec::new();
    let mut wait = Duration::from_secs(10);
    while events.len() < 10 {
        match tokio::time::timeout(wait, reader.next()).await {
            Ok(Ok(Some(event))) => events.push(event),
            Ok(Ok(None)) | Err(_) => break,
            Ok(Err(e)) => anyhow::bail!("{e}"),
        }
        wait = Duration::from_millis(500);
    }
    Ok(events)
}

/// Checks one streamed event against the item schema `item` of `spec`: the event as `{event, id, data}`,
/// then its `data` as JSON against the schema its name is given.
pub(crate) fn check_event(spec: &Value, item: &Value, event: &SseEvent) -> anyhow::Result<()> {
    let as_item = json!({"event": event.event, "id": event.id, "data": event.data});
    if let Err(errors) = validate(spec, item, &as_item) {
        anyhow::bail!(
            "event {:?} does not match the item schema:\n  {}\nevent: {}",
            event.event,
            errors.join("\n  "),
            convoy_actors::domain::clip(&as_item.to_string())
        );
    }
    let branch = item["oneOf"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|b| b["properties"]["event"]["const"] == event.event.as_str())
        .with_context(|| format!("no item schema for event {:?}", event.event))?;
    let data: Value = serde_json::from_str(&event.data)
        .with_context(|| format!("event {:?}: data is not JSON", event.event))?;
    if let Err(errors) = validate(spec, &branch["properties"]["data"]["contentSchema"], &data) {
        anyhow::bail!(
            "event {:?}: data does not match its schema:\n  {}\ndata: {}",
            event.event,
            errors.join("\n  "),
            convoy_actors::domain::clip(&event.data)
        );
    }
    Ok(())
}

impl Probe {
    /// Sends `method path` with `token` and an optional JSON `body`, expects `status`, checks the answer
    /// against the spec and returns its JSON (`Null` for other media types).
    pub(crate) async fn call(
        &mut self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
        status: u16,
    ) -> anyhow::Result<Value> {
        let mut request = self
            .http
            .request(method.parse()?, format!("{}{path}", self.base))
            .timeout(Duration::from_secs(10));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(serde_json::to_vec(&body)?);
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("{method} {path}"))?;
        self.check(method, path, status, response).await
    }

    /// As [`Probe::call`] with the admin token.
    pub(crate) async fn admin(
        &mut self,
        method: &str,
        path: &str,
        body: Option<Value>,
        status: u16,
    ) -> anyhow::Result<Value> {
        let admin = self.admin.clone();
        self.call(method, path, Some(&admin), body, status).await
    }

    pub(crate) async fn check(
        &mut self,
        method: &str,
        path: &str,
        want: u16,
        response: reqwest::Response,
    ) -> anyhow::Result<Value> {
        let status = response.status().as_u16();
        let media = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let raw_path = path.split('?').next().unwrap_or(path);
        let rule = table::lookup(convoy_node::api::routes(), method, raw_path)
            .with_context(|| format!("{method} {raw_path} is not in the role table"))?;
        let op = &self.spec["paths"][rule.pattern][method.to_lowercase()];
        ensure!(
            op.is_object(),
            "{method} {} is not in the spec",
            rule.pattern
        );
        let mut declared = op["responses"][status.to_string()].clone();
        if let Some(r) = declared["$ref"].as_str() {
            declared = self.spec.pointer(&r[1..]).cloned().unwrap_or_default();
        }
        // Streams need not end: their head and first events are the answer.
        let streaming = media.starts_with("text/event-stream");
        let mut stream = None;
        let bytes = if streaming {
            stream = Some(SseReader::new(response));
            Default::default()
        } else {
            response.bytes().await?
        };
        let text = String::from_utf8_lossy(&bytes);
        ensure!(
            status == want,
            "{method} {path}: {status} (wanted {want}): {}",
            convoy_actors::domain::clip(&text)
        );
        ensure!(
            declared.is_object(),
            "{method} {path}: status {status} is not declared for {} in the spec",
            rule.pattern
        );
        self.seen
            .insert((method.to_string(), rule.pattern.to_string()));
        let Some(content) = declared["content"].as_object().filter(|c| !c.is_empty()) else {
            ensure!(
                bytes.is_empty(),
                "{method} {path}: {status} declares no body but has one"
            );
            return Ok(Value::Null);
        };
        let (declared_media, schema) = content.iter().next().expect("one media type");
        let main = |m: &str| m.split(';').next().unwrap_or_default().trim().to_string();
        ensure!(
            main(&media) == main(declared_media),
            "{method} {path}: {status} answered {media}, the spec says {declared_media}"
        );
        if let Some(mut reader) = stream {
            let item = &content[declared_media.as_str()]["x-itemSchema"];
            ensure!(
                item.is_object(),
                "{method} {path}: {status} streams {declared_media} but the spec describes no event (x-itemSchema)"
            );
            let events = first_events(&mut reader).await?;
            ensure!(!events.is_empty(), "{method} {path}: no event within 10 s");
            for event in &events {
                check_event(&self.spec, item, event).with_context(|| format!("{method} {path}"))?;
                self.events
                    .insert((rule.pattern.to_string(), event.event.clone()));
            }
            self.kept = Some((rule.pattern.to_string(), reader));
            return Ok(Value::Null);
        }
        if main(declared_media) != "application/json" {
            return Ok(Value::Null);
        }
        let body: Value = serde_json::from_slice(&bytes).with_context(|| {
            format!(
                "{method} {path}: not JSON: {}",
                convoy_actors::domain::clip(&text)
            )
        })?;
        if let Err(errors) = validate(&self.spec, &schema["schema"], &body) {
            anyhow::bail!(
                "{method} {path} {status}: the answer does not match the spec's schema:\n  {}\nbody: {}",
                errors.join("\n  "),
                convoy_actors::domain::clip(&text)
            );
        }
        self.checked += 1;
        Ok(body)
    }
}
