"""Circa (Louis, Roth, Radlinski 2020), indirect answers to yes/no questions,
to pair Docs.

Input: ``circa-data.tsv`` (tab-separated, CSV quoting as in the release),
header ``id, context, question-X, canquestion-X, answer-Y, judgements,
goldstandard1, goldstandard2``. ``judgements`` are the annotators' labels
joined by ``#`` (5 per row; 20 rows of the release have 4).

One Doc per row: turns ``question-X`` then ``answer-Y`` (speakers
``QUESTION`` / ``ANSWER``; leading and trailing whitespace removed; the
scenario is *not* put into the turns). ``doc.spans["turns"].attrs`` holds
``id`` (the ``id`` column), ``context`` (the scenario), ``canquestion``
(``canquestion-X``), ``judgements`` (the raw judgement strings, as a list) and
``gold`` (the gold label of the chosen label set, ``None`` when there is no
majority).

Label sets (``labels``):

``strict`` (``goldstandard1``, 8 labels)
    ``STRICT_LABELS``, the strings as they appear in the release.
``relaxed`` (``goldstandard2``, 5 labels)
    ``RELAXED_LABELS``; ``RELAXED_MAP`` maps each strict label to its relaxed
    one ("Probably yes / sometimes yes" -> "Yes", "Probably no" -> "No",
    "I am not sure how X will interpret Y’s answer" -> "In the middle, neither
    yes nor no", the others to themselves). In the release, every row with both
    gold labels has ``goldstandard2 == RELAXED_MAP[goldstandard1]``, and both
    are the label at least 3 judgements agree on (after mapping, for relaxed).

Modes (``mode``):

``hard``
    ``doc.cats`` one-hot for the gold label. Rows without a majority (empty or
    ``NA`` gold) are left out and counted in ``report.notes``.
``soft``
    ``doc.cats`` is the distribution of the row's judgements over the label
    set (strict judgements mapped with ``RELAXED_MAP`` for relaxed). Judgements
    that are empty, ``NA`` or not a strict label are dropped from the
    distribution (counted in ``report.notes``); a row with no judgement left is
    a bad row. Rows without a majority are kept.

Either way ``doc.cats`` holds every label of the set, zeros included. A gold
label that is not empty, ``NA`` or a label of the set is a bad row.

Rows corrupted in the release are left out and counted in ``report.notes``:
the 20 rows whose ``answer-Y`` holds a JSON fragment (contains ``","``; their
question is cut off, e.g. "Do y").

Splits (``split``: ``all``, ``train``, ``dev``, ``test``):

``setting="matched"`` (the paper's random 60/20/20 split)
    The N data records of the file, in file order (bad and left-out rows
    included, so a row's split never depends on the mode, the label set or
    ``skip_bad``), are permuted with ``numpy.random.RandomState(seed)
    .permutation(N)``; the first ``6 * N // 10`` positions of the permutation
    are train, the next ``2 * N // 10`` dev, the rest test.
``setting="unmatched"`` (one scenario held out)
    ``held_out`` is a scenario (a ``context`` value) or its index 0-9 in the
    *sorted* list of the file's scenarios. Its rows are the test split; the
    other rows (file order) are permuted with ``RandomState(seed)
    .permutation(M)``: the first ``8 * M // 10`` train, the rest dev.

``split="all"`` keeps every row; ``setting``, ``seed`` and ``held_out`` are
then refused (they would be ignored), as is ``held_out`` when matched.

Bad rows are looked for in the whole file whatever the split, so every split
of a file fails (or skips) the same rows.
"""
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.tokens import Doc
from spacy.vocab import Vocab

from .common import BadRow, ConversionReport, convert_rows, read_table
from .pairs import blank_nlp, build_pair, check_text, distribution, one_hot

