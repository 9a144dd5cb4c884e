//! tramp-diag: diagnostics of the languages tramp reads (Meta-TF DTDs,
//! TRAMP format descriptions, scripts): a message, a primary span with a
//! label, and notes, rendered with ariadne as plain text (file, line,
//! column, the source line and a marker under the span).

/// Byte offsets into a source text.
pub type Span = std::ops::Range<usize>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub message: String,
    pub span: Span,
    pub label: String,
    /// A second place worth showing and a note, when there are any.
    pub extra: Option<Box<Extra>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Extra {
    /// A second place worth showing (e.g. the first definition).
    pub related: Option<(Span, String)>,
    pub note: Option<String>,
}

impl Diagnostic {
    pub fn new(message: impl Into<String>, span: Span, label: impl Into<String>) -> Self {
        Diagnostic {
            message: message.into(),
            span,
            label: label.into(),
            extra: None,
        }
    }

    pub fn related(mut self, span: Span, label: impl Into<String>) -> Self {
        self.extra.get_or_insert_default().related = Some((span, label.into()));
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.extra.get_or_insert_default().note = Some(note.into());
        self
    }

    /// 1-based line and column of the span's start.
    pub fn line_col(&self, src: &str) -> (usize, usize) {
        let mut at = self.span.start.min(src.len());
        while !src.is_char_boundary(at) {
            at -= 1;
        }
        let line = src[..at].matches('\n').count() + 1;
        let col = at - src[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
        (line, col)
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)
    }
}

/// Renders diagnostics for `file` (whose text is `src`) as plain text: a
/// `file:line:col: error: message` line, then ariadne's source excerpt.
/// Longest source line shown in an excerpt.
const MAX_EXCERPT_LINE: usize = 1000;

pub fn render(file: &str, src: &str, diags: &[Diagnostic]) -> String {
    use ariadne::{CharSet, Config, IndexType, Label, Report, ReportKind, Source};
    let mut out = Vec::new();
    // A line too long to show (a 5 MB token): the diagnostics keep their
    // file:line:col and message, without the excerpt.
    let excerpts = src.lines().all(|l| l.len() <= MAX_EXCERPT_LINE);
    for d in diags {
        let (line, col) = d.line_col(src);
        let message = tramp_core::text::clip(d.message.clone());
        out.extend_from_slice(format!("{file}:{line}:{col}: error: {message}\n").as_bytes());
        if !excerpts {
            continue;
        }
        // Spans clamped to the text and to character boundaries (ariadne
        // slices the text by them).
        let floor = |mut i: usize| {
            i = i.min(src.len());
            while !src.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let clamp = |s: &Span| floor(s.start)..floor(s.end).max(floor(s.start));
        let mut report = Report::build(ReportKind::Error, (file, clamp(&d.span)))
            .with_config(
                Config::default()
                    .with_color(false)
                    .with_char_set(CharSet::Ascii)
                    .with_index_type(IndexType::Byte),
            )
            .with_message(&d.message)
            .with_label(Label::new((file, clamp(&d.span))).with_message(&d.label));
        let extra = d.extra.as_deref().cloned().unwrap_or_default();
        if let Some((span, label)) = &extra.related {
            report = report.with_label(Label::new((file, clamp(span))).with_message(label));
        }
        if let Some(note) = &extra.note {
            report = report.with_note(note);
        }
        let _ = report.finish().write((file, Source::from(src)), &mut out);
    }
    String::from_utf8_lossy(&out).into_owned()
}
