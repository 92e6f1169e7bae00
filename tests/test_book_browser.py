"""The built book in a real browser: every page of ``_build/html`` opened in headless Chromium.

A page fails on a console error, a failed request or an error response, a request that leaves
the build directory, an image that does not load, a formula that MathJax did not typeset (raw
TeX left in the text, or a MathJax error); on text a reader should never see: ``NaN``/``nan``,
a pandas ``dtype:`` line, a dict repr (``{'``) or an identifier in unrendered backticks; on an
image without a caption (``<figcaption>``) or whose alt text is missing or a file path, or a
figure whose smallest font is under 9 pt as shown (under 8 pt at 390 px); on any table wider than the
content column at 1280 px that does not scroll inside a wrapper of the column's width; at 1280 and at
390 px, on a table cell narrower than its longest word (a word drawn on two lines), and on a raw id in
the visible text (``eps1``, ``fmnist``, ``dpsgd_``, a snake_case id, a 16-hex record hash; folded
provenance, a closed ``<details class="dpn-prov">``, and quoted code excepted); on a table of the
book's formatter without its title; on a control character; on a page with other than one search box
at either size; for a chapter, on a "What held" box (``.what-held``) or a title below the fold of a
1280x800 window; on a scoreboard page taller than 10 screens at 1280x800 as it opens (lists folded);
and on a page that scrolls sideways at 390 px (a phone). Screenshots of each page at 1280x800 and
390x844 go to ``_build/screenshots/`` (a CI artifact).
:func:`test_the_rules_catch_a_broken_page` shows each rule failing on a page made to break it.

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
PHONE = {"width": 390, "height": 844}
MIN_FONT_PT = 9.0
PHONE_MIN_FONT_PT = 8.0  # a figure's smallest font as a phone shows it (its phone-shaped copy, if it has one)
SCOREBOARD_SCREENS = 10  # the scoreboard page, as it opens at 1280x800, is at most this many screens tall
CI = os.environ.get("DPNOTES_CI") == "1"
# Pages of the book: everything but Sphinx's assets and the bundled MathJax.
ASSETS = ("_static", "_sources", "_images", "mathjax", "_sphinx_design_static", "_panels_static")
CHAPTERS = "book/executed/"
PAPER_CHAPTERS = ("dplis", "dpis", "gdp", "labeldp", "sadpsgd")  # each opens with its answer and the paper's table
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
                  if p.relative_to(HTML).parts[0] not in ASSETS)


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
  const main = document.querySelector('main') || document.body;
  const broken = [...document.images].filter(img => !img.complete || img.naturalWidth === 0)
      .map(img => img.getAttribute('src').slice(0, 80));
  const title = document.querySelector('main h1, article h1');
  const held = document.querySelector('.what-held');
  const fold = el => el ? el.getBoundingClientRect().bottom + window.scrollY : null;
  const top = el => el ? el.getBoundingClientRect().top + window.scrollY : null;
  // Prose and outputs: every text but code (inputs, literals), scripts and typeset maths.
  const text = [];
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT, {acceptNode: n => {
      const p = n.parentElement;
      if (p.closest('script, style, mjx-container, textarea, .cell_input')) return NodeFilter.FILTER_REJECT;
      if (p.closest('pre, code, .highlight') && !p.closest('.cell_output')) return NodeFilter.FILTER_REJECT;
      return NodeFilter.FILTER_ACCEPT; }});
  while (walker.nextNode()) text.push(walker.currentNode.nodeValue);
  // where the answer and the paper's first table sit as the page opens (details still folded)
  const answerBottom = fold(document.querySelector('.what-held .dpn-answer'));
  const gridTop = top(document.querySelector('table.dpn-grid'));
  const pageHeight = document.documentElement.scrollHeight;  // as it opens: lists folded
  const searchBoxes = SEARCH_BOXES();
  for (const d of document.querySelectorAll('details')) d.open = true;
  const article = document.querySelector('main article') || main;
  const column = article.getBoundingClientRect();
  // a table wider than the column must scroll inside a wrapper that fits it (words stay whole)
  const scroller = t => { for (let e = t.parentElement; e && e !== article; e = e.parentElement)
      if (['auto', 'scroll'].includes(getComputedStyle(e).overflowX)) return e; return null; };
  const wide = [...main.querySelectorAll('table')].filter(t => t.offsetParent !== null)
      .map(t => ({w: Math.max(t.scrollWidth, t.getBoundingClientRect().width), cls: t.className,
                  box: column.width, wrap: scroller(t) ? scroller(t).getBoundingClientRect().width : null}))
      .filter(t => t.w > t.box + 1 && (t.wrap === null || t.wrap > t.box + 1));
  const images = [...main.querySelectorAll('img')].map(img => ({
      src: (img.getAttribute('src') || '').slice(0, 60), alt: img.getAttribute('alt') || '',
      caption: (img.closest('figure') && img.closest('figure').querySelector('figcaption')
                ? img.closest('figure').querySelector('figcaption').textContent.trim() : ''),
      font: img.dataset.minFontPt ? parseFloat(img.dataset.minFontPt) * img.getBoundingClientRect().width
            / parseFloat(img.dataset.shownPx) : null}));
  return {broken, titleBottom: fold(title), heldTop: top(held), heldBottom: fold(held), hasHeld: !!held,
          answerBottom, gridTop, pageHeight, searchBoxes,
          mathErrors: document.querySelectorAll('mjx-merror').length,
          typeset: document.querySelectorAll('mjx-container').length,
          mathSpans: document.querySelectorAll('.math').length,
          text: text.join(' '), wide, images};
}"""
SIDEWAYS = "() => document.documentElement.scrollWidth - window.innerWidth"
# Search fields and buttons a reader sees (the theme can put one in the header, the sidebar and the article bar;
# the search page's own form, its content, is not one of them).
_SEARCH = """() => [...document.querySelectorAll('.search-button-field, .search-button, form.bd-search')]
    .filter(e => !e.closest('dialog, article, .bd-search-container') && e.offsetParent !== null
            && e.getBoundingClientRect().width > 0 && getComputedStyle(e).visibility !== 'hidden').length"""
