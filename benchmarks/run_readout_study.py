"""The readout study: on one trained pipeline and ContextDeP dev, the honest
(cross-tuned: 4 folds x 5 repeats) scores of

- ``plain``: the paper's plain rule (every maximal run of highlighted tokens a
  span), thresholds tuned, no vote-share map (vote_share = pair score);
- ``phrases``: the same plus the span decoding settings tuned on the tuning folds;
- ``share_<features>``: ``phrases`` plus a vote-share map fitted on the tuning
  folds, for each candidate feature set (``vote_share.FEATURES`` subsets).

The pipeline runs once; every variant rewrites the annotations from the stored
probabilities. The rule that chooses what ships is written in
docs/results.md, "Span decoding and vote share", before the runs.

    python -m benchmarks.run_readout_study training/contextdep_minilm_cpu/model-best corpus/contextdep/dev.spacy \
        --output benchmarks/results/readout_study.json
"""
import argparse
import json
import time
from pathlib import Path

import spacy
from spacy.training import Example

from spacy_paraphrase.corpus import PairCorpus
from spacy_paraphrase.tuning import spans
from spacy_paraphrase.paraphrase_spans import vote_share
from spacy_paraphrase.paraphrase_spans.readout import PLAIN_DECODING

SHOWN = ("pair_acc", "pair_macro_f", "pair_f", "jaccard_first", "jaccard_second", "spans_per_turn",
         "one_word_spans", "vote_share_pearson", "vote_share_spearman", "vote_share_ece", "vote_share_mae",
         "agreement_spearman")
FEATURE_SETS = {"pair_score": ("pair_score",), "all": vote_share.FEATURES}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("data")
    p.add_argument("--pipe", default="paraphrase_spans")
    p.add_argument("--folds", type=int, default=4)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--output", type=Path, default=None)
    args = p.parse_args()
    nlp = spacy.load(args.model)
    pipe = nlp.get_pipe(args.pipe)
    gold = list(PairCorpus(args.data)(nlp))
    docs = list(nlp.pipe([eg.predicted for eg in gold], batch_size=8))
    examples = [Example(d, eg.reference) for d, eg in zip(docs, gold)]
    base = pipe.readout.replace(vote_share_map=None, **PLAIN_DECODING)
    runs = {}
    kw = dict(folds=args.folds, repeats=args.repeats, scorer=pipe.scorer)

    def run(label, **options):
        start = time.perf_counter()
        result = spans.cross_tuned_scores(examples, base, args.pipe, **kw, **options)
        runs[label] = {"scores": {k: result["scores"].get(f"{args.pipe}_{k}") for k in SHOWN},
                       "spread": {k: result["spread"].get(f"{args.pipe}_{k}") for k in SHOWN},
                       "chosen": result["chosen"], "seconds": round(time.perf_counter() - start, 1)}
        print(label, json.dumps(runs[label]["scores"]), flush=True)

    run("plain")
    run("phrases", decoding=True)
    for name, features in FEATURE_SETS.items():
        run(f"share_{name}", decoding=True, vote_share=True, share_features=features)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps({"model": Path(args.model).name, "n_pairs": len(examples),
                                           "folds": args.folds, "repeats": args.repeats, "runs": runs},
                                          indent=1))


if __name__ == "__main__":
    main()
