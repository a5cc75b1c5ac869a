"""The LLM detector with the real local LLM (Gemma 3 270M base, llama-cpp-python's
server on 127.0.0.1) on ContextDeP dev: through the pipeline and its scorer, as ``evaluate`` runs it (scores, parse and
alignment failures by kind, seconds and requests per pair), then through
``annotate`` on the same pairs (every pair has a record; as the second run it
must be served from the cache), then pairs/s with 1, 2 and 4 requests in
flight on a few pairs (cache off, no re-asks). A sample whose answer does not
parse is asked again (``--reask``, the task's ``reask_unparsed``, default 2):
the evaluate stage reports the unparsed share of the first answers (before)
and after re-asking, and the re-ask requests; ``--table`` prints docs/llm.md's
re-asking table from a result file.

    python -m spacy_paraphrase convert contextdep ../shared/data/contextdep/dev.tsv corpus/contextdep/dev.spacy --mode majority
    python -m benchmarks.run_llm_local corpus/contextdep/dev.spacy -o benchmarks/results/llm_local_dev.json

A 270M base model is far too weak for the task: these numbers show the path
working, not what an LLM can do.
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional

import spacy
import srsly
from spacy.training import Example

from spacy_paraphrase.corpus import PairCorpus
from spacy_paraphrase.llm.server import local_server
from spacy_paraphrase.llm.task import DEFAULT_REASKS
from spacy_paraphrase.pair_doc import get_turns

ROOT = Path(__file__).resolve().parents[1]


def hit_rate(cache) -> Optional[float]:
    """The share of a cache's lookups that found an entry (None: no lookup)."""
    total = cache.hits + cache.misses
    return cache.hits / total if total else None


def model_config(base: str, args, cache_dir, concurrency: int) -> Dict:
    return {"@llm_models": "spacy_paraphrase.OpenAICompatible.v1", "base_url": base, "model": "gemma",
            "api": "completions", "api_key_env": "", "samples_per_request": 1, "max_tokens": args.max_tokens,
            "stop": ["\n\n", "\nGuest"], "max_concurrency": concurrency, "timeout_s": 600, "max_retries": 2,
            "cache_dir": cache_dir}


def build(base: str, args, cache_dir, concurrency: int = 1, n_samples=None, reask=None):
    nlp = spacy.blank("en")
    nlp.add_pipe("paraphrase_llm", config={
        "task": {"@llm_tasks": "spacy_paraphrase.ContextDeP.v1", "n_samples": n_samples or args.samples,
                 "reask_unparsed": args.reask if reask is None else reask},
        "model": model_config(base, args, cache_dir, concurrency)})
    return nlp


