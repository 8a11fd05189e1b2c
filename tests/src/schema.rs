//! A JSON Schema validator for the subset the OpenAPI document uses (`$ref` into the document, `type`,
//! `properties`, `required`, `additionalProperties`, `items`, `enum`, `oneOf`/`anyOf`/`allOf`, `minimum`,
//! `maximum`, digit-run `pattern`s); annotations (`description`, `format`, ...) are skipped. A keyword it does
//! not know is an error, never a silent pass, so a spec that grows a new construct fails the test until this
//! understands it.

use serde_json::{Map, Value};

/// Keywords that say nothing about validity.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "format",
    "default",
    "example",
    "examples",
    "deprecated",
    "propertyNames",
    "readOnly",
    "writeOnly",
    "contentMediaType",
];

/// Checks `value` against `schema`, resolving `$ref`s in `document`; the errors name the JSON path.
pub fn validate(document: &Value, schema: &Value, value: &Value) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    check(document, schema, value, "$", &mut errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn check(doc: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    let schema = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => return errors.push(format!("{at}: nothing is allowed here")),
        Value::Object(map) => map,
        other => return errors.push(format!("{at}: schema is not an object: {other}")),
    };
    for (keyword, arg) in schema {
        match keyword.as_str() {
            "$ref" => match arg
                .as_str()
                .and_then(|r| r.strip_prefix('#'))
                .and_then(|p| doc.pointer(p))
            {
                Some(target) => check(doc, target, value, at, errors),
                None => errors.push(format!("{at}: unresolvable $ref {arg}")),
            },
            "type" => {
                let types: Vec<&str> = match arg {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                    _ => vec![],
                };
                if !types.iter().any(|t| is_type(t, value)) {
                    errors.push(format!("{at}: {} is not of type {types:?}", short(value)));
                }
            }
            "properties" | "required" | "additionalProperties" => {
                if let Value::Object(object) = value {
                    check_object(doc, schema, keyword, object, at, errors);
                }
            }
            "items" => {
                if let Value::Array(items) = value {
                    for (i, item) in items.iter().enumerate() {
                        check(doc, arg, item, &format!("{at}[{i}]"), errors);
                    }
                }
            }
            "enum" => {
                if !arg
                    .as_array()
                    .is_some_and(|options| options.contains(value))
                {
                    errors.push(format!("{at}: {} is not one of {arg}", short(value)));
                }
            }
            "oneOf" | "anyOf" | "allOf" => {
                let branches = arg.as_array().map(Vec::as_slice).unwrap_or_default();
                let passing = branches
                    .iter()
                    .filter(|b| validate(doc, b, value).is_ok())
                    .count();
                let ok = match keyword.as_str() {
                    "oneOf" => passing == 1,
                    "anyOf" => passing >= 1,
                    _ => passing == branches.len(),
                };
                if !ok {
                    errors.push(format!(
                        "{at}: {} matches {passing} of the {} branches of {keyword}",
                        short(value),
                        branches.len()
                    ));
                }
            }
            "minimum" | "maximum" => {
                if let (Some(n), Some(bound)) = (value.as_f64(), arg.as_f64()) {
                    if (keyword == "minimum" && n < bound) || (keyword == "maximum" && n > bound) {
                        errors.push(format!("{at}: {n} is beyond {keyword} {bound}"));
                    }
                }
            }
            "pattern" => {
                if let Value::String(s) = value {
                    match digit_pattern(arg.as_str().unwrap_or_default()) {
                        Some((prefix, suffix)) => {
                            let digits = s
                                .strip_prefix(prefix)
                                .and_then(|rest| rest.strip_suffix(suffix));
                            if !digits.is_some_and(|d| {
                                !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
                            }) {
                                errors.push(format!("{at}: {s:?} does not match {arg}"));
                            }
                        }
                        None => errors.push(format!("{at}: unsupported pattern {arg}")),
                    }
                }
            }
            other if ANNOTATIONS.contains(&other) => {}
            other => errors.push(format!("{at}: unsupported keyword {other:?}")),
        }
    }
}

