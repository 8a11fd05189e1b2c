//! The bottom of the error layers: a refused setting value ([`Invalid`]) and quoting a value back safely
//! ([`clip`], [`quote`]). Modules below `errors` (strategy, threshold) refuse with these;
//! `errors` turns an [`Invalid`] into `DomainError::InvalidSetting` with the same words.

/// Longest part of a refused value quoted back in an error.
pub const MAX_QUOTE_BYTES: usize = 100;

/// `value` cut to [`MAX_QUOTE_BYTES`] bytes (on a character boundary), the full length said when
/// cut, so a huge value is never echoed back in an error.
pub fn clip(value: &str) -> String {
    if value.len() <= MAX_QUOTE_BYTES {
        return value.to_string();
    }
    let mut end = MAX_QUOTE_BYTES;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &value[..end], value.len())
}

/// [`clip`]ped and debug-quoted, for a value that may hold any character.
pub fn quote(value: &str) -> String {
    format!("{:?}", clip(value))
}

/// A setting whose value is meaningless (a zero window, a quorum of -1, 101%): the field, the value as
/// given (already clipped by the caller where it may be long) and why it is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field} = {value} is invalid: {reason}")]
pub struct Invalid {
    /// The field name, as the API spells it (`install_window`, `completion.quorum`).
    pub field: String,
    /// The value given, as text.
    pub value: String,
    /// Why it is refused, in words.
    pub reason: String,
}

impl Invalid {
    /// Refuses `value` of `field` for `reason`.
    pub fn new(field: &str, value: impl std::fmt::Display, reason: &str) -> Self {
        Invalid {
            field: field.into(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}
