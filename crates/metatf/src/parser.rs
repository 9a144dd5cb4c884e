//! The reconstructed Meta-TF grammar (EBNF in docs/formats/metatf.md):
//!
//! ```text
//! dtd      = { record | property | section } ;
//! section  = "section" NAME NUMBER "{" { record | property } "}" ;
//! record   = NAME ":" fields [ "{" { property } "}" ] ;
//! fields   = field | "(" field { "," field } ")" ;
//! field    = NAME [ "*" field ] | "(" field { "," field } ")" ;
//! property = NAME "." NAME "=" value ";" ;
//! value    = NUMBER | NAME "." NAME | NAME { [ "-" ] NUMBER } ;
//! ```

use logos::Logos;

use crate::ast::*;
use crate::lexer::Token;
use tramp_diag::Diagnostic;

struct Parser<'s> {
    toks: Vec<(Token<'s>, Span)>,
    at: usize,
    end: usize,
}

/// Most items, fields and arguments accepted, so that hostile input
/// cannot make the parser use unbounded memory or recursion.
const MAX_DEPTH: usize = 64;

pub fn parse(src: &str) -> Result<Doc, Diagnostic> {
    let mut toks = Vec::new();
    let mut lex = Token::lexer(src);
    while let Some(t) = lex.next() {
        match t {
            Ok(t) => toks.push((t, lex.span())),
            Err(()) => {
                let s = lex.span();
                let text = &src[s.clone()];
                let msg = if text.starts_with("/*") {
                    "unterminated comment".to_string()
                } else {
                    format!(
                        "unexpected character `{}`",
                        text.chars().next().unwrap_or('?')
                    )
                };
                return Err(Diagnostic::new(msg, s, "here"));
            }
        }
    }
    let mut p = Parser {
        toks,
        at: 0,
        end: src.len(),
    };
    let mut items = Vec::new();
    while p.peek().is_some() {
        items.push(p.item(true)?);
    }
    Ok(Doc { items })
}

