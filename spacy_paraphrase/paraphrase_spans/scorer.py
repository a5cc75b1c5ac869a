"""The scorer of ``paraphrase_spans`` (``spacy_paraphrase.paraphrase_spans_scorer.v1``).
It reads what the component writes (README.md, "What the component writes")
with the component's ``Readout``. Keys, all prefixed with the component's
name (``{name}_``):

- ``pair_p``, ``pair_r``, ``pair_f``, ``pair_acc``, ``pair_macro_f`` (mean F1
  of both classes): predicted paraphrase = ``doc.cats[cats_key] >= threshold``.
- ``jaccard_first`` / ``jaccard_second``: per turn, the mean word-level
  intersection over union of the gold (``reference_gold``) and the predicted
  highlight (``Readout.span_flags`` on the stored ``token_probs``, whether or
  not the pair passed ``threshold``), over the pairs where both are non-empty
  (``..._n``: how many); ``..._abs50``: the same with the highlight rule fixed
  at 0.5 on the absolute scale, every run a span (this project's gold, so not
  the paper's Jaccard: that is ``paper_jaccard_*``).
- ``paper_*``, the metrics of the ContextDeP paper exactly as its authors'
  code computes them (``paper_scores``; docs/paper-model.md), when every
  reference carries the annotator counts (``votes``, ``highlight_counts``),
  else None: ``paper_pair_p`` / ``_r`` / ``_f`` / ``_acc`` / ``_macro_f``
  (gold: ``k / n >= 0.5``; predicted: some word of both turns has probability
  > 0.5), ``paper_jaccard_first`` / ``paper_jaccard_second`` (None when no
  pair qualifies) and ``paper_jaccard_first_n`` / ``_second_n`` (how many
  pairs each averages).
- ``token_p``, ``token_r``, ``token_f``: over all tokens; a predicted token is
  one inside an output span (so only pairs that pass ``threshold`` count).
- Soft metrics, when every reference span group carries the annotator counts
  (``votes``, ``highlight_counts``), else None: ``soft_token_ce`` and
  ``soft_token_brier`` of each token's probability (clipped to [1e-7, 1-1e-7])
  against its annotator share; ``soft_pair_pearson``, ``soft_pair_spearman``
  and ``soft_pair_brier`` of the pair score against the vote share. Always:
  ``pair_ece``, the expected calibration error of the pair score against the
  gold label (10 equal-width bins, ``metrics.expected_calibration_error``).
- What a reader sees, with annotator votes (else None):
  ``vote_share_pearson`` / ``_spearman`` / ``_ece`` / ``_mae`` of the
  predicted ``vote_share`` against the annotator share k/n, and
  ``agreement_spearman`` of the predicted ``agreement`` against the observed
  pairwise agreement of the annotators (``vote_share.share_scores``).
  Always (None without output spans): ``spans_per_turn``, the mean number of
  output spans in the turns that have any, and ``one_word_spans``, the share
  of output spans one word long (a word: not whitespace, not punctuation).

This project's gold (``reference_gold``, every key but ``paper_*``): with
annotator counts, a pair is a paraphrase iff ``2 * paraphrase_votes >=
annotators`` (the paper's pair rule) and a word is gold iff the pair is one and
``2 * count >= paraphrase_votes``: the words of a pair that is not a majority
paraphrase are never gold (the paper's Jaccard keeps them: ``paper_gold``);
without counts, ``reference.cats[cats_key] >= 0.5`` (without it: both turns
have gold tokens) and the tokens with target >= 0.5
(``reference_token_targets``).
"""
from typing import Dict, Iterable, List, Optional, Tuple

import numpy
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..metrics import expected_calibration_error, jaccard, pair_classification_scores, pearson, prf, spearman
from ..pair_doc import PARAPHRASE_LABEL, SPANS_KEY, get_turns
from .decoding import is_word
from .readout import PLAIN_DECODING, Readout
from .vote_share import share_scores


def reference_token_targets(doc: Doc, spans_key: str) -> numpy.ndarray:
    """Per-token training targets in [0, 1] from a reference (gold) Doc."""
    if spans_key not in doc.spans:
        raise ValueError(
            f"The reference Doc has no doc.spans['{spans_key}'] with the gold "
            "highlights (an empty group means 'no highlight'). Convert data with "
            "`python -m spacy_paraphrase convert` or set the spans yourself."
        )
    group = doc.spans[spans_key]
    if "token_targets" in group.attrs:
        targets = numpy.asarray(group.attrs["token_targets"], dtype="float32")
        if targets.shape != (len(doc),):
            raise ValueError(
                f"attrs['token_targets'] has {targets.size} values for a Doc of {len(doc)} tokens."
            )
        if numpy.isnan(targets).any() or (targets < 0).any() or (targets > 1).any():
            raise ValueError("attrs['token_targets'] must hold values in [0, 1].")
        return targets
    targets = numpy.zeros((len(doc),), dtype="float32")
    for span in group:
        targets[span.start : span.end] = 1.0
    return targets


