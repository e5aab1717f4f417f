"""A screenshot of a run's report.html, as docs/report.png shows the default run's.

    python scripts/report-screenshot.py RUN_DIR [OUT.png] [--width 1000] [--height 2600]

The run folder is copied to a temporary folder and its report written there again by the code at hand
(``bench-stack report``), so RUN_DIR stays as it is; then Debian's chromium, headless (through chromedriver
and Selenium, as tests/unit/report/test_report_browser.py drives it; ``./run setup`` installs both), draws
report.html at ``--width`` CSS pixels, and the top ``--height`` pixels of the page are saved (the whole page
when it is shorter). docs/report.png: the defaults, from the run results/20261205T005648Z-sinatra-thin-nginx.
"""

from __future__ import annotations

import argparse
import base64
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchstack.report.build import write_report  # noqa: E402 (this checkout's package)


def screenshot(page: Path, out: Path, width: int, height: int) -> tuple[int, int]:
    """``page`` drawn at ``width``, its top ``height`` pixels (at most) written to ``out``; the size saved."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_path):
        raise SystemExit("chromium or chromedriver not found: ./run setup installs Debian's packages")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    try:
        metrics = {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": False}
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        driver.get(page.as_uri())
        shown = min(height, int(driver.execute_script("return document.documentElement.scrollHeight")))
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**metrics, "height": shown})
        clip = {"x": 0, "y": 0, "width": width, "height": shown, "scale": 1}
        png = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "clip": clip})["data"]
    finally:
        driver.quit()
    out.write_bytes(base64.b64decode(png))
    return width, shown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("run_dir", type=Path, help="a run folder (results/<run>)")
    parser.add_argument("out", type=Path, nargs="?", default=ROOT / "docs" / "report.png")
    parser.add_argument("--width", type=int, default=1000, help="CSS pixels (default 1000)")
    parser.add_argument("--height", type=int, default=2600, help="at most this many pixels (default 2600)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / args.run_dir.resolve().name
        shutil.copytree(args.run_dir, copy, ignore=shutil.ignore_patterns(".bench-stack.*"))
        write_report(copy)
        size = screenshot(copy / "report.html", args.out, args.width, args.height)
    print(f"{args.out}: {size[0]} x {size[1]} px of {args.run_dir.name}'s report.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
