"""ContextDeP (Wegmann et al. 2024, "Paraphrases in Interviews") to pair Docs.

Input: the release's TSV (``train.tsv``, ``dev.tsv``, ``test.tsv``), one row per
(pair, annotator), columns ``QID, Annotator, Session, Is Paraphrase, Guest
Tokens, Guest Highlights, Host Tokens, Host Highlights``. The words of a turn
are exactly ``text.split(" ")`` (empty words from double spaces are kept as
whitespace tokens, so highlight indices never shift).

Modes:

``majority``
    One Doc per pair: the pair is a paraphrase iff at least half of its
    annotators said so (ties count as paraphrase; the paper's pair gold); a
    word is highlighted iff the pair is one and at least half of the
    annotators *who found a paraphrase* highlighted it. Word targets of a pair
    whose gold label is "not paraphrase" are all 0: this project's choice. The
    paper's evaluation keeps the words of such a pair (the scorer's
    ``paper_gold`` rebuilds them from ``votes`` and ``highlight_counts``,
    which every Doc keeps; docs/paper-model.md).
``all``
    One Doc per annotation (the paper's ALL model): the annotator's label and
    highlights (all 0 when that annotator found no paraphrase).
``soft``
    One Doc per pair; a word's target is the number of annotators who
    highlighted it divided by *all* annotators of the pair, the pair's target
    is the share of paraphrase votes.

Every Doc keeps, in ``doc.spans["turns"].attrs``: ``id`` (the QID); and in
``doc.spans["paraphrase"].attrs``: ``token_targets`` (the training target per
token), ``votes`` (``[paraphrase votes, annotators]``), ``highlight_counts``
(per token, how many annotators highlighted it), plus ``annotator`` in ``all``
mode; ``votes`` and ``highlight_counts`` are those of the whole pair, on
every pair, a paraphrase or not. ``doc.spans["paraphrase"]`` holds the gold
highlight as spans (``SOURCE`` / ``PARAPHRASE``): the ``majority`` gold above
in ``majority`` and ``soft`` modes, the annotator's highlight in ``all`` mode; ``doc.cats
["PARAPHRASE"]`` the pair target.
"""
import ast
from pathlib import Path
from typing import Dict, List, Tuple

import numpy
from spacy.tokens import Doc
from spacy.vocab import Vocab

from ..pair_doc import PARAPHRASE_LABEL, SPANS_KEY, make_pair_doc, runs_to_spans
from ..paraphrase_spans.readout import SOURCE_LABEL
from .common import ConversionError, ConversionReport, convert_rows, read_table

COLUMNS = [
    "QID",
    "Annotator",
    "Is Paraphrase",
    "Guest Tokens",
    "Guest Highlights",
    "Host Tokens",
    "Host Highlights",
]
MODES = ("majority", "all", "soft")
SPEAKERS = ("GUEST", "HOST")


class _Blank:
    """Just enough of a Language for make_pair_doc with word-list turns."""

    def __init__(self, vocab: Vocab):
        self.vocab = vocab


def _parse_highlights(value: str, n_words: int, column: str) -> List[int]:
    try:
        parsed = ast.literal_eval(value.strip())
    except (ValueError, SyntaxError):
        raise ValueError(f"{column} is not a Python list: {value[:60]!r}") from None
    if not isinstance(parsed, (list, tuple)) or not all(v in (0, 1) for v in parsed):
        raise ValueError(f"{column} must be a list of 0/1 values, got {value[:60]!r}")
    if len(parsed) != n_words:
        raise ValueError(
            f"{column} has {len(parsed)} values but the turn has {n_words} words "
            "(words are the text split on single spaces)"
        )
    return [int(v) for v in parsed]


def _read(path: Path, report: ConversionReport, skip_bad: bool):
    """The annotations of the file, grouped by pair (QID, in file order)."""
    pairs: Dict[str, dict] = {}

    def add(line: int, row: Dict[str, str]) -> None:
        qid = row["QID"].strip()
        annotator = row["Annotator"].strip()
        if not qid or not annotator:
            raise ValueError("empty QID or Annotator")
        label = row["Is Paraphrase"].strip()
        if label not in ("0", "1"):
            raise ValueError(f"Is Paraphrase must be 0 or 1, got {label!r}")
        guest, host = row["Guest Tokens"], row["Host Tokens"]
        g_words, h_words = guest.split(" "), host.split(" ")
        if not any(g_words) or not any(h_words):
            raise ValueError("an empty turn (Guest Tokens or Host Tokens)")
        g_hl = _parse_highlights(row["Guest Highlights"], len(g_words), "Guest Highlights")
        h_hl = _parse_highlights(row["Host Highlights"], len(h_words), "Host Highlights")
        pair = pairs.get(qid)
        if pair is None:
            pair = pairs[qid] = {"guest": guest, "host": host, "line": line, "annotations": {}}
        elif pair["guest"] != guest or pair["host"] != host:
            raise ConversionError(path, line, f"QID {qid} has different texts here than on line {pair['line']}")
        if annotator in pair["annotations"]:
            raise ConversionError(
                path,
                line,
                f"duplicate annotation: annotator {annotator} already annotated QID "
                f"{qid} (line {pair['annotations'][annotator]['line']})",
            )
        pair["annotations"][annotator] = {"label": int(label), "highlights": g_hl + h_hl, "line": line}

    convert_rows(path, read_table(path, "\t", COLUMNS), add, report, skip_bad)
    return pairs