def failure_counts(docs) -> Dict:
    problems, statuses, answers = Counter(), Counter(), Counter()
    records = reasked = reasks = 0
    for doc in docs:
        d = doc.spans["paraphrase"].attrs.get("llm")
        if d is None:
            continue
        records += 1
        problems.update(d["problems"])
        statuses.update(d["quote_status"])
        answers.update({"yes": d["n_yes"], "no": d["n_no"], "unparsed": d["n_unparsed"]})
        reasked += d.get("n_reasked", 0)
        reasks += d.get("reasks", 0)
        if d["error"]:
            problems["request_error"] += 1
    n = sum(answers.values())
    return {"pairs_with_record": records, "samples": dict(answers), "parse_problems": dict(problems),
            "quote_status": dict(statuses),
            # before / after re-asking: a first answer that did not parse is re-asked (reask_unparsed)
            "unparsed_first_answer": reasked, "unparsed_share_first_answer": reasked / n if n else None,
            "unparsed_share": answers["unparsed"] / n if n else None, "reask_requests": reasks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("-o", "--output", type=Path)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=120)
    parser.add_argument("--reask", type=int, default=DEFAULT_REASKS,
                        help="more requests per sample whose answer does not parse (the task's reask_unparsed)")
    parser.add_argument("--limit", type=int, default=0, help="first N pairs only (0: all)")
    parser.add_argument("--concurrency-pairs", type=int, default=4, help="pairs of stage 3 (0: skip it)")
    parser.add_argument("--cache-dir", type=Path, default=None, help="answer cache (default: a new temporary one)")
    parser.add_argument("--port", type=int, default=8765,
                        help="server port; the cache key holds the base URL, so a fixed port lets a rerun resume")
    parser.add_argument("--table", action="store_true", help="print the re-asking table of the result DATA (a JSON file)")
    args = parser.parse_args()
    if args.table:
        print(reask_table(json.loads(args.data.read_text())))
        return
    work = Path(tempfile.mkdtemp(prefix="llm_local_"))
    nlp0 = spacy.blank("en")
    examples = list(PairCorpus(args.data)(nlp0))
    if args.limit:
        examples = examples[: args.limit]
    result: Dict = {"data": args.data.name, "n_pairs": len(examples), "n_samples": args.samples,
                    "max_tokens": args.max_tokens, "reask_unparsed": args.reask, "model": "gemma-3-270m-q4_k_m.gguf (base), llama-cpp-python server",
                    "threads": 2}
    with local_server(args.port, log=work / "server.log") as base:
        # 1. evaluate (first run: every answer requested)
        cache = str(args.cache_dir or work / "cache")
        nlp = build(base, args, cache)
        t = time.perf_counter()
        docs = list(nlp.pipe([eg.predicted for eg in examples], batch_size=8))
        elapsed = time.perf_counter() - t
        scores = nlp.get_pipe("paraphrase_llm").score([Example(d, eg.reference) for d, eg in zip(docs, examples)])
        model = nlp.get_pipe("paraphrase_llm")._model
        result["evaluate"] = {
            "seconds_per_pair": elapsed / len(examples), "requests_per_pair": model.stats["requests"] / len(examples),
            # pairs answered from a cache given with --cache-dir take no time: per requested pair
            "seconds_per_requested_pair": elapsed / max(len(examples) - model.cache.hits, 1),
            "retries": model.stats["retries"], "requests": model.stats["requests"],
            "reasks_sent": model.stats["reasks"], "failed_reasks": model.stats["failed_reasks"],
            "cache_hits_at_start": model.cache.hits, "failed_pairs": model.stats["failed_prompts"],
            **failure_counts(docs),
            "scores": {k: v for k, v in scores.items() if k.startswith("paraphrase_llm_") and isinstance(v, (int, float))},
        }
        save(result, args.output)  # each stage is written as soon as it is done
        nlp.to_disk(work / "pipeline")
        # 2. annotate on the same pairs (the second run: from the cache)
        rows = []
        for i, eg in enumerate(examples):
            first, second = get_turns(eg.reference)
            rows.append({"id": eg.reference.spans["turns"].attrs.get("id", str(i)), "text1": first.text,
                         "text2": second.text})
        srsly.write_jsonl(work / "pairs.jsonl", rows)
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "spacy_paraphrase", "annotate", str(work / "pipeline"),
                               str(work / "pairs.jsonl"), str(work / "records.jsonl"), "--format", "pairs",
                               "--reader-option", "id_column=id", "--batch-size", "8", "--no-count"],
                              capture_output=True, text=True, cwd=ROOT)
        a_elapsed = time.perf_counter() - t
        records = list(srsly.read_jsonl(work / "records.jsonl")) if (work / "records.jsonl").exists() else []
        cache_files = sum(1 for _ in Path(cache).glob("*/*.json"))
        result["annotate"] = {"returncode": proc.returncode, "records": len(records), "seconds": a_elapsed,
                              "stderr_tail": proc.stderr[-500:] if proc.returncode else "",
                              "cache_entries": cache_files}
        save(result, args.output)
        # the cache hit rate of a second pipeline run, measured in-process
        again = build(base, args, cache)
        list(again.pipe([eg.predicted.copy() for eg in examples], batch_size=8))
        m2 = again.get_pipe("paraphrase_llm")._model
        result["second_run"] = {"requests": m2.stats["requests"], "cache_hit_rate": hit_rate(m2.cache)}
        save(result, args.output)
        # 3. concurrency: 1, 2, 4 requests in flight (cache off, 1 sample per pair)
        few = [eg.predicted.copy() for eg in examples[: args.concurrency_pairs]]
        result["concurrency"] = {}
        for c in (1, 2, 4) if few else ():
            nlp_c = build(base, args, None, concurrency=c, n_samples=1, reask=0)
            t = time.perf_counter()
            list(nlp_c.pipe([d.copy() for d in few], batch_size=len(few)))
            result["concurrency"][str(c)] = {"pairs": len(few), "pairs_per_second": len(few) / (time.perf_counter() - t)}
    save(result, args.output)
    print(json.dumps(result, indent=2))


def reask_table(result: Dict) -> str:
    """docs/llm.md's re-asking table, from this benchmark's result."""
    e, n_pairs = result["evaluate"], result["n_pairs"]
    n = sum(e["samples"].values())
    first, after, reasks, sc = e["unparsed_first_answer"], e["samples"]["unparsed"], e["reask_requests"], e["scores"]
    return "\n".join([
        "| | |", "|---|---|",
        f"| samples whose first answer did not parse | {first} of {n} (**{100 * first / n:.1f}%**) |",
        f"| samples unparsed after re-asking | **{after} of {n}** ({100 * after / n:.1f}%) |",
        f"| re-ask requests | {reasks}: {n + reasks} requests for {n} samples, {(n + reasks) / n_pairs:.2f} per pair "
        f"instead of {result['n_samples']} |",
        f"| cache | `annotate` and a second pipeline run on the same pairs: {result['second_run']['requests']} requests "
        f"(re-asks included), cache hit rate {100 * result['second_run']['cache_hit_rate']:.0f}% |",
        f"| samples: yes / no; pair P / R / F1 | {e['samples']['yes']} / {e['samples']['no']}; "
        f"{sc['paraphrase_llm_pair_p']:.2f} / {sc['paraphrase_llm_pair_r']:.2f} / {sc['paraphrase_llm_pair_f']:.2f} "
        f"({n_pairs} pairs: noise) |"])


def save(result: Dict, output) -> None:
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
