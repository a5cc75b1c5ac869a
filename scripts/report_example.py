"""Regenerate the example report of docs/report.md from a real run on
ContextDeP dev:

    python scripts/report_example.py [--model PIPELINE] [--dev ../shared/data/contextdep/dev.tsv]

1. writes ContextDeP dev as a ConvoKit corpus (one conversation per pair:
   the guest's utterance, id = the pair's QID, then the host's; conversation
   meta ``program`` = the broadcaster, CNN or NPR; speaker meta ``role``);
2. annotates it with PIPELINE (``annotate ... --output-format convokit
   --with-probs``); without ``--model``, with the lexical baseline
   (``baseline lexical``), which needs no training;
3. writes one coding sheet per dev annotator (their votes as labels) and
   scores them (``validate score --design none --tie not-paraphrase``):
   dev's annotators as the human coders, every pair coded, a tie as "no";
4. writes the report (``report --by conversation.program --validation``),
   its screenshot by headless Chromium
   (``docs/images/report_example.png``) and the key numbers between the
   ``report_example`` markers of docs/report.md.

Everything else goes to ``--work`` (default ``training/report_example``, not
committed). Bad input (no dev file, no Chromium, a command that fails) ends
with a message and exit status 1.
"""
import argparse
import csv
import json
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
START_MARK = "<!-- report_example:start (written by scripts/report_example.py; do not edit) -->"
END_MARK = "<!-- report_example:end -->"


class ExampleError(Exception):
    pass


def run(*args: str) -> None:
    cmd = [sys.executable, "-m", "spacy_paraphrase", *args]
    shown = [a for a in args if not a.endswith(".csv")]
    if len(shown) < len(args):
        shown.insert(2, "SHEETS/*.csv")
    print("$ python -m spacy_paraphrase " + " ".join(shown), flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ExampleError(f"{' '.join(args[:2])} failed: {(proc.stdout + proc.stderr)[-1500:]}")


def read_dev(dev: Path):
    if not dev.is_file():
        raise ExampleError(f"{dev}: not found (ContextDeP dev.tsv, see ../shared/data/README.md)")
    pairs, votes = {}, defaultdict(dict)
    with dev.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            pairs.setdefault(row["QID"], (row["Guest Tokens"], row["Host Tokens"]))
            votes[row["Annotator"]][row["QID"]] = int(row["Is Paraphrase"])
    return pairs, votes


def write_corpus(pairs, directory: Path) -> None:
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    with (directory / "utterances.jsonl").open("w", encoding="utf-8") as f:
        for qid, (guest, host) in pairs.items():
            for i, (speaker, text) in enumerate((("GUEST", guest), ("HOST", host))):
                f.write(json.dumps({"id": qid if i == 0 else f"{qid}-host", "conversation_id": qid,
                                    "speaker": f"{qid.rsplit('-', 1)[0]}-{speaker}", "reply-to": None if i == 0 else qid,
                                    "timestamp": None, "text": text, "meta": {}, "vectors": []}) + "\n")
    (directory / "conversations.json").write_text(json.dumps(
        {qid: {"meta": {"program": qid.split("-")[0]}, "vectors": []} for qid in pairs}))
    (directory / "speakers.json").write_text(json.dumps(
        {f"{qid.rsplit('-', 1)[0]}-{s}": {"meta": {"role": s.lower()}, "vectors": []}
         for qid in pairs for s in ("GUEST", "HOST")}))
    (directory / "index.json").write_text(json.dumps({
        "utterances-index": {}, "speakers-index": {"role": ["<class 'str'>"]},
        "conversations-index": {"program": ["<class 'str'>"]}, "overall-index": {}, "version": 1, "vectors": []}))


def write_sheets(votes, directory: Path) -> list:
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    paths = []
    for annotator, labels in sorted(votes.items()):
        paths.append(directory / f"{annotator}.csv")
        paths[-1].write_text("pair_id,label\n" + "".join(f"{q},{y}\n" for q, y in labels.items()), encoding="utf-8")
    return paths


def screenshot(html: Path, png: Path, chromium: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                               "--hide-scrollbars", f"--user-data-dir={tmp}", "--window-size=1000,3000",
                               f"--screenshot={png}", html.resolve().as_uri()], capture_output=True, text=True,
                              timeout=180)
    if not png.is_file():
        raise ExampleError(f"Chromium did not write {png}: {proc.stderr[-800:]}")


