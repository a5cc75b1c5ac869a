"""Property test (hypothesis, issue 29): corpora in every format with hostile
records mixed into good ones. Every input record ends as exactly one of: a
pair (written or skipped) or one reported malformed record at its line; no
pair joins two conversations; every span and word indexes its utterance's text.

The reader/accounting layer runs on many examples (no model); a few examples
go through the whole ``run_local`` job on the tests' tiny pipeline."""
import csv
import io
import json
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

from hypothesis import HealthCheck, given, settings, strategies as st

from spacy_paraphrase.annotate.local import run_local
from spacy_paraphrase.dialogs import DialogCorpus, SourceOptions
from tests.annotate.helpers import read_jsonl

FORMATS = ("chat", "mediasum", "convokit", "turns-csv", "turns-jsonl", "pairs-tsv")
TEXTS = ["Is the museum far?", "It is about 3 km away.", "Thanks, see you.", "", "   ", "\u200b", "\ufeff\u00ad",
         "café au lait", "我们赢了比赛。", "tab\there", "We won 🎉", "ok"]
SPEAKERS = ["A", "B", "C"]
JSON_SPEAKERS = SPEAKERS + ["B\ud800"]  # a lone surrogate: JSON can hold it, CSV cannot
DEEP = "[" * 3000 + "]" * 3000


@dataclass
class Corpus:
    """A generated corpus: what the readers must find in it."""

    fmt: str
    path: object
    pairs: int = 0  # pairs the good records make
    hostile: List[int] = field(default_factory=list)  # lines of the hostile records
    texts: Dict[str, str] = field(default_factory=dict)  # utterance id -> text
    conversation_of: Dict[str, str] = field(default_factory=dict)  # utterance id -> conversation id


def n_pairs(speakers: List[str]) -> int:
    """Consecutive pairing: one pair per speaker change."""
    return sum(1 for a, b in zip(speakers, speakers[1:]) if a != b)


conversation = st.lists(st.tuples(st.sampled_from(JSON_SPEAKERS), st.sampled_from(TEXTS)), min_size=1, max_size=5)
plan = st.lists(st.one_of(conversation, st.integers(0, 5)), min_size=1, max_size=8)  # int: a hostile record


def _chat_like(corpus: Corpus, items, line_of) -> List[str]:
    lines = []
    hostile = ["{broken", '{"id": "h", "messages": ' + DEEP + "}", "[1, 2]", '{"id": "h2", "messages": "x"}',
               '{"id": "", "messages": []}', '{"id": "h3", "id": "h4", "utt": [], "speaker": [], "messages": []}']
    for k, item in enumerate(items):
        if isinstance(item, int):
            corpus.hostile.append(len(lines) + 1)
            lines.append(hostile[item])
            continue
        cid = f"c{k}"
        for i, (speaker, text) in enumerate(item):
            corpus.texts[f"{cid}-{i}"] = text
            corpus.conversation_of[f"{cid}-{i}"] = cid
        corpus.pairs += n_pairs([s for s, _ in item])
        lines.append(line_of(cid, item))
    return lines


