"""Drives a report page's thread filter in Debian's Chromium through
Playwright: for each thread the filter offers, the flame graph's total of
allocations and of bytes. Prints one JSON object (thread id → [allocations,
bytes]) and the console's messages; the Rust test (crates/cli/tests/report.rs)
checks them against `tramp stats --json`'s per-thread counts.

usage: threads.py PAGE.html
"""
import json
import sys

from playwright.sync_api import sync_playwright

from chromium import open_page

out = {"threads": {}}
with sync_playwright() as p:
    browser, page, messages = open_page(p)
    page.goto("file://" + sys.argv[1])
    page.wait_for_selector("#tops table")
    options = page.eval_on_selector_all("#thread option", "os => os.map(o => [o.value, o.textContent])")
    total = lambda: int(page.get_attribute("#flame", "data-total"))
    for value, text in options[1:]:
        page.select_option("#thread", value)
        page.select_option("#cost", "0")
        allocations = total()
        page.select_option("#cost", "1")
        out["threads"][text.split()[-1]] = [allocations, total()]
    page.select_option("#thread", "-1")
    out["every_thread_cost"] = page.eval_on_selector("#cost", "s => s.options[s.selectedIndex].text")
    out["console"] = messages
    browser.close()
print(json.dumps(out))