def reference_gold(doc: Doc, spans_key: str, cats_key: str) -> Tuple[bool, numpy.ndarray]:
    """(pair is a paraphrase, per-token gold highlight) of a reference Doc."""
    targets = reference_token_targets(doc, spans_key)
    attrs = doc.spans[spans_key].attrs
    if "votes" in attrs and "highlight_counts" in attrs:
        k, n = (int(v) for v in attrs["votes"])
        counts = numpy.asarray(attrs["highlight_counts"], dtype="float32")
        if counts.shape != (len(doc),):
            raise ValueError(
                f"attrs['highlight_counts'] has {counts.size} values for a Doc of {len(doc)} tokens."
            )
        pair = n > 0 and 2 * k >= n
        words = (2 * counts >= k) if (pair and k > 0) else numpy.zeros((len(doc),), dtype=bool)
        return bool(pair), words.astype(bool)
    words = targets >= 0.5
    if cats_key in doc.cats:
        pair = doc.cats[cats_key] >= 0.5
    else:
        first, second = get_turns(doc)
        pair = bool(words[first.start : first.end].any() and words[second.start : second.end].any())
    if not pair:
        words = numpy.zeros_like(words)
    return bool(pair), words


# The ContextDeP authors' evaluation (github.com/nlpsoc/Paraphrases-in-News-Interviews,
# src/eval_token_classifier.py, ``PRED_THRESH = 0.50``): every cut-off is 0.5.
PAPER_THRESHOLD = 0.5
PAPER_KEYS = tuple(f"paper_pair_{k}" for k in ("p", "r", "f", "acc", "macro_f")) + tuple(
    f"paper_jaccard_{t}{n}" for t in ("first", "second") for n in ("", "_n"))


def paper_gold(doc: Doc, spans_key: str) -> Optional[Tuple[bool, numpy.ndarray]]:
    """The authors' evaluation gold of a reference pair Doc, from its annotator
    counts (``attrs["votes"] = [k, n]``, ``attrs["highlight_counts"]``); None
    without them. The pair is a paraphrase iff ``k / n >= 0.5``
    (``eval_token_classifier.main``'s ``human_binary``); a word is gold iff
    ``count / max(k, 1) >= 0.5`` (``annotation_data.extract_txts_to_compare``'s
    weight, thresholded by ``main``) on *every* pair, a majority paraphrase or
    not: a pair without a paraphrase vote has no gold word. Unlike
    ``reference_gold``, nothing is zeroed on pairs that are not majority
    paraphrases."""
    group = doc.spans.get(spans_key)
    if group is None or "votes" not in group.attrs or "highlight_counts" not in group.attrs:
        return None
    k, n = (int(v) for v in group.attrs["votes"])
    counts = numpy.asarray(group.attrs["highlight_counts"], dtype="float64")
    if counts.shape != (len(doc),):
        raise ValueError(f"attrs['highlight_counts'] has {counts.size} values for a Doc of {len(doc)} tokens.")
    pair = n > 0 and k / n >= PAPER_THRESHOLD
    return bool(pair), counts / max(k, 1) >= PAPER_THRESHOLD


def paper_prediction(doc: Doc, probs: numpy.ndarray) -> Tuple[bool, numpy.ndarray]:
    """The authors' reading of a pair's word probabilities: the pair is a
    paraphrase iff some word of *both* turns has probability > 0.5
    (``TokenClassifier.inference``'s ``prob > pred_thresh``, then ``model_binary``
    in ``eval_token_classifier.get_tokenclassification_predictions``); the
    highlighted words are those with probability >= 0.5 (``model_highlights_*``
    there), on every pair, whatever its decision. A token without a
    probability (NaN) is never either; only the turns' tokens decide."""
    p = numpy.nan_to_num(numpy.asarray(probs, dtype="float64"), nan=-1.0)
    pair = all(bool((p[t.start : t.end] > PAPER_THRESHOLD).any()) for t in get_turns(doc))
    words = numpy.zeros((len(doc),), dtype=bool)
    for t in get_turns(doc):
        words[t.start : t.end] = p[t.start : t.end] >= PAPER_THRESHOLD
    return pair, words


