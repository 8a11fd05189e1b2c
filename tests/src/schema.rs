//! Checks a JSON value against a schema of the OpenAPI 3.1 document with the `jsonschema` crate, in the
//! 2020-12 dialect OpenAPI 3.1 uses. The schema is checked with the document's `components` beside it, so
//! its `$ref`s (`#/components/schemas/X`) resolve inside the document; nothing is fetched. A schema that
//! is not a valid 2020-12 schema, or a `$ref` that does not resolve, is an error, never a pass.

use jsonschema::Draft;
use serde_json::Value;

/// Checks `value` against `schema`, resolving `$ref`s in `document`; each error names the JSON path
/// (`/field/0`) of the value that failed and why.
pub fn validate(document: &Value, schema: &Value, value: &Value) -> Result<(), Vec<String>> {
    let root = match schema {
        Value::Object(keywords) => {
            let mut root = keywords.clone();
            if let Some(components) = document.get("components") {
                root.insert("components".into(), components.clone());
            }
            Value::Object(root)
        }
        other => other.clone(),
    };
    let validator = jsonschema::options()
        .with_draft(Draft::Draft202012)
        .build(&root)
        .map_err(|e| vec![format!("the schema {}: {e}", short(schema))])?;
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{}: {e}", path(&e.instance_path().to_string())))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// A JSON pointer, `$` for the whole value.
fn path(pointer: &str) -> String {
    if pointer.is_empty() {
        "$".into()
    } else {
        pointer.into()
    }
}

/// At most 100 bytes of a value, for messages.
fn short(value: &Value) -> String {
    convoy_actors::domain::clip(&value.to_string())
}

#[cfg(test)]
#[path = "schema_test.rs"]
mod tests;
