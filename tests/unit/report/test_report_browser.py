"""report.html in a real browser: Debian's chromium, headless, driven by Selenium through Debian's
chromedriver (``./run setup`` and ``./run integration`` install both: setup_chromium; marked ``browser``,
it is not in ``./run unit``). At a desktop's width and at a phone's, the page of a run with comparisons shows
the verdict first, then the comparison chart and the throughput charts as images that decoded and take room
on the page, none wider than the screen, and the page needs no sideways scroll. One browser for the module:
starting it is most of the time (~1 s)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_report import RUN_JSON, SLOWER_SENTENCE, six_rounds

from benchstack.report.build import write_report

# drawn: real PNG files, which the browser decodes.
pytestmark = [pytest.mark.drawn, pytest.mark.browser]

# (width, height, mobile) of each screen, in CSS pixels; the phone's is a common one (390 x 844).
SCREENS = {"desktop": (1280, 900, False), "phone": (390, 844, True)}
WANTED_PLOTS = ("comparisons", "throughput")

# What the page shows, measured by the browser: the verdict's heading, each wanted plot's images, the page's
# width against the screen's, and the text as a reader sees it.
LOOK = """
const box = el => {
  const r = el.getBoundingClientRect(), s = getComputedStyle(el);
  return {top: r.top + window.scrollY, left: r.left, right: r.right, width: r.width, height: r.height,
          shown: s.display !== 'none' && s.visibility !== 'hidden' && s.opacity !== '0'};
};
const verdict = [...document.querySelectorAll('h2')].find(h => h.textContent.startsWith('Verdict: '));
const plots = {};
for (const kind of arguments[0]) {
  plots[kind] = [...document.querySelectorAll(`figure[data-plot="${kind}"] img`)].map(
    img => ({...box(img), decoded: img.complete && img.naturalWidth > 0}));
}
return {verdict: verdict ? {text: verdict.textContent, ...box(verdict)} : null, plots,
        page: document.documentElement.scrollWidth, screen: window.innerWidth, text: document.body.innerText};
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_path):
        pytest.fail(
            "chromium or chromedriver not found: "
            "./run integration (or ./run setup) installs Debian's packages"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def report_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.html of two stacks against a baseline over ab and wrk (test_report's six_rounds)."""
    run = tmp_path_factory.mktemp("run")
    six_rounds(run)
    (run / "run.json").write_text(json.dumps(RUN_JSON), encoding="utf-8")
    write_report(run)
    return run / "report.html"


def look(driver: Any, page: Path, screen: str) -> dict[str, Any]:
    width, height, mobile = SCREENS[screen]
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    driver.get(page.as_uri())
    seen: dict[str, Any] = driver.execute_script(LOOK, list(WANTED_PLOTS))
    return seen


@pytest.mark.parametrize("screen", list(SCREENS))
def test_the_verdict_and_the_charts_show_at_desktop_and_phone_width(
    browser: Any, report_page: Path, screen: str
) -> None:
    seen = look(browser, report_page, screen)
    assert seen["screen"] == SCREENS[screen][0]  # the page's viewport is the device's (meta viewport)
    verdict = seen["verdict"]
    assert verdict is not None and verdict["shown"] and verdict["width"] > 0, seen["text"][:500]
    assert seen["text"].index("Verdict: ") < seen["text"].index("Comparisons")
    assert SLOWER_SENTENCE in seen["text"]
    for kind in WANTED_PLOTS:
        images = seen["plots"][kind]
        assert images, f"no {kind} chart on the page"
        for image in images:
            assert image["decoded"] and image["shown"], (kind, image)
            assert image["width"] > 100 and image["height"] > 50, (kind, image)
            assert image["left"] >= 0 and image["right"] <= seen["screen"], (kind, image)
            assert image["top"] > verdict["top"], (kind, image)
    # The comparisons (the answer) come before the throughput
    assert seen["plots"]["comparisons"][0]["top"] < seen["plots"]["throughput"][0]["top"]
    assert seen["page"] <= seen["screen"], "the page scrolls sideways"