INSPECT = INSPECT.replace("SEARCH_BOXES()", f"({_SEARCH})()")
# At a phone's width: each figure's smallest font as shown (the phone-shaped copy where a <picture> has one).
PHONE_INSPECT = """async () => {
  for (const img of document.images) img.loading = 'eager';
  await Promise.all([...document.images].map(img => img.complete ? null :
      new Promise(done => { img.onload = img.onerror = done; })));
  const fonts = [...document.querySelectorAll('main img[data-min-font-pt]')].map(img => {
      const phone = img.dataset.phonePx && img.currentSrc && img.currentSrc !== img.getAttribute('src');
      const w = img.getBoundingClientRect().width;
      return {src: (img.getAttribute('src') || '').slice(0, 60), phone: !!phone,
              font: phone ? parseFloat(img.dataset.phoneMinFontPt) * w / parseFloat(img.dataset.phonePx)
                          : parseFloat(img.dataset.minFontPt) * w / parseFloat(img.dataset.shownPx)}; });
  return {fonts, searchBoxes: (SEARCH)()};
}""".replace("SEARCH", _SEARCH)
# Runs at each width, details as the page opens them: table cells whose words do not fit (a word, cut at
# spaces and after hyphens, drawn on two lines or more: the cell is narrower than its longest word), and the
# text a reader sees, less what folded provenance (a closed <details class="dpn-prov">) hides and less quoted
# code (``<code>``: a command, a file, an argument; a code span holding only an id is named by labels.markdown).
TYPESET = """() => {
  const main = document.querySelector('main') || document.body;
  const split = [];
  for (const cell of main.querySelectorAll('table td, table th')) {
    if (split.length >= 20 || !cell.getClientRects().length) continue;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    while (walker.nextNode() && split.length < 20) {
      const node = walker.currentNode, re = /[^\\s-]+-?/g;
      let m;
      while ((m = re.exec(node.nodeValue)) !== null) {
        if (m[0].length < 2) continue;
        const range = document.createRange();
        range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (lines.size > 1) { split.push(m[0] + ' in ' + cell.textContent.trim().slice(0, 60)); break; }
      }
    }
  }
  const text = [];
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT, {acceptNode: n => {
      const p = n.parentElement;
      if (p.closest('script, style, mjx-container, textarea, .cell_input')) return NodeFilter.FILTER_REJECT;
      if (p.closest('pre, code, .highlight') && !p.closest('.cell_output')) return NodeFilter.FILTER_REJECT;
      if (p.closest('code')) return NodeFilter.FILTER_REJECT;  // quoted code: a command, a path, an argument
      const fold = p.closest('details.dpn-prov:not([open])');
      if (fold && !p.closest('summary')) return NodeFilter.FILTER_REJECT;
      return NodeFilter.FILTER_ACCEPT; }});
  while (walker.nextNode()) text.push(walker.currentNode.nodeValue);
  // every table of the book's formatter has its title above it
  const untitled = [...main.querySelectorAll('table.dpn-table')].filter(t => {
      const wrap = t.closest('.dpn-tablewrap') || t, prev = wrap.previousElementSibling;
      return !(prev && prev.matches('p.dpn-tabletitle')); }).length;
  return {split, text: text.join(' '), untitled};
}"""
# Raw ids a reader should never see (one name per thing: dpnotes.report.labels), outside folded provenance.
RAW_IDS = (("an eps id", re.compile(r"\beps\d")), ("fmnist", re.compile(r"fmnist")),
           ("a dpsgd_ id", re.compile(r"dpsgd_")),
           ("a snake_case id", re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")),
           ("a record hash", re.compile(r"\b[0-9a-f]{16}\b")))
PROPER_NAMES = {"dp_accounting"}  # a library's own name, not an id of ours
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# TeX that MathJax should have typeset: \( \) \[ \] delimiters, $$, or $...\command...$.
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\$[^$\s][^$]*\\[A-Za-z]+[^$]*\$")
# Text a reader should never see: a missing value, a pandas repr, a dict repr, unrendered Markdown code.
NOT_FOR_READERS = (("NaN or nan", re.compile(r"\b(?:NaN|nan)\b")), ("a pandas dtype: line", re.compile(r"dtype:")),
                   ("a dict repr", re.compile(r"\{'")), ("an identifier in unrendered backticks",
                                                         re.compile(r"`[A-Za-z_][\w.]*`?")))
# An alt text that is a file name or path, not a description.
PATH_ALT = re.compile(r"^\S*[/\\]\S*$|\.(?:png|svg|jpe?g|gif)$|^(?:image|img|figure)?$", re.I)


def _shot(page, page_path: str, kind: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / (page_path.replace("/", "__").removesuffix(".html") + f".{kind}.png")))


