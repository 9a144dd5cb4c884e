//! Text in the SVG and HTML tramp draws: the one escape of `&`, `<`, `>`
//! and `"`.

/// `s` safe inside an XML element or a double-quoted attribute.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    #[test]
    fn markup_is_escaped() {
        assert_eq!(
            super::escape(r#"operator new<T>("a" & b)"#),
            "operator new&lt;T&gt;(&quot;a&quot; &amp; b)"
        );
    }
}
