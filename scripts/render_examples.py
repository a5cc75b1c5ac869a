"""Regenerate the README picture and the example outputs of docs/visualize.md
from the trained pipeline, in one run:

    python scripts/render_examples.py [--model training/contextdep_minilm_cpu/model-tuned]
                                      [--dev corpus/contextdep/dev.spacy]

(``spacy project run render_examples``). It loads the pipeline that
``spacy project run all`` trains, runs it over ContextDeP dev (the gold Docs
of ``python -m spacy_paraphrase convert contextdep .../dev.tsv
corpus/contextdep/dev.spacy --mode majority``), picks three example pairs by
the rule below, draws them with ``spacy_paraphrase.visualize`` (a page, as
``render(docs, page=True)`` makes it, each pair with a note of its role and
its annotators' votes) and writes:

- ``docs/images/render_example.html``: the page;
- ``docs/images/render_example.png``: its screenshot by headless Chromium
  (Debian: ``apt-get install -y chromium``), the README's top picture;
- ``docs/images/render_examples.json``: the three pairs' outputs (pair score,
  threshold, margin, vote share, agreement, decision, spans) with the
  annotators' votes;
- the table between the ``render_examples`` markers in docs/visualize.md.

The rule (fixed before looking at any output; the annotator share of a pair is
k/n, k of its n annotators calling it a paraphrase; the model calls a pair a
paraphrase when its margin = pair score − threshold is >= 0; ties go to the
smaller pair id):

1. a clear paraphrase: of the pairs with annotator share >= 0.8 that the model
   calls a paraphrase, the one with the highest pair score (if the model calls
   none of them a paraphrase: of the pairs with share >= 0.8, the highest pair
   score);
2. a clear non-paraphrase: of the pairs with annotator share 0, the one with
   the lowest pair score (if no pair has share 0: of the pairs with the lowest
   share, the lowest pair score);
3. a borderline pair: of the other pairs, the one with the smallest |margin|.

Bad input (no pipeline, no dev file, no Chromium) ends with a message and
exit status 1, not a traceback.
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = "training/contextdep_minilm_cpu/model-tuned"
DEFAULT_DEV = "corpus/contextdep/dev.spacy"
IMAGES = "docs/images"
DOCS = "docs/visualize.md"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
START_MARK = "<!-- render_examples:start (written by scripts/render_examples.py; do not edit) -->"
END_MARK = "<!-- render_examples:end -->"
ROLES = ("a clear paraphrase", "a clear non-paraphrase", "borderline")
CONVERT = ("python -m spacy_paraphrase convert contextdep ../shared/data/contextdep/dev.tsv "
           "corpus/contextdep/dev.spacy --mode majority")


class ExampleError(Exception):
    """Bad input: reported as one message, exit status 1."""


@dataclass
class Candidate:
    """One dev pair as the rule sees it."""

    pair_id: str
    k: int
    n: int
    pair_score: float
    margin: float
    index: int = 0
    role: str = ""
    fallback: str = ""

    @property
    def share(self) -> float:
        return self.k / self.n

    @property
    def is_paraphrase(self) -> bool:
        return self.margin >= 0


def select_examples(candidates: Sequence[Candidate]) -> List[Candidate]:
    """The three pairs of the rule (module doc), in its order. Needs three
    pairs with annotator votes; raises ExampleError otherwise."""
    pool = [c for c in candidates if c.n > 0]
    if len(pool) < 3:
        raise ExampleError(f"The rule needs at least 3 dev pairs with annotator votes, found {len(pool)}.")
    chosen: List[Candidate] = []

    def pick(items, key, role, fallback=""):
        best = min(items, key=lambda c: (key(c), c.pair_id))
        best.role, best.fallback = role, fallback
        chosen.append(best)

    high = [c for c in pool if c.share >= 0.8]
    called = [c for c in high if c.is_paraphrase]
    if called:
        pick(called, lambda c: -c.pair_score, ROLES[0])
    elif high:
        pick(high, lambda c: -c.pair_score, ROLES[0], "the model calls no pair with share >= 0.8 a paraphrase")
    else:
        raise ExampleError("No dev pair has an annotator share >= 0.8: no clear paraphrase to show.")
    rest = [c for c in pool if c not in chosen]
    zero = [c for c in rest if c.k == 0]
    if zero:
        pick(zero, lambda c: c.pair_score, ROLES[1])
    else:
        low = min(c.share for c in rest)
        pick([c for c in rest if c.share == low], lambda c: c.pair_score, ROLES[1],
             f"no pair has share 0; the lowest share is {low:.2f}")
    rest = [c for c in pool if c not in chosen]
    pick(rest, lambda c: abs(c.margin), ROLES[2])
    return chosen


@dataclass
class Example:
    candidate: Candidate
    record: Dict = field(default_factory=dict)


def find_chromium(given: Optional[str]) -> str:
    if given:
        path = shutil.which(given) or (given if Path(given).is_file() else None)
        if not path:
            raise ExampleError(f"Chromium not found at {given!r}.")
        return path
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    raise ExampleError(
        "No Chromium found (tried " + ", ".join(BROWSERS) + "): the screenshot needs headless "
        "Chromium. Debian/Ubuntu: apt-get install -y chromium; or pass --chromium PATH."
    )


def _chromium(chromium: str, profile: Path, args: List[str], timeout: int = 180) -> subprocess.CompletedProcess:
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
           f"--user-data-dir={profile}", *args]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ExampleError(f"Running Chromium ({chromium}) failed: {err}") from None


def screenshot(chromium: str, html_path: Path, png_path: Path, width: int) -> int:
    """Screenshot the page at ``width`` px, as tall as its content; returns the height."""
    html_path, png_path = html_path.resolve(), png_path.resolve()  # file URIs need absolute paths
    measure = (
        "<script>document.addEventListener('DOMContentLoaded',function(){var p=document.createElement('pre');"
        "p.id='spp-height';p.textContent=String(Math.ceil(document.documentElement.scrollHeight));"
        "document.body.appendChild(p);});</script>"
    )
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.html"
        probe.write_text(html_path.read_text(encoding="utf-8").replace("</head>", measure + "</head>"), "utf-8")
        proc = _chromium(chromium, Path(tmp) / "profile", [f"--window-size={width},900", "--dump-dom",
                                                            probe.as_uri()])
        match = re.search(r'<pre id="spp-height">(\d+)</pre>', proc.stdout)
        if not match:
            raise ExampleError(f"Chromium did not load the page (exit {proc.returncode}): {proc.stderr[-800:]}")
        height = int(match.group(1)) + 8
        png_path.parent.mkdir(parents=True, exist_ok=True)
        proc = _chromium(chromium, Path(tmp) / "profile",
                         [f"--screenshot={png_path}", f"--window-size={width},{height}", html_path.as_uri()])
        if proc.returncode != 0 or not png_path.is_file():
            raise ExampleError(f"Chromium did not write {png_path} (exit {proc.returncode}): {proc.stderr[-800:]}")
    return height


def _spans(doc) -> Dict[str, List[str]]:
    from spacy_paraphrase.paraphrase_spans.readout import SOURCE_LABEL

    group = doc.spans["paraphrase"]
    return {"first": [s.text for s in group if s.label_ == SOURCE_LABEL],
            "second": [s.text for s in group if s.label_ != SOURCE_LABEL]}


def run(model: Path, dev: Path, out_dir: Path, docs_path: Optional[Path], chromium: Optional[str],
        width: int, screenshot_png: bool = True) -> List[Example]:
    """Everything the module doc lists; returns the three examples."""
    if not model.is_dir():
        raise ExampleError(
            f"No pipeline at {model}: train it first (python -m spacy project run all), or pass --model."
        )
    if not dev.is_file():
        raise ExampleError(f"No dev file at {dev}: make it with\n  {CONVERT}\nor pass --dev.")
    browser = find_chromium(chromium) if screenshot_png else None
    if docs_path is not None:
        check_docs_markers(docs_path)
    import spacy

    from spacy_paraphrase.corpus import read_pair_docs
    from spacy_paraphrase.pair_doc import PairDocError, copy_pair_doc
    from spacy_paraphrase.paraphrase_spans.vote_share import annotator_agreement
    from spacy_paraphrase.visualize.views import pair_view_from_doc
    from spacy_paraphrase.visualize.markup import render_views

    try:
        nlp = spacy.load(model)
    except Exception as err:  # a folder that is not a pipeline: say so
        raise ExampleError(f"Cannot load the pipeline at {model}: {err}") from None
    if "paraphrase_spans" not in nlp.pipe_names:
        raise ExampleError(f"The pipeline at {model} has no paraphrase_spans component ({nlp.pipe_names}).")
    cfg = nlp.get_pipe("paraphrase_spans").cfg
    try:
        gold = read_pair_docs(dev, nlp.vocab)
        fresh = [copy_pair_doc(doc, nlp.vocab) for doc in gold]
    except (ValueError, FileNotFoundError, PairDocError) as err:
        raise ExampleError(f"{dev}: {err}") from None
    predicted = list(nlp.pipe(fresh, batch_size=8))
    candidates = []
    for i, (ref, doc) in enumerate(zip(gold, predicted)):
        votes = ref.spans["paraphrase"].attrs.get("votes") if "paraphrase" in ref.spans else None
        if votes is None:
            continue
        attrs = doc.spans["paraphrase"].attrs
        pair_id = ref.spans["turns"].attrs.get("id", f"pair {i + 1}")
        candidates.append(Candidate(str(pair_id), int(votes[0]), int(votes[1]), float(attrs["pair_score"]),
                                    float(attrs["margin"]), index=i))
    if not candidates:
        raise ExampleError(f"{dev}: no Doc has annotator votes (attrs['votes']); convert ContextDeP dev with\n  {CONVERT}")
    chosen = select_examples(candidates)

    examples, views = [], []
    for c in chosen:
        doc = predicted[c.index]
        attrs = doc.spans["paraphrase"].attrs
        observed = annotator_agreement(c.k, c.n)
        record = {
            "role": c.role,
            "pair_id": c.pair_id,
            "annotators": {"paraphrase": c.k, "of": c.n, "share": round(c.share, 4),
                           "agreement": None if observed is None else round(observed, 4)},
            "pair_score": round(float(attrs["pair_score"]), 4),
            "threshold": round(float(attrs["pair_score"]) - float(attrs["margin"]), 4),
            "margin": round(float(attrs["margin"]), 4),
            "is_paraphrase": c.is_paraphrase,
            "vote_share": round(float(attrs["vote_share"]), 4),
            "agreement": round(float(attrs["agreement"]), 4),
            "spans": _spans(doc),
        }
        if c.fallback:
            record["rule_fallback"] = c.fallback
        examples.append(Example(c, record))
        view = pair_view_from_doc(doc, c.index)
        agree = "" if observed is None else f", agreement {observed:.2f}"
        view.notes.insert(0, f"example: {c.role} — annotators: {c.k} of {c.n} said paraphrase "
                             f"(share {c.share:.2f}{agree})")
        views.append(view)

    out_dir.mkdir(parents=True, exist_ok=True)
    html_path = out_dir / "render_example.html"
    html = render_views(views, page=True, title="spacy-paraphrase: three ContextDeP dev pairs")
    # The page's element ids carry a random prefix (unique per render call);
    # a fixed one keeps the committed page the same from run to run.
    uid = re.search(r'<div class="spp" id="spp-([0-9a-f]+)"', html).group(1)
    html = html.replace(f"spp-{uid}", "spp-examples")
    html_path.write_text(html, encoding="utf-8")
    summary = {
        "model": _rel(model),
        "dev": _rel(dev),
        "threshold": _round(cfg.get("threshold")),
        "highlight_threshold": _round(cfg.get("highlight_threshold")),
        "highlight_scale": cfg.get("highlight_scale"),
        "decoding": {k: cfg.get(k) for k in ("max_gap", "min_span_length", "max_spans", "trim_edges")},
        "vote_share_map": cfg.get("vote_share_map") is not None,
        "n_pairs": len(candidates),
        "rule": __doc__.split("The rule")[1].split("Bad input")[0].strip(),
        "examples": [e.record for e in examples],
    }
    if docs_path is not None:
        check_docs_markers(docs_path)
    if browser is not None:
        screenshot(browser, html_path, out_dir / "render_example.png", width)
    (out_dir / "render_examples.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n",
                                                  encoding="utf-8")
    if docs_path is not None:
        write_docs_block(docs_path, summary)
    return examples


def _round(value):
    return round(value, 6) if isinstance(value, float) else value


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _digits(a: float, b: float) -> int:
    """Decimals that show ``a`` and ``b`` apart (2 to 4), as the picture's head line does."""
    for d in (2, 3, 4):
        if f"{a:.{d}f}" != f"{b:.{d}f}":
            return d
    return 4