def visit(browser, server: str, page_path: str, *, chapter: bool | None = None,
          scoreboard: bool | None = None) -> list[str]:
    """Open one page (at a laptop's and at a phone's width) and return what is wrong with it."""
    problems: list[str] = []
    page = browser.new_page(viewport=VIEWPORT)
    page.on("console", lambda m: m.type == "error" and not m.location["url"].endswith(BROWSER_OWN)
            and problems.append(f"console error: {m.text} ({m.location['url']})"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})"))
    page.on("response", lambda r: r.status >= 400 and not r.url.endswith(BROWSER_OWN)
            and problems.append(f"HTTP {r.status}: {r.url}"))
    page.on("request", lambda r: r.url.startswith((server, "data:", "blob:", "about:"))
            or problems.append(f"request leaves the build directory: {r.url[:80]}"))
    page.goto(server + page_path, wait_until="networkidle")  # also past a redirect (index.html)
    page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    _shot(page, page_path, "1280x800")
    typeset = {"1280": page.evaluate(TYPESET)}
    seen = page.evaluate(INSPECT)
    page.set_viewport_size(PHONE)
    page.goto(server + page_path, wait_until="networkidle")
    page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    _shot(page, page_path, "390x844")
    sideways = page.evaluate(SIDEWAYS)
    phone = page.evaluate(PHONE_INSPECT)
    typeset["390"] = page.evaluate(TYPESET)
    page.close()
    problems += [f"image not loaded: {src}" for src in seen["broken"]]
    if seen["mathErrors"]:
        problems.append(f"{seen['mathErrors']} formula(s) with a MathJax error")
    raw = RAW_TEX.findall(seen["text"])
    if raw:
        problems.append(f"formula(s) left as raw TeX: {raw[:5]}")
    if seen["mathSpans"] and not seen["typeset"]:
        problems.append(f"{seen['mathSpans']} formula(s) and none typeset by MathJax")
    for what, pattern in NOT_FOR_READERS:
        found = [seen["text"][max(0, m.start() - 30):m.end() + 30] for m in pattern.finditer(seen["text"])]
        if found:
            problems.append(f"{len(found)} x {what} in the text, e.g. {found[0]!r}")
    for img in seen["images"]:
        if not img["caption"]:
            problems.append(f"image without a caption: {img['src']}")
        if PATH_ALT.search(img["alt"].strip()):
            problems.append(f"image whose alt text is no description ({img['alt']!r}): {img['src']}")
        if img["font"] is not None and img["font"] < MIN_FONT_PT - 0.05:
            problems.append(f"figure font of {img['font']:.1f} pt as shown (at least {MIN_FONT_PT:g}): {img['src']}")
    problems += [f"table ({t['cls'] or 'no class'}) {t['w']:.0f} px wide in a content column of {t['box']:.0f} px, "
                 "not in a scrolling wrapper" for t in seen["wide"]]
    if chapter if chapter is not None else page_path.startswith(CHAPTERS):
        if not seen["hasHeld"]:
            problems.append("chapter without its What held box (.what-held)")
        elif seen["heldTop"] > VIEWPORT["height"]:
            problems.append(f"What held box below the fold (top at {seen['heldTop']:.0f} px)")
        if seen["titleBottom"] is None or seen["titleBottom"] > VIEWPORT["height"]:
            problems.append("chapter title missing or below the fold")
    if chapter if chapter is not None else Path(page_path).stem in PAPER_CHAPTERS:  # a paper's chapter
        if seen["answerBottom"] is None or seen["answerBottom"] > VIEWPORT["height"]:
            problems.append(f"the answer in words (.dpn-answer) not inside the first screen ({seen['answerBottom']})")
        if seen["gridTop"] is None or seen["gridTop"] > 2 * VIEWPORT["height"]:
            problems.append(f"the paper's first table (paper | ours) not within two screens ({seen['gridTop']})")
    for width, got in typeset.items():
        if got["split"]:
            problems.append(f"{len(got['split'])} table word(s) broken over lines at {width} px (a cell narrower "
                            f"than its longest word), e.g. {got['split'][0]!r}")
        for what, pattern in RAW_IDS:
            found = [got["text"][max(0, m.start() - 30):m.end() + 30] for m in pattern.finditer(got["text"])
                     if m.group() not in PROPER_NAMES]
            if found:
                problems.append(f"{len(found)} x raw id ({what}) in the visible text at {width} px, e.g. {found[0]!r}")
    if typeset["1280"]["untitled"]:
        problems.append(f"{typeset['1280']['untitled']} table(s) without a title (p.dpn-tabletitle above it)")
    control = CONTROL.findall(seen["text"])
    if control:
        problems.append(f"{len(control)} control character(s) in the text, e.g. {control[0]!r}")
    if sideways > 0:
        problems.append(f"the page scrolls sideways at {PHONE['width']} px (by {sideways} px)")
    problems += [f"figure font of {f['font']:.1f} pt as shown at {PHONE['width']} px (at least {PHONE_MIN_FONT_PT:g}"
                 f"{'' if f['phone'] else '; no phone-shaped copy shown'}): {f['src']}"
                 for f in phone["fonts"] if not f["font"] >= PHONE_MIN_FONT_PT - 0.05]
    for size, n in ((f"{VIEWPORT['width']} px", seen["searchBoxes"]), (f"{PHONE['width']} px", phone["searchBoxes"])):
        if n != 1:
            problems.append(f"{n} search boxes at {size} (one a page)")
    if scoreboard if scoreboard is not None else Path(page_path).stem == "scoreboard":
        if seen["pageHeight"] > SCOREBOARD_SCREENS * VIEWPORT["height"]:
            problems.append(f"scoreboard not under {SCOREBOARD_SCREENS} screens at {VIEWPORT['width']} px "
                            f"({seen['pageHeight'] / VIEWPORT['height']:.1f} screens as it opens)")
    return problems