COLUMNS = [
    "id",
    "context",
    "question-X",
    "canquestion-X",
    "answer-Y",
    "judgements",
    "goldstandard1",
    "goldstandard2",
]
SPEAKERS = ("QUESTION", "ANSWER")
NOT_SURE = "I am not sure how X will interpret Y\u2019s answer"
IN_THE_MIDDLE = "In the middle, neither yes nor no"
STRICT_LABELS = (
    "Yes",
    "Probably yes / sometimes yes",
    "Yes, subject to some conditions",
    "No",
    "Probably no",
    IN_THE_MIDDLE,
    NOT_SURE,
    "Other",
)
RELAXED_MAP = {
    "Yes": "Yes",
    "Probably yes / sometimes yes": "Yes",
    "Yes, subject to some conditions": "Yes, subject to some conditions",
    "No": "No",
    "Probably no": "No",
    IN_THE_MIDDLE: IN_THE_MIDDLE,
    NOT_SURE: IN_THE_MIDDLE,
    "Other": "Other",
}
RELAXED_LABELS = ("Yes", "Yes, subject to some conditions", "No", IN_THE_MIDDLE, "Other")
# Spellings of the same label met in copies of the data.
ALIASES = {"I am not sure how X will interpret Y's answer": NOT_SURE}
NO_MAJORITY = ("", "NA")
LABEL_SETS = ("strict", "relaxed")
MODES = ("hard", "soft")
SPLITS = ("all", "train", "dev", "test")
SETTINGS = ("matched", "unmatched")


def _label_set(labels: str) -> Tuple[Sequence[str], Dict[str, str], str]:
    if labels == "strict":
        return STRICT_LABELS, {s: s for s in STRICT_LABELS}, "goldstandard1"
    return RELAXED_LABELS, RELAXED_MAP, "goldstandard2"


def _is_corrupt(row: Dict[str, str]) -> bool:
    return '","' in row["answer-Y"] or '","' in row["question-X"]


def scenarios(contexts: Sequence[Optional[str]]) -> List[str]:
    """The sorted scenarios (``held_out`` indices refer to this order)."""
    return sorted({c for c in contexts if c})


def _resolve_held_out(held_out: Union[int, str, None], contexts: Sequence[Optional[str]]) -> str:
    known = scenarios(contexts)
    listing = "; ".join(f"{i}: {s!r}" for i, s in enumerate(known))
    if held_out is None:
        raise ValueError(f"setting='unmatched' needs held_out (a scenario or its index): {listing}")
    if isinstance(held_out, int) or (isinstance(held_out, str) and held_out.strip().isdigit()):
        index = int(held_out)
        if not 0 <= index < len(known):
            raise ValueError(f"held_out index {index} out of range; scenarios: {listing}")
        return known[index]
    text = str(held_out).strip()
    if text not in known:
        raise ValueError(f"held_out {text!r} is not a scenario of the file; scenarios: {listing}")
    return text


def assign_splits(
    contexts: Sequence[Optional[str]],
    setting: str = "matched",
    seed: int = 0,
    held_out: Union[int, str, None] = None,
) -> Tuple[List[Optional[str]], Optional[str]]:
    """Per record: "train", "dev", "test" (or None: no split, an unreadable
    row in the unmatched setting); and the held-out scenario. See module doc."""
    n = len(contexts)
    out: List[Optional[str]] = [None] * n
    if setting == "matched":
        perm = numpy.random.RandomState(seed).permutation(n)
        n_train, n_dev = 6 * n // 10, 2 * n // 10
        for rank, i in enumerate(perm):
            out[i] = "train" if rank < n_train else "dev" if rank < n_train + n_dev else "test"
        return out, None
    scenario = _resolve_held_out(held_out, contexts)
    rest = []
    for i, c in enumerate(contexts):
        if c == scenario:
            out[i] = "test"
        elif c:
            rest.append(i)
    perm = numpy.random.RandomState(seed).permutation(len(rest))
    n_train = 8 * len(rest) // 10
    for rank, j in enumerate(perm):
        out[rest[j]] = "train" if rank < n_train else "dev"
    return out, scenario


def _split_judgements(value: str) -> List[str]:
    value = value.strip()
    return [j.strip() for j in value.split("#")] if value else []


