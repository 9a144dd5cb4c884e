"""Drives the page of a run (several processes in one recording) in
Debian's Chromium through Playwright: the page loads with no console
message, the processes' chart has a line per image, and the process switch
re-draws the page from each image's profile. Prints one JSON object: per
option, its label, the summary's command line and the flame graph's total
(allocations); the Rust test (crates/cli/tests/runs.rs) checks them
against `tramp stats`.

usage: run.py PAGE.html
"""
import json
import sys

from playwright.sync_api import sync_playwright

from chromium import open_page

out = {"pages": []}
with sync_playwright() as p:
    browser, page, messages = open_page(p)
    page.goto("file://" + sys.argv[1])
    page.wait_for_selector("#tops table")
    out["lanes"] = int(page.get_attribute("#lanes", "data-lanes"))
    out["shown_first"] = page.input_value("#process")
    summary = lambda label: page.eval_on_selector(
        "#summary",
        "(t, l) => { for (const r of t.rows) if (r.cells[0].textContent === l) return r.cells[1].textContent; return null; }",
        label,
    )
    labels = page.eval_on_selector_all("#process option", "os => os.map(o => o.textContent)")
    for i, label in enumerate(labels):
        page.select_option("#process", str(i))
        out["pages"].append({
            "label": label,
            "command": summary("command line"),
            "allocations": int(page.get_attribute("#flame", "data-total")),
            "cost": page.eval_on_selector("#cost", "s => s.options[s.selectedIndex].text"),
        })
    out["console"] = messages
    browser.close()
print(json.dumps(out))
