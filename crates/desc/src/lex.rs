//! Tokens of TRAMP's two languages (format descriptions and the Algol-like
//! command language): identifiers, integers (decimal or `0x` hex),
//! double-quoted strings, punctuation and operators. Comments are `/* … */`
//! and `// …` to the end of the line.

use std::ops::Range;

use tramp_diag::Diagnostic;

/// Byte range in the source text.
pub type Span = Range<usize>;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    Int(u64),
    Float(f64),
    Str(String),
    /// Punctuation and operators: `{ } ( ) [ ] ; , = == != < <= > >= + - * / % !`.
    Punct(&'static str),
}

impl std::fmt::Display for Tok {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "`{s}`"),
            Tok::Int(v) => write!(f, "`{v}`"),
            Tok::Float(v) => write!(f, "`{v}`"),
            Tok::Str(s) => write!(f, "{s:?}"),
            Tok::Punct(p) => write!(f, "`{p}`"),
        }
    }
}

const PUNCT: [&str; 21] = [
    "==", "!=", "<=", ">=", "{", "}", "(", ")", "[", "]", ";", ",", "=", "<", ">", "+", "-", "*",
    "/", "%", "!",
];

/// Splits `src` into tokens with their spans.
pub fn lex(src: &str) -> Result<Vec<(Tok, Span)>, Diagnostic> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if b[i..].starts_with(b"/*") {
            match src[i + 2..].find("*/") {
                Some(end) => i += end + 4,
                None => {
                    return Err(Diagnostic::new(
                        "comment never closed",
                        i..i + 2,
                        "this `/*` has no `*/`",
                    ));
                }
            }
            continue;
        }
        if b[i..].starts_with(b"//") {
            i += src[i..].find('\n').unwrap_or(src.len() - i);
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Ident(src[start..i].to_string()), start..i));
            continue;
        }
        if c.is_ascii_digit() {
            let hex = b[i..].starts_with(b"0x") || b[i..].starts_with(b"0X");
            if hex {
                i += 2;
            }
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            let text = &src[start..i];
            let tok = if hex {
                u64::from_str_radix(&text[2..].replace('_', ""), 16)
                    .map(Tok::Int)
                    .ok()
            } else if text.contains('.') || text.contains('e') {
                text.parse::<f64>().map(Tok::Float).ok()
            } else {
                text.replace('_', "").parse::<u64>().map(Tok::Int).ok()
            };
            match tok {
                Some(t) => out.push((t, start..i)),
                None => {
                    return Err(Diagnostic::new(
                        format!("`{text}` is not a number"),
                        start..i,
                        "not a decimal, 0x hex or decimal fraction number that fits 64 bits",
                    ));
                }
            }
            continue;
        }
        if c == b'"' {
            i += 1;
            let mut s = String::new();
            loop {
                match b.get(i) {
                    None | Some(b'\n') => {
                        return Err(Diagnostic::new(
                            "string never closed",
                            start..i,
                            "this string has no closing `\"` on its line",
                        ));
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') => {
                        let esc = src[i + 1..].chars().next();
                        s.push(match esc {
                            Some('n') => '\n',
                            Some('t') => '\t',
                            Some('"') => '"',
                            Some('\\') => '\\',
                            _ => {
                                let end = i + 1 + esc.map_or(0, char::len_utf8);
                                return Err(Diagnostic::new(
                                    "unknown escape",
                                    i..end,
                                    "escapes are \\n \\t \\\" \\\\",
                                ));
                            }
                        });
                        i += 2;
                    }
                    Some(_) => {
                        let ch = src[i..].chars().next().expect("in bounds");
                        s.push(ch);
                        i += ch.len_utf8();
                    }
                }
            }
            out.push((Tok::Str(s), start..i));
            continue;
        }
        match PUNCT.iter().find(|p| b[i..].starts_with(p.as_bytes())) {
            Some(p) => {
                i += p.len();
                out.push((Tok::Punct(p), start..i));
            }
            None => {
                let ch = src[i..].chars().next().expect("in bounds");
                return Err(Diagnostic::new(
                    format!("unexpected character {ch:?}"),
                    i..i + ch.len_utf8(),
                    "not part of the language",
                ));
            }
        }
    }
    Ok(out)
}

/// A cursor over tokens, for recursive-descent parsers.
pub struct Tokens {
    toks: Vec<(Tok, Span)>,
    pos: usize,
    end: usize,
}

impl Tokens {
    pub fn new(toks: Vec<(Tok, Span)>, src_len: usize) -> Tokens {
        Tokens {
            toks,
            pos: 0,
            end: src_len,
        }
    }

    pub fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    pub fn peek_at(&self, n: usize) -> Option<&Tok> {
        self.toks.get(self.pos + n).map(|t| &t.0)
    }

    /// Span of the next token (or the end of the text).
    pub fn span(&self) -> Span {
        self.toks
            .get(self.pos)
            .map_or(self.end..self.end, |t| t.1.clone())
    }

    /// Span of the token just taken.
    pub fn prev_span(&self) -> Span {
        self.pos
            .checked_sub(1)
            .and_then(|p| self.toks.get(p))
            .map_or(0..0, |t| t.1.clone())
    }

    pub fn take(&mut self) -> Option<(Tok, Span)> {
        let t = self.toks.get(self.pos).cloned();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    /// Whether the next token is punctuation `p`; takes it if so.
    pub fn eat(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Punct(q)) if *q == p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Whether the next token is the keyword `k`; takes it if so.
    pub fn eat_word(&mut self, k: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Ident(w)) if w == k) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn found(&self) -> String {
        match self.peek() {
            Some(t) => format!("found {t}"),
            None => "found the end of the text".to_string(),
        }
    }

    /// Takes punctuation `p` or fails saying what was found.
    pub fn expect(&mut self, p: &str, context: &str) -> Result<Span, Diagnostic> {
        if self.eat(p) {
            Ok(self.prev_span())
        } else {
            Err(Diagnostic::new(
                format!("expected `{p}` {context}, {}", self.found()),
                self.span(),
                format!("`{p}` expected here"),
            ))
        }
    }

    /// Takes the keyword `k` or fails.
    pub fn expect_word(&mut self, k: &str, context: &str) -> Result<Span, Diagnostic> {
        if self.eat_word(k) {
            Ok(self.prev_span())
        } else {
            Err(Diagnostic::new(
                format!("expected `{k}` {context}, {}", self.found()),
                self.span(),
                format!("`{k}` expected here"),
            ))
        }
    }

    /// Takes an identifier or fails.
    pub fn ident(&mut self, what: &str) -> Result<(String, Span), Diagnostic> {
        match self.peek() {
            Some(Tok::Ident(_)) => {
                let (t, s) = self.take().expect("peeked");
                let Tok::Ident(name) = t else { unreachable!() };
                Ok((name, s))
            }
            _ => Err(Diagnostic::new(
                format!("expected {what}, {}", self.found()),
                self.span(),
                format!("{what} expected here"),
            )),
        }
    }

    /// Takes an integer or fails.
    pub fn int(&mut self, what: &str) -> Result<(u64, Span), Diagnostic> {
        match self.peek() {
            Some(Tok::Int(v)) => {
                let v = *v;
                self.pos += 1;
                Ok((v, self.prev_span()))
            }
            _ => Err(Diagnostic::new(
                format!("expected {what}, {}", self.found()),
                self.span(),
                format!("{what} expected here"),
            )),
        }
    }
}
