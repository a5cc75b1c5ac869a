"""The report page in headless Chromium: it loads offline without errors,
every figure is drawn with a size, the links into the pairs page resolve;
its screenshot is kept in the test's folder (``report.png``)."""
import subprocess

from spacy_paraphrase.report.build import make_report
from tests.report.helpers import corpus, write_records
from tests.visualize.test_browser import chromium, run_page  # noqa: F401  (the fixture)

ERRORS = ("<script>window.__errors=[];window.addEventListener('error',function(e){window.__errors.push("
          "String(e.message||e.target&&e.target.outerHTML))},true);var _e=console.error;console.error=function()"
          "{window.__errors.push([].join.call(arguments,' '));_e.apply(console,arguments)};</script>")
MEASURE = """
var figs = Array.prototype.map.call(document.querySelectorAll('figure.report-figure'), function(f){
  var svg = f.querySelector('svg'); var box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  return [f.getAttribute('data-figure'), Math.round(box.width), Math.round(box.height)];});
var links = Array.prototype.map.call(document.querySelectorAll('a[href^="pairs.html#"]'), function(a){
  return a.getAttribute('href').split('#')[1];});
return {errors: window.__errors, figures: figs, links: links, width: document.body.scrollWidth};
"""


def test_the_report_opens_offline_with_every_figure(chromium, tmp_path):  # noqa: F811
    path = write_records(tmp_path / "r.jsonl", corpus())
    out_dir = tmp_path / "rep"
    make_report([path], out_dir, by=["second.speaker"], by_time=["meta.date:month"], n_boot=300)
    page = (out_dir / "index.html").read_text(encoding="utf-8").replace("<head>", "<head>" + ERRORS, 1)
    result = run_page(chromium, out_dir, page, MEASURE, width=1000)
    assert result["errors"] == []
    assert [f[0] for f in result["figures"]] == ["by:second.speaker", "time:meta.date:month", "scores"]
    assert all(w > 300 and h > 100 for _, w, h in result["figures"]), result["figures"]
    assert result["width"] <= 1000  # no horizontal scrolling
    pairs = (out_dir / "pairs.html").read_text(encoding="utf-8")
    assert result["links"] and all(f'id="{anchor}"' in pairs for anchor in result["links"])
    assert '<a href="index.html">' in pairs
    shot = tmp_path / "report.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                    f"--user-data-dir={tmp_path / 'profile2'}", "--window-size=1000,2400",
                    f"--screenshot={shot}", (out_dir / "index.html").as_uri()], capture_output=True, timeout=120)
    assert shot.stat().st_size > 10_000
