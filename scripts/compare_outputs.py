"""Prove that a code change left a trained pipeline's outputs unchanged.

``dump`` runs a trained pipeline over pair Docs and writes, per Doc, everything the
components write: tokens, ``token_probs`` (NaN kept), ``doc.cats``, every span group
(spans, labels, span scores, group attrs). The inputs are the pairs of a ``.spacy``
file given both as word lists and as strings, plus a seeded fuzz sample (odd scripts,
whitespace, emoji, and monologues long enough to be encoded as several windows).
``compare`` checks two dumps are identical (NaN-aware, exact floats by default).

Run ``dump`` once with the code before the change and once after, then ``compare``:

    python scripts/compare_outputs.py dump MODEL corpus/contextdep/dev.spacy before.jsonl --n-process 2
    # ... change the code, reinstall ...
    python scripts/compare_outputs.py dump MODEL corpus/contextdep/dev.spacy after.jsonl --n-process 2
    python scripts/compare_outputs.py compare before.jsonl after.jsonl
"""
import argparse
import json
import math
import random
import sys
from pathlib import Path
from typing import Dict, Iterator, List

import numpy
import spacy
from spacy.tokens import Doc, DocBin

from spacy_paraphrase import PairDocError, get_turns, make_pair_doc

WORDS = ["the", "weather", "was", "awful", "Rome.", "(yes)", "don't", "U.S.", "—", "20th",
         "Երևան", "我们赢了", "فزنا", "🎉", "a\u200bb", "\u00a0", "we", "won", "it", "time"]


def _jsonable(value):
    if isinstance(value, numpy.ndarray):
        return [None if (isinstance(v, float) and math.isnan(v)) else v for v in value.tolist()]
    if isinstance(value, (numpy.floating, float)):
        value = float(value)
        return None if math.isnan(value) else value
    if isinstance(value, (numpy.integer,)):
        return int(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def describe(doc: Doc) -> Dict:
    """Everything the components write on a Doc, as plain JSON values."""
    groups = {}
    for key, group in sorted(doc.spans.items()):
        groups[key] = {
            "spans": [[s.start, s.end, s.label_] for s in group],
            "attrs": {k: _jsonable(v) for k, v in sorted(group.attrs.items())},
        }
    return {"text": doc.text, "tokens": [t.text for t in doc], "cats": _jsonable(dict(sorted(doc.cats.items()))),
            "spans": groups}


def fuzz_turns(n: int, seed: int) -> Iterator[List]:
    rng = random.Random(seed)
    for i in range(n):
        pair = []
        for _ in range(2):
            length = rng.randint(300, 420) if i % 10 == 0 else rng.randint(1, 25)  # every 10th: windowed
            words = [rng.choice(WORDS) for _ in range(length)]
            pair.append(words if rng.random() < 0.5 else " ".join(words))
        yield pair


def inputs(nlp, data: Path, n_fuzz: int, seed: int) -> List[Doc]:
    docs = []
    for ref in DocBin().from_disk(data).get_docs(nlp.vocab):
        first, second = get_turns(ref)
        words = [[t.text if t.text.strip() else "" for t in turn] for turn in (first, second)]
        docs.append(make_pair_doc(nlp, words[0], words[1]))
        docs.append(make_pair_doc(nlp, " ".join(words[0]), " ".join(words[1])))
    for first, second in fuzz_turns(n_fuzz, seed):
        try:
            docs.append(make_pair_doc(nlp, first, second))
        except PairDocError:
            continue
    return docs


def dump(args) -> None:
    nlp = spacy.load(args.model)
    docs = inputs(nlp, args.data, args.fuzz, args.seed)
    with args.output.open("w", encoding="utf8") as f:
        for doc in nlp.pipe(docs, batch_size=args.batch_size, n_process=args.n_process):
            f.write(json.dumps(describe(doc), ensure_ascii=False, sort_keys=True) + "\n")
    windowed = sum(1 for line in args.output.open(encoding="utf8")
                   if (json.loads(line)["spans"].get("paraphrase", {}).get("attrs", {}).get("n_windows") or 1) > 1)
    print(f"{len(docs)} Docs ({windowed} windowed) -> {args.output}")


def _equal(a, b, tol: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= tol
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k], tol) for k in a)
    return a == b


def compare(args) -> None:
    a = args.first.read_text(encoding="utf8").splitlines()
    b = args.second.read_text(encoding="utf8").splitlines()
    if len(a) != len(b):
        sys.exit(f"different number of Docs: {len(a)} vs {len(b)}")
    bad = [i for i, (x, y) in enumerate(zip(a, b)) if not _equal(json.loads(x), json.loads(y), args.tolerance)]
    for i in bad[:5]:
        print(f"Doc {i} differs:\n  {a[i][:300]}\n  {b[i][:300]}")
    print(f"{len(a) - len(bad)} of {len(a)} Docs identical (tolerance {args.tolerance})")
    sys.exit(1 if bad else 0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="run MODEL over DATA's pairs (+ a fuzz sample) and write its outputs")
    d.add_argument("model")
    d.add_argument("data", type=Path, help=".spacy file of pair Docs")
    d.add_argument("output", type=Path)
    d.add_argument("--fuzz", type=int, default=100, help="generated pairs (every 10th long enough to window)")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--batch-size", type=int, default=8)
    d.add_argument("--n-process", type=int, default=1)
    c = sub.add_parser("compare", help="exit 1 unless two dumps are identical")
    c.add_argument("first", type=Path)
    c.add_argument("second", type=Path)
    c.add_argument("--tolerance", type=float, default=0.0)
    args = p.parse_args()
    (dump if args.command == "dump" else compare)(args)


if __name__ == "__main__":
    main()