def paper_scores(
    gold_pairs: List[bool], pred_pairs: List[bool], jaccards: Dict[str, List[float]], prefix: str
) -> Dict[str, Optional[float]]:
    """``{prefix}_paper_*`` from the authors' gold and predictions per pair and,
    per turn, the Jaccards of the pairs where both word sets are non-empty
    (``evaluate_icl_responses.jaccard_overlap_from_labels``); a turn without
    such a pair: None, as ``stats.jaccard_overlap_for_highlights`` returns."""
    out: Dict[str, Optional[float]] = dict(pair_classification_scores(gold_pairs, pred_pairs, f"{prefix}_paper"))
    for turn, values in jaccards.items():
        out[f"{prefix}_paper_jaccard_{turn}"] = float(numpy.mean(values)) if values else None
        out[f"{prefix}_paper_jaccard_{turn}_n"] = len(values)
    return out


def span_word_counts(doc: Doc, spans_key: str) -> List[Tuple[str, int]]:
    """(label, number of words) of every output span of a processed Doc; a
    word is a token that is neither whitespace nor punctuation."""
    return [(span.label_, sum(is_word(t) for t in span)) for span in doc.spans.get(spans_key, [])]


def soft_scores(
    pair_scores: List[float],
    gold_pairs: List[bool],
    shares: List[float],
    token_p: List[numpy.ndarray],
    token_s: List[numpy.ndarray],
    prefix: str,
) -> Dict[str, Optional[float]]:
    out: Dict[str, Optional[float]] = {
        f"{prefix}_soft_token_ce": None,
        f"{prefix}_soft_token_brier": None,
        f"{prefix}_soft_pair_pearson": None,
        f"{prefix}_soft_pair_spearman": None,
        f"{prefix}_soft_pair_brier": None,
        f"{prefix}_pair_ece": expected_calibration_error(
            numpy.asarray(pair_scores, dtype="float64"), numpy.asarray(gold_pairs, dtype="float64")
        ),
    }
    if not shares:
        return out
    p = numpy.clip(numpy.concatenate(token_p).astype("float64"), 1e-7, 1 - 1e-7)
    t = numpy.concatenate(token_s).astype("float64")
    if len(p):
        out[f"{prefix}_soft_token_ce"] = float(numpy.mean(-(t * numpy.log(p) + (1 - t) * numpy.log(1 - p))))
        out[f"{prefix}_soft_token_brier"] = float(numpy.mean((p - t) ** 2))
    x = numpy.asarray([ps for ps, sh in zip(pair_scores, shares) if sh is not None], dtype="float64")
    y = numpy.asarray([sh for sh in shares if sh is not None], dtype="float64")
    out[f"{prefix}_soft_pair_pearson"] = pearson(x, y)
    out[f"{prefix}_soft_pair_spearman"] = spearman(x, y)
    out[f"{prefix}_soft_pair_brier"] = float(numpy.mean((x - y) ** 2)) if len(x) else None
    return out


