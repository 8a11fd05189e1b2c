//! Printing an answer as a document for scripts: `-o json` (pretty-printed) or `-o yaml`; the tables of
//! `-o table` and `-o wide` are made by each command (render.rs, fleet.rs, ...).

use serde_json::Value;

use super::args::Output;

/// `value` as the document `output` asks for: YAML for `-o yaml`, pretty JSON otherwise (the fallback
/// of a table that cannot be made).
pub fn document(output: Output, value: &Value) -> String {
    let json = || serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    match output {
        Output::Yaml => serde_yaml_ng::to_string(value).unwrap_or_else(|_| json()),
        Output::Json | Output::Table | Output::Wide => format!("{}\n", json()),
    }
}

/// Prints `value` as the document `output` asks for (see [`document`]).
pub fn print_document(output: Output, value: &Value) {
    out!("{}", document(output, value));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn yaml_and_json_print_the_same_answer() {
        let v = json!({"name": "app", "versions": [{"version": 1, "label": null}]});
        let yaml = document(Output::Yaml, &v);
        assert_eq!(yaml, "name: app\nversions:\n- label: null\n  version: 1\n");
        let back: Value = serde_yaml_ng::from_str(&yaml).unwrap();
        assert_eq!(back, v);
        let json = document(Output::Json, &v);
        assert_eq!(serde_json::from_str::<Value>(&json).unwrap(), v);
        assert!(json.ends_with("}\n"), "{json}");
    }
}
