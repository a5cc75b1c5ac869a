"""The coding page in headless Chromium (the Debian package ``chromium``):
a harness page holds the coding page in an iframe (``--allow-file-access-
from-files`` makes the two file:// pages one origin), clicks and drags over
words with mouse events and presses keys, reloads the coding page (its
progress is kept in localStorage), exports, and ``--dump-dom`` (with
``--virtual-time-budget``, so the reload finishes first) returns what it read.
``validate score`` on the export gives the word figures computed by hand."""
import html
import json
import re
import subprocess

from typer.testing import CliRunner

from spacy_paraphrase.cli import app
from tests.report.helpers import corpus, write_records
from tests.visualize.test_browser import chromium, run_page  # noqa: F401  (the fixture)
from tests.validation.coded_files import sheet_rows

runner = CliRunner()

HARNESS = """<!DOCTYPE html><html><body><iframe id="f" src="coding/sheet.coding.html" width="1000" height="800"></iframe>
<script>
var out = {}, phase = 0;
function finish(){ var pre = document.createElement('pre'); pre.id = 'spp-test-result';
  pre.textContent = JSON.stringify(out); document.body.appendChild(pre); }
function mouse(el, type){ el.dispatchEvent(new MouseEvent(type, {bubbles: true, cancelable: true})); }
function click(el){ mouse(el, 'mousedown'); mouse(el, 'mouseup'); mouse(el, 'click'); }
function key(d, k){ d.dispatchEvent(new KeyboardEvent('keydown', {key: k, bubbles: true, cancelable: true})); }
document.getElementById('f').onload = function(){
  try {
    var w = this.contentWindow, d = w.document;
    function words(t){ return d.querySelectorAll('#spp-t' + t + ' .w'); }
    if (phase === 0) {
      phase = 1;
      out.before = d.getElementById('spp-progress').textContent;
      key(d, 'n');                                   // pair 1: no
      key(d, 'ArrowRight');
      d.getElementById('spp-yes').click();           // pair 2: yes, two clicks, a drag
      click(words(1)[1]); click(words(1)[3]);
      mouse(words(2)[0], 'mousedown'); mouse(words(2)[1], 'mouseover'); mouse(words(2)[2], 'mouseover');
      mouse(d, 'mouseup');
      click(words(2)[1]);                            // a second click takes a word back
      key(d, 'j');
      key(d, 'y');                                   // pair 3: yes by key, words by Enter on a focused word
      words(1)[2].dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
      click(words(2)[4]);
      out.marked = d.querySelectorAll('.w.on').length;
      out.coded = d.getElementById('spp-progress').textContent;
      w.location.reload();
    } else {
      out.after = d.getElementById('spp-progress').textContent;
      out.position = d.getElementById('spp-pos').textContent;
      d.getElementById('spp-export').click();
      out.without_name = d.getElementById('spp-out-msg').textContent;
      var name = d.getElementById('spp-coder'); name.value = 'Ann Lee'; name.dispatchEvent(new Event('input'));
      d.getElementById('spp-export').click();
      out.text = d.getElementById('spp-out').value;
      out.download = d.getElementById('spp-download').download;
      out.href = d.getElementById('spp-download').href.slice(0, 5);
      finish();
    }
  } catch (e) { out.error = String(e); finish(); }
};
</script></body></html>"""


