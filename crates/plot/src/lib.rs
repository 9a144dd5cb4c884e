//! Line plots as SVG (x linear or logarithmic, y from 0 to 1 or to any
//! top, a legend): miss-ratio curves, cumulative distributions, memory
//! over time; scatters and heat maps in [`cells`].

pub mod cells;
pub mod xml;

use crate::xml::escape;
use std::fmt::Write;

const W: f64 = 720.0;
const H: f64 = 440.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;
const COLORS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// The x axis of [`lines_svg`]: its range and whether it is logarithmic.
#[derive(Clone, Copy, Debug)]
pub struct Axis {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
}

/// One SVG document with a line per (name, points), y from 0 to 1.
pub fn lines_svg(
    title: &str,
    x_label: &str,
    y_label: &str,
    axis: Axis,
    curves: &[(String, Vec<(f64, f64)>)],
) -> String {
    lines_svg_to(title, x_label, y_label, axis, 1.0, curves)
}

/// One SVG document with a line per (name, points), y from 0 to `top`
/// (ticks labelled with k, M, G where round).
pub fn lines_svg_to(
    title: &str,
    x_label: &str,
    y_label: &str,
    axis: Axis,
    top: f64,
    curves: &[(String, Vec<(f64, f64)>)],
) -> String {
    let top = if top > 0.0 { top } else { 1.0 };
    // A top other than 1 is raised to the round tick at or above it.
    let y_ticks = if top == 1.0 {
        (0..=10).map(|i| i as f64 / 10.0).collect()
    } else {
        let t = nice_ticks(0.0, top);
        let step = if t.len() > 1 { t[1] - t[0] } else { top };
        let n = (top / step).ceil() as usize;
        (0..=n).map(|i| i as f64 * step).collect::<Vec<f64>>()
    };
    let top = *y_ticks.last().unwrap_or(&1.0);
    let Axis { lo, hi, log } = axis;
    // Wide enough for the legend's longest name and for the title (about
    // 7 px a character at 12 px, 9 at 15 px): neither is ever clipped.
    let longest = curves
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(0) as f64;
    let legend = RIGHT.max(46.0 + 7.0 * longest + 10.0);
    let plot = W - LEFT - RIGHT;
    let w = (LEFT + plot + legend).max(9.0 * title.chars().count() as f64 + 40.0);
    let right = w - LEFT - plot;
    let lo = if log { lo.max(f64::MIN_POSITIVE) } else { lo };
    let hi = if hi > lo { hi } else { lo + 1.0 };
    let fx = |x: f64| -> f64 {
        let t = if log {
            (x.max(lo).ln() - lo.ln()) / (hi.ln() - lo.ln())
        } else {
            (x - lo) / (hi - lo)
        };
        LEFT + t * (w - LEFT - right)
    };
    let fy = |y: f64| TOP + (1.0 - (y / top).clamp(0.0, 1.0)) * (H - TOP - BOTTOM);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{H}" viewBox="0 0 {w} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
        (LEFT + w - right) / 2.0,
        escape(title)
    );
    // Axes and grid.
    let (x0, x1, y0, y1) = (LEFT, w - right, fy(0.0), fy(top));
    let _ = writeln!(
        s,
        r#"<path d="M{x0} {y1} V{y0} H{x1}" fill="none" stroke="black"/>"#
    );
    for &v in &y_ticks {
        let y = fy(v);
        let label = if top == 1.0 {
            format!("{v:.1}")
        } else {
            short(if v >= 10.0 { v.round() } else { v })
        };
        let _ = writeln!(
            s,
            r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#e0e0e0"/><text x="{}" y="{:.1}" text-anchor="end">{label}</text>"##,
            x0 - 6.0,
            y + 4.0
        );
    }
    for t in ticks(lo, hi, log) {
        let x = fx(t);
        let t_label = short(t);
        let _ = writeln!(
            s,
            r#"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{}" stroke="black"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
            y0 + 5.0,
            y0 + 19.0,
            t_label
        );
    }
    axis_labels(&mut s, (x0, x1, y0, y1), H, (x_label, y_label));
    for (i, (name, pts)) in curves.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut d = String::new();
        for (j, &(x, y)) in pts.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1} {:.1}",
                if j == 0 { "M" } else { " L" },
                fx(x),
                fy(y)
            );
        }
        let _ = writeln!(
            s,
            r#"<path d="{d}" fill="none" stroke="{color}" stroke-width="2"/>"#
        );
        // Markers on simulated sizes, not on dense curves.
        for &(x, y) in pts.iter().filter(|_| pts.len() <= 64) {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{color}"/>"#,
                fx(x),
                fy(y)
            );
        }
        let ly = TOP + 10.0 + i as f64 * 18.0;
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            x1 + 15.0,
            x1 + 40.0,
            x1 + 46.0,
            ly + 4.0,
            escape(name)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Ticks at round steps (1, 2 or 5 times a power of ten) over `lo..=hi`,