fn check_object(
    doc: &Value,
    schema: &Map<String, Value>,
    keyword: &str,
    object: &Map<String, Value>,
    at: &str,
    errors: &mut Vec<String>,
) {
    let properties = schema.get("properties").and_then(Value::as_object);
    match keyword {
        "properties" => {
            for (name, sub) in properties.into_iter().flatten() {
                if let Some(v) = object.get(name) {
                    check(doc, sub, v, &format!("{at}.{name}"), errors);
                }
            }
        }
        "required" => {
            for name in schema["required"].as_array().into_iter().flatten() {
                let name = name.as_str().unwrap_or_default();
                if !object.contains_key(name) {
                    errors.push(format!("{at}: required field {name:?} is missing"));
                }
            }
        }
        _ => {
            let extra = &schema["additionalProperties"];
            for (name, v) in object {
                if properties.is_some_and(|p| p.contains_key(name)) {
                    continue;
                }
                check(doc, extra, v, &format!("{at}.{name}"), errors);
            }
        }
    }
}

fn is_type(t: &str, value: &Value) -> bool {
    match t {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => false,
    }
}

/// `^PREFIX[0-9]+SUFFIX$` → `(PREFIX, SUFFIX)`, the only pattern shape the spec uses.
fn digit_pattern(pattern: &str) -> Option<(&str, &str)> {
    let inner = pattern.strip_prefix('^')?.strip_suffix('$')?;
    let (prefix, suffix) = inner.split_once("[0-9]+")?;
    let plain = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '%')
    };
    (plain(prefix) && plain(suffix)).then_some((prefix, suffix))
}

/// At most 100 bytes of a value, for messages.
fn short(value: &Value) -> String {
    convoy_actors::domain::clip(&value.to_string())
}

#[cfg(test)]
mod tests {
    use super::validate;
    use serde_json::json;

    fn doc() -> serde_json::Value {
        json!({"components": {"schemas": {
            "Id": {"type": "string", "pattern": "^d-[0-9]+$"},
            "Thing": {"type": "object", "required": ["id", "n"], "properties": {
                "id": {"$ref": "#/components/schemas/Id"},
                "n": {"type": "integer", "minimum": 0},
                "tag": {"oneOf": [{"type": "null"}, {"type": "string", "enum": ["a", "b"]}]},
                "map": {"type": "object", "additionalProperties": {"type": "boolean"}},
                "list": {"type": "array", "items": {"type": ["integer", "null"]}}
            }}
        }}})
    }

    #[test]
    fn accepts_what_the_schema_allows() {
        let doc = doc();
        let schema = json!({"$ref": "#/components/schemas/Thing"});
        let ok = json!({"id": "d-7", "n": 3, "tag": null, "map": {"x": true}, "list": [1, null], "more": 1});
        assert_eq!(validate(&doc, &schema, &ok), Ok(()));
    }

    #[test]
    fn refuses_each_kind_of_mismatch_naming_where() {
        let doc = doc();
        let schema = json!({"$ref": "#/components/schemas/Thing"});
        for (bad, says) in [
            (json!({"id": "d-7"}), "required field \"n\""),
            (json!({"id": "x-7", "n": 1}), "$.id: \"x-7\" does not match"),
            (json!({"id": "d-7", "n": -1}), "$.n: -1 is beyond minimum"),
            (json!({"id": "d-7", "n": 1.5}), "$.n: 1.5 is not of type"),
            (
                json!({"id": "d-7", "n": 1, "tag": "c"}),
                "$.tag: \"c\" matches 0 of the 2",
            ),
            (
                json!({"id": "d-7", "n": 1, "map": {"x": 1}}),
                "$.map.x: 1 is not of type",
            ),
            (json!({"id": "d-7", "n": 1, "list": ["s"]}), "$.list[0]"),
            (json!([]), "$: [] is not of type"),
        ] {
            let errors = validate(&doc, &schema, &bad).expect_err(&bad.to_string());
            assert!(errors.iter().any(|e| e.contains(says)), "{bad}: {errors:?}");
        }
    }

    #[test]
    fn an_unknown_keyword_is_an_error_not_a_pass() {
        let errors =
            validate(&json!({}), &json!({"not": {"type": "string"}}), &json!(1)).unwrap_err();
        assert!(
            errors[0].contains("unsupported keyword \"not\""),
            "{errors:?}"
        );
    }
}
