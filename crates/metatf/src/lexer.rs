//! Meta-TF tokens. Whitespace and both comment styles are skipped.

use logos::Logos;

#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
#[logos(skip r"/\*([^*]|\*+[^*/])*\*+/")]
pub enum Token<'s> {
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*")]
    Ident(&'s str),
    #[regex(r"0[xX][0-9A-Fa-f]+|[0-9]+")]
    Number(&'s str),
    #[token(":")]
    Colon,
    #[token(",")]
    Comma,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(".")]
    Dot,
    #[token("=")]
    Eq,
    #[token(";")]
    Semi,
    #[token("*")]
    Star,
    #[token("-")]
    Minus,
}

impl Token<'_> {
    /// How the token reads in messages.
    pub fn describe(&self) -> String {
        match self {
            Token::Ident(s) => format!("`{s}`"),
            Token::Number(n) => format!("number {n}"),
            Token::Colon => "`:`".into(),
            Token::Comma => "`,`".into(),
            Token::LParen => "`(`".into(),
            Token::RParen => "`)`".into(),
            Token::LBrace => "`{`".into(),
            Token::RBrace => "`}`".into(),
            Token::Dot => "`.`".into(),
            Token::Eq => "`=`".into(),
            Token::Semi => "`;`".into(),
            Token::Star => "`*`".into(),
            Token::Minus => "`-`".into(),
        }
    }
}
