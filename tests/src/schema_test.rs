//! The validator's strictness: each kind of mismatch the answers' test relies on is refused, naming
//! where, and what the schema allows passes.

use serde_json::{json, Value};

use super::validate;

/// A document shaped like the served one: components referring to each other.
fn doc() -> Value {
    json!({"openapi": "3.1.0", "components": {"schemas": {
        "Id": {"type": "string", "pattern": "^d-[0-9]+$"},
        "Thing": {
            "type": "object",
            "required": ["id", "n"],
            "additionalProperties": false,
            "properties": {
                "id": {"$ref": "#/components/schemas/Id"},
                "n": {"type": "integer", "format": "int64", "minimum": 0},
                "tag": {"oneOf": [{"type": "null"}, {"type": "string", "enum": ["a", "b"]}]},
                "map": {"type": "object", "additionalProperties": {"type": "boolean"}},
                "list": {"type": "array", "items": {"type": ["integer", "null"]}}
            }
        }
    }}})
}

fn thing() -> Value {
    json!({"$ref": "#/components/schemas/Thing"})
}

/// The errors for `bad`, which must be refused.
fn refused(bad: Value) -> Vec<String> {
    validate(&doc(), &thing(), &bad).expect_err(&format!("{bad} must be refused"))
}

#[test]
fn accepts_what_the_schema_allows() {
    let ok = json!({"id": "d-7", "n": 3, "tag": null, "map": {"x": true}, "list": [1, null]});
    assert_eq!(validate(&doc(), &thing(), &ok), Ok(()));
    let inline = json!({"type": "array", "items": {"$ref": "#/components/schemas/Id"}});
    assert_eq!(validate(&doc(), &inline, &json!(["d-1", "d-2"])), Ok(()));
}

#[test]
fn an_extra_property_is_refused_where_additional_properties_is_false() {
    let errors = refused(json!({"id": "d-7", "n": 1, "more": 1}));
    assert!(errors.iter().any(|e| e.contains("more")), "{errors:?}");
}

#[test]
fn a_wrong_type_is_refused_naming_the_field() {
    let errors = refused(json!({"id": "d-7", "n": 1.5}));
    assert!(errors.iter().any(|e| e.starts_with("/n:")), "{errors:?}");
    let errors = refused(json!({"id": "d-7", "n": 1, "map": {"x": 1}}));
    assert!(
        errors.iter().any(|e| e.starts_with("/map/x:")),
        "{errors:?}"
    );
    let errors = refused(json!({"id": "d-7", "n": 1, "list": ["s"]}));
    assert!(
        errors.iter().any(|e| e.starts_with("/list/0:")),
        "{errors:?}"
    );
    let errors = refused(json!([]));
    assert!(errors.iter().any(|e| e.starts_with("$:")), "{errors:?}");
}

#[test]
fn a_missing_required_field_is_refused() {
    let errors = refused(json!({"id": "d-7"}));
    assert!(
        errors.iter().any(|e| e.contains("\"n\" is a required")),
        "{errors:?}"
    );
}

#[test]
fn patterns_bounds_enums_and_one_of_are_checked_through_references() {
    for (bad, at) in [
        (json!({"id": "x-7", "n": 1}), "/id:"),
        (json!({"id": "d-7", "n": -1}), "/n:"),
        (json!({"id": "d-7", "n": 1, "tag": "c"}), "/tag:"),
    ] {
        let errors = refused(bad.clone());
        assert!(
            errors.iter().any(|e| e.starts_with(at)),
            "{bad}: {errors:?}"
        );
    }
}

#[test]
fn an_unresolvable_reference_or_a_malformed_schema_is_an_error_not_a_pass() {
    let dangling = json!({"$ref": "#/components/schemas/Nope"});
    let errors = validate(&doc(), &dangling, &json!(1)).unwrap_err();
    assert!(errors[0].contains("Nope"), "{errors:?}");
    let malformed = json!({"type": "strng"});
    assert!(validate(&doc(), &malformed, &json!("x")).is_err());
}