def convert_circa(
    path,
    vocab: Vocab,
    *,
    labels: str = "relaxed",
    mode: str = "hard",
    split: str = "all",
    setting: str = "matched",
    seed: int = 0,
    held_out: Union[int, str, None] = None,
    skip_bad: bool = False,
    lang: str = "en",
) -> Tuple[List[Doc], ConversionReport]:
    """Convert the Circa TSV file into pair Docs (see module doc)."""
    for name, value, choices in (
        ("labels", labels, LABEL_SETS),
        ("mode", mode, MODES),
        ("split", split, SPLITS),
        ("setting", setting, SETTINGS),
    ):
        if value not in choices:
            raise ValueError(f"Unknown {name} {value!r}; choose one of {choices}.")
    if split == "all" and (setting != "matched" or held_out is not None or seed != 0):
        raise ValueError("setting, seed and held_out choose a split; with split 'all' every row is kept: "
                         "give split train, dev or test.")
    if setting == "matched" and held_out is not None:
        raise ValueError("held_out is for the unmatched setting (one scenario held out); give setting 'unmatched'.")
    path = Path(path)
    label_set, mapping, gold_column = _label_set(labels)
    strict = {s: s for s in STRICT_LABELS}
    strict.update(ALIASES)
    records = list(read_table(path, "\t", COLUMNS))
    contexts = [
        None if isinstance(row, BadRow) else (row["context"].strip() or None) for _, row in records
    ]
    report = ConversionReport()
    if split == "all":
        wanted = [True] * len(records)
    else:
        assigned, scenario = assign_splits(contexts, setting, seed, held_out)
        wanted = [s == split for s in assigned]
        how = f"seed {seed}" + (f", held-out scenario {scenario!r}" if scenario else "")
        report.notes.append(f"Split {split!r} ({setting}, {how}): {sum(wanted)} of {len(records)} rows.")
    keep = {line: w for (line, _), w in zip(records, wanted)}
    nlp = blank_nlp(vocab, lang)
    corrupt: List[int] = []
    no_majority = 0
    dropped: Counter = Counter()

    def build(line: int, row: Dict[str, str]) -> Optional[Doc]:
        # every row is checked, in or out of the split
        nonlocal no_majority
        row_id = row["id"].strip()
        if not row_id:
            raise ValueError("empty id")
        if not row["context"].strip():
            raise ValueError("empty context")
        check_text(row["question-X"], "question-X")
        check_text(row["answer-Y"], "answer-Y")
        gold_raw = row[gold_column].strip()
        gold_raw = ALIASES.get(gold_raw, gold_raw)
        if gold_raw not in NO_MAJORITY and gold_raw not in label_set:
            raise ValueError(f"{gold_column} {gold_raw!r} is not a {labels} label {list(label_set)}")
        gold = None if gold_raw in NO_MAJORITY else gold_raw
        judgements = _split_judgements(row["judgements"])
        votes = [mapping[strict[j]] for j in judgements if j in strict]
        if mode == "soft" and not votes:
            raise ValueError(f"no usable judgement in {row['judgements']!r}")
        if not keep[line]:
            return None
        if _is_corrupt(row):
            corrupt.append(line)
            return None
        if mode == "hard" and gold is None:
            no_majority += 1
            return None
        if mode == "soft":
            dropped.update(j for j in judgements if j not in strict)
        doc = build_pair(nlp, path, line, row["question-X"], row["answer-Y"],
                         ("question-X", "answer-Y"), speakers=SPEAKERS, pair_id=row_id)
        doc.cats = one_hot(label_set, gold) if mode == "hard" else distribution(label_set, votes)
        attrs = doc.spans["turns"].attrs
        attrs["context"] = row["context"].strip()
        attrs["canquestion"] = row["canquestion-X"].strip()
        attrs["judgements"] = judgements
        attrs["gold"] = gold
        return doc

    docs = convert_rows(path, records, build, report, skip_bad)
    if corrupt:
        shown = ", ".join(map(str, corrupt[:5])) + (", ..." if len(corrupt) > 5 else "")
        report.notes.append(
            f"{len(corrupt)} rows corrupted in the source left out (answer-Y holds a JSON "
            f"fragment, the question is cut off): lines {shown}."
        )
    if no_majority:
        report.notes.append(
            f"{no_majority} rows without a majority (empty {gold_column}) left out (hard mode)."
        )
    if dropped:
        report.notes.append(
            f"{sum(dropped.values())} judgements dropped from the distributions (empty, NA or "
            f"unknown): {dict(dropped.most_common(5))}."
        )
    report.notes.append(f"Label set ({labels}, {len(label_set)}): {list(label_set)}.")
    report.n_docs = len(docs)
    return docs, report
