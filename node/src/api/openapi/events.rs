//! The events of the API's two streams (`text/event-stream`), as the route declarations name them: each
//! event's name and the schema of its JSON `data`. The document describes one event with OpenAPI 3.2's
//! `itemSchema` under the extension name `x-itemSchema` (the document is 3.1, which has no item schema).

use convoy_actors::domain::SummaryView;
use serde_json::{json, Value};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::RefOr;

use super::answers::{AppliedEvent, ClosedEvent, EndEvent};
use super::spec::Spec;

/// `GET /v1/watch`: `applied` as the applied index moves, `closed` when the token stops authenticating.
pub fn cluster_feed(spec: &mut Spec) -> Vec<(&'static str, RefOr<Schema>)> {
    vec![
        ("applied", spec.schema::<AppliedEvent>()),
        ("closed", spec.schema::<ClosedEvent>()),
    ]
}

/// `GET /v1/deployments/{id}/watch`: a `summary` per change, `end` after the terminal one, `closed` when
/// the token stops authenticating.
pub fn deployment_feed(spec: &mut Spec) -> Vec<(&'static str, RefOr<Schema>)> {
    vec![
        ("summary", spec.schema::<SummaryView>()),
        ("end", spec.schema::<EndEvent>()),
        ("closed", spec.schema::<ClosedEvent>()),
    ]
}

/// The item schema of a stream of `events`: one of them, each `{event, id, data}` with the event's
/// name, the applied index as `id`, and `data` a string of JSON of the event's schema
/// (`contentMediaType` and `contentSchema`).
pub fn item_schema(events: &[(&'static str, RefOr<Schema>)]) -> Value {
    let one = |(name, schema): &(&'static str, RefOr<Schema>)| {
        json!({
            "type": "object",
            "title": name,
            "required": ["event", "id", "data"],
            "properties": {
                "event": {"const": name},
                "id": {"type": "string", "pattern": "^[0-9]+$", "description": "The server's applied index."},
                "data": {
                    "type": "string",
                    "contentMediaType": "application/json",
                    "contentSchema": serde_json::to_value(schema).unwrap_or_default(),
                },
            },
        })
    };
    json!({
        "description": "One server-sent event: `event` names it, `id` is the server's applied index, `data` is one line of JSON of the schema its event names. Comment lines (`: heartbeat`) carry nothing.",
        "oneOf": events.iter().map(one).collect::<Vec<_>>(),
    })
}
