use super::*;

fn row(scenario: &str, metric: &str, value: Option<f64>) -> Row {
    Row {
        scenario: scenario.into(),
        metric: metric.into(),
        value,
        unit: "ops/s".into(),
        note: String::new(),
    }
}

#[test]
fn values_format_by_magnitude() {
    assert_eq!(format_value(None), "-");
    assert_eq!(format_value(Some(1234567.4)), "1,234,567");
    assert_eq!(format_value(Some(100.0)), "100");
    assert_eq!(format_value(Some(-4321.0)), "-4,321");
    assert_eq!(format_value(Some(42.26)), "42.3");
    assert_eq!(format_value(Some(1.234)), "1.23");
    assert_eq!(format_value(Some(0.0)), "0.00");
}

#[test]
fn the_table_has_a_header_and_one_line_per_row_and_escapes_pipes() {
    let mut r = row("throughput", "a|b", Some(2500.0));
    r.note = "x|y".into();
    let table = markdown_table(&[r, row("pulse", "p99", None)]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0], "| scenario | metric | value | unit | note |");
    assert_eq!(lines[2], "| throughput | a/b | 2,500 | ops/s | x/y |");
    assert_eq!(lines[3], "| pulse | p99 | - | ops/s |  |");
}

#[test]
fn merging_replaces_only_the_scenarios_measured_again() {
    let saved = vec![
        row("throughput", "old", Some(1.0)),
        row("pulse", "kept", Some(2.0)),
    ];
    let merged = merge(saved, &[row("throughput", "new", Some(3.0))]);
    let metrics: Vec<&str> = merged.iter().map(|r| r.metric.as_str()).collect();
    assert_eq!(metrics, ["kept", "new"]);
}

#[test]
fn ratios_need_both_sides_and_a_nonzero_divisor() {
    assert_eq!(ratio(Some(10.0), Some(4.0)), Some(2.5));
    assert_eq!(ratio(Some(10.0), Some(0.0)), None);
    assert_eq!(ratio(None, Some(1.0)), None);
}

#[test]
fn proc_fields_are_found_by_key() {
    let meminfo = "MemTotal:       24000000 kB\nMemFree:  1 kB\n";
    assert_eq!(
        proc_field(meminfo, "MemTotal").as_deref(),
        Some("24000000 kB")
    );
    assert_eq!(
        proc_field("model name\t: AMD EPYC\n", "model name").as_deref(),
        Some("AMD EPYC")
    );
    assert_eq!(proc_field(meminfo, "Swap"), None);
}
