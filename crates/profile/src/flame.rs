//! Flame graphs: folded stacks (frames outermost first, each with a cost)
//! merged into a tree and drawn as one self-contained SVG, the root at the
//! bottom and each frame as wide as its share of the total, callees above
//! their callers, siblings in name order (as flamegraph.pl draws them).
//! Every box carries its frame, cost and share as a tooltip (`<title>`).

use std::fmt::Write;

use tramp_core::xml::escape;

/// One frame of the merged stacks and what its callees cost.
#[derive(Debug, Default, PartialEq)]
pub struct Node {
    pub name: String,
    /// The cost of every stack through this frame.
    pub value: u64,
    /// Callees, in name order.
    pub children: Vec<Node>,
}

impl Node {
    /// The tree of `stacks` (frames outermost first, and a cost), under a
    /// root named `all`.
    pub fn tree(stacks: &[(Vec<String>, u64)]) -> Node {
        let mut root = Node {
            name: "all".into(),
            ..Node::default()
        };
        for (frames, value) in stacks {
            root.value = root.value.saturating_add(*value);
            let mut at = &mut root;
            for f in frames.iter().take(MAX_DEPTH) {
                let i = match at.children.binary_search_by(|c| c.name.as_str().cmp(f)) {
                    Ok(i) => i,
                    Err(i) => {
                        at.children.insert(
                            i,
                            Node {
                                name: f.clone(),
                                ..Node::default()
                            },
                        );
                        i
                    }
                };
                at = &mut at.children[i];
                at.value = at.value.saturating_add(*value);
            }
        }
        root
    }

    fn depth(&self) -> usize {
        1 + self.children.iter().map(Node::depth).max().unwrap_or(0)
    }
}

/// Parses folded stacks (`outer;…;inner COST` per line).
pub fn parse_folded(text: &str) -> Result<Vec<(Vec<String>, u64)>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let (frames, n) = l
                .rsplit_once(' ')
                .ok_or_else(|| format!("line {}: no count after the frames", i + 1))?;
            let n = n
                .parse()
                .map_err(|_| format!("line {}: `{n}` is not a count", i + 1))?;
            Ok((frames.split(';').map(str::to_string).collect(), n))
        })
        .collect()
}

const WIDTH: f64 = 1200.0;
const PAD: f64 = 10.0;
const ROW: f64 = 17.0;
const TOP: f64 = 36.0;
/// Boxes narrower than this are left out (their cost stays in the parent).
const MIN_WIDTH: f64 = 0.3;
/// Frames deeper than this are cut (drawing recurses once per level; a
/// recording's stacks are at most `--stack` deep).
pub const MAX_DEPTH: usize = 1024;

/// A warm colour from the frame's name, stable from run to run.
fn colour(name: &str) -> String {
    let h = tramp_core::rng::mix(
        name.bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b))),
    );
    let r = 200 + (h % 55) as u8;
    let g = 80 + ((h >> 8) % 150) as u8;
    let b = 40 + ((h >> 16) % 40) as u8;
    format!("rgb({r},{g},{b})")
}

/// The flame graph of `stacks` as an SVG document titled `title`; `unit`
/// names the cost in tooltips (`bytes`, `allocations`).
pub fn svg(title: &str, unit: &str, stacks: &[(Vec<String>, u64)]) -> String {
    let root = Node::tree(stacks);
    let depth = root.depth();
    let height = TOP + depth as f64 * ROW + PAD;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="monospace" font-size="12">"#
    );
    let _ = write!(
        s,
        r##"<rect width="100%" height="100%" fill="#fdfdf5"/><text x="{}" y="22" text-anchor="middle" font-size="16">{}</text>"##,
        WIDTH / 2.0,
        escape(title)
    );
    let scale = if root.value == 0 {
        0.0
    } else {
        (WIDTH - 2.0 * PAD) / root.value as f64
    };
    draw(&mut s, &root, PAD, 0, depth, scale, root.value, unit);
    s.push_str("</svg>\n");
    s
}

#[allow(clippy::too_many_arguments)]
fn draw(
    s: &mut String,
    n: &Node,
    x: f64,
    level: usize,
    depth: usize,
    scale: f64,
    total: u64,
    unit: &str,
) {
    let w = n.value as f64 * scale;
    if w < MIN_WIDTH {
        return;
    }
    let y = TOP + (depth - 1 - level) as f64 * ROW;
    let share = 100.0 * n.value as f64 / total.max(1) as f64;
    let name = escape(&n.name);
    let _ = write!(
        s,
        r#"<g><title>{name} ({} {unit}, {share:.2}%)</title><rect x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{}" fill="{}" rx="2"/>"#,
        n.value,
        ROW - 1.0,
        colour(&n.name)
    );
    // As many characters as fit (7 px each), or none.
    let fit = ((w - 6.0) / 7.0).floor().max(0.0) as usize;
    if fit >= 3 {
        let label: String = if n.name.chars().count() <= fit {
            n.name.clone()
        } else {
            let mut l: String = n.name.chars().take(fit - 2).collect();
            l.push_str("..");
            l
        };
        let _ = write!(
            s,
            r#"<text x="{:.2}" y="{:.2}">{}</text>"#,
            x + 3.0,
            y + ROW - 5.0,
            escape(&label)
        );
    }
    s.push_str("</g>");
    let mut cx = x;
    for c in &n.children {
        draw(s, c, cx, level + 1, depth, scale, total, unit);
        cx += c.value as f64 * scale;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stacks() -> Vec<(Vec<String>, u64)> {
        parse_folded("main;parse;malloc 30\nmain;run 60\nmain;parse;strdup 10\n").unwrap()
    }

    #[test]
    fn stacks_merge_into_a_tree_in_name_order() {
        let t = Node::tree(&stacks());
        assert_eq!(t.value, 100);
        let main = &t.children[0];
        assert_eq!((main.name.as_str(), main.value), ("main", 100));
        let names: Vec<(&str, u64)> = main
            .children
            .iter()
            .map(|c| (c.name.as_str(), c.value))
            .collect();
        assert_eq!(names, vec![("parse", 40), ("run", 60)]);
        assert_eq!(t.depth(), 4);
    }

    #[test]
    fn boxes_are_as_wide_as_their_share() {
        let svg = svg("t", "bytes", &stacks());
        // all, main: the full width (1180); run: 60 % of it, right of parse.
        let rect = |name: &str| -> (f64, f64) {
            let at = svg.find(&format!("<title>{name} (")).unwrap();
            let r = &svg[at..];
            let num = |k: &str| -> f64 {
                let v = &r[r.find(k).unwrap() + k.len()..];
                v[..v.find('"').unwrap()].parse().unwrap()
            };
            (num("x=\""), num("width=\""))
        };
        assert_eq!(rect("all"), (10.0, 1180.0));
        assert_eq!(rect("main"), (10.0, 1180.0));
        assert_eq!(rect("parse"), (10.0, 472.0));
        assert_eq!(rect("run"), (482.0, 708.0));
        assert_eq!(rect("malloc"), (10.0, 354.0));
        assert!(svg.contains("<title>run (60 bytes, 60.00%)</title>"));
    }

    #[test]
    fn bad_folded_lines_are_named() {
        assert_eq!(
            parse_folded("a;b\n").unwrap_err(),
            "line 1: no count after the frames"
        );
        assert_eq!(
            parse_folded("a;b x\n").unwrap_err(),
            "line 1: `x` is not a count"
        );
    }
}
