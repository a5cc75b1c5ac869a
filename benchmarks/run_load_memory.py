#!/usr/bin/env python
"""Peak resident memory of the paper's model's size on a laptop (docs/paper-model.md,
"The laptop budget"): ``import-model``, ``spacy.load``, ``annotate`` (its
default heap policy and ``--heap lean``, with its own pairs/s) and the
ContextDeP authors' own inference, each in a fresh process, as ratios to the
weights file's size; and the same pipeline saved the old way (the stock
``transformer`` component: weights in the msgpack ``model`` file) loaded
for comparison, with the largest difference between the two pipelines' word
probabilities.

Each step runs as a child process under ``/usr/bin/time -f %M`` (its peak
resident memory); this process itself loads no model.
The checkpoint is a DeBERTa-v3 token classifier with random weights
(``run_imported_speed.make_checkpoint``; ``--shape large`` is
deberta-v3-large's: 24 layers, hidden 1024, 434M parameters, 1.74 GB of fp32
safetensors), saved the authors' way with the DeBERTa-v3 tokenizer of
``../shared/gpu/models/deberta``; or ``--checkpoint DIR``. ``--minilm``: the
offline default MiniLM pipeline, built from ``configs/contextdep_minilm_cpu.cfg``
(or ``--minilm-model DIR``, e.g. a trained ``model-tuned``), loaded both ways.

    python -m benchmarks.run_load_memory --shape large --pairs 40 --work /tmp/load_memory --minilm \\
        --output benchmarks/results/load_memory_large_cpu.json
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

from .run_pipeline_overhead import DEFAULT_DATA, print_and_write, read_pairs

REPO = Path(__file__).resolve().parents[1]
GIB = 1024 ** 3
TIME = "/usr/bin/time"  # GNU time (Debian's `time` package)

# what spacy.load of a pipeline imports, in the order it imports it (our components first:
# encoder/lean_imports.py leaves scikit-learn and scipy out of transformers' imports)
# What a load imports before it reads any weights: the package's components and
# transformers' model code (a load builds the module through modeling_utils).
IMPORTS = ("import spacy, spacy_paraphrase.encoder.component, spacy_paraphrase.paraphrase_spans.component, "
           "transformers.modeling_utils")
LOAD = "import spacy, sys; spacy.load(sys.argv[1])"
# The authors' inference (their evaluation script's path): from_pretrained, then batches
# of `first words + ["[SEP]"] + second words` with truncation=True, softmax.
AUTHORS = """
import json, sys, torch
from transformers import AutoModelForTokenClassification, AutoTokenizer
tok = AutoTokenizer.from_pretrained(sys.argv[1])
model = AutoModelForTokenClassification.from_pretrained(sys.argv[1]).eval()
pairs = json.load(open(sys.argv[2]))
with torch.no_grad():
    for i in range(0, len(pairs), 16):
        batch = [a + ["[SEP]"] + b for a, b in pairs[i:i + 16]]
        enc = tok(batch, is_split_into_words=True, truncation=True, padding=True, return_tensors="pt")
        torch.softmax(model(**enc).logits, dim=-1)
"""
# The stock format: the same pipeline with factory "transformer", its weights in the model file.
STOCK_COPY = """
import shutil, sys, srsly, spacy
from pathlib import Path
src, dst = Path(sys.argv[1]), Path(sys.argv[2])
nlp = spacy.load(src)
shutil.copytree(src, dst)
(dst / "transformer" / "model.safetensors").unlink()
(dst / "transformer" / "model").write_bytes(nlp.get_pipe("transformer").model.to_bytes())
text = (dst / "config.cfg").read_text()
(dst / "config.cfg").write_text(text.replace('factory = "pair_transformer"', 'factory = "transformer"'))
"""
# Word probabilities of two pipelines over the same pairs: the largest difference.
COMPARE = """
import json, sys, numpy, spacy
from spacy_paraphrase import make_pair_doc, token_probs
pairs = json.load(open(sys.argv[3]))
out = []
for path in sys.argv[1:3]:
    nlp = spacy.load(path)
    out.append([numpy.nan_to_num(token_probs(d)) for d in nlp.pipe(make_pair_doc(nlp, a, b) for a, b in pairs)])
    del nlp
