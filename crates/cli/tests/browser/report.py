"""Drives tramp's HTML report in Debian's Chromium through Playwright, as a
person would: the page loads with no console message, the search finds
frames too narrow to draw, a call-tree row folds and unfolds, the filter
keeps the matching paths, a top table's row shows its site in the flame
graph, the root frame selected shows its blocks' sizes and lifetimes, a frame's
callers and callees, a
drag over the memory chart chooses a time range whose made and
live-at-end figures the flame graph and the range's tables show (the test
checks them against `tramp stats --time`). Prints one JSON object of what it measured; the Rust test
(crates/cli/tests/report.rs) checks it.

usage: report.py PAGE.html SCREENSHOT.png SEARCH
"""
import json
import sys
import time

from playwright.sync_api import sync_playwright

from chromium import open_page

page_path, shot, needle = sys.argv[1], sys.argv[2], sys.argv[3]
out = {}
with sync_playwright() as p:
    browser, page, messages = open_page(p)
    start = time.monotonic()
    page.goto("file://" + page_path)
    page.wait_for_selector("#tops table")
    out["first_screen_ms"] = round((time.monotonic() - start) * 1000)
    out["console"] = messages
    page.screenshot(path=shot)

    # Search over the whole tree, narrow frames included.
    page.fill("#search", needle)
    out["matches"] = int(page.get_attribute("#flame", "data-matches"))
    out["matched_text"] = page.inner_text("#matched")

    # Hovering a frame says its every cost and its blocks' mean size.
    page.hover("#flame .fr >> nth=1")
    out["hover"] = page.inner_text("#hover")

    # Fold and unfold the first top-down row that has children.
    rows = lambda: int(page.get_attribute("#topdown", "data-rows"))
    out["rows_open"] = rows()
    page.click("#topdown tr.fold >> nth=0")
    out["rows_folded"] = rows()
    page.click("#topdown tr.fold >> nth=0")
    out["rows_unfolded"] = rows()

    # The filter keeps the paths through a matching frame.
    page.fill("#filter", needle)
    names = page.eval_on_selector_all("#topdown td.name", "ns => ns.map(n => n.title)")
    out["filtered_rows"] = len(names)
    out["filtered_hit"] = any(needle.lower() in n.lower() for n in names)
    page.fill("#filter", "")

    # A top table's row: the flame graph shows that cost with its site searched.
    page.click("#tops tr.link >> nth=0")
    out["search_after_click"] = page.input_value("#search")
    out["cost_after_click"] = page.eval_on_selector("#cost", "s => s.options[s.selectedIndex].text")
    out["first_top_site"] = page.get_attribute("#tops tr.link >> nth=0", "title").split("\n")[0]
    # The root frame selected: its blocks' sizes and lifetimes.
    page.click("#reset")
    page.click("#flame .fr >> nth=0")
    out["shape"] = page.eval_on_selector_all(
        "#shape table",
        "ts => ts.map(t => Object.fromEntries(Array.from(t.rows).map(r => [r.getAttribute('data-bucket'), +r.getAttribute('data-n')])))",
    )

    # A `main` frame selected, allocations shown: its callers and callees.
    page.select_option("#cost", "0")
    page.fill("#search", "")
    frame = page.locator('#flame .fr[title^="main ("]').first
    out["calls_frame"] = frame.get_attribute("title")
    frame.click()
    out["calls"] = page.eval_on_selector_all(
        "#calls table",
        "ts => ts.map(t => ({through: +t.getAttribute('data-through'), rows: Object.fromEntries(Array.from(t.rows).map(r => [r.title, +r.getAttribute('data-n')]))}))",
    )

    # A drag over the middle of the memory chart: a time range.
    page.locator("#memory").scroll_into_view_if_needed()
    box = page.locator("#memory").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 0.35 * box["width"], y)
    page.mouse.down()
    page.mouse.move(box["x"] + 0.6 * box["width"], y, steps=5)
    page.mouse.up()
    info = lambda k: page.get_attribute("#range", "data-" + k)
    out["range"] = {k: int(info(k)) for k in ["from", "to", "allocations", "bytes", "live"]}
    out["range"]["grid_t0"] = page.evaluate("JSON.parse(document.getElementById('data').textContent).grid.t0")
    out["range"]["text"] = page.inner_text("#range")
    out["range"]["made_total"] = int(page.get_attribute("#flame", "data-total"))
    out["range"]["made_cost"] = page.eval_on_selector("#cost", "s => s.options[s.selectedIndex].text")
    out["range"]["tables"] = page.eval_on_selector_all("#rangetops table", "ts => ts.length")
    page.select_option("#rangemode", "live")
    out["range"]["live_total"] = int(page.get_attribute("#flame", "data-total"))
    out["range"]["live_cost"] = page.eval_on_selector("#cost", "s => s.options[s.selectedIndex].text")
    page.click("#clear")
    out["range"]["cleared_cost"] = page.eval_on_selector("#cost", "s => s.options[s.selectedIndex].text")
    out["console"] = messages
    browser.close()
print(json.dumps(out))
