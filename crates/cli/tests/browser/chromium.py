"""The browser the page tests drive: Debian's Chromium through Playwright,
headless, a 1280 × 900 window, every console message and page error kept
(a test fails on any)."""


def open_page(p):
    """A new page of Chromium launched from Playwright `p`, and the list
    its console messages and errors are appended to."""
    browser = p.chromium.launch(
        executable_path="/usr/bin/chromium",
        args=["--no-sandbox", "--disable-gpu"],
    )
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    messages = []
    page.on("console", lambda m: messages.append(m.type + ": " + m.text))
    page.on("pageerror", lambda e: messages.append("error: " + str(e)))
    return browser, page, messages
