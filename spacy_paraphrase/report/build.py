"""``report``: annotate records -> ``DIR/index.html`` (summary, rates with
cluster-bootstrap intervals per group and over time, pair scores, top
phrases, the validation section) + ``DIR/pairs.html`` (example pairs, as
``visualize`` draws them) + ``DIR/*.csv`` (every table behind the page).
docs/report.md says what each part means."""
import csv
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from ..annotate.paths import same_file
from ..saving import atomic_write
from ..visualize.markup import render_views
from ..visualize.record_views import pair_view_from_record
from . import figures
from .dialogs import join_dialogs, run_source, speaker_roles
from .fields import FieldError, all_fields, group_values, time_values
from .page import count, figure, fmt, interval, link, page, paragraph, section, table
from .phrases import top_phrases
from ..annotate.record_format import CONVERSATION_ID, MARGIN, PAIR_ID, SCORE, WORDS, RecordsFileError, record_decision
from .records import Records, model_label, read_records_and_runs
from .statistics import cluster_bootstrap, group_rates, score_histogram
from .validation_section import validation_section

N_EXAMPLES = 10  # highest-scoring and borderline pairs on the pairs page


class ReportError(ValueError):
    """Bad input for a report (one line)."""


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_") or "field"


def write_csv(path: Path, rows: Sequence[Dict[str, Any]], columns: Sequence[str]) -> None:
    rows = list(rows)

    def write(tmp: Path) -> None:
        with tmp.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)
    atomic_write(path, write)


RATE_COLUMNS = ("group", "pairs", "paraphrases", "conversations", "rate", "low", "high", "note")


def _check_output(inputs: Sequence[Path], out_dir: Path) -> None:
    for path in inputs:
        if same_file(path, out_dir) or Path(out_dir).resolve() in Path(path).resolve().parents:
            raise ReportError(f"-o {out_dir} is (or holds) the input {path}: write the report elsewhere")
        if Path(path).is_file() and same_file(path, Path(out_dir) / "index.html"):
            raise ReportError(f"{out_dir}/index.html is the input {path}")


def load_validation(path: Optional[Path], data: Records) -> Optional[Dict[str, Any]]:
    if path is None:
        return None
    try:
        scores = json.loads(Path(path).read_text(encoding="utf-8"))
        threshold = scores["records"]["threshold"]
        scores["agreement"], scores["model_vs_majority"], scores["rate"]["design_based"]
        scores["ties"]["rule"], scores["estimator"]["used"]
    except OSError as err:
        raise ReportError(f"--validation {path}: {err.strerror}") from None
    except (ValueError, KeyError, TypeError):
        raise ReportError(f"--validation {path}: not a scores file written by this version's 'validate score' "
                          "(score the sheets again)") from None
    if threshold is not None and data.threshold is not None and abs(threshold - data.threshold) > 1e-4:
        raise ReportError(f"--validation {path} scored records of threshold {threshold:g}, these records have "
                          f"{data.threshold:g}: validate the same records you report")
    return scores


EXAMPLE_LISTS = ("Examples of the phrases above", "Highest scores",
                 "Most borderline (smallest |score − threshold|)")


