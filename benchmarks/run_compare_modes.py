"""Compare the ContextDeP training modes (majority / all / soft) fairly.

Every run trains ``configs/<config>.cfg`` on ``corpus/contextdep/train_<mode>.spacy``
with the same budget of optimizer steps (``--steps``; ``all`` has ~9x more Docs,
so it sees fewer epochs) and a wall-clock cap (``--max-minutes``: a run that
hits it is stopped and its best checkpoint so far is used). Each run's
``model-best`` is scored on dev with the package's scorer, once with the
shipped thresholds (0.5 / 0.5) and once with both thresholds tuned on dev
(optimistic: dev is also the test here), and with the k-fold cross-tuned
estimate (``python -m spacy_paraphrase cross-tune``: honest). Results: ``<out>/modes_comparison.json``
and a markdown table ``<out>/modes_comparison.md`` (mean and spread over seeds).
``--highlight-scales absolute turn_max`` scores each trained pipeline once per
highlight rule (rows ``<mode>:<scale>``; the model is not retrained).

    python -m benchmarks.run_compare_modes --modes majority all soft --seeds 0 --steps 530
"""
import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

KEYS = [
    "pair_acc", "pair_macro_f", "pair_f", "pair_p", "pair_r",
    "jaccard_first", "jaccard_second", "soft_token_ce", "soft_pair_pearson", "pair_ece",
]


THRESHOLD_KEYS = {"pair_acc", "pair_macro_f", "pair_f", "pair_p", "pair_r", "jaccard_first", "jaccard_second"}


def run(cmd, timeout=None):
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, timeout=timeout)


def train(args, mode: str, seed: int, out: Path, extra) -> float:
    timing = out / "train_seconds.json"
    if args.skip_trained and (out / "model-best").exists():
        print(f"{out} already trained; skipping training")
        return json.loads(timing.read_text())["seconds"] if timing.exists() else None
    cmd = [
        sys.executable, "-m", "spacy", "train", f"configs/{args.config}.cfg",
        "--output", str(out),
        "--paths.train", f"{args.corpus}/train_{mode}.spacy",
        "--paths.dev", f"{args.corpus}/dev.spacy",
        "--system.seed", str(seed),
        "--training.max_epochs", "0",
        "--training.max_steps", str(args.steps),
        "--training.eval_frequency", str(args.eval_frequency),
        "--training.optimizer.learn_rate.total_steps", str(args.steps),
        "--gpu-id", str(args.gpu_id),
    ] + list(extra)
    start = time.time()
    try:
        run(cmd, timeout=args.max_minutes * 60)
    except subprocess.TimeoutExpired:
        print(f"wall-clock cap reached for {mode}/{seed}; using the best checkpoint so far")
    seconds = time.time() - start
    out.mkdir(parents=True, exist_ok=True)
    timing.write_text(json.dumps({"seconds": round(seconds, 1), "steps": args.steps}) + "\n")
    return seconds


def evaluate(model: Path, dev: str, out: Path, tune: bool, gpu_id: int = -1, scale: str = "") -> dict:
    gpu = ["--gpu-id", str(gpu_id)] + (["--highlight-scale", scale] if scale else [])
    if tune:
        # tune a copy (model-tuned next to model-best): model-best keeps the
        # thresholds it was trained with, so re-running gives the same table
        tuned = model.parent / ("model-tuned" if model.name == "model-best" else f"model-tuned-{model.name[6:]}")
        if scale:
            tuned = tuned.with_name(f"{tuned.name}-{scale}")
        shutil.copytree(model, tuned, dirs_exist_ok=True)
        model = tuned
        # honest estimate first (k-fold cross-tuning on dev), then tune on all
        # of dev and save the values in the pipeline (optimistic on dev)
        cross = out.with_suffix(".cross.json")
        run([sys.executable, "-m", "spacy_paraphrase", "cross-tune", str(model), dev, "--output", str(cross)] + gpu)
        for key in ("threshold", "highlight_threshold"):
            run([sys.executable, "-m", "spacy_paraphrase", "tune", str(model), dev,
                 "--key", key, "--save", "--output", str(out.with_suffix(f".{key}.json"))] + gpu)
    run([sys.executable, "-m", "spacy_paraphrase", "evaluate", str(model), dev, "--output", str(out)] + gpu)
    scores = json.loads(out.read_text())
    if tune:
        scores["cross_tuned"] = json.loads(cross.read_text())["scores"]
    return scores