def write_corpus(tmp_path, fmt: str, items, order: List[int]) -> Corpus:
    """Write ``items`` (conversations and hostile-record kinds) in format ``fmt``;
    ``order`` interleaves the utterance lines of ConvoKit and turn tables."""
    name = {"convokit": "utterances.jsonl", "turns-csv": "turns.csv", "turns-jsonl": "turns.jsonl",
            "pairs-tsv": "pairs.tsv"}.get(fmt, f"{fmt}.jsonl")
    corpus = Corpus(fmt, tmp_path / name)
    if fmt == "chat":
        lines = _chat_like(corpus, items, lambda cid, item: json.dumps(
            {"id": cid, "messages": [{"role": s, "content": t} for s, t in item]}))
    elif fmt == "mediasum":
        lines = _chat_like(corpus, items, lambda cid, item: json.dumps(
            {"id": cid, "utt": [t for _, t in item], "speaker": [s for s, _ in item]}))
    elif fmt in ("convokit", "turns-jsonl", "turns-csv"):
        lines = _utterance_lines(corpus, items, order)
    else:
        lines = _pair_lines(corpus, items)
    corpus.path.write_bytes(b"".join((line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass"))
                                     + b"\n" for line in lines))
    return corpus


def _utterance_lines(corpus: Corpus, items, order: List[int]) -> List[str]:
    """One line per utterance, conversations interleaved (each in its order);
    hostile records after the first line of some conversation."""
    fmt = corpus.fmt
    queues: List[List[Tuple[str, object]]] = []
    for k, item in enumerate(items):
        if isinstance(item, int):
            continue
        cid = str(k)  # numeric strings: a number id of the same value is a hostile record
        speakers = [s for s, _ in item] if fmt != "turns-csv" else [s.replace("\ud800", "") for s, _ in item]
        corpus.pairs += n_pairs(speakers)
        queue = []
        for i, (speaker, text) in enumerate(zip(speakers, [t for _, t in item])):
            uid = f"{cid}-{i}"
            corpus.texts[uid], corpus.conversation_of[uid] = text, cid
            queue.append(("good", {"id": uid, "conversation_id": cid, "speaker": speaker, "text": text}))
        queues.append(queue)
    hostiles = [item for item in items if isinstance(item, int)]
    good = len(queues)
    for j, kind in enumerate(hostiles):
        if good:  # after the first utterance of a conversation
            queue = queues[j % good]
            queue.insert(1, ("hostile", (kind, queue[0][1])))
        else:
            queues.append([("hostile", (kind, None))])
    lines: List[object] = ["conversation_id,speaker,text"] if fmt == "turns-csv" else []
    cursor = [0] * len(queues)
    picks = (order * (1 + sum(map(len, queues))))[: sum(map(len, queues))] if order else []
    while any(cursor[q] < len(queues[q]) for q in range(len(queues))):
        live = [q for q in range(len(queues)) if cursor[q] < len(queues[q])]
        q = live[picks.pop(0) % len(live)] if picks else live[0]
        tag, value = queues[q][cursor[q]]
        cursor[q] += 1
        if tag == "hostile":
            corpus.hostile.append(len(lines) + 1)
            lines.append(_hostile_utterance(fmt, *value))
        elif fmt == "turns-csv":
            lines.append(_csv_row([value["conversation_id"], value["speaker"], value["text"]]))
        elif fmt == "convokit":
            lines.append(json.dumps(dict(value, **{"reply-to": None, "meta": {}})))
        else:
            lines.append(json.dumps({k: v for k, v in value.items() if k != "id"}))
    return lines


def _csv_row(values, delimiter=",") -> str:
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="").writerow(values)
    return out.getvalue()


def _hostile_utterance(fmt: str, kind: int, first) -> object:
    cid = first["conversation_id"] if first else "9"
    if fmt == "turns-csv":
        return [f"{cid},A", f'{cid},A,"a quote left open', b"9,A,not \xffutf-8", f"{cid},A,x,y",
                f'{cid},A,"closed" then text', f'{cid},"A"x,text'][kind]
    if kind == 0:
        return "{broken"
    if kind == 1:
        return '{"id": "deep", "conversation_id": "9", "speaker": "A", "text": "t", "x": ' + DEEP + "}"
    if kind == 2 and first is not None:  # the same conversation id as a number
        return json.dumps({"id": "n1", "conversation_id": int(cid), "speaker": "A", "text": "number id"})
    if kind == 3 and first is not None and fmt == "convokit":  # the first utterance's id again
        return json.dumps(dict(first, text="repeated id"))
    if kind == 5:  # a key given twice
        return f'{{"id": "k1", "conversation_id": "{cid}", "speaker": "A", "text": "a", "text": "b"}}'
    return json.dumps({"id": "m1", "conversation_id": cid, "speaker": "A"})  # no text