/// four to ten of them.
pub(crate) fn nice_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = hi - lo;
    if !(span > 0.0 && span.is_finite()) {
        return vec![lo];
    }
    let raw = span / 8.0;
    let p = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|&st| st >= raw)
        .unwrap_or(10.0 * p);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(t);
        t += step;
    }
    out
}

/// The axes' names: x centred under the plot (`x0..x1`, a document `h`
/// high), y turned along its left edge (`y0..y1`).
pub(crate) fn axis_labels(
    s: &mut String,
    (x0, x1, y0, y1): (f64, f64, f64, f64),
    h: f64,
    (x_label, y_label): (&str, &str),
) {
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (x0 + x1) / 2.0,
        h - 18.0,
        escape(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{}" text-anchor="middle" transform="rotate(-90 18 {})">{}</text>"#,
        (y0 + y1) / 2.0,
        (y0 + y1) / 2.0,
        escape(y_label)
    );
}

fn ticks(lo: f64, hi: f64, log: bool) -> Vec<f64> {
    if log {
        let mut t = 1.0f64;
        let mut out = Vec::new();
        while t <= hi {
            if t >= lo {
                out.push(t);
            }
            t *= 10.0;
        }
        out
    } else {
        nice_ticks(lo, hi)
    }
}

fn short(v: f64) -> String {
    if v < 0.0 && v.fract() == 0.0 {
        return format!("-{}", short(-v));
    }
    if v.fract() != 0.0 || !(0.0..1.8e19).contains(&v) {
        return format!("{v:.2}");
    }
    let v = v as u64;
    match v {
        v if v >= 1 << 30 && v % (1 << 30) == 0 => format!("{}G", v >> 30),
        v if v >= 1_000_000_000 && v % 1_000_000_000 == 0 => format!("{}G", v / 1_000_000_000),
        v if v >= 1_000_000 && v % 1_000_000 == 0 => format!("{}M", v / 1_000_000),
        v if v >= 1000 && v % 1000 == 0 => format!("{}k", v / 1000),
        v => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The width the SVG declares.
    fn width(svg: &str) -> f64 {
        let w = svg.split("width=\"").nth(1).unwrap();
        w[..w.find('"').unwrap()].parse().unwrap()
    }

    /// A figure of one curve named `name`, titled `title`.
    fn one(title: &str, name: &str) -> String {
        let axis = Axis {
            lo: 0.0,
            hi: 1.0,
            log: false,
        };
        lines_svg(
            title,
            "x",
            "y",
            axis,
            &[(name.to_string(), vec![(0.0, 0.5)])],
        )
    }

    #[test]
    fn legends_and_titles_fit() {
        assert_eq!(width(&one("t", "lru")), W);
        // A long name widens the legend's column, and the plot keeps its
        // width.
        let name = "a-long-policy-name-of-forty-characters-x";
        let long = one("t", name);
        assert!(width(&long) >= LEFT + (W - LEFT - RIGHT) + 46.0 + 7.0 * name.len() as f64);
        // A long title widens the whole figure.
        let title = "Miss ratio of a-trace-with-a-rather-long-file-name-indeed.oracleGeneral.zst";
        assert!(width(&one(title, "lru")) >= 9.0 * title.len() as f64);
    }
}