def _examples(data: Records, phrases: List[Dict[str, Any]],
              inputs: Sequence[Path]) -> "tuple[str, Dict[str, str], Dict[str, List[str]]]":
    """(DIR/pairs.html: example pairs, each top phrase's, the highest
    scoring, the most borderline, with their per-word probabilities read
    again; pair id -> its link; EXAMPLE_LISTS' name -> its pair ids)."""
    score, margin, pair_id = SCORE.key, MARGIN.key, PAIR_ID.key
    scored = [r for r in data.records if isinstance(r.get(score), (int, float))]
    by_id = data.by_id()
    margins = [r for r in scored if isinstance(r.get(margin), (int, float))]
    lists = {EXAMPLE_LISTS[0]: [row["example_pair_id"] for row in phrases],
             EXAMPLE_LISTS[1]: [str(r[pair_id]) for r in sorted(scored, key=lambda r: -r[score])[:N_EXAMPLES]],
             EXAMPLE_LISTS[2]: [str(r[pair_id]) for r in sorted(margins, key=lambda r: abs(r[margin]))[:N_EXAMPLES]]}
    chosen: Dict[str, Dict[str, Any]] = {}
    for ids in lists.values():
        for pid in ids:
            chosen.setdefault(pid, by_id[pid])
    if any(WORDS.key not in r for r in chosen.values()):
        with_words = read_records_and_runs(inputs, words_of=set(chosen)).by_id()
        chosen = {pid: with_words[pid] for pid in chosen}
    views = []
    for i, record in enumerate(chosen.values()):
        try:
            views.append(pair_view_from_record(record, i))
        except ValueError as err:
            raise ReportError(str(err)) from None
    html = render_views(views, page=True, title="Example pairs of the report")
    html = re.sub(r"(<body[^>]*>)", r'\1<p><a href="index.html">&#8592; the report</a></p>', html, count=1)
    uid = re.search(r'<div class="spp" id="spp-([0-9a-f]+)"', html).group(1)
    return html, {pair_id: f"pairs.html#spp-{uid}-{n}" for n, pair_id in enumerate(chosen)}, lists


def _drawn(groups: int, csv_name: str) -> str:
    if groups <= figures.MAX_GROUPS:
        return f"{count(groups, 'group')}, all drawn and in {csv_name}."
    return f"{groups} groups; the {figures.MAX_GROUPS} with most pairs drawn, all in {csv_name}."


def _summary_rows(data: Records, overall, scoreless: int) -> List[Dict[str, Any]]:
    return [{"key": k, "value": v} for k, v in [
        ("pairs", len(data.records)), ("pairs without a score", scoreless),
        ("paraphrases", overall.paraphrases), ("conversations", overall.conversations),
        ("skipped (errors file)", data.skipped), ("malformed (errors file)", data.malformed),
        ("model", model_label(data.model)), ("model path", data.model or ""),
        ("threshold", data.threshold), ("paraphrase rate", overall.rate), ("rate 95% low", overall.low),
        ("rate 95% high", overall.high), ("records", "; ".join(data.sources))]]


