//! Flame graphs: folded stacks (frames outermost first, each with a cost)
//! merged into a tree and drawn as one self-contained SVG, the root at the
//! bottom and each frame as wide as its share of the total, callees above
//! their callers, siblings in name order (as flamegraph.pl draws them).
//! Every box carries its frame, cost and share as a tooltip (`<title>`).

use std::fmt::Write;

use tramp_plot::xml::escape;

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
    picture(title, unit, &Node::tree(stacks), None)
}

/// A differential flame graph: boxes as wide as their cost in `after`,
/// coloured by the change from `before` (the same frames by name along the
/// same path): red where the cost grew, blue where it shrank, the deeper
/// the colour the larger the change against the largest one; grey where it
/// did not change. Frames only in `before` are not drawn (their cost is
/// gone); the tooltip gives both costs.
pub fn svg_diff(
    title: &str,
    unit: &str,
    before: &[(Vec<String>, u64)],
    after: &[(Vec<String>, u64)],
) -> String {
    let (a, b) = (Node::tree(before), Node::tree(after));
    picture(title, unit, &b, Some(&a))
}

/// The largest change of any frame of `after` against `before`.
fn largest_change(after: &Node, before: Option<&Node>) -> u64 {
    let own = after.value.abs_diff(before.map_or(0, |n| n.value));
    after.children.iter().fold(own, |m, c| {
        m.max(largest_change(c, before.and_then(|b| b.child(&c.name))))
    })
}

impl Node {
    fn child(&self, name: &str) -> Option<&Node> {
        self.children
            .binary_search_by(|c| c.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.children[i])
    }
}

/// What colours the boxes: each frame's name, or its change from a
/// baseline whose largest change is `max`.
#[derive(Clone, Copy)]
enum Paint<'a> {
    Name,
    Change { before: Option<&'a Node>, max: u64 },
}

impl<'a> Paint<'a> {
    fn colour(&self, n: &Node) -> String {
        match self {
            Paint::Name => colour(&n.name),
            Paint::Change { before, max } => {
                let was = before.map_or(0, |b| b.value);
                if was == n.value || *max == 0 {
                    return "rgb(210,210,210)".into();
                }
                let t = n.value.abs_diff(was) as f64 / *max as f64;
                let fade = (220.0 - 190.0 * t.sqrt()).round() as u8;
                if n.value > was {
                    format!("rgb(255,{fade},{fade})")
                } else {
                    format!("rgb({fade},{fade},255)")
                }
            }
        }
    }

    fn tooltip(&self, n: &Node, unit: &str) -> String {
        match self {
            Paint::Name => String::new(),
            Paint::Change { before, .. } => {
                let was = before.map_or(0, |b| b.value);
                let d = n.value as i128 - was as i128;
                format!("; before {was} {unit}, change {d:+}")
            }
        }
    }

    fn child(&self, name: &str) -> Paint<'a> {
        match *self {
            Paint::Name => Paint::Name,
            Paint::Change { before, max } => Paint::Change {
                before: before.and_then(|b| b.child(name)),
                max,
            },
        }
    }
}

fn picture(title: &str, unit: &str, root: &Node, before: Option<&Node>) -> String {
    let paint = match before {
        None => Paint::Name,
        Some(b) => Paint::Change {
            before: Some(b),
            max: largest_change(root, Some(b)),
        },
    };
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
    let at = Place {
        level: 0,
        depth,
        scale,
        total: root.value,
    };
    draw(&mut s, root, PAD, at, unit, paint);
    s.push_str("</svg>\n");
    s
}

/// Where a box is drawn and what its share is of.
#[derive(Clone, Copy)]
struct Place {
    level: usize,
    depth: usize,
    scale: f64,
    total: u64,
}

fn draw(s: &mut String, n: &Node, x: f64, at: Place, unit: &str, paint: Paint<'_>) {
    let Place {
        level,
        depth,
        scale,
        total,
    } = at;
    let w = n.value as f64 * scale;
    if w < MIN_WIDTH {
        return;
    }
    let y = TOP + (depth - 1 - level) as f64 * ROW;
    let share = 100.0 * n.value as f64 / total.max(1) as f64;
    let name = escape(&n.name);
    let _ = write!(
        s,
        r#"<g><title>{name} ({} {unit}, {share:.2}%{})</title><rect x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{}" fill="{}" rx="2"/>"#,
        n.value,
        escape(&paint.tooltip(n, unit)),
        ROW - 1.0,
        paint.colour(n)
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
        let inner = Place {
            level: level + 1,
            ..at
        };
        draw(s, c, cx, inner, unit, paint.child(&c.name));
        cx += c.value as f64 * scale;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_differential_graph_colours_growth_red_and_shrinkage_blue() {
        let before = parse_folded("main;parse 40\nmain;run 60\n").unwrap();
        let after = parse_folded("main;parse 80\nmain;run 30\nmain;new 5\n").unwrap();
        let svg = svg_diff("d", "bytes", &before, &after);
        let fill = |name: &str| {
            let at = svg.find(&format!("<title>{name} (")).unwrap();
            let rest = &svg[at..];
            let f = &rest[rest.find("fill=\"").unwrap() + 6..];
            f[..f.find('"').unwrap()].to_string()
        };
        // parse grew by 40 (the largest change): full red; run shrank by 30:
        // blue; new grew by 5: pale red; main grew by 15.
        assert_eq!(fill("parse"), "rgb(255,30,30)");
        assert!(fill("run").ends_with(",255)"), "{}", fill("run"));
        assert!(fill("new").starts_with("rgb(255,"), "{}", fill("new"));
        assert!(svg.contains("before 40 bytes, change +40"));
        assert!(svg.contains("before 0 bytes, change +5"));
        // Widths are the after costs: parse 80 of 115.
        assert!(svg.contains("<title>parse (80 bytes, 69.57%"));
    }

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