def test_the_book_has_its_pages():
    found = pages()
    if not found:
        _unavailable(f"no built book at {HTML.relative_to(REPO)}: run `make book` first")
    chapters = {p for p in found if p.startswith(CHAPTERS)}
    names = ("scoreboard", "dplis", "dpis", "gdp", "labeldp", "sadpsgd", "audit", "compare")
    assert chapters == {f"{CHAPTERS}{n}.html" for n in names}


@pytest.mark.parametrize("page_path", pages() or ["(no built book)"])
def test_page_in_the_browser(browser, server, page_path):
    problems = visit(browser, server, page_path)
    assert not problems, f"{page_path}:\n  " + "\n  ".join(problems)


# A page made to break every rule: the test below expects each one to be reported.
GIF = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"
BROKEN_PAGE = """<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width"></head>
<body><header><form class="bd-search"><input type="search"></form>
<button class="search-button-field">Search</button></header><main><article style="width:700px">
<h1>A broken chapter</h1>
<div style="height:900px">A long opening paragraph pushes everything down.</div>
<div class="what-held">What held, too late.</div>
<p>The accuracy was NaN and the dtype: float64 of a Series; a dict {'eps': 1.0}; see `dplis.SHARPNESS_MAXITER`.</p>
<img src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"
     alt="_images/figure_1.png">
<table><tr><td style="white-space:nowrap">a table wider than the column: %s</td></tr></table>
<img src="%s" alt="a plot drawn for a laptop, shown shrunk" style="width:300px"
     data-min-font-pt="9.0" data-shown-px="672">
<table style="width:60px;table-layout:fixed"><tr><td style="overflow-wrap:anywhere">paper poisson</td></tr></table>
<div class="dpn-tablewrap"><table class="dpn-table"><tr><td>a table with no title</td></tr></table></div>
<p>Fashion-MNIST as fmnist.eps1 with dpsgd_hf, mnist_mlp and record 8742cf119bfbb27d; a footnote (\x01).
   Quoted code is code: <code>on_capped='dpsgd'</code>.</p>
<details class="dpn-prov"><summary>1 record</summary>folded provenance: 993750242c73a5a3, mnist_cnn</details>
<div style="height:9000px">A scoreboard with every list open.</div>
</article></main></body></html>""" % ("1234567890 " * 30, GIF)


