"""Summarize a seed study: the HF reference and our recipes over seeds.

Reads a work directory written by ``benchmarks/run_seed_study.sh`` (one folder per
run: ``ref_s<seed>/metrics/hf_reference_seed<seed>.json`` from
``python -m benchmarks.run_hf_reference`` and ``<name>_s<seed>/metrics/modes_comparison.json``
from ``python -m benchmarks.run_compare_modes``), or the JSON this script wrote before, and
prints / writes per system and threshold view (0.5 / 0.5, cross-tuned, tuned on
dev) the mean and sd over seeds of pair accuracy, pair macro-F1 and both
Jaccards, plus the check of the quality target: which systems reach the
reference's mean on accuracy and both Jaccards.

    python -m benchmarks.table_seed_study WORK_DIR --output benchmarks/results/seed_study_gpu.json
    python -m benchmarks.table_seed_study benchmarks/results/seed_study_gpu.json

Several sources are merged (a work directory, a JSON this script wrote, a
``metrics/modes_comparison.json`` from ``python -m benchmarks.run_compare_modes``), so runs
collected one at a time join a stored study; a later source's run replaces an
earlier one of the same system and seed. ``--rename OLD:SEEDS=NEW`` renames
only some seeds (``soft_x:5,6,7,8,9=soft_x_fresh``: seeds held out from a
selection, reported apart).

``--against SYSTEM --margin-se K`` also judges every other system against
SYSTEM instead of the reference: ahead only where its cross-tuned mean beats
SYSTEM's on accuracy and both Jaccards by more than K standard errors of the
difference (the rule of a backbone or transfer study, written before its runs)::

    python -m benchmarks.table_seed_study benchmarks/results/seed_study_cpu.json \
        benchmarks/results/backbones/contextdep_mpnet.json --against soft_tm_fresh:turn_max --margin-se 2
"""
import argparse
import glob
import json
import statistics
from pathlib import Path

NAME = "paraphrase_spans"
METRICS = ("pair_acc", "pair_macro_f", "jaccard_first", "jaccard_second")
TARGET = ("pair_acc", "jaccard_first", "jaccard_second")
VIEWS = (("default", "0.5 / 0.5"), ("cross_tuned", "cross-tuned"), ("tuned_on_dev", "tuned on dev"))
REFERENCE = "HF reference"


def _pick(scores):
    return {m: scores[f"{NAME}_{m}"] for m in METRICS}


def collect(work: Path):
    """One row per (system, seed): {system, seed, default, cross_tuned, tuned_on_dev}."""
    rows = []
    for path in sorted(glob.glob(str(work / "*" / "metrics" / "hf_reference_seed*.json"))):
        result = json.loads(Path(path).read_text())
        for label in ("last", "best"):
            part = result[label]
            system = REFERENCE if label == "last" else f"{REFERENCE}@best epoch"
            rows.append({"system": system, "seed": result["seed"], "epoch": part["epoch"],
                         **{view: _pick(part[view]) for view, _ in VIEWS}})
            if "turn_max" in part:  # the same predictions under highlight_scale = "turn_max"
                rows.append({"system": f"{system}:turn_max", "seed": result["seed"], "epoch": part["epoch"],
                             **{view: _pick(part["turn_max"][view]) for view, _ in VIEWS}})
    for path in sorted(glob.glob(str(work / "*" / "metrics" / "modes_comparison.json"))):
        rows.extend(_modes_rows(json.loads(Path(path).read_text())))
    return rows


def _modes_rows(runs):
    return [{"system": run["mode"], "seed": run["seed"], "default": _pick(run["default"]),
             "cross_tuned": _pick(run["tuned"]["cross_tuned"]), "tuned_on_dev": _pick(run["tuned"])}
            for run in runs]


def load(source: Path):
    """Rows and note of one source: a work directory, a stored study JSON, or a
    ``modes_comparison.json`` (a list of compare_modes runs)."""
    if source.is_dir():
        return collect(source), ""
    if not source.is_file():
        raise SystemExit(f"No runs found under {source}")
    stored = json.loads(source.read_text())
    if isinstance(stored, list):
        return _modes_rows(stored), ""
    return stored["runs"], stored.get("note", "")