def _value(v) -> str:
    return json.dumps(round(v, 4) if isinstance(v, float) else v)


def docs_block(summary: Dict) -> str:
    """The markdown table of the examples (between the markers in docs/visualize.md)."""
    decoding = ", ".join(f"{k} {_value(v)}" for k, v in summary["decoding"].items())
    share_note = ("a fitted vote-share map" if summary["vote_share_map"]
                  else "no vote-share map (vote share = the pair score)")
    lines = [
        START_MARK,
        f"Pipeline `{summary['model']}` on `{summary['dev']}` ({summary['n_pairs']} pairs with votes): "
        f"threshold {_value(summary['threshold'])}, highlight threshold {_value(summary['highlight_threshold'])} "
        f"({summary['highlight_scale']}), decoding {decoding}, {share_note}.",
        "",
        "| example | pair | annotators (share, agreement) | pair score vs threshold | margin | vote share | "
        "agreement | spans (first turn / second turn) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in summary["examples"]:
        a = r["annotators"]
        agree = "" if a["agreement"] is None else f", {a['agreement']:.2f}"
        sign = "≥" if r["is_paraphrase"] else "<"
        call = "paraphrase" if r["is_paraphrase"] else "not a paraphrase"
        spans = " / ".join("; ".join(f"“{s}”" for s in r["spans"][side]) or "none" for side in ("first", "second"))
        role = r["role"] + (f" ({r['rule_fallback']})" if r.get("rule_fallback") else "")
        d = _digits(r["pair_score"], r["threshold"])
        lines.append(
            f"| {_cell(role)} | {_cell(r['pair_id'])} | {a['paraphrase']} of {a['of']} ({a['share']:.2f}{agree}) | "
            f"{r['pair_score']:.{d}f} {sign} {r['threshold']:.{d}f} → {call} | {r['margin']:+.{d}f} | "
            f"{r['vote_share']:.2f} | {r['agreement']:.2f} | {_cell(spans)} |"
        )
    lines.append(END_MARK)
    return "\n".join(lines)


def check_docs_markers(path: Path) -> str:
    """The text of ``path``; ExampleError unless it has the markers, in order."""
    if not path.is_file():
        raise ExampleError(f"No docs file at {path} (pass --docs none to skip it).")
    text = path.read_text(encoding="utf-8")
    start, end = text.find(START_MARK), text.find(END_MARK)
    if start < 0 or end < start:
        raise ExampleError(f"{path} has no render_examples markers ({START_MARK!r} ... {END_MARK!r}).")
    return text


def write_docs_block(path: Path, summary: Dict) -> None:
    """Replace the text between the markers in ``path`` (ExampleError without them)."""
    text = check_docs_markers(path)
    start, end = text.find(START_MARK), text.find(END_MARK)
    path.write_text(text[:start] + docs_block(summary) + text[end + len(END_MARK):], encoding="utf-8")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"the trained pipeline (default {DEFAULT_MODEL})")
    parser.add_argument("--dev", default=DEFAULT_DEV, help=f"ContextDeP dev, majority mode (default {DEFAULT_DEV})")
    parser.add_argument("--out-dir", default=IMAGES, help=f"where the page, PNG and JSON go (default {IMAGES})")
    parser.add_argument("--docs", default=DOCS, help=f"the markdown file whose example block is rewritten "
                                                     f"(default {DOCS}; 'none' to skip)")
    parser.add_argument("--chromium", default=None, help="the Chromium binary (default: found on PATH)")
    parser.add_argument("--width", type=int, default=1200, help="screenshot width in px (default 1200)")
    args = parser.parse_args(argv)
    if args.width < 320:
        parser.error("--width must be at least 320")
    docs = None if args.docs == "none" else Path(args.docs)
    try:
        examples = run(Path(args.model), Path(args.dev), Path(args.out_dir), docs, args.chromium, args.width)
    except ExampleError as err:
        print(f"render_examples: {err}", file=sys.stderr)
        return 1
    for e in examples:
        r = e.record
        print(f"{r['role']}: {r['pair_id']} (annotators {r['annotators']['paraphrase']}/{r['annotators']['of']}, "
              f"pair score {r['pair_score']:.2f}, margin {r['margin']:+.2f})")
    print(f"Wrote {Path(args.out_dir) / 'render_example.png'}, render_example.html, render_examples.json"
          + ("" if docs is None else f" and the examples in {docs}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
