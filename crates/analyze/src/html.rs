//! The analysis as one HTML page: the stat block, then every picture
//! inline under its name, a file that opens anywhere with nothing beside
//! it.

use crate::{Analysis, PICTURES};
use tramp_plot::xml::escape;

/// What each picture shows, in [`PICTURES`]' order.
const CAPTIONS: [&str; 11] = [
    "Requests, objects and new objects per second, per window.",
    "Requests to each object by its rank, most requested first (Zipf is a straight line).",
    "Cumulative distribution of the time since the object's last request, in time units and in requests.",
    "Cumulative distribution of object sizes, weighted by requests and by objects.",
    "The LRU miss ratio at every cache size, from the exact stack distances.",
    "Every request to the sampled objects over time, an object a row by its first request.",
    "Objects requested in each window by the window of their first request.",
    "Requests by the time since the object's last request and since its first.",
    "Cumulative distribution of the time and the requests from an object's first request to its last.",
    "Cumulative distribution of the TTLs of requests that carry one.",
    "Size changes of overwrites by signed bin (docs/analyze.md).",
];

impl Analysis {
    /// The page, titled with the trace's `name`; `damage` (what stopped
    /// the reading) marks it partial.
    pub fn html(&self, name: &str, damage: Option<&str>) -> String {
        let mut s = String::new();
        s.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
        s.push_str(&format!("<title>tramp analyze: {}</title>\n", escape(name)));
        s.push_str(
            "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}\
             pre{background:#f6f6f6;padding:1em;overflow-x:auto}\
             figure{margin:2em 0}figcaption{color:#444}\
             .partial{background:#fdd;padding:.5em 1em;border-left:4px solid #c00}</style>\n",
        );
        s.push_str("</head><body>\n");
        s.push_str(&format!("<h1>{}</h1>\n", escape(name)));
        if let Some(d) = damage {
            s.push_str(&format!(
                "<p class=\"partial\">Partial: the reading stopped at damage ({}); every number is of the requests before it.</p>\n",
                escape(d)
            ));
        }
        s.push_str(&format!("<pre>{}</pre>\n", escape(&self.to_string())));
        s.push_str("<nav><ul>\n");
        for p in PICTURES {
            s.push_str(&format!(
                "<li><a href=\"#{p}\">{}</a></li>\n",
                p.replace('_', " ")
            ));
        }
        s.push_str("</ul></nav>\n");
        for ((p, svg), caption) in PICTURES.iter().zip(self.svgs(name)).zip(CAPTIONS) {
            s.push_str(&format!(
                "<figure id=\"{p}\">\n{svg}<figcaption>{}</figcaption></figure>\n",
                escape(caption)
            ));
        }
        s.push_str("</body></html>\n");
        s
    }
}