def parse_renames(items):
    """``OLD=NEW`` / ``OLD:SEEDS=NEW`` (SEEDS: comma-separated) as (old, seeds or None, new)."""
    rules = []
    for item in items:
        old, sep, new = item.partition("=")
        old, _, seeds = old.partition(":")
        if not (sep and old and new) or (seeds and not all(x.strip().isdigit() for x in seeds.split(","))):
            raise SystemExit(f"--rename takes OLD=NEW or OLD:SEEDS=NEW (SEEDS like 5,6,7), not {item!r}")
        rules.append((old, {int(x) for x in seeds.split(",")} if seeds else None, new))
    return rules


def rename(rows, rules):
    """Apply parsed renames to the part of a system's name before its first
    '@' or ':' (so ``OLD@last`` becomes ``NEW@last`` and ``OLD:turn_max``
    ``NEW:turn_max``); the first matching rule wins."""
    for row in rows:
        name = row["system"]
        cut = min([i for i in (name.find("@"), name.find(":")) if i >= 0], default=len(name))
        base, rest = name[:cut], name[cut:]
        for old, seeds, new in rules:
            if base == old and (seeds is None or row["seed"] in seeds):
                base = new
                break
        row["system"] = base + rest
    return rows


def summarize(rows):
    systems = []
    for row in rows:
        if row["system"] not in systems:
            systems.append(row["system"])
    summary = {}
    for system in systems:
        runs = [r for r in rows if r["system"] == system]
        entry = {"seeds": sorted(r["seed"] for r in runs)}
        for view, _ in VIEWS:
            entry[view] = {}
            for m in METRICS:
                values = [r[view][m] for r in runs]
                sd = statistics.stdev(values) if len(values) > 1 else 0.0
                entry[view][m] = {"mean": statistics.mean(values), "sd": sd}
        summary[system] = entry
    return summary


def _rule(system):
    """The highlight-rule suffix of a system's name (``"turn_max"`` of
    ``soft:turn_max``, ``""`` without one)."""
    return system.partition(":")[2]


def meets_target(summary, view="cross_tuned", same_rule=False, reference=REFERENCE, margin_se=0.0):
    """Systems whose mean reaches the reference's mean on accuracy and both
    Jaccards, with each difference's standard error over seeds
    (sqrt(sd_a^2 / n_a + sd_b^2 / n_b): the two systems' seeds are independent
    runs, so the seed-to-seed spread of both sides adds up).

    ``same_rule``: judge each system with a highlight-rule suffix
    (``NAME:turn_max``) against the reference's predictions scored under the
    same rule (``HF reference:turn_max``) instead; systems whose rule the
    reference was not scored under are left out.

    ``reference``: judge against this system instead; ``margin_se`` > 0:
    "meets" only where every difference exceeds ``margin_se`` standard errors
    (strictly), not merely >= 0."""
    out = {}
    base = reference
    for system, entry in summary.items():
        if system.startswith(base):
            continue
        reference = base
        if same_rule:
            if not _rule(system):
                continue
            reference = f"{REFERENCE}:{_rule(system)}"
        if reference not in summary:
            continue
        ref_entry = summary[reference]
        ref = ref_entry[view]
        diffs = {m: entry[view][m]["mean"] - ref[m]["mean"] for m in TARGET}
        se = {
            m: (entry[view][m]["sd"] ** 2 / len(entry["seeds"]) + ref[m]["sd"] ** 2 / len(ref_entry["seeds"])) ** 0.5
            for m in TARGET
        }
        if margin_se > 0:
            meets = all(diffs[m] > margin_se * se[m] for m in TARGET)
        else:
            meets = all(d >= 0 for d in diffs.values())
        out[system] = {"diff": diffs, "se": se, "meets": meets}
    return out


