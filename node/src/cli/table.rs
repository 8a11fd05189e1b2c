//! A small renderer of aligned text tables, and formatting helpers for times and durations.

use convoy_actors::domain::text;

/// Rows of cells under a header, printed as left-aligned columns separated by two spaces.
#[derive(Debug, Clone, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column titles.
    pub fn new(header: &[&str]) -> Self {
        Self {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; missing cells are blank, extra cells are dropped. A cell's control, bidi and
    /// zero-width characters are shown escaped (`\u{202e}`): cells hold what nodes say.
    pub fn row<I, S>(&mut self, cells: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: ToString,
    {
        let mut row: Vec<String> = cells
            .into_iter()
            .map(|c| text::escape(&c.to_string()).into_owned())
            .collect();
        row.resize(self.header.len(), String::new());
        self.rows.push(row);
        self
    }

    /// The table as text, one line per row after the header, each ending in a newline.
    pub fn render(&self) -> String {
        let width = |s: &str| s.chars().count();
        let mut widths: Vec<usize> = self.header.iter().map(|h| width(h)).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(width(cell));
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, (cell, w)) in row.iter().zip(&widths).enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', w - width(cell)));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// `value` or `-` when absent.
pub fn opt<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// Milliseconds since the Unix epoch as `YYYY-MM-DD HH:MM:SS.mmm` (UTC).
pub fn timestamp(ms: u64) -> String {
    let (secs, millis) = (ms / 1000, ms % 1000);
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{millis:03}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// A duration in milliseconds as `850ms`, `12.3s`, `4m05s` or `2h03m`.
pub fn duration(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms}ms"),
        1_000..=59_999 => format!("{:.1}s", ms as f64 / 1000.0),
        60_000..=3_599_999 => format!("{}m{:02}s", ms / 60_000, ms % 60_000 / 1000),
        _ => format!("{}h{:02}m", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_aligned_and_lines_trimmed() {
        let mut t = Table::new(&["ID", "STATUS", "NODES"]);
        t.row(["d-1", "ROLLED_FORWARD", "10"])
            .row(["d-12", "FAILED", ""]);
        assert_eq!(
            t.render(),
            "ID    STATUS          NODES\n\
             d-1   ROLLED_FORWARD  10\n\
             d-12  FAILED\n"
        );
    }

    #[test]
    fn short_and_long_rows_are_fitted_to_the_header() {
        let mut t = Table::new(&["A", "B"]);
        t.row(["1"]).row(["1", "2", "3"]);
        assert_eq!(t.render(), "A  B\n1\n1  2\n");
    }

    #[test]
    fn unicode_cells_align_by_characters() {
        let mut t = Table::new(&["K", "V"]);
        t.row(["é", "x"]).row(["ab", "y"]);
        assert_eq!(t.render(), "K   V\né   x\nab  y\n");
    }

    #[test]
    fn empty_table_is_just_the_header() {
        let t = Table::new(&["NAME"]);
        assert_eq!(t.render(), "NAME\n");
    }

    #[test]
    fn timestamps_are_utc() {
        assert_eq!(timestamp(0), "1970-01-01 00:00:00.000");
        assert_eq!(timestamp(1_700_000_000_123), "2023-11-14 22:13:20.123");
        assert_eq!(timestamp(951_782_400_000), "2000-02-29 00:00:00.000");
    }

    #[test]
    fn durations_are_short() {
        assert_eq!(duration(850), "850ms");
        assert_eq!(duration(12_345), "12.3s");
        assert_eq!(duration(245_000), "4m05s");
        assert_eq!(duration(7_380_000), "2h03m");
        assert_eq!(opt(None::<u64>), "-");
        assert_eq!(opt(Some(3)), "3");
    }
}