impl<'s> Parser<'s> {
    fn peek(&self) -> Option<Token<'s>> {
        self.toks.get(self.at).map(|(t, _)| *t)
    }

    fn peek2(&self) -> Option<Token<'s>> {
        self.toks.get(self.at + 1).map(|(t, _)| *t)
    }

    fn span(&self) -> Span {
        self.toks
            .get(self.at)
            .map_or(self.end..self.end, |(_, s)| s.clone())
    }

    fn prev_end(&self) -> usize {
        self.at
            .checked_sub(1)
            .and_then(|i| self.toks.get(i))
            .map_or(0, |(_, s)| s.end)
    }

    fn unexpected(&self, wanted: &str) -> Diagnostic {
        match self.peek() {
            Some(t) => Diagnostic::new(
                format!("expected {wanted}, found {}", t.describe()),
                self.span(),
                format!("expected {wanted}"),
            ),
            None => Diagnostic::new(
                format!("expected {wanted}, found the end of the file"),
                self.end..self.end,
                format!("expected {wanted}"),
            ),
        }
    }

    fn expect(&mut self, t: Token<'s>, wanted: &str) -> Result<Span, Diagnostic> {
        if self.peek() == Some(t) {
            self.at += 1;
            Ok(self.toks[self.at - 1].1.clone())
        } else {
            Err(self.unexpected(wanted))
        }
    }

    fn name(&mut self, wanted: &str) -> Result<Spanned<String>, Diagnostic> {
        match self.peek() {
            Some(Token::Ident(s)) => {
                let span = self.span();
                self.at += 1;
                Ok(Spanned {
                    node: s.to_string(),
                    span,
                })
            }
            _ => Err(self.unexpected(wanted)),
        }
    }

    fn number(&mut self) -> Result<Spanned<u64>, Diagnostic> {
        match self.peek() {
            Some(Token::Number(n)) => {
                let span = self.span();
                self.at += 1;
                let v = parse_number(n).ok_or_else(|| {
                    Diagnostic::new(
                        format!("number {n} does not fit 64 bits"),
                        span.clone(),
                        "too large",
                    )
                })?;
                Ok(Spanned { node: v, span })
            }
            _ => Err(self.unexpected("a number")),
        }
    }

    fn item(&mut self, top: bool) -> Result<Item, Diagnostic> {
        let start = self.span().start;
        match (self.peek(), self.peek2()) {
            (Some(Token::Ident("section")), Some(Token::Ident(_))) if top => {
                self.at += 1;
                let name = self.name("a section name")?;
                let id = self.number().map_err(|d| d.note("a section has a name and an id from 1 to 255: `section heap 1 { ... }`"))?;
                self.expect(Token::LBrace, "`{`")?;
                let mut items = Vec::new();
                while self.peek() != Some(Token::RBrace) {
                    if self.peek().is_none() {
                        return Err(self.unexpected("`}` to close the section"));
                    }
                    if self.peek() == Some(Token::Ident("section")) && matches!(self.peek2(), Some(Token::Ident(_))) {
                        return Err(Diagnostic::new("sections cannot be nested", self.span(), "a section inside a section"));
                    }
                    items.push(self.item(false)?);
                }
                self.at += 1;
                Ok(Item::Section(SectionAst { name, id, items, span: start..self.prev_end() }))
            }
            (Some(Token::Ident(_)), Some(Token::Colon)) => self.record(start).map(Item::Record),
            (Some(Token::Ident(_)), Some(Token::Dot)) => self.property().map(Item::Property),
            _ => Err(self.unexpected("a record definition (`name : fields`), a property (`field.width = 4;`) or a section")),
        }
    }

    fn record(&mut self, start: usize) -> Result<RecordAst, Diagnostic> {
        let name = self.name("a record name")?;
        self.expect(Token::Colon, "`:`")?;
        let fields = match self.peek() {
            Some(Token::LParen) => match self.field(0)? {
                FieldAst::Group { fields, .. } => fields,
                other => vec![other],
            },
            _ => vec![self.field(0)?],
        };
        let mut props = Vec::new();
        if self.peek() == Some(Token::LBrace) {
            self.at += 1;
            while self.peek() != Some(Token::RBrace) {
                if self.peek().is_none() {
                    return Err(self.unexpected("`}` to close the record"));
                }
                if matches!(
                    (self.peek(), self.peek2()),
                    (Some(Token::Ident(_)), Some(Token::Colon))
                ) {
                    return Err(Diagnostic::new(
                        format!(
                            "record `{}` is not closed before the next definition",
                            name.node
                        ),
                        self.span(),
                        "a new definition starts here",
                    )
                    .related(name.span.clone(), "the record that needs a `}`"));
                }
                props.push(self.property()?);
            }
            self.at += 1;
        }
        Ok(RecordAst {
            name,
            fields,
            props,
            span: start..self.prev_end(),
        })
    }

    fn field(&mut self, depth: usize) -> Result<FieldAst, Diagnostic> {
        if depth > MAX_DEPTH {
            return Err(Diagnostic::new(
                "fields are nested too deeply",
                self.span(),
                "here",
            ));
        }
        let f = match self.peek() {
            Some(Token::LParen) => {
                let start = self.span().start;
                self.at += 1;
                let mut fields = vec![self.field(depth + 1)?];
                while self.peek() == Some(Token::Comma) {
                    self.at += 1;
                    fields.push(self.field(depth + 1)?);
                }
                self.expect(Token::RParen, "`,` or `)`")?;
                FieldAst::Group {
                    fields,
                    span: start..self.prev_end(),
                }
            }
            Some(Token::Ident(_)) => FieldAst::Name(self.name("a field name")?),
            _ => return Err(self.unexpected("a field name or `(`")),
        };
        if self.peek() == Some(Token::Star) {
            let FieldAst::Name(count) = f else {
                return Err(Diagnostic::new(
                    "the count before `*` must be a field name",
                    self.span(),
                    "here",
                ));
            };
            self.at += 1;
            let item = self.field(depth + 1)?;
            return Ok(FieldAst::Repeat {
                count,
                item: Box::new(item),
            });
        }
        Ok(f)
    }

    fn property(&mut self) -> Result<PropAst, Diagnostic> {
        let start = self.span().start;
        let field = self.name("a field name")?;
        self.expect(Token::Dot, "`.`")?;
        let prop = self.name("a property name (width, interpretation, value)")?;
        self.expect(Token::Eq, "`=`")?;
        let vstart = self.span().start;
        let value = match (self.peek(), self.peek2()) {
            (Some(Token::Number(_)), _) => ValueAst::Number(self.number()?.node),
            (Some(Token::Ident(_)), Some(Token::Dot)) => {
                let f = self.name("a field name")?;
                self.at += 1;
                let p = self.name("a property name")?;
                ValueAst::Ref {
                    field: f.node,
                    prop: p.node,
                }
            }
            (Some(Token::Ident(_)), _) => {
                let name = self.name("an interpretation")?.node;
                let mut args = Vec::new();
                loop {
                    let neg = self.peek() == Some(Token::Minus);
                    if neg && !matches!(self.peek2(), Some(Token::Number(_))) {
                        return Err(self.unexpected("a number after `-`"));
                    }
                    if neg {
                        self.at += 1;
                    }
                    match self.peek() {
                        Some(Token::Number(_)) => {
                            let n = self.number()?.node as i128;
                            args.push(if neg { -n } else { n });
                            if args.len() > 8 {
                                return Err(Diagnostic::new(
                                    "too many arguments",
                                    self.span(),
                                    "here",
                                ));
                            }
                        }
                        _ => break,
                    }
                }
                ValueAst::Interp { name, args }
            }
            _ => {
                return Err(
                    self.unexpected("a value: a number, `field.property`, or an interpretation")
                );
            }
        };
        let value = Spanned {
            node: value,
            span: vstart..self.prev_end(),
        };
        if self.peek() != Some(Token::Semi) {
            let d = self.unexpected("`;`");
            return Err(if self.peek() == Some(Token::Colon) {
                d.note("properties end with `;` (the HATF10.dtd scan has `field.width = 1:`)")
            } else {
                d
            });
        }
        self.at += 1;
        Ok(PropAst {
            field,
            prop,
            value,
            span: start..self.prev_end(),
        })
    }
}

/// Decimal or `0x` hexadecimal.
pub fn parse_number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}
