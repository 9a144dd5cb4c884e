//! Miss-ratio curves as SVG: capacity on a log axis when the sizes span a
//! decade or more. The drawing is `tramp_plot`'s, re-exported here.

pub use tramp_plot::{Axis, lines_svg, lines_svg_to};

/// One SVG document with a curve per (name, points); points are
/// (capacity, miss ratio). `unit` labels the x axis.
pub fn curves_svg(title: &str, unit: &str, curves: &[(String, Vec<(u64, f64)>)]) -> String {
    let xs = curves.iter().flat_map(|c| c.1.iter().map(|p| p.0.max(1)));
    let (lo, hi) = xs.fold((u64::MAX, 0), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let (lo, hi) = if lo > hi {
        (1, 10)
    } else {
        (lo, hi.max(lo + 1))
    };
    let log = hi / lo >= 10;
    let series: Vec<(String, Vec<(f64, f64)>)> = curves
        .iter()
        .map(|(n, p)| {
            let pts = p.iter().map(|&(x, y)| (x.max(1) as f64, y)).collect();
            (n.clone(), pts)
        })
        .collect();
    let x_label = format!(
        "cache size ({unit}{})",
        if log { ", log scale" } else { "" }
    );
    let axis = Axis {
        lo: lo as f64,
        hi: hi as f64,
        log,
    };
    lines_svg(title, &x_label, "miss ratio", axis, &series)
}
