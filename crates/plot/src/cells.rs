//! Pictures of points and of cells over two linear axes: a scatter of
//! dots (which object was requested when) and a heat map of counts on a
//! logarithmic colour scale, with its colour key (how many requests at
//! which ages).

use std::fmt::Write;

use crate::xml::escape;
use crate::{COLORS, axis_labels, nice_ticks, short};

const W: f64 = 760.0;
const H: f64 = 480.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;

/// The most cells a heat map draws a side: larger grids are summed into
/// blocks, so a picture's size is bounded whatever the data.
pub const MAX_CELLS: usize = 200;

/// A range of one axis, in the data's units.
#[derive(Clone, Copy, Debug)]
pub struct Range {
    pub lo: f64,
    pub hi: f64,
}

impl Range {
    fn fixed(self) -> Range {
        if self.hi > self.lo {
            self
        } else {
            Range {
                lo: self.lo,
                hi: self.lo + 1.0,
            }
        }
    }
}

struct Frame {
    x: Range,
    y: Range,
}

impl Frame {
    fn fx(&self, v: f64) -> f64 {
        LEFT + (v - self.x.lo) / (self.x.hi - self.x.lo) * (W - LEFT - RIGHT)
    }
    fn fy(&self, v: f64) -> f64 {
        H - BOTTOM - (v - self.y.lo) / (self.y.hi - self.y.lo) * (H - TOP - BOTTOM)
    }

    /// The document's head: title, axes, ticks and labels.
    fn open(&self, s: &mut String, title: &str, x_label: &str, y_label: &str) {
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
            W / 2.0,
            escape(title)
        );
        let (x0, x1, y0, y1) = (LEFT, W - RIGHT, H - BOTTOM, TOP);
        let _ = writeln!(
            s,
            r#"<path d="M{x0} {y1} V{y0} H{x1}" fill="none" stroke="black"/>"#
        );
        for t in nice_ticks(self.x.lo, self.x.hi) {
            let x = self.fx(t);
            let _ = writeln!(
                s,
                r#"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{}" stroke="black"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
                y0 + 5.0,
                y0 + 19.0,
                short(t)
            );
        }
        for t in nice_ticks(self.y.lo, self.y.hi) {
            let y = self.fy(t);
            let _ = writeln!(
                s,
                r#"<line x1="{}" y1="{y:.1}" x2="{x0}" y2="{y:.1}" stroke="black"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
                x0 - 5.0,
                x0 - 8.0,
                y + 4.0,
                short(t)
            );
        }
        axis_labels(s, (x0, x1, y0, y1), H, (x_label, y_label));
    }
}

/// A scatter of `points` (x, y) as dots, named in a legend by `name`.
pub fn points_svg(
    title: &str,
    x_label: &str,
    y_label: &str,
    (x, y): (Range, Range),
    name: &str,
    points: &[(f64, f64)],
) -> String {
    let f = Frame {
        x: x.fixed(),
        y: y.fixed(),
    };
    let mut s = String::new();
    f.open(&mut s, title, x_label, y_label);
    let color = COLORS[0];
    let _ = write!(s, r#"<g fill="{color}">"#);
    for &(px, py) in points {
        let _ = write!(
            s,
            r#"<rect x="{:.1}" y="{:.1}" width="1.5" height="1.5"/>"#,
            f.fx(px),
            f.fy(py)
        );
    }
    let _ = writeln!(s, "</g>");
    let ly = TOP + 10.0;
    let lx = W - RIGHT + 12.0;
    let _ = writeln!(
        s,
        r#"<rect x="{lx}" y="{}" width="8" height="8" fill="{color}"/><text x="{}" y="{}">{}</text>"#,
        ly - 4.0,
        lx + 12.0,
        ly + 4.0,
        escape(name)
    );
    s.push_str("</svg>\n");
    s
}

/// Rows of counts summed into at most [`MAX_CELLS`] a side.
fn blocks(rows: &[Vec<f64>]) -> (Vec<Vec<f64>>, usize, usize) {
    let ny = rows.len();
    let nx = rows.iter().map(Vec::len).max().unwrap_or(0);
    let (by, bx) = (ny.div_ceil(MAX_CELLS).max(1), nx.div_ceil(MAX_CELLS).max(1));
    let mut out = vec![vec![0.0; nx.div_ceil(bx)]; ny.div_ceil(by)];
    for (i, row) in rows.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            out[i / by][j / bx] += v;
        }
    }
    (out, bx, by)
}

/// A colour from white (none) through blue to dark red, `t` in 0..=1.
fn shade(t: f64) -> String {
    let t = t.clamp(0.0, 1.0);
    let stops = [(0.85, 0.93, 1.0), (0.12, 0.47, 0.71), (0.5, 0.0, 0.15)];
    let (a, b, u) = if t < 0.5 {
        (stops[0], stops[1], t * 2.0)
    } else {
        (stops[1], stops[2], t * 2.0 - 1.0)
    };
    let c = |p: f64, q: f64| ((p + (q - p) * u) * 255.0).round() as u8;
    format!("#{:02x}{:02x}{:02x}", c(a.0, b.0), c(a.1, b.1), c(a.2, b.2))
}