def test_the_rules_catch_a_broken_page(browser, tmp_path):
    """Each rule fails on a page made to break it (the rules can fail)."""
    (tmp_path / "broken.html").write_text(BROKEN_PAGE)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(tmp_path)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        problems = visit(browser, f"http://127.0.0.1:{httpd.server_address[1]}/", "broken.html", chapter=True,
                         scoreboard=True)
    finally:
        httpd.shutdown()
    text = "\n".join(problems)
    print(text)
    for expected in ("NaN or nan", "a pandas dtype: line", "a dict repr", "an identifier in unrendered backticks",
                     "image without a caption", "alt text is no description", "px wide in a content column",
                     "What held box below the fold", "scrolls sideways at 390 px",
                     "not inside the first screen", "not within two screens", "pt as shown at 390 px",
                     "2 search boxes at 1280 px", "scoreboard not under 10 screens", "broken over lines at 1280 px",
                     "broken over lines at 390 px", "(an eps id)", "(fmnist)", "(a dpsgd_ id)", "(a snake_case id)",
                     "(a record hash)", "control character", "without a title"):
        assert expected in text, f"the rule {expected!r} did not fire on the broken page:\n{text}"
    for width in (1280, 390):  # the hash folded as provenance is not counted, nor quoted code; the text's are
        assert f"1 x raw id (a record hash) in the visible text at {width} px" in text, text
        assert f"2 x raw id (a snake_case id) in the visible text at {width} px" in text, text