def _make_doc(
    vocab: Vocab,
    qid: str,
    turns: Tuple[List[str], List[str]],
    speakers: Tuple[str, str],
    targets: numpy.ndarray,
    gold_flags: numpy.ndarray,
    cat: float,
    votes: Tuple[int, int],
    counts: numpy.ndarray,
    spans_key: str,
    cats_key: str,
) -> Doc:
    doc = make_pair_doc(
        _Blank(vocab),  # type: ignore[arg-type]
        turns[0],
        turns[1],
        speakers=speakers,
        pair_id=qid,
    )
    first = doc.spans["turns"][0]
    spans = runs_to_spans(doc, gold_flags, 0, first.end, SOURCE_LABEL)
    spans += runs_to_spans(doc, gold_flags, first.end, len(doc), PARAPHRASE_LABEL)
    doc.spans[spans_key] = spans
    attrs = doc.spans[spans_key].attrs
    attrs["token_targets"] = [float(x) for x in targets]
    attrs["votes"] = [int(votes[0]), int(votes[1])]
    attrs["highlight_counts"] = [int(x) for x in counts]
    doc.cats[cats_key] = float(cat)
    return doc


def pair_docs(
    vocab: Vocab,
    qid: str,
    turns: Tuple[List[str], List[str]],
    speakers: Tuple[str, str],
    annotations: List[Tuple[str, int, List[int]]],
    mode: str = "majority",
    spans_key: str = SPANS_KEY,
    cats_key: str = PARAPHRASE_LABEL,
) -> List[Doc]:
    """The Docs of one pair (one, or one per annotation in ``all`` mode; the
    module doc) from its turns' words and its annotations: (annotator, label
    0/1, one 0/1 highlight per word of both turns). ``convert coded`` builds
    its Docs with this too."""
    hl = numpy.asarray([a[2] for a in annotations], dtype="float32")
    labels = numpy.asarray([a[1] for a in annotations], dtype="int32")
    # An annotator who found no paraphrase highlights nothing.
    hl = hl * labels[:, None]
    counts = hl.sum(axis=0)
    n = len(annotations)
    k = int(labels.sum())
    gold_pair = 2 * k >= n
    if gold_pair and k > 0:
        gold_words = 2 * counts >= k
    else:
        gold_words = numpy.zeros_like(counts, dtype=bool)
    if mode == "majority":
        return [_make_doc(vocab, qid, turns, speakers, gold_words.astype("float32"), gold_words,
                          float(gold_pair), (k, n), counts, spans_key, cats_key)]
    if mode == "soft":
        return [_make_doc(vocab, qid, turns, speakers, counts / n, gold_words, k / n, (k, n), counts,
                          spans_key, cats_key)]
    docs = []
    for (annotator, label, _), row in zip(annotations, hl):
        doc = _make_doc(vocab, qid, turns, speakers, row, row >= 0.5, float(label), (k, n), counts, spans_key,
                        cats_key)
        doc.spans[spans_key].attrs["annotator"] = annotator
        docs.append(doc)
    return docs


def convert_contextdep(
    path,
    vocab: Vocab,
    *,
    mode: str = "majority",
    skip_bad: bool = False,
    spans_key: str = SPANS_KEY,
    cats_key: str = PARAPHRASE_LABEL,
) -> Tuple[List[Doc], ConversionReport]:
    """Convert a ContextDeP TSV file into reference pair Docs (see module doc)."""
    if mode not in MODES:
        raise ValueError(f"Unknown mode {mode!r}; choose one of {MODES}.")
    path = Path(path)
    report = ConversionReport()
    pairs = _read(path, report, skip_bad)
    docs: List[Doc] = []
    for qid, pair in pairs.items():
        annotations = [(name, a["label"], a["highlights"]) for name, a in pair["annotations"].items()]
        docs += pair_docs(vocab, qid, (pair["guest"].split(" "), pair["host"].split(" ")), SPEAKERS, annotations,
                          mode, spans_key, cats_key)
    report.n_docs = len(docs)
    return docs, report
