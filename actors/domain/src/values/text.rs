//! Text shown to people as it is: which characters may hide, reorder or control what a terminal or a
//! browser shows (control, bidi and zero-width ones), and text with each of them escaped. Every side
//! that shows a node's (or a provider's) words asks here.

use std::borrow::Cow;

/// Whether `c` may not be shown as it is: a control character, or one of the invisible ones that
/// reorder or hide text (bidi embeddings, overrides, isolates and marks, zero-width characters, the
/// BOM, the soft hyphen, interlinear annotation marks).
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}' | '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

/// The first hidden character of `s`, if any.
pub fn first_hidden(s: &str) -> Option<char> {
    s.chars().find(|c| is_hidden(*c))
}

/// `s` with each hidden character written as its escape (`\u{202e}`, `\u{1b}`); borrowed when nothing
/// needs escaping.
pub fn escape(s: &str) -> Cow<'_, str> {
    if first_hidden(s).is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_hidden(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
#[path = "text_test.rs"]
mod tests;