def score_paraphrase_spans(  # noqa: C901
    examples: Iterable[Example],
    *,
    name: str = "paraphrase_spans",
    spans_key: str = SPANS_KEY,
    cats_key: str = PARAPHRASE_LABEL,
    **kwargs,
) -> Dict[str, Optional[float]]:
    """Score predicted pair Docs against reference pair Docs (see module doc).
    The settings are those of the component's ``Readout`` (its cfg keys;
    other keyword arguments are ignored)."""
    readout = Readout.from_cfg({**kwargs, "spans_key": spans_key, "cats_key": cats_key})
    # this project's gold under a fixed rule: highlight threshold 0.5, absolute, every run a span
    abs50 = readout.replace(highlight_threshold=0.5, highlight_scale="absolute", **PLAIN_DECODING)
    gold_pairs: List[bool] = []
    pred_pairs: List[bool] = []
    jacc: Dict[str, List[float]] = {k: [] for k in ("first", "second", "first_abs50", "second_abs50")}
    # the paper's metrics (paper_gold, paper_prediction), while every reference has counts
    paper_ok = True
    paper_gold_pairs: List[bool] = []
    paper_pred_pairs: List[bool] = []
    paper_jacc: Dict[str, List[float]] = {"first": [], "second": []}
    tok_tp = tok_fp = tok_fn = 0.0
    pair_scores: List[float] = []
    shares: List[float] = []
    soft_p: List[numpy.ndarray] = []
    soft_s: List[numpy.ndarray] = []
    all_soft = True
    votes: List[Tuple[int, int]] = []
    pred_shares: List[float] = []
    span_lengths: List[int] = []
    n_highlighted_turns = 0
    for eg in examples:
        pred_doc, ref_doc = eg.predicted, eg.reference
        if len(pred_doc) != len(ref_doc):
            raise ValueError(
                "Predicted and reference Docs have different tokenizations "
                f"({len(pred_doc)} vs {len(ref_doc)} tokens); build examples with the "
                "spacy_paraphrase.PairCorpus.v1 reader."
            )
        gold_pair, gold_words = reference_gold(ref_doc, spans_key, cats_key)
        probs = readout.token_probs(pred_doc)
        score = float(pred_doc.cats.get(cats_key, 0.0))
        gold_pairs.append(gold_pair)
        pred_pairs.append(score >= readout.threshold)
        pair_scores.append(score)
        ref_attrs = ref_doc.spans[spans_key].attrs
        if all_soft and "votes" in ref_attrs and "highlight_counts" in ref_attrs:
            k, n = (int(v) for v in ref_attrs["votes"])
            share = numpy.asarray(ref_attrs["highlight_counts"], dtype="float64") / max(n, 1)
            keep = ~numpy.isnan(probs)
            soft_p.append(probs[keep])
            soft_s.append(share[keep])
            shares.append(k / max(n, 1))
            votes.append((k, n))
            pred_shares.append(float(pred_doc.spans[spans_key].attrs.get("vote_share", score)))
        else:
            all_soft = False
        gold = paper_gold(ref_doc, spans_key) if paper_ok else None
        if gold is None:
            paper_ok = False
        else:
            pred_pair, pred_words = paper_prediction(pred_doc, probs)
            paper_gold_pairs.append(gold[0])
            paper_pred_pairs.append(pred_pair)
            for t, turn_span in zip(("first", "second"), get_turns(pred_doc)):
                j = jaccard(gold[1][turn_span.start : turn_span.end], pred_words[turn_span.start : turn_span.end])
                if j is not None:
                    paper_jacc[t].append(j)
        for suffix, rule in (("", readout), ("_abs50", abs50)):
            hl = rule.span_flags(pred_doc, probs)
            for t, turn_span in zip(("first", "second"), get_turns(pred_doc)):
                j = jaccard(gold_words[turn_span.start : turn_span.end], hl[turn_span.start : turn_span.end])
                if j is not None:
                    jacc[t + suffix].append(j)
        lengths = span_word_counts(pred_doc, spans_key)
        span_lengths.extend(n_words for _, n_words in lengths)
        n_highlighted_turns += len({label for label, _ in lengths})
        pred_words = readout.highlighted(pred_doc)
        tok_tp += float((gold_words & pred_words).sum())
        tok_fp += float((~gold_words & pred_words).sum())
        tok_fn += float((gold_words & ~pred_words).sum())
    scores = pair_classification_scores(gold_pairs, pred_pairs, name)
    for key, values in jacc.items():
        scores[f"{name}_jaccard_{key}"] = float(numpy.mean(values)) if values else 0.0
        if not key.endswith("_abs50"):
            scores[f"{name}_jaccard_{key}_n"] = len(values)
    if paper_ok:
        scores.update(paper_scores(paper_gold_pairs, paper_pred_pairs, paper_jacc, name))
    else:
        scores.update({f"{name}_{key}": None for key in PAPER_KEYS})
    if not all_soft:
        shares, soft_p, soft_s, votes, pred_shares = [], [], [], [], []
    scores.update(soft_scores(pair_scores, gold_pairs, shares, soft_p, soft_s, name))
    scores.update(share_scores(pred_shares, votes, name))
    scores[f"{name}_spans_per_turn"] = len(span_lengths) / n_highlighted_turns if n_highlighted_turns else None
    scores[f"{name}_one_word_spans"] = (
        sum(n == 1 for n in span_lengths) / len(span_lengths) if span_lengths else None)
    tp, tr, tf = prf(tok_tp, tok_fp, tok_fn)
    scores[f"{name}_token_p"] = tp
    scores[f"{name}_token_r"] = tr
    scores[f"{name}_token_f"] = tf
    return scores


@registry.scorers("spacy_paraphrase.paraphrase_spans_scorer.v1")
def make_paraphrase_spans_scorer():
    return score_paraphrase_spans