def _pair_lines(corpus: Corpus, items) -> List[object]:
    lines: List[object] = ["sentence1\tsentence2"]
    hostile = ["only one field", '"a quote left open\tsecond', b"not \xffutf-8\tsecond", "a\tb\tc", '"x"y\tz',
               'x\t"y"z']
    for item in items:
        if isinstance(item, int):
            corpus.hostile.append(len(lines) + 1)
            lines.append(hostile[item])
            continue
        first, second = item[0][1], item[-1][1]
        pair_id = f"pairs:{len(lines) + 1}"
        for uid, text in ((f"{pair_id}-0", first), (f"{pair_id}-1", second)):
            corpus.texts[uid], corpus.conversation_of[uid] = text, pair_id
        corpus.pairs += 1
        lines.append(_csv_row([first, second], "\t"))
    return lines


def source_of(fmt: str) -> SourceOptions:
    return SourceOptions(fmt={"turns-csv": "turns", "turns-jsonl": "turns", "pairs-tsv": "pairs"}.get(fmt, fmt))


def corpus_path(corpus: Corpus):
    return corpus.path.parent if corpus.fmt == "convokit" else corpus.path


PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@given(fmt=st.sampled_from(FORMATS), items=plan, order=st.lists(st.integers(0, 7), max_size=20))
@PROPERTY
def test_every_record_is_a_pair_or_one_reported_problem(tmp_path_factory, fmt, items, order):
    corpus = write_corpus(tmp_path_factory.mktemp("c"), fmt, items, order)
    problems = []
    pairs = list(DialogCorpus(corpus_path(corpus), source_of(fmt)).pairs(problems.append))
    assert len(pairs) == corpus.pairs
    assert sorted(p.line for p in problems) == sorted(corpus.hostile), [str(p) for p in problems]
    for pair in pairs:
        for turn in (pair.first, pair.second):
            assert turn.text == " ".join(corpus.texts[u] for u in turn.utterance_ids)
            assert {corpus.conversation_of[u] for u in turn.utterance_ids} == {pair.conversation_id}


@given(fmt=st.sampled_from(FORMATS), items=plan, order=st.lists(st.integers(0, 7), max_size=20))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_annotate_accounts_for_every_record(annotate_model, tmp_path_factory, fmt, items, order):
    folder = tmp_path_factory.mktemp("c")
    corpus = write_corpus(folder, fmt, items, order)
    out = folder / "out" / "records.jsonl"
    summary = run_local(annotate_model, corpus_path(corpus), out, source=source_of(fmt), with_probs=True,
                        progress_bar=False, batch_size=2, buffer_batches=1)
    records = read_jsonl(out)
    errors = read_jsonl(str(out) + ".errors.jsonl")
    skipped = [e for e in errors if e["kind"] == "skipped"]
    malformed = [e for e in errors if e["kind"] == "malformed"]
    assert len(records) + len(skipped) == corpus.pairs == summary.written + summary.skipped
    assert sorted(e["line"] for e in malformed) == sorted(corpus.hostile) and summary.malformed == len(malformed)
    assert len({r["pair_id"] for r in records} | {e["pair_id"] for e in skipped}) == corpus.pairs
    for record in records:
        for side in ("first", "second"):
            ids = record[side]["utterance_ids"]
            assert {corpus.conversation_of[u] for u in ids} == {record["conversation_id"]}
            assert record[side]["text"] == " ".join(corpus.texts[u] for u in ids)
            for word in record["words"][side]:
                assert corpus.texts[word["utterance_id"]][word["start"]:word["end"]] == word["text"]
        for span in record["spans"]:
            assert span["utterance_id"] in record[span["side"]]["utterance_ids"]
            assert corpus.texts[span["utterance_id"]][span["start"]:span["end"]] == span["text"] != ""