def summarize(values):
    values = [v for v in values if v is not None]
    if not values:
        return None, None
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default="contextdep_minilm_cpu")
    p.add_argument("--modes", nargs="+", default=["majority", "all", "soft"])
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--steps", type=int, default=530)
    p.add_argument("--eval-frequency", type=int, default=53)
    p.add_argument("--max-minutes", type=float, default=30.0)
    p.add_argument("--corpus", default="corpus/contextdep")
    p.add_argument("--output", type=Path, default=Path("training/modes"))
    p.add_argument("--metrics", type=Path, default=Path("metrics"))
    p.add_argument("--pipe", default="paraphrase_spans")
    p.add_argument("--tag", default="", help="Suffix for run names (e.g. an ablation)")
    p.add_argument("--skip-trained", action="store_true", help="Reuse runs whose model-best exists")
    p.add_argument("--no-eval", action="store_true", help="Only train")
    p.add_argument("--checkpoints", nargs="+", default=["best"], choices=["best", "last"],
                   help="Which saved pipelines to score: model-best (default) and/or model-last "
                        "(rows of model-last are named <mode>@last)")
    p.add_argument("--gpu-id", type=int, default=-1, help="GPU for training and scoring (-1: CPU)")
    p.add_argument("--highlight-scales", nargs="+", default=[""], choices=["absolute", "turn_max"],
                   help="Score each pipeline with each highlight rule (rows <mode>:<scale>); "
                        "default: the pipeline's own rule, rows without a suffix")
    p.add_argument("extra", nargs=argparse.REMAINDER, help="extra `spacy train` overrides after --")
    args = p.parse_args()
    extra = [x for x in args.extra if x != "--"]
    args.metrics.mkdir(parents=True, exist_ok=True)
    store = args.metrics / "modes_comparison.json"
    previous = json.loads(store.read_text()) if store.exists() else []
    results = []
    for mode in args.modes:
        for seed in args.seeds:
            name = f"{mode}{args.tag}_seed{seed}"
            out = args.output / name
            seconds = train(args, mode, seed, out, extra)
            old = [r for r in previous if r.get("name", f"{r['mode']}_seed{r['seed']}") == name]
            if seconds is None and old:
                seconds = old[-1]["train_seconds"]
            if args.no_eval:
                continue
            for checkpoint, scale in [(c, sc) for c in args.checkpoints for sc in args.highlight_scales]:
                at = "" if checkpoint == "best" else f"@{checkpoint}"
                at += f":{scale}" if scale else ""
                model = out / f"model-{checkpoint}"
                row_name = f"{mode}{args.tag}{at}_seed{seed}"
                row = {"name": row_name, "mode": mode + args.tag + at, "seed": seed,
                       "train_seconds": seconds, "steps": args.steps}
                dev = f"{args.corpus}/dev.spacy"
                stem = f"modes_{mode}{args.tag}{at.replace('@', '_').replace(':', '_')}_seed{seed}"
                row["default"] = evaluate(model, dev, args.metrics / f"{stem}.json", False, args.gpu_id, scale)
                row["tuned"] = evaluate(model, dev, args.metrics / f"{stem}_tuned.json", True, args.gpu_id, scale)
                results.append(row)
                previous = [r for r in previous if r.get("name", f"{r['mode']}_seed{r['seed']}") != row_name]
                store.write_text(json.dumps(previous + results, indent=2))
    # every run of the requested modes and seeds, including earlier invocations'
    everything = json.loads(store.read_text()) if store.exists() else results
    lines = [
        f"Same budget: {args.steps} optimizer steps per run; dev split (88 pairs). Mean ± sd over seeds.",
        "Thresholds: 0.5 / 0.5 as trained; cross-tuned = both thresholds tuned on 3/4 of dev and scored on",
        "the other 1/4 (4 folds x 5 repeats, honest); tuned on dev = tuned and scored on all of dev (optimistic).",
        "",
        "| mode | seeds | thresholds | " + " | ".join(KEYS) + " | train s |",
        "|" + "---|" * (len(KEYS) + 4),
    ]
    views = (("default", "0.5 / 0.5", lambda r: r["default"]),
             ("cross", "cross-tuned", lambda r: r["tuned"].get("cross_tuned", {})),
             ("tuned", "tuned on dev", lambda r: r["tuned"]))
    modes = []
    for r in everything:
        if r["mode"] not in modes:
            modes.append(r["mode"])
    for mode in modes:
        rows = [r for r in everything if r["mode"] == mode]
        seeds = ",".join(str(r["seed"]) for r in rows)
        for view, label, get in views:
            cells = []
            for key in KEYS:
                if view == "cross" and key not in THRESHOLD_KEYS:
                    cells.append("·")  # does not depend on the thresholds: see the 0.5 / 0.5 row
                    continue
                mean, sd = summarize([get(r).get(f"{args.pipe}_{key}") for r in rows])
                cells.append("—" if mean is None else (f"{mean:.3f} ± {sd:.3f}" if len(rows) > 1 else f"{mean:.3f}"))
            secs, _ = summarize([r["train_seconds"] for r in rows])
            lines.append(f"| {mode} | {seeds} | {label} | " + " | ".join(cells) + f" | {secs or 0:.0f} |")
    table = "\n".join(lines)
    print(table)
    (args.metrics / "modes_comparison.md").write_text(table + "\n")


if __name__ == "__main__":
    main()
