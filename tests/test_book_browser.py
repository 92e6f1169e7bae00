"""The built book in a real browser: every page of ``_build/html`` opened in headless Chromium.

A page fails on a console error, a failed request or an error response, a request that leaves
the build directory, an image that does not load, a formula that MathJax did not typeset (raw
TeX left in the text, or a MathJax error), a claims table wider than the page at 1280 px, and,
for a chapter, a missing verdict summary or a title or summary below the fold of a 1280x800
window. A screenshot of each page at 1280x800 goes to ``_build/screenshots/`` (a CI artifact).

The book is built by ``make book`` (``.ci/run`` builds it before ``make test``); the browser is
Debian's ``chromium`` driven by playwright. Locally, without either, the tests are skipped with
the reason; under CI (``DPNOTES_CI=1``) they fail instead.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HTML = REPO / "_build" / "html"
SHOTS = REPO / "_build" / "screenshots"
VIEWPORT = {"width": 1280, "height": 800}
CI = os.environ.get("DPNOTES_CI") == "1"
# Pages of the book: everything but Sphinx's assets and the bundled MathJax.
ASSETS = ("_static", "_sources", "_images", "mathjax", "_sphinx_design_static", "_panels_static")
CHAPTERS = "book/executed/"
# Requested by the browser itself, not by any page: the site icon (the book declares none).
BROWSER_OWN = "/favicon.ico"


def _unavailable(reason: str):
    if CI:
        pytest.fail(f"{reason} (required under CI)")
    pytest.skip(reason)


def pages() -> list[str]:
    if not (HTML / "index.html").is_file():
        return []
    return sorted(p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")
                  if not p.relative_to(HTML).parts[0] in ASSETS)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    """The build directory over HTTP on localhost (file:// would make every font a CORS error)."""
    if not (HTML / "index.html").is_file():
        _unavailable(f"no built book at {HTML.relative_to(REPO)}: run `make book` first")
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(HTML)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    chromium = shutil.which("chromium")
    if chromium is None:
        _unavailable("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield b
        b.close()


# Runs in the page once MathJax is done: what the test judges, measured by the browser.
INSPECT = """async () => {
  for (const img of document.images) img.loading = 'eager';
  await Promise.all([...document.images].map(img => img.complete ? null :
      new Promise(done => { img.onload = img.onerror = done; })));
  const broken = [...document.images].filter(img => !img.complete || img.naturalWidth === 0)
      .map(img => img.getAttribute('src'));
  const title = document.querySelector('main h1, article h1');
  const summary = document.querySelector('.dpn-summary');
  const fold = el => el ? el.getBoundingClientRect().bottom + window.scrollY : null;
  const text = [];
  const walker = document.createTreeWalker(document.querySelector('main') || document.body,
      NodeFilter.SHOW_TEXT, {acceptNode: n => n.parentElement.closest(
          'pre, code, script, style, mjx-container, .highlight, textarea')
          ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  while (walker.nextNode()) text.push(walker.currentNode.nodeValue);
  for (const d of document.querySelectorAll('details')) d.open = true;
  const article = document.querySelector('main article, main') || document.body;
  const right = Math.min(window.innerWidth, article.getBoundingClientRect().right) + 1;
  const wide = [...document.querySelectorAll('table.dpn-claims')]
      .map(t => ({w: t.scrollWidth, r: t.getBoundingClientRect().right, box: t.parentElement.clientWidth}))
      .filter(t => t.r > right || t.w > t.box + 1);
  return {broken, titleBottom: fold(title), summaryBottom: fold(summary), hasSummary: !!summary,
          mathErrors: document.querySelectorAll('mjx-merror').length,
          typeset: document.querySelectorAll('mjx-container').length,
          mathSpans: document.querySelectorAll('.math').length,
          text: text.join(' '), wide};
}"""
# TeX that MathJax should have typeset: \( \) \[ \] delimiters, $$, or $...\command...$.
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\$[^$\s][^$]*\\[A-Za-z]+[^$]*\$")


def visit(browser, server: str, page_path: str) -> list[str]:
    """Open one page and return what is wrong with it (empty if nothing)."""
    problems: list[str] = []
    page = browser.new_page(viewport=VIEWPORT)
    page.on("console", lambda m: m.type == "error" and not m.location["url"].endswith(BROWSER_OWN)
            and problems.append(f"console error: {m.text} ({m.location['url']})"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})"))
    page.on("response", lambda r: r.status >= 400 and not r.url.endswith(BROWSER_OWN)
            and problems.append(f"HTTP {r.status}: {r.url}"))
    page.on("request", lambda r: r.url.startswith((server, "data:", "blob:", "about:"))
            or problems.append(f"request leaves the build directory: {r.url}"))
    page.goto(server + page_path, wait_until="networkidle")  # also past a redirect (index.html)
    page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / (page_path.replace("/", "__").removesuffix(".html") + ".png")))
    seen = page.evaluate(INSPECT)
    page.close()
    problems += [f"image not loaded: {src}" for src in seen["broken"]]
    if seen["mathErrors"]:
        problems.append(f"{seen['mathErrors']} formula(s) with a MathJax error")
    raw = RAW_TEX.findall(seen["text"])
    if raw:
        problems.append(f"formula(s) left as raw TeX: {raw[:5]}")
    if seen["mathSpans"] and not seen["typeset"]:
        problems.append(f"{seen['mathSpans']} formula(s) and none typeset by MathJax")
    problems += [f"claims table {t['w']} px wide, right edge at {t['r']:.0f} px, in a box of {t['box']} px"
                 for t in seen["wide"]]
    if page_path.startswith(CHAPTERS):
        if not seen["hasSummary"]:
            problems.append("chapter without its verdict summary")
        elif seen["summaryBottom"] > VIEWPORT["height"]:
            problems.append(f"verdict summary below the fold (bottom at {seen['summaryBottom']:.0f} px)")
        if seen["titleBottom"] is None or seen["titleBottom"] > VIEWPORT["height"]:
            problems.append("chapter title missing or below the fold")
    return problems


def test_the_book_has_its_pages():
    found = pages()
    if not found:
        _unavailable(f"no built book at {HTML.relative_to(REPO)}: run `make book` first")
    chapters = {p for p in found if p.startswith(CHAPTERS)}
    assert chapters == {f"{CHAPTERS}{n}.html" for n in ("scoreboard", "dplis", "dpis", "gdp", "labeldp", "sadpsgd")}


@pytest.mark.parametrize("page_path", pages() or ["(no built book)"])
def test_page_in_the_browser(browser, server, page_path):
    problems = visit(browser, server, page_path)
    assert not problems, f"{page_path}:\n  " + "\n  ".join(problems)
