#!/usr/bin/env python
"""What a reload of ``PairAnnotator`` costs in resident memory (docs/annotate.md,
"Memory over a long run").

Every ``reload_pairs`` pairs the annotator gives the vocab's tables back by
loading the vocab and the tokenizer again (``PairAnnotator._renew_vocab``);
before, it loaded the whole pipeline again (``PairAnnotator._load``). This
script loads a model, annotates a few zones of generated pairs, then reloads
``--reloads`` times each way and reports, for each reload, resident memory
before it, once the old pipeline is dropped (whole loads only), the highest
during it (``VmHWM``, reset just before) and after it, and whether the old
pipeline was still alive when the new one started loading. Linux only (``/proc/self``).

Run from the repository root::

    python -m benchmarks.run_reload_memory --model minilm
"""
import argparse
import datetime
import gc
import platform
import sys
import tempfile
import weakref
from pathlib import Path
from typing import Dict, List

from benchmarks.run_annotate_memory import MODEL_NAMES, build_model, conversations

REPO = Path(__file__).resolve().parents[1]


def memory() -> Dict[str, float]:
    """This process's VmRSS and VmHWM in MiB."""
    with open("/proc/self/status") as f:
        return {k: int(v.split()[0]) / 1024 for k, v in (line.split(":", 1) for line in f) if k in ("VmRSS", "VmHWM")}


def reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # VmHWM back to the current RSS


def pairs(n: int, seed: int) -> List:
    from spacy_paraphrase.dialogs.turns import Turn, TurnPair, Utterance

    out = []
    for conv, texts in conversations(n, seed):
        for i in range(len(texts) - 1):
            first = Utterance(f"{conv}-{i}", conv, "A", texts[i])
            second = Utterance(f"{conv}-{i + 1}", conv, "B", texts[i + 1])
            out.append(TurnPair(f"{conv}-{i}", conv, Turn.of([first]), Turn.of([second])))
    return out[:n]


def measure(model: str, reloads: int, zone_pairs: int) -> List[Dict]:
    from spacy_paraphrase.annotate import PairAnnotator
    from spacy_paraphrase.annotate.heap import trim_heap

    annotator = PairAnnotator(model, reload_pairs=0)
    seed = 0
    results = []
    for way in ("whole pipeline (_load)", "vocab and tokenizer (_renew_vocab)"):
        for k in range(reloads):
            for _ in range(2):  # a warm zone, then a memory zone
                annotator.annotate(pairs(zone_pairs, seed))
                seed += 1
            gc.collect()
            trim_heap()
            old = weakref.ref(annotator.nlp)
            before, dropped, alive = memory()["VmRSS"], None, None
            if way.startswith("whole"):
                annotator.nlp = None  # as _load does first: is the old pipeline gone before the new one loads?
                gc.collect()
                trim_heap()
                dropped, alive = memory()["VmRSS"], old() is not None
                reset_peak()
                annotator._load()
            else:
                reset_peak()
                annotator._renew_vocab()
            now = memory()
            results.append({"reload": way, "k": k + 1, "rss_before": before, "rss_dropped": dropped,
                            "old_alive": alive, "peak_during": now["VmHWM"], "rss_after": now["VmRSS"],
                            "same_pipeline": old() is annotator.nlp})
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="tiny", help="tiny, minilm or a pipeline directory")
    parser.add_argument("--reloads", type=int, default=3)
    parser.add_argument("--zone-pairs", type=int, default=256)
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks" / "results" / "annotate_reload_memory.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        model = build_model(args.model, Path(tmp) / "model")
        results = measure(model, args.reloads, args.zone_pairs)
    command = "python -m benchmarks.run_reload_memory " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        "# annotate: what a reload of the pipeline costs in memory",
        "",
        f"Command: `{command}`, {datetime.datetime.now().isoformat(timespec='seconds')}",
        "",
        f"- Machine: {platform.platform()}",
        f"- Model: {MODEL_NAMES.get(args.model, 'the pipeline given')}; two zones of {args.zone_pairs} "
        "generated pairs before each reload; RSS in MiB, the peak is VmHWM reset just before the reload",
        "",
        "| reload | # | RSS before | old pipeline dropped: RSS (still alive?) | peak during | RSS after | peak - before | same pipeline object |",
        "|---|---:|---:|---|---:|---:|---:|---|",
    ]
    for r in results:
        dropped = "-" if r["rss_dropped"] is None else f"{r['rss_dropped']:.0f} ({'yes' if r['old_alive'] else 'no'})"
        lines.append(f"| {r['reload']} | {r['k']} | {r['rss_before']:.0f} | {dropped} | {r['peak_during']:.0f} | "
                     f"{r['rss_after']:.0f} | {r['peak_during'] - r['rss_before']:.0f} | {r['same_pipeline']} |")
    args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