def table(summary, against=None, margin_se=2.0) -> str:
    lines = [
        "Mean ± sd over seeds on ContextDeP dev (88 pairs). 0.5 / 0.5 = as trained; cross-tuned = both",
        "thresholds tuned on 3/4 of dev, scored on the other 1/4 (4 folds x 5 repeats; honest);",
        "tuned on dev = tuned and scored on all of dev (optimistic).",
        "",
        "| system | seeds | thresholds | " + " | ".join(METRICS) + " |",
        "|" + "---|" * (len(METRICS) + 3),
    ]
    for system, entry in summary.items():
        seeds = ",".join(str(s) for s in entry["seeds"])
        for view, label in VIEWS:
            cells = [f"{entry[view][m]['mean']:.3f} ± {entry[view][m]['sd']:.3f}" for m in METRICS]
            lines.append(f"| {system} | {seeds} | {label} | " + " | ".join(cells) + " |")
    for check, intro in (
        (meets_target(summary), f"Against `{REFERENCE}` (cross-tuned means ± the difference's standard error over "
                                "seeds; target: >= on accuracy and both Jaccards):"),
        (meets_target(summary, same_rule=True), f"Like for like: each `NAME:RULE` against `{REFERENCE}:RULE` (the "
                                                "reference's predictions under the same highlight rule; cross-tuned):"),
        (meets_target(summary, reference=against, margin_se=margin_se) if against in summary else {},
         f"Against `{against}` (cross-tuned means ± the difference's standard error over seeds; ahead "
         f"only if every difference exceeds {margin_se:g} SE):"),
    ):
        if not check:
            continue
        lines += ["", intro, "", "| system | Δ acc | Δ J first | Δ J second | meets |", "|---|---|---|---|---|"]
        for system, c in check.items():
            cells = [f"{c['diff'][m]:+.3f} ± {c['se'][m]:.3f}" for m in TARGET]
            lines.append(f"| {system} | " + " | ".join(cells) + f" | {'yes' if c['meets'] else 'no'} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sources", type=Path, nargs="+",
                   help="work directory of a seed study, a JSON this script wrote, or a modes_comparison.json; "
                        "several are merged")
    p.add_argument("--output", type=Path, default=None, help="JSON to write (a .md table is written beside it)")
    p.add_argument("--note", default=None,
                   help="free text stored in the JSON (machine, backbone, ...); default: the first stored note")
    p.add_argument("--rename", nargs="*", default=[], metavar="OLD[:SEEDS]=NEW",
                   help="rename systems (the part before '@' or ':'), e.g. runs made before a default changed; "
                        "OLD:5,6=NEW renames only those seeds")
    p.add_argument("--against", default=None, metavar="SYSTEM",
                   help="also judge every system against SYSTEM (e.g. soft_tm_fresh:turn_max)")
    p.add_argument("--margin-se", type=float, default=2.0,
                   help="with --against: ahead only by more than this many standard errors (default 2)")
    args = p.parse_args()
    rules = parse_renames(args.rename)
    merged, notes = {}, []
    for source in args.sources:
        rows, note = load(source)
        notes.append(note)
        for row in rename(rows, rules):
            merged[(row["system"], row["seed"])] = row
    rows = list(merged.values())
    if not rows:
        raise SystemExit(f"No runs found under {', '.join(map(str, args.sources))}")
    note = args.note if args.note is not None else next((n for n in notes if n), "")
    summary = summarize(rows)
    if args.against is not None and args.against not in summary:
        raise SystemExit(f"--against {args.against}: no such system ({', '.join(summary)})")
    text = table(summary, args.against, args.margin_se)
    print(text)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps({"note": note, "summary": summary, "target": meets_target(summary),
                                           "target_same_rule": meets_target(summary, same_rule=True),
                                           **({"against": {"system": args.against, "margin_se": args.margin_se,
                                                           "check": meets_target(summary, reference=args.against,
                                                                                 margin_se=args.margin_se)}}
                                              if args.against else {}),
                                           "runs": rows}, indent=2) + "\n")
        args.output.with_suffix(".md").write_text((note + "\n\n" if note else "") + text + "\n")


if __name__ == "__main__":
    main()