def numbers_table(summary: dict, scores: dict, model: str) -> str:
    def ci(entry):
        return entry.get("note") or "–" if entry.get("low") is None else f"{entry['low']:.3f} – {entry['high']:.3f}"
    a = scores["agreement"]
    rows = [("pipeline", model, ""), ("pairs (conversations)", f"{summary['pairs']} ({summary['conversations']})", ""),
            ("paraphrase rate, model", f"{summary['paraphrase rate']:.3f}",
             f"{summary['rate 95% low']:.3f} – {summary['rate 95% high']:.3f}"),
            ("coders (labels)", f"{len(scores['coders'])} ({scores['labels']})", ""),
            ("Krippendorff's alpha, coders", f"{a['humans']['krippendorff_alpha']:.3f}", ""),
            ("Cohen's kappa, model vs majority", f"{a['model_vs_majority']['cohen_kappa']:.3f}", "")]
    for key in ("precision", "recall", "f1"):
        entry = scores["model_vs_majority"][key]
        rows.append((f"model {key}", f"{entry['value']:.3f}", ci(entry)))
    for key, name in (("design_based", "rate, coders' majority"), ("rogan_gladen", "rate, Rogan-Gladen corrected")):
        entry = scores["rate"].get(key)
        if entry is None:  # not reported where it cannot differ from the coders' rate
            continue
        rows.append((name, "–" if entry["value"] is None else f"{entry['value']:.3f}", ci(entry)))
    return "\n".join(["| figure | value | 95% interval |", "|---|---|---|"] + [f"| {a} | {b} | {c} |" for a, b, c in rows])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="pipeline to annotate with (default: the lexical baseline)")
    parser.add_argument("--dev", default=str(ROOT.parent / "shared" / "data" / "contextdep" / "dev.tsv"))
    parser.add_argument("--work", default="training/report_example")
    parser.add_argument("--chromium", default=None)
    args = parser.parse_args(argv)
    try:
        chromium = args.chromium or next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
        if not chromium:
            raise ExampleError("No Chromium found: apt-get install -y chromium, or pass --chromium PATH")
        work = Path(args.work)  # relative to the repository (the commands run there)
        if work.is_absolute():
            raise ExampleError("--work must be a path inside the repository, relative to it")
        pairs, votes = read_dev(Path(args.dev))
        write_corpus(pairs, ROOT / work / "contextdep-dev")
        model = args.model
        if model is None:
            model = str(work / "lexical")  # relative: the report shows it so
            if (ROOT / model).exists():
                shutil.rmtree(ROOT / model)
            run("baseline", "lexical", model)
        annotated = work / "annotated"
        if (ROOT / annotated).exists():
            shutil.rmtree(ROOT / annotated)
        run("annotate", model, str(work / "contextdep-dev"), str(annotated), "--output-format", "convokit",
            "--with-probs")
        sheets = [p.relative_to(ROOT) for p in write_sheets(votes, ROOT / work / "sheets")]
        # every dev pair is coded (a census: no design); a tie counts as "no", as in ContextDeP's gold
        run("validate", "score", *map(str, sheets), "-r", str(annotated), "--design", "none",
            "--tie", "not-paraphrase", "-o", str(work / "scores.json"))
        run("report", str(annotated), "-o", str(work / "report"), "--by", "conversation.program",
            "--validation", str(work / "scores.json"))
        work = ROOT / work
        screenshot(work / "report" / "index.html", ROOT / "docs" / "images" / "report_example.png", chromium)
        summary = {row["key"]: row["value"] for row in csv.DictReader((work / "report" / "summary.csv").open())}
        summary = {k: (float(v) if k.startswith(("paraphrase rate", "rate 95%")) else v) for k, v in summary.items()}
        scores = json.loads((work / "scores.json").read_text())
        name = "the lexical baseline (baseline lexical)" if args.model is None else args.model
        docs = ROOT / "docs" / "report.md"
        text = docs.read_text(encoding="utf-8")
        start, end = text.index(START_MARK) + len(START_MARK), text.index(END_MARK)
        docs.write_text(text[:start] + "\n" + numbers_table(summary, scores, name) + "\n" + text[end:], encoding="utf-8")
    except (ExampleError, OSError, ValueError, KeyError) as err:
        print(f"report_example: {err}", file=sys.stderr)
        return 1
    print("wrote docs/images/report_example.png and the numbers in docs/report.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