def test_code_three_pairs_reload_export_and_score(chromium, tmp_path):  # noqa: F811
    records = corpus(6, 5)
    path = write_records(tmp_path / "r.jsonl", records)
    result = runner.invoke(app, ["validate", "sheet", str(path), "-o", str(tmp_path / "coding" / "sheet.csv"),
                                 "--n", "8", "--stratify", "none"])
    assert result.exit_code == 0, result.output
    (tmp_path / "harness.html").write_text(HARNESS, encoding="utf-8")
    proc = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           f"--user-data-dir={tmp_path / 'profile'}", "--allow-file-access-from-files",
                           "--virtual-time-budget=10000", "--dump-dom", (tmp_path / "harness.html").as_uri()],
                          capture_output=True, text=True, timeout=120)
    match = re.search(r'<pre id="spp-test-result">(.*?)</pre>', proc.stdout, re.S)
    assert match, proc.stderr[-2000:]
    out = json.loads(html.unescape(match.group(1)))
    assert "error" not in out, out
    assert out["before"].startswith("0 of 8") and out["coded"].startswith("3 of 8")
    assert out["after"].startswith("3 of 8") and out["position"] == "Pair 3 of 8"  # kept across the reload
    assert out["marked"] == 2 and "Type your name" in out["without_name"]
    assert out["download"] == "sheet.Ann_Lee.coded.json" and out["href"] == "blob:"
    coded = json.loads(out["text"])
    assert coded["coder"] == "Ann Lee" and len(coded["pairs"]) == 3
    rows = sheet_rows(tmp_path / "coding" / "sheet.csv")
    assert [p["pair_id"] for p in coded["pairs"]] == [r["pair_id"] for r in rows[:3]]
    assert [(p["paraphrase"], p["first"]["highlight"], p["second"]["highlight"]) for p in coded["pairs"]] == [
        (False, [], []), (True, [1, 3], [0, 2]), (True, [2], [4])]
    export = tmp_path / "ann.coded.json"
    export.write_text(out["text"], encoding="utf-8")
    scores_path = tmp_path / "s.json"
    result = runner.invoke(app, ["validate", "score", str(export), "-r", str(path), "--design", "none",
                                 "--n-boot", "200", "-o", str(scores_path)])
    assert result.exit_code == 0, result.output
    words = json.loads(scores_path.read_text())["words"]
    # by hand: one coder, so the coder's words are the gold; the model marks "running with the dogs" /
    # "running with dogs?" (words 2-5 / 2-4) of the pairs it calls paraphrases, nothing of the others
    by_id = {r["pair_id"]: r for r in records}
    said = [by_id[r["pair_id"]]["is_paraphrase"] for r in rows[:3]]
    model = [({2, 3, 4, 5}, {2, 3, 4}) if s else (set(), set()) for s in said]
    gold = [(set(), set()), ({1, 3}, {0, 2}), ({2}, {4})]
    tp = sum(len(m & g) for pm, pg in zip(model, gold) for m, g in zip(pm, pg))
    n_model = sum(len(m) for pm in model for m in pm)
    n_gold = 6
    figures = words["model_vs_majority"]
    if n_model:
        assert abs(figures["precision"]["value"] - tp / n_model) < 1e-9
    assert abs(figures["recall"]["value"] - tp / n_gold) < 1e-9
    assert abs(figures["f1"]["value"] - 2 * tp / (n_model + n_gold)) < 1e-9
    for s, side in enumerate(("first", "second")):
        jac = [len(pm[s] & pg[s]) / len(pm[s] | pg[s]) for pm, pg in zip(model, gold) if pm[s] and pg[s]]
        assert figures[f"jaccard_{side}"]["pairs"] == len(jac)
        assert figures[f"jaccard_{side}"]["value"] == (sum(jac) / len(jac) if jac else None)
    assert words["agreement"]["krippendorff_alpha"]["value"] is None  # one coder: no agreement to measure


def test_the_page_of_500_pairs_is_small_and_opens_fast(chromium, tmp_path):  # noqa: F811
    path = write_records(tmp_path / "r.jsonl", corpus(50, 10))
    result = runner.invoke(app, ["validate", "sheet", str(path), "-o", str(tmp_path / "c" / "sheet.csv"),
                                 "--n", "500", "--stratify", "none"])
    assert result.exit_code == 0, result.output
    page_path = tmp_path / "c" / "sheet.coding.html"
    assert page_path.stat().st_size < 5_000_000
    page = page_path.read_text(encoding="utf-8")
    measured = run_page(chromium, tmp_path, page, "return {ready: window.__sppReady, ms: performance.now(), "
                        "progress: document.getElementById('spp-progress').textContent};")
    assert measured["ready"] == 1 and measured["progress"].startswith("0 of 500")
    assert measured["ms"] < 2000, measured
