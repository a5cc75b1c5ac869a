"""Fuzz make_pair_doc and a trained pipeline with generated hostile pairs.

Generates N pairs (seeded) mixing Latin, Armenian, Chinese, Arabic, emoji,
control and zero-width characters, odd whitespace, empty and whitespace-only
turns, word lists with empty words, single tokens and very long monologues
(longer than the transformer's window). Each pair must either raise the
documented PairDocError (empty/whitespace-only turn, invalid Unicode, no visible character) or come
out with every token of both turns scored. Prints and saves the counts.

    python scripts/fuzz_pipeline.py training/contextdep_minilm_cpu/model-best --n 10000 --output metrics/fuzz.json
"""
import argparse
import json
import random
import time
import traceback
from pathlib import Path

import numpy
import spacy

from spacy_paraphrase import PairDocError, make_pair_doc, token_probs

ALPHABETS = [
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?'\"-()",
    "աբգդեզէըթժիլխծկհձղճմյնշոչպջռսվտրցւփքօֆԱԲԳԴԵ։՞",
    "我们赢了比赛你们是的不好吗。，！？",
    "لقدفزنابالمباراةمبروكالفوز،؟",
    "🎉🏆😀👍🏽🇦🇲❤️‍🔥",
    "\u200b\u200c\u200d\u2060\u2063\ufeff\u00ad",
    "\x00\x01\x07\x1b\x7f",
    " \t\n\r\u00a0\u3000",
]


def random_word(rng: random.Random) -> str:
    alphabet = rng.choice(ALPHABETS[:7] + [ALPHABETS[0]] * 4)
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))


def random_turn(rng: random.Random):
    kind = rng.random()
    if kind < 0.05:
        return rng.choice(["", " ", "\n\t", "\u3000"])
    if kind < 0.10:
        return [rng.choice(["", random_word(rng)]) for _ in range(rng.randint(1, 8))]
    n = rng.randint(1, 12) if kind < 0.99 else rng.randint(200, 400)  # some monologues
    words = [random_word(rng) for _ in range(n)]
    if rng.random() < 0.3:
        return words
    sep = rng.choice([" ", " ", " ", "  ", "\n", "\t", " \u200b"])
    return sep.join(words)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("--n", type=int, default=10000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--output", type=Path, default=None)
    args = p.parse_args()
    rng = random.Random(args.seed)
    nlp = spacy.load(args.model)
    counts = {"pairs": 0, "documented_errors": 0, "processed": 0, "unexpected_errors": 0,
              "unscored_tokens": 0, "windowed_docs": 0, "tokens": 0}
    examples_of_errors = []
    docs = []
    start = time.time()

    def flush():
        try:
            out = list(nlp.pipe(docs, batch_size=args.batch_size))
        except Exception:  # noqa: BLE001 - counting is the point
            counts["unexpected_errors"] += len(docs)
            examples_of_errors.append(traceback.format_exc()[-2000:])
            docs.clear()
            return
        for doc in out:
            probs = token_probs(doc)
            first, second = doc.spans["turns"]
            counts["processed"] += 1
            counts["tokens"] += len(doc)
            counts["unscored_tokens"] += int(numpy.isnan(probs[first.start : second.end]).sum())
            counts["windowed_docs"] += int(doc.spans["paraphrase"].attrs.get("n_windows", 1) > 1)
        docs.clear()

    for _ in range(args.n):
        first, second = random_turn(rng), random_turn(rng)
        counts["pairs"] += 1
        try:
            docs.append(make_pair_doc(nlp, first, second))
        except PairDocError:
            counts["documented_errors"] += 1
        except Exception:  # noqa: BLE001
            counts["unexpected_errors"] += 1
            examples_of_errors.append(traceback.format_exc()[-2000:])
        if len(docs) >= args.batch_size * 4:
            flush()
    flush()
    counts["seconds"] = round(time.time() - start, 1)
    print(json.dumps(counts, indent=2))
    for err in examples_of_errors[:3]:
        print(err)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps({"counts": counts, "errors": examples_of_errors[:20]}, indent=2))


if __name__ == "__main__":
    main()
