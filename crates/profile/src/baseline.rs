//! `tramp report NEW --baseline OLD`: two heap profiles compared as one
//! self-contained HTML page (no network, no script): the totals of both
//! with the change, the differential flame graph of one cost (red where
//! it grew from the baseline, blue where it shrank), and the call stacks
//! that grew and shrank most, each named by its innermost frames with the
//! whole stack on hover. Made from [`crate::diff::Diff`], so the page and
//! `tramp diff` print the same numbers.

use std::fmt::Write;

use tramp_plot::xml::escape;

use crate::diff::{Change, Costs, Diff, Row};

/// How many stacks each of the tables lists.
pub const ROWS: usize = 25;

/// The comparison's page.
pub struct BaselinePage<'a> {
    /// The trace compared, and its baseline, as the page names them.
    pub name: &'a str,
    pub baseline: &'a str,
    /// Baseline A, trace B (`Diff::new(baseline, trace)`).
    pub diff: &'a Diff,
    /// The differential flame graph (SVG) and the cost it draws.
    pub flame: &'a str,
    pub cost: &'a str,
}

fn bytes(v: u128) -> String {
    tramp_core::numbers::bytes_exact(u64::try_from(v).unwrap_or(u64::MAX))
}

/// A change with its sign and unit: `+1.50 MiB (1,572,864 B)`, `−300`.
fn signed(v: i128, is_bytes: bool) -> String {
    let n = u64::try_from(v.unsigned_abs()).unwrap_or(u64::MAX);
    let sign = match v {
        0 => "",
        v if v > 0 => "+",
        _ => "−",
    };
    match is_bytes {
        true => format!("{sign}{}", tramp_core::numbers::bytes_exact(n)),
        false => format!("{sign}{}", tramp_core::numbers::grouped(n)),
    }
}

/// The change in percent of the baseline's amount, when it had some.
fn percent(change: i128, base: u128) -> String {
    let p = change as f64 * 100.0 / base as f64;
    let sign = if p < 0.0 { "−" } else { "+" };
    match base {
        0 => String::new(),
        _ => format!(" ({sign}{:.1} %)", p.abs()),
    }
}

/// The five costs: name, whether bytes, the amount in a trace, the change.
type Column = (&'static str, bool, fn(&Costs) -> u128, fn(&Change) -> i128);

const COLUMNS: [Column; 5] = [
    (
        "allocations",
        false,
        |c| u128::from(c.allocations),
        |d| d.allocations,
    ),
    ("bytes allocated", true, |c| c.bytes, |d| d.bytes),
    (
        "temporary allocations",
        false,
        |c| u128::from(c.temporary),
        |d| d.temporary,
    ),
    (
        "bytes at the heap's peak",
        true,
        |c| u128::from(c.peak),
        |d| d.peak,
    ),
    (
        "bytes leaked (live at exit)",
        true,
        |c| u128::from(c.leaked),
        |d| d.leaked,
    ),
];

impl BaselinePage<'_> {
    /// The page.
    pub fn html(&self) -> String {
        let d = self.diff;
        let title = format!("Heap profile: {} against {}", self.name, self.baseline);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\
             <style>{STYLE}</style></head><body>\n<h1>{t}</h1>",
            t = escape(&title)
        );
        if d.sampling_a.is_some() || d.sampling_b.is_some() {
            s.push_str("<p class=\"note\">A sampled trace: its figures are estimates.</p>\n");
        }
        self.totals(&mut s);
        let _ = writeln!(
            s,
            "<section><h2>Differential flame graph ({})</h2><p class=\"note\">Boxes as wide as \
             their {} in {}; red where it grew from the baseline, blue where it shrank, the \
             deeper the larger the change.</p><div class=\"flame\">{}</div></section>",
            escape(self.cost),
            escape(self.cost),
            escape(self.name),
            self.flame
        );
        let grew: Vec<&Row> = d
            .rows
            .iter()
            .filter(|r| r.change.bytes > 0)
            .take(ROWS)
            .collect();
        let mut shrank: Vec<&Row> = d.rows.iter().filter(|r| r.change.bytes < 0).collect();
        shrank.sort_by(|a, b| {
            a.change
                .bytes
                .cmp(&b.change.bytes)
                .then(a.stack.cmp(&b.stack))
        });
        shrank.truncate(ROWS);
        table(&mut s, "grew", "What grew (bytes allocated)", &grew);
        table(&mut s, "shrank", "What shrank (bytes allocated)", &shrank);
        s.push_str("</body></html>\n");
        s
    }

    /// Both traces' totals and the change.
    fn totals(&self, s: &mut String) {
        let d = self.diff;
        let _ = write!(
            s,
            "<section><h2>Totals</h2><table id=\"totals\"><tr><th></th><th>baseline: {}</th>\
             <th>{}</th><th>change</th></tr>",
            escape(self.baseline),
            escape(self.name)
        );
        for (label, is_bytes, of, change) in COLUMNS {
            let show = |v: u128| match is_bytes {
                true => bytes(v),
                false => tramp_core::numbers::grouped(v),
            };
            let _ = write!(
                s,
                "<tr><td>{label}</td><td>{}</td><td>{}</td><td class=\"{}\">{}{}</td></tr>",
                show(of(&d.total_a)),
                show(of(&d.total_b)),
                class(change(&d.change)),
                signed(change(&d.change), is_bytes),
                percent(change(&d.change), of(&d.total_a))
            );
        }
        let _ = writeln!(
            s,
            "</table><p class=\"note\">{} call stacks changed, {} unchanged; stacks are matched by \
             their frames' function, file and line.</p></section>",
            tramp_core::numbers::grouped(d.rows.len() as u64),
            tramp_core::numbers::grouped(d.unchanged)
        );
    }
}