print(json.dumps(max(float(numpy.abs(x - y).max()) for x, y in zip(*out))))
"""


def run_peak(cmd: List[str], what: str) -> Dict:
    """Run ``cmd`` (stderr dropped) under ``/usr/bin/time -f %M``: its peak
    resident memory in GiB, wall time and the end of its stdout. (GNU time
    forks the command from its own small process; a child forked straight
    from this one would start its high-water mark at this process's size.)"""
    if not Path(TIME).is_file():
        raise SystemExit(f"{TIME} (GNU time) is needed to read each step's peak memory: apt-get install time")
    print(f"[load_memory] {what}", file=sys.stderr, flush=True)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        kib_file = Path(tmp) / "maxrss"
        proc = subprocess.run([TIME, "-f", "%M", "-o", str(kib_file), *map(str, cmd)], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"{what} failed (exit {proc.returncode}): {' '.join(map(str, cmd))}")
        kib = int(kib_file.read_text().split()[-1])
    return {"peak_gib": round(kib * 1024 / GIB, 3), "seconds": round(time.perf_counter() - start, 1),
            "stdout": proc.stdout.strip()[-400:]}


def weights_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir() if p.suffix in (".safetensors", ".bin"))


def cpu_flags() -> List[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return [f for f in ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_tile", "amx_int8") if f in flags]


def pipeline_steps(model: Path, stock: Path, weights: int, pairs_file: Path, chat: Path, work: Path,
                   annotate: bool) -> Dict:
    n_pairs = len(json.loads(pairs_file.read_text()))
    py = sys.executable
    steps = {"spacy.load": run_peak([py, "-c", LOAD, str(model)], f"spacy.load {model.name}"),
             "spacy.load (stock format)": run_peak([py, "-c", LOAD, str(stock)], f"spacy.load {stock.name}")}
    if annotate:
        out = work / f"{model.name}_records.jsonl"
        for stale in work.glob(f"{model.name}_records*"):
            shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
        steps["annotate"] = run_peak([py, "-m", "spacy_paraphrase", "annotate", str(model), str(chat), str(out),
                                      "--no-count"], f"annotate with {model.name}")
        for stale in work.glob(f"{model.name}_records*"):
            stale.unlink()
        steps["annotate --heap lean"] = run_peak([py, "-m", "spacy_paraphrase", "annotate", str(model), str(chat),
                                                  str(out), "--no-count", "--heap", "lean"],
                                                 f"annotate --heap lean with {model.name}")
    for name, step in steps.items():
        step["vs_weights"] = round(step["peak_gib"] * GIB / weights, 2)
        clock = re.search(r"time: ([0-9.]+) s", step.pop("stdout"))
        if name.startswith("annotate") and clock and float(clock.group(1)) > 0:
            # annotate's own clock (loading not counted), as the speed benchmark's rates
            step["pairs_per_s"] = round(n_pairs / float(clock.group(1)), 3)
    compared = run_peak([py, "-c", COMPARE, str(stock), str(model), str(pairs_file)], "word probabilities, both formats")
    return {"steps": steps, "max_abs_prob_difference_vs_stock_format": json.loads(compared["stdout"].splitlines()[-1])}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shape", default="large", choices=["tiny", "base", "large"])
    p.add_argument("--checkpoint", type=Path, help="a saved token classifier instead of a random --shape")
    p.add_argument("--pairs", type=int, default=40, help="ContextDeP dev pairs annotated (40)")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--work", type=Path, required=True, help="folder for the checkpoint and pipelines (reused)")
    p.add_argument("--minilm", action="store_true", help="also the offline MiniLM pipeline, loaded both ways")
    p.add_argument("--minilm-model", type=Path, help="a MiniLM pipeline to measure instead of an untrained one")
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    py = sys.executable
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    checkpoint = args.checkpoint or work / f"checkpoint_{args.shape}"
    if args.checkpoint is None and not (checkpoint / "config.json").is_file():
        shutil.rmtree(checkpoint, ignore_errors=True)
        make = ("import sys; from pathlib import Path; from benchmarks.run_imported_speed import make_checkpoint; "
                "make_checkpoint(sys.argv[1], Path(sys.argv[2]), model_max_length=None)")
        run_peak([py, "-c", make, args.shape, str(checkpoint)], f"making a random {args.shape} checkpoint")
    weights = weights_bytes(checkpoint)
    pairs, source = read_pairs(args.data, args.pairs, seed=0)
    pairs_file = work / "pairs.json"
    pairs_file.write_text(json.dumps(pairs))
    chat = work / "chat.jsonl"
    chat.write_text("".join(json.dumps({"id": f"p{i}", "messages": [{"role": "user", "content": " ".join(a)},
                                                                       {"role": "assistant", "content": " ".join(b)}]})
                            + "\n" for i, (a, b) in enumerate(pairs)))
    imported = work / "imported"
    steps = {"imports only": run_peak([py, "-c", IMPORTS], "imports")}
    steps["import-model"] = run_peak([py, "-m", "spacy_paraphrase", "import-model", str(checkpoint), str(imported),
                                      "--force"], "import-model")
    steps["authors' inference"] = run_peak([py, "-c", AUTHORS, str(checkpoint), str(pairs_file)], "authors' inference")
    for name, step in steps.items():
        step["vs_weights"] = round(step["peak_gib"] * GIB / weights, 2)
        clock = re.search(r"time: ([0-9.]+) s", step.pop("stdout"))
        if name.startswith("annotate") and clock and float(clock.group(1)) > 0:
            # annotate's own clock (loading not counted), as the speed benchmark's rates
            step["pairs_per_s"] = round(n_pairs / float(clock.group(1)), 3)
    stock = work / "imported_stock"
    shutil.rmtree(stock, ignore_errors=True)
    run_peak([py, "-c", STOCK_COPY, str(imported), str(stock)], "the stock-format copy")
    large = pipeline_steps(imported, stock, weights, pairs_file, chat, work, annotate=True)
    steps.update(large.pop("steps"))
    result = {
        "benchmark": "load_memory",
        "date": datetime.date.today().isoformat(),
        "checkpoint": args.checkpoint.name if args.checkpoint else f"random deberta-v3 token classifier, {args.shape}",
        "weights_gib": round(weights / GIB, 3),
        "weights_bytes": weights,
        "pairs": len(pairs), "pairs_source": source,
        "peak_rss": steps,
        **large,
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "cpu_flags": cpu_flags(), "python": platform.python_version()},
        "command": "python -m benchmarks.run_load_memory " + " ".join(
            str(a) for a in (argv if argv is not None else sys.argv[1:]) if not str(a).startswith("/")),
    }
    if args.minilm:
        minilm = args.minilm_model
        if minilm is None:
            minilm = work / "minilm"
            if not (minilm / "config.cfg").is_file():
                build = ("import spacy, sys; from thinc.api import Config; "
                         "nlp = spacy.util.load_model_from_config(Config().from_disk(sys.argv[1]), auto_fill=True); "
                         "nlp.initialize(); nlp.to_disk(sys.argv[2])")
                run_peak([py, "-c", build, str(REPO / "configs" / "contextdep_minilm_cpu.cfg"), str(minilm)],
                         "building the MiniLM pipeline")
        minilm_stock = work / "minilm_stock"
        shutil.rmtree(minilm_stock, ignore_errors=True)
        run_peak([py, "-c", STOCK_COPY, str(minilm), str(minilm_stock)], "the MiniLM stock-format copy")
        minilm_weights = (minilm / "transformer" / "model.safetensors").stat().st_size
        small = pipeline_steps(minilm, minilm_stock, minilm_weights, pairs_file, chat, work, annotate=False)
        result["minilm"] = {"weights_gib": round(minilm_weights / GIB, 3), "peak_rss": small["steps"],
                            "max_abs_prob_difference_vs_stock_format": small["max_abs_prob_difference_vs_stock_format"]}
    print_and_write(result, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
