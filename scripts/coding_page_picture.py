"""The picture of the coding page in docs/report.md ("Validate your
highlights"), from a real run: ``validate sheet`` on ContextDeP pairs (the
records of ``validation_example.py``), the page opened in headless Chromium,
one pair coded as its first annotator who said "paraphrase" coded it (yes,
the words in both turns, clicked), and a screenshot.

    python scripts/coding_page_picture.py [--data ../shared/data/contextdep] [--out docs/images/coding_page.png]

Everything else goes to ``--work`` (default training/coding_page_picture, not committed)."""
import argparse
import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from validation_example import ROOT, cli, read_pairs, records  # noqa: E402

HARNESS = """<!DOCTYPE html><html><body style="margin:0"><iframe id="f" src="coding/sheet.coding.html"
style="border:0;width:100%;height:100vh"></iframe><script>
document.getElementById('f').onload = function(){
  var d = this.contentWindow.document;
  function key(k){ d.dispatchEvent(new KeyboardEvent('keydown', {key: k, bubbles: true})); }
  function click(el){ ['mousedown', 'mouseup'].forEach(function(t){
    el.dispatchEvent(new MouseEvent(t, {bubbles: true, cancelable: true})); }); }
  d.querySelector('details').open = false;
  for (var i = 0; i < POSITION; i++) key('j');
  key('y');
  [[1, FIRST], [2, SECOND]].forEach(function(side){ side[1].forEach(function(j){
    click(d.querySelectorAll('#spp-t' + side[0] + ' .w')[j]); }); });
  var name = d.getElementById('spp-coder'); name.value = 'Coder A'; name.dispatchEvent(new Event('input'));
};
</script></body></html>"""


def annotations(data: Path):
    """QID -> the highlights (guest, host word indices) of its first annotator who said paraphrase."""
    out = {}
    for name in ("train.tsv", "dev.tsv"):
        with (data / name).open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                if row["Is Paraphrase"] == "1" and row["QID"] not in out:
                    out[row["QID"]] = tuple([i for i, v in enumerate(json.loads(row[c])) if v]
                                            for c in ("Guest Highlights", "Host Highlights"))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "contextdep"))
    parser.add_argument("--work", default="training/coding_page_picture")
    parser.add_argument("--out", default="docs/images/coding_page.png")
    args = parser.parse_args(argv)
    chromium = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    if chromium is None:
        sys.exit("no Chromium found (Debian: apt-get install -y chromium)")
    work = (ROOT / args.work).resolve()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    pairs, votes = read_pairs(Path(args.data))
    path = work / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records(pairs, votes)), encoding="utf-8")
    cli("validate", "sheet", str(path), "-o", str(work / "coding" / "sheet.csv"), "--n", "40", "--stratify", "none")
    with (work / "coding" / "sheet.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    marked = annotations(Path(args.data))
    # a short pair with single-spaced turns (ContextDeP's word indices are those of text.split(" "))
    position, row = next((i, r) for i, r in enumerate(rows) if r["pair_id"] in marked
                         and all(r[t].split(" ") == r[t].split() for t in ("first_text", "second_text"))
                         and len(r["first_text"]) + len(r["second_text"]) < 600
                         and all(marked[r["pair_id"]]))
    first, second = marked[row["pair_id"]]
    page = HARNESS.replace("POSITION", str(position)).replace("FIRST", json.dumps(first)).replace(
        "SECOND", json.dumps(second))
    (work / "picture.html").write_text(page, encoding="utf-8")
    out = (ROOT / args.out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                    f"--user-data-dir={work / 'profile'}", "--allow-file-access-from-files",
                    "--virtual-time-budget=5000", "--window-size=1000,720", f"--screenshot={out}",
                    (work / "picture.html").as_uri()], check=True, capture_output=True, timeout=120)
    print(f"{row['pair_id']} (pair {position + 1} of the sheet) coded as its annotator did -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
