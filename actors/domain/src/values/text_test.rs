//! Hidden characters are found and escaped; other text, any script, is left as it is.

use super::*;

#[test]
fn control_bidi_and_zero_width_characters_are_hidden_and_escaped() {
    for c in [
        '\u{0}', '\u{1b}', '\n', '\u{7f}', '\u{85}', '\u{202a}', '\u{202b}', '\u{202c}',
        '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}', '\u{200e}',
        '\u{200f}', '\u{061c}', '\u{200b}', '\u{200c}', '\u{200d}', '\u{2060}', '\u{feff}',
    ] {
        assert!(is_hidden(c), "U+{:04X}", c as u32);
        let text = format!("a{c}b");
        assert_eq!(first_hidden(&text), Some(c));
        let shown = escape(&text);
        assert_eq!(shown, format!("a\\u{{{:x}}}b", c as u32));
        assert!(!shown.contains(c));
    }
    for plain in [
        "/var/log/web.log",
        "échec: fichier introuvable",
        "ошибка",
        "失败",
        "exit 1",
    ] {
        assert_eq!(first_hidden(plain), None, "{plain}");
        assert!(matches!(escape(plain), Cow::Borrowed(_)), "{plain}");
    }
}