fn class(v: i128) -> &'static str {
    match v {
        v if v > 0 => "up",
        v if v < 0 => "down",
        _ => "",
    }
}

/// A table of changed stacks, the innermost three frames shown.
fn table(s: &mut String, id: &str, title: &str, rows: &[&Row]) {
    let _ = write!(
        s,
        "<section><h2>{title}</h2><table id=\"{id}\" data-rows=\"{}\"><tr><th>call stack \
         (innermost first)</th>",
        rows.len()
    );
    for (label, ..) in COLUMNS {
        let _ = write!(s, "<th>{label}</th>");
    }
    s.push_str("</tr>");
    if rows.is_empty() {
        s.push_str("<tr><td>none</td></tr>");
    }
    for r in rows {
        let inner: Vec<&str> = r.stack.iter().rev().take(3).map(|f| f.as_str()).collect();
        let whole: Vec<&str> = r.stack.iter().rev().map(|f| f.as_str()).collect();
        let _ = write!(
            s,
            "<tr><td class=\"name\" title=\"{}\">{}</td>",
            escape(&whole.join("\n← ")),
            escape(&inner.join(" ← "))
        );
        for (_, is_bytes, _, change) in COLUMNS {
            let v = change(&r.change);
            let _ = write!(s, "<td class=\"{}\">{}</td>", class(v), signed(v, is_bytes));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table></section>\n");
}

const STYLE: &str = "body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; } \
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.6em; } \
table { border-collapse: collapse; } td, th { padding: 2px 8px; text-align: right; } \
td:first-child, th:first-child { text-align: left; } tr:nth-child(even) { background: #f6f6f6; } \
td.name { font-family: ui-monospace, monospace; font-size: 12px; max-width: 640px; overflow: hidden; \
text-overflow: ellipsis; white-space: nowrap; } .up { color: #b22; } .down { color: #226; } \
.note { font-size: 12px; color: #555; } .flame svg { max-width: 100%; height: auto; }";

#[cfg(test)]
mod tests {
    use super::*;
    use tramp_symbols::sites::SiteTotals;

    use crate::testing::stack as s;

    fn t(allocs: u64, bytes: u64) -> SiteTotals {
        crate::testing::totals(allocs, bytes, 0)
    }

    #[test]
    fn the_page_lists_what_grew_and_shrank_with_signs_and_units() {
        let a = vec![
            (s(&["main", "parse (p.c:3)"]), t(10, 2048)),
            (s(&["main", "run (r.c:9)"]), t(5, 500)),
        ];
        let b = vec![
            (s(&["main", "parse (p.c:3)"]), t(4, 1024)),
            (s(&["main", "run (r.c:9)"]), t(5, 500)),
            (s(&["main", "new <x> (n.c:1)"]), t(1, 3000)),
        ];
        let d = Diff::new(&a, &b, 10);
        let page = BaselinePage {
            name: "b.tpack",
            baseline: "a.tpack",
            diff: &d,
            flame: "<svg></svg>",
            cost: "bytes",
        }
        .html();
        assert!(
            page.contains("<table id=\"grew\" data-rows=\"1\">"),
            "{page}"
        );
        assert!(page.contains("new &lt;x&gt; (n.c:1) ← main"), "{page}");
        assert!(
            page.contains("<td class=\"up\">+2.93 KiB (3,000 B)</td>"),
            "{page}"
        );
        assert!(
            page.contains("<table id=\"shrank\" data-rows=\"1\">"),
            "{page}"
        );
        assert!(
            page.contains("<td class=\"down\">−1.00 KiB (1,024 B)</td>"),
            "{page}"
        );
        // Totals: 2548 → 4524 bytes, +1976 (+77.6 %); allocations 15 → 10.
        assert!(page.contains("+1.93 KiB (1,976 B) (+77.6 %)"), "{page}");
        assert!(
            page.contains("<td class=\"down\">−5 (−33.3 %)</td>"),
            "{page}"
        );
        assert!(!page.contains("<script"), "no script");
    }
}
