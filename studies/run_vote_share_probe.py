"""Does the trained encoder hold a better vote share than its pair score?

A pair-level head on the pair transformer is the other way to a vote share
(a learned head on the soft pair targets). Before training one, this probe
asks whether the trained encoder's pooled states carry the annotators' share
at all: it runs MODEL (no doc_cleaner, so the transformer output stays) over
TRAIN and DEV, pools each pair ([CLS]; the mean of each turn's wordpieces;
their product; their cosine), fits a logistic map on the TRAIN pairs' votes
(binomial likelihood, L2 over a grid, features standardised on TRAIN) and
scores it on DEV with ``share_scores`` (the scorer's vote-share keys), next
to the shipped map on the pair score fitted on TRAIN the same way.

    python -m studies.run_vote_share_probe training/contextdep_minilm_cpu/model-tuned \
        corpus/contextdep/train_soft.spacy corpus/contextdep/dev.spacy \
        -o studies/results/vote_share_probe.json

The encoder was fine-tuned on TRAIN (token targets), so TRAIN states are
in-sample: the probe says what a head on top of this encoder can find, not
what joint training would.
"""
import argparse
import json
from pathlib import Path
from typing import Dict, List, Tuple

import numpy
import spacy

from spacy_paraphrase.corpus import PairCorpus
from spacy_paraphrase.pair_doc import get_turns
from spacy_paraphrase.paraphrase_spans.vote_share import fit_vote_share, pair_features, share_scores

BLOCKS = {"cls": (0, 1), "turn_means": (1, 3), "product": (3, 4), "all": (0, 5)}
L2_GRID = (10.0, 100.0, 1000.0, 10000.0)


def pooled(nlp, path: Path) -> Tuple[List[numpy.ndarray], List[Tuple[int, int]], List[Dict[str, float]]]:
    """Per pair: [cls, first mean, second mean, product, cosine], the votes, the pair features."""
    examples = list(PairCorpus(path)(nlp))
    feats, votes, rows = [], [], []
    disabled = [name for name in ("doc_cleaner",) if name in nlp.pipe_names]
    with nlp.select_pipes(disable=disabled):
        for doc, eg in zip(nlp.pipe([e.predicted for e in examples], batch_size=8), examples):
            trf = doc._.trf_data
            hidden = numpy.asarray(trf.model_output.last_hidden_state.data if hasattr(trf, "model_output")
                                   else trf.tensors[0])
            hidden = hidden.reshape(-1, hidden.shape[-1])
            means = []
            for turn in get_turns(doc):
                idx = trf.align[turn.start : turn.end].data.ravel()
                means.append(hidden[idx].mean(0) if len(idx) else numpy.zeros(hidden.shape[-1]))
            a, b = means
            cos = float(a @ b / (numpy.linalg.norm(a) * numpy.linalg.norm(b) + 1e-9))
            feats.append([hidden[0], a, b, a * b, numpy.asarray([cos])])
            k, n = eg.reference.spans["paraphrase"].attrs["votes"]
            votes.append((int(k), int(n)))
            probs = numpy.asarray(doc.spans["paraphrase"].attrs["token_probs"], dtype="float64")
            rows.append(pair_features(doc, probs))
    return feats, votes, rows


def design(feats, block: Tuple[int, int]) -> numpy.ndarray:
    return numpy.asarray([numpy.concatenate(f[block[0] : block[1]]) for f in feats], dtype="float64")


def fit_logistic(x: numpy.ndarray, votes, l2: float) -> numpy.ndarray:
    """Newton on the binomial likelihood, L2 on the coefficients (not the intercept)."""
    X = numpy.hstack([numpy.ones((len(x), 1)), x])
    k = numpy.asarray([v[0] for v in votes], dtype="float64")
    n = numpy.asarray([v[1] for v in votes], dtype="float64")
    w = numpy.zeros(X.shape[1])
    penalty = numpy.full(X.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(30):
        p = 1.0 / (1.0 + numpy.exp(-X @ w))
        step = numpy.linalg.solve((X * (n * p * (1 - p))[:, None]).T @ X + numpy.diag(penalty),
                                  X.T @ (k - n * p) - penalty * w)
        w += step
        if numpy.abs(step).max() < 1e-8:
            break
    return w


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("train", type=Path)
    parser.add_argument("dev", type=Path)
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args()
    nlp = spacy.load(args.model)
    train, train_votes, train_rows = pooled(nlp, args.train)
    dev, dev_votes, dev_rows = pooled(nlp, args.dev)
    result: Dict = {"model": Path(args.model).name, "train": args.train.name, "dev": args.dev.name,
                    "n_train": len(train), "n_dev": len(dev), "probes": []}
    shipped = fit_vote_share(train_rows, train_votes)
    result["pair_score_map"] = share_scores(shipped.predict(dev_rows).tolist(), dev_votes, "dev")
    for name, block in BLOCKS.items():
        xt, xd = design(train, block), design(dev, block)
        mu, sd = xt.mean(0), xt.std(0) + 1e-6
        for l2 in L2_GRID:
            w = fit_logistic((xt - mu) / sd, train_votes, l2)
            pred = 1.0 / (1.0 + numpy.exp(-(w[0] + ((xd - mu) / sd) @ w[1:])))
            result["probes"].append({"features": name, "dims": int(xt.shape[1]), "l2": l2,
                                     **share_scores(pred.tolist(), dev_votes, "dev")})
    result["best_probe_pearson"] = max(p["dev_vote_share_pearson"] for p in result["probes"])
    text = json.dumps(result, indent=2) + "\n"
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