/// A heat map: `rows[i][j]` counts the cell at y = `y.lo + i × dy`, x =
/// `x.lo + j × dx` (each cell `dx` by `dy` in the data's units), coloured
/// on a logarithmic scale from the smallest count to the largest; empty
/// cells are white. `key` names what is counted.
#[allow(clippy::too_many_arguments)]
pub fn heatmap_svg(
    title: &str,
    x_label: &str,
    y_label: &str,
    (x0, dx): (f64, f64),
    (y0, dy): (f64, f64),
    key: &str,
    rows: &[Vec<f64>],
) -> String {
    let (cells, bx, by) = blocks(rows);
    let (dx, dy) = (dx * bx as f64, dy * by as f64);
    let nx = cells.iter().map(Vec::len).max().unwrap_or(0);
    let f = Frame {
        x: Range {
            lo: x0,
            hi: x0 + dx * nx.max(1) as f64,
        }
        .fixed(),
        y: Range {
            lo: y0,
            hi: y0 + dy * cells.len().max(1) as f64,
        }
        .fixed(),
    };
    let mut s = String::new();
    f.open(&mut s, title, x_label, y_label);
    let positive = cells.iter().flatten().copied().filter(|&v| v > 0.0);
    let lo = positive.clone().fold(f64::INFINITY, f64::min);
    let hi = positive.fold(0.0, f64::max);
    let scale = |v: f64| {
        if hi <= lo {
            1.0
        } else {
            (v.ln() - lo.ln()) / (hi.ln() - lo.ln())
        }
    };
    for (i, row) in cells.iter().enumerate() {
        for (j, &v) in row.iter().enumerate().filter(|p| *p.1 > 0.0) {
            let (xa, xb) = (f.fx(x0 + j as f64 * dx), f.fx(x0 + (j + 1) as f64 * dx));
            let (ya, yb) = (f.fy(y0 + (i + 1) as f64 * dy), f.fy(y0 + i as f64 * dy));
            let _ = writeln!(
                s,
                r#"<rect x="{xa:.1}" y="{ya:.1}" width="{:.2}" height="{:.2}" fill="{}"/>"#,
                (xb - xa).max(0.5),
                (yb - ya).max(0.5),
                shade(scale(v))
            );
        }
    }
    // The colour key: a bar of ten shades, the smallest and largest count.
    let kx = W - RIGHT + 20.0;
    let _ = writeln!(s, r#"<text x="{kx}" y="{}">{}</text>"#, TOP, escape(key));
    for k in 0..10 {
        let _ = writeln!(
            s,
            r#"<rect x="{kx}" y="{}" width="16" height="20" fill="{}"/>"#,
            TOP + 12.0 + (9 - k) as f64 * 20.0,
            shade(k as f64 / 9.0)
        );
    }
    if hi > 0.0 {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}">{}</text><text x="{}" y="{}">{} (log scale)</text>"#,
            kx + 20.0,
            TOP + 26.0,
            short(hi.round()),
            kx + 20.0,
            TOP + 12.0 + 200.0,
            short(lo.round())
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_grid_is_summed_into_bounded_blocks() {
        let rows = vec![vec![1.0; 1000]; 450];
        let (b, bx, by) = blocks(&rows);
        assert_eq!((bx, by), (5, 3));
        assert_eq!((b.len(), b[0].len()), (150, 200));
        let total: f64 = b.iter().flatten().sum();
        assert_eq!(total, 450_000.0);
        let svg = heatmap_svg("t", "x", "y", (0.0, 1.0), (0.0, 1.0), "requests", &rows);
        assert!(svg.matches("<rect").count() <= MAX_CELLS * MAX_CELLS + 12);
    }

    #[test]
    fn empty_pictures_are_still_documents() {
        for svg in [
            heatmap_svg("t", "x", "y", (0.0, 1.0), (0.0, 1.0), "n", &[]),
            points_svg(
                "t",
                "x",
                "y",
                (Range { lo: 0.0, hi: 0.0 }, Range { lo: 0.0, hi: 0.0 }),
                "n",
                &[],
            ),
        ] {
            assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        }
    }

    #[test]
    fn ticks_fall_on_round_numbers() {
        assert_eq!(
            nice_ticks(0.0, 480.0),
            vec![0.0, 100.0, 200.0, 300.0, 400.0]
        );
        assert_eq!(nice_ticks(0.0, 14259.0).len(), 8);
        assert_eq!(nice_ticks(0.0, 14259.0)[1], 2000.0);
        assert_eq!(nice_ticks(5.0, 5.0), vec![5.0]);
    }

    #[test]
    fn shades_run_from_light_to_dark() {
        assert_eq!(shade(0.0), "#d9edff");
        assert_eq!(shade(1.0), "#800026");
    }
}
