//! The condition language of a metric's `success` and `failure`: comparisons of `result` with numbers
//! (`result < 0.01`, `0.99 <= result`), joined by `&&` and `||`, negated by `!`, grouped by parentheses.
//! A tiny recursive-descent parser over at most 256 bytes and 16 levels of nesting; no scripting engine.

/// Longest condition, in bytes.
pub const MAX_CONDITION: usize = 256;
/// Deepest nesting of parentheses and `!`.
pub const MAX_DEPTH: usize = 16;

/// Why a condition does not parse: what was expected, and at which byte.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConditionError {
    /// Longer than [`MAX_CONDITION`].
    #[error("a condition is at most {MAX_CONDITION} bytes, this one has {0}")]
    TooLong(usize),
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("a condition nests at most {MAX_DEPTH} levels")]
    TooDeep,
    /// Something else than what the grammar allows at `at`.
    #[error("expected {expected} at byte {at}")]
    Expected {
        /// What the parser wanted.
        expected: &'static str,
        /// The byte offset.
        at: usize,
    },
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
}

/// One side of a comparison.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Operand {
    /// The measured value.
    Result,
    /// A number literal.
    Number(f64),
}

/// A parsed condition.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    /// `a op b`.
    Compare(Operand, Cmp, Operand),
    /// `a && b`.
    And(Box<Condition>, Box<Condition>),
    /// `a || b`.
    Or(Box<Condition>, Box<Condition>),
    /// `!a`.
    Not(Box<Condition>),
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    depth: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.at < self.s.len() && self.s[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn eat(&mut self, tok: &str) -> bool {
        self.skip_ws();
        if self.s[self.at..].starts_with(tok.as_bytes()) {
            self.at += tok.len();
            true
        } else {
            false
        }
    }

    fn expected(&self, expected: &'static str) -> ConditionError {
        ConditionError::Expected {
            expected,
            at: self.at,
        }
    }

    fn or(&mut self) -> Result<Condition, ConditionError> {
        let mut left = self.and()?;
        while self.eat("||") {
            left = Condition::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Condition, ConditionError> {
        let mut left = self.unary()?;
        while self.eat("&&") {
            left = Condition::And(Box::new(left), Box::new(self.unary()?));
        }
        Ok(left)
    }

    fn nested<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, ConditionError>,
    ) -> Result<T, ConditionError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ConditionError::TooDeep);
        }
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn unary(&mut self) -> Result<Condition, ConditionError> {
        self.skip_ws();
        if self.s[self.at..].starts_with(b"!=") {
            return Err(self.expected("a comparison"));
        }
        if self.eat("!") {
            return self.nested(|p| Ok(Condition::Not(Box::new(p.unary()?))));
        }
        if self.eat("(") {
            let inner = self.nested(|p| p.or())?;
            if !self.eat(")") {
                return Err(self.expected("')'"));
            }
            return Ok(inner);
        }
        let left = self.operand()?;
        let op = self.cmp()?;
        let right = self.operand()?;
        Ok(Condition::Compare(left, op, right))
    }

    fn cmp(&mut self) -> Result<Cmp, ConditionError> {
        for (tok, op) in [
            ("<=", Cmp::Le),
            (">=", Cmp::Ge),
            ("==", Cmp::Eq),
            ("!=", Cmp::Ne),
            ("<", Cmp::Lt),
            (">", Cmp::Gt),
        ] {
            if self.eat(tok) {
                return Ok(op);
            }
        }
        Err(self.expected("one of < <= > >= == !="))
    }

    fn operand(&mut self) -> Result<Operand, ConditionError> {
        if self.eat("result") {
            return Ok(Operand::Result);
        }
        self.skip_ws();
        let start = self.at;
        while self.at < self.s.len()
            && (self.s[self.at].is_ascii_digit()
                || matches!(self.s[self.at], b'.' | b'-' | b'+' | b'e' | b'E'))
        {
            self.at += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("");
        match text.parse::<f64>() {
            Ok(n) if n.is_finite() => Ok(Operand::Number(n)),
            _ => {
                self.at = start;
                Err(self.expected("'result' or a number"))
            }
        }
    }
}

impl Condition {
    /// Parses `text`; refuses what the grammar does not allow, naming the byte.
    pub fn parse(text: &str) -> Result<Condition, ConditionError> {
        if text.len() > MAX_CONDITION {
            return Err(ConditionError::TooLong(text.len()));
        }
        let mut p = Parser {
            s: text.as_bytes(),
            at: 0,
            depth: 0,
        };
        let c = p.or()?;
        p.skip_ws();
        if p.at != p.s.len() {
            return Err(p.expected("'&&', '||' or the end"));
        }
        Ok(c)
    }

    /// Whether the condition holds for `result` (any comparison with NaN is false).
    pub fn holds(&self, result: f64) -> bool {
        let val = |o: &Operand| match o {
            Operand::Result => result,
            Operand::Number(n) => *n,
        };
        match self {
            Condition::Compare(a, op, b) => {
                let (a, b) = (val(a), val(b));
                match op {
                    Cmp::Lt => a < b,
                    Cmp::Le => a <= b,
                    Cmp::Gt => a > b,
                    Cmp::Ge => a >= b,
                    Cmp::Eq => a == b,
                    Cmp::Ne => a != b,
                }
            }
            Condition::And(a, b) => a.holds(result) && b.holds(result),
            Condition::Or(a, b) => a.holds(result) || b.holds(result),
            Condition::Not(a) => !a.holds(result),
        }
    }
}

#[cfg(test)]
#[path = "condition_test.rs"]
mod tests;