def make_report(inputs: Sequence[Path], out_dir: Path, *, by: Sequence[str] = (), by_time: Sequence[str] = (),
                validation: Optional[Path] = None, lang: str = "en", n_phrases: int = 25, seed: int = 0,
                n_boot: int = 2000, dialogs: Optional[Path] = None,
                role_patterns: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """Write the report (module doc); returns the summary rows and the files.
    ``dialogs``, ``role_patterns``: more fields (report/dialogs.py).
    ReportError for bad input, before anything is written."""
    inputs = [Path(p) for p in inputs]
    _check_output(inputs, Path(out_dir))
    try:
        data = read_records_and_runs(inputs, words_of=set())  # per-word probabilities: only the example pairs' (below)
        if dialogs is not None:
            join_dialogs(data, Path(dialogs), run_source(inputs))
        fields = all_fields(data, speaker_roles(role_patterns) if role_patterns else None)
        groups = {name: group_values(name, fields) for name in by}
        periods = {opt: time_values(opt, fields) for opt in by_time}
    except (RecordsFileError, FieldError) as err:
        raise ReportError(str(err)) from None
    except ValueError as err:  # a bad --role-pattern
        raise ReportError(f"--role-pattern: {err}") from None
    scores_json = load_validation(validation, data)
    phrases, lemmatised = top_phrases(data.records, lang, n_phrases)
    pairs_html, links, example_lists = _examples(data, phrases, inputs)  # a record the page cannot draw stops here
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(out_dir / "pairs.html", lambda tmp: tmp.write_text(pairs_html, encoding="utf-8"))
    keep = [i for i, r in enumerate(data.records) if isinstance(r.get(SCORE.key), (int, float))]
    decisions = [bool(record_decision(data.records[i]).is_paraphrase) for i in keep]
    clusters = [str(data.records[i].get(CONVERSATION_ID.key) or data.records[i][PAIR_ID.key]) for i in keep]
    overall = cluster_bootstrap(decisions, clusters, seed=seed, n_boot=n_boot)
    summary = _summary_rows(data, overall, len(data.records) - len(keep))
    write_csv(out_dir / "summary.csv", summary, ("key", "value"))
    files = ["summary.csv"]
    sections = [section("Corpus", table(["", ""], [(r["key"], r["value"]) for r in summary]), paragraph(
        f"Paraphrase rate {fmt(overall.rate)}, 95% interval {interval(overall.as_dict())} (bootstrap over "
        f"{count(overall.conversations, 'conversation')}: whole conversations are resampled)."), anchor="corpus")]
    if scores_json is not None:
        sections.append(validation_section(scores_json, validation))
    for name, values in groups.items():
        rows = group_rates(decisions, clusters, [values[i] for i in keep], seed=seed, n_boot=n_boot)
        files.append(f"by_{slug(name)}.csv")
        write_csv(out_dir / files[-1], rows, RATE_COLUMNS)
        svg = figures.rate_by_group(rows, f"Paraphrase rate by {name}", overall.rate)
        sections.append(section(f"By {name}", figure(svg, _drawn(len(rows), files[-1]), f"by:{name}"),
                                anchor=f"by-{slug(name)}"))
    for option, (name, values, unreadable) in periods.items():
        rows = group_rates(decisions, clusters, [values[i] for i in keep], seed=seed, n_boot=n_boot)
        files.append(f"time_{slug(option)}.csv")
        write_csv(out_dir / files[-1], rows, RATE_COLUMNS)
        svg = figures.rate_over_time(rows, f"Paraphrase rate over time ({option})")
        note = f" {unreadable} records have a {name} that is not a date (left out)." if unreadable else ""
        sections.append(section(f"Over time: {option}", figure(svg, f"{count(len(rows), 'period')}, in {files[-1]}.{note}",
                                                               f"time:{option}"), anchor=f"time-{slug(option)}"))
    bins = score_histogram([data.records[i][SCORE.key] for i in keep])
    files.append("scores.csv")
    write_csv(out_dir / "scores.csv", bins, ("low", "high", "pairs"))
    sections.append(section("Pair scores", figure(figures.score_distribution(bins, data.threshold),
                                                  "Pairs per score bin; a pair is a paraphrase when its score "
                                                  "reaches the threshold (red line).", "scores"), anchor="scores"))
    files += ["phrases.csv", "pairs.html"]
    write_csv(out_dir / "phrases.csv", phrases, ("phrase", "count", "pairs", "example_pair_id", "example_text"))
    how = "lower-cased and lemmatised (spaCy lookup lemmatizer)" if lemmatised else \
        f"lower-cased (no lookup lemmas for language {lang!r})"
    sections.append(section("Phrases picked up (second turn)", paragraph(
        f"The content words of the PARAPHRASE spans of the pairs called paraphrases ({how}; stop words and "
        "punctuation dropped): every run of one to three of them, counted once per span; a run found only "
        "inside a longer listed one is left out. Most pairs first."),
        table(["phrase", "spans", "pairs", "example"], [
            (p["phrase"], p["count"], p["pairs"], link(links[p["example_pair_id"]], p["example_text"]))
            for p in phrases], numeric=(False, True, True)) if phrases else paragraph("No highlighted phrases."),
        anchor="phrases"))
    by_id = data.by_id()
    example_parts = [paragraph("Drawn as the visualize command draws them, in three lists (a pair may be in "
                               "more than one).")]
    for name, ids in example_lists.items():
        example_parts += [paragraph(f"{name} ({len(ids)})"), table(["pair", "score", "decision"], [
            (link(links[pid], pid), by_id[pid].get(SCORE.key),
             "paraphrase" if record_decision(by_id[pid]).is_paraphrase else "no")
            for pid in ids], numeric=(False, True)) if ids else paragraph("none")]
    sections.append(section("Example pairs", *example_parts, anchor="examples"))
    html = page("Paraphrase report", sections, "Written by python -m spacy_paraphrase report; the tables behind "
                "every figure are the CSV files beside this page.")
    atomic_write(out_dir / "index.html", lambda tmp: tmp.write_text(html, encoding="utf-8"))
    files.insert(0, "index.html")
    return {"summary": {r["key"]: r["value"] for r in summary}, "files": files}
