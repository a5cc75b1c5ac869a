"""``--output-format convokit``: a copy of a ConvoKit corpus directory with
the annotate results in its utterance and conversation meta
(docs/annotate.md, "ConvoKit output").

The run itself is the ordinary local job, writing its records (and errors
file and checkpoint, the checkpoint first) into the output directory as
``{prefix}annotate.*``; when it is complete, the corpus's other files are
copied and ``utterances.jsonl``, ``conversations.json`` and
``index.json`` are written from the input's with the new keys added (each
through a temporary file, ``utterances.jsonl`` last, so an interrupted merge
is simply redone). Existing keys are
never overwritten: a key that exists already is an error before any work.
"""
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple

from ..dialogs.convokit import (CONVOKIT_CONVERSATIONS, CONVOKIT_INDEX, CONVOKIT_UTTERANCES, conversation_meta,
                                load_json_object)
from ..dialogs.fields import json_type
from ..dialogs.turns import DialogFormatError
from ..dialogs.pairing import SourceOptions
from ..saving import atomic_write
from .local import Summary, run_local
from .record_format import (CONVERSATION_ID, ERROR_KIND, FIRST, IS_PARAPHRASE, PAIR_ID, RECORD_FIELDS, SECOND, SKIPPED,
                            SPAN_FIELDS, SPANS, TURN_FIELDS, WORD_FIELDS, WORDS, convokit_errors, convokit_records, error_entries, read_records)
from .resume import checkpoint_path

DEFAULT_PREFIX = "sp_"
RESERVED_PREFIXES = ("paraphrase_",)  # ConvoKit's MediaSum corpus: ContextDeP's gold
MERGED_FILES = (CONVOKIT_UTTERANCES, CONVOKIT_CONVERSATIONS, CONVOKIT_INDEX)
# The record's keys copied into the meta of the second turn's utterances (``RECORD_FIELDS``).
RECORD_KEYS = tuple(f.key for f in RECORD_FIELDS if f.convokit)
UTTERANCE_KEYS = {  # key (after the prefix) -> type as ConvoKit's index writes it
    **{f.key: str(f.type) for f in RECORD_FIELDS if f.convokit},
    "paraphrase_spans": str(list),
    "source_spans": str(list),
}
PROB_KEYS = {"paraphrase_probs": str(list), "source_probs": str(dict)}
CONVERSATION_KEYS = {"pairs": str(int), "paraphrases": str(int), "skipped": str(int)}  # conversation_counts' order


class ConvoKitOutputError(ValueError):
    """The input is not a ConvoKit directory, or the output would clash with it."""


def check_prefix(prefix: str) -> None:
    if not prefix or any(prefix.startswith(p) or p.startswith(prefix) for p in RESERVED_PREFIXES):
        raise ConvoKitOutputError(
            f"Meta key prefix {prefix!r} is empty or clashes with {RESERVED_PREFIXES} (ConvoKit's "
            "MediaSum corpus keeps ContextDeP's gold there); choose another, e.g. 'sp_'."
        )


def output_keys(prefix: str, with_probs: bool) -> Tuple[Dict[str, str], Dict[str, str]]:
    """(utterance keys, conversation keys) -> ConvoKit type, with the prefix."""
    utterance = dict(UTTERANCE_KEYS, **(PROB_KEYS if with_probs else {}))
    return ({prefix + k: v for k, v in utterance.items()}, {prefix + k: v for k, v in CONVERSATION_KEYS.items()})


def _load_json(path: Path, default: Any) -> Any:
    """The JSON object in ``path`` (``default`` when there is no such file);
    ConvoKitOutputError naming the file when it is not valid JSON or not an
    object."""
    if not path.exists():
        return default
    try:
        return load_json_object(path)
    except DialogFormatError as err:
        raise ConvoKitOutputError(f"{err}.") from None


def _check_corpus_files(corpus: Path) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """(index, conversations) of the corpus, checked so that the merge at the
    end cannot fail on them: every conversation entry and index section an object."""
    index = _load_json(corpus / CONVOKIT_INDEX, {})
    for name in ("utterances-index", "conversations-index"):
        if not isinstance(index.get(name, {}), dict):
            raise ConvoKitOutputError(
                f"{corpus / CONVOKIT_INDEX}: {name!r} must be an object, got {json_type(index[name])}."
            )
    conversations = _load_json(corpus / CONVOKIT_CONVERSATIONS, {})
    for conv_id, entry in conversations.items():
        if not isinstance(conversation_meta(entry), dict):
            raise ConvoKitOutputError(
                f"{corpus / CONVOKIT_CONVERSATIONS}: conversation {conv_id!r} must be an object "
                f"(its meta), got {json_type(entry)}."
            )
    return index, conversations


def check_no_clash(corpus: Path, prefix: str, with_probs: bool) -> None:
    """ConvoKitOutputError when a key this run would add exists already."""
    utt_keys, conv_keys = output_keys(prefix, with_probs)
    index, conversations = _check_corpus_files(corpus)
    found = [k for k in utt_keys if k in index.get("utterances-index", {})]
    found += [k for k in conv_keys if k in index.get("conversations-index", {})]
    for entry in conversations.values():
        found += [k for k in conv_keys if k in conversation_meta(entry)]
    needle = json.dumps(prefix)[:-1].encode("utf-8")  # '"sp_' : only such lines are parsed
    with open(corpus / CONVOKIT_UTTERANCES, "rb") as f:
        for line in f:
            if needle in line:
                try:
                    meta = json.loads(line).get("meta") or {}
                except (ValueError, AttributeError, RecursionError):
                    continue
                found += [k for k in utt_keys if isinstance(meta, dict) and k in meta]
    if found:
        raise ConvoKitOutputError(
            f"{corpus} already has meta key(s) {sorted(set(found))}; annotate never overwrites a key. "
            "Choose another --meta-prefix."
        )


def check_paths(corpus: Path, output: Path, prefix: str) -> None:
    """ConvoKitOutputError unless ``corpus`` is a ConvoKit directory and
    ``output`` is outside it and new, empty or this run's own (before
    ``paths.open_job`` checks the files the run writes inside it: here
    because only this module knows a ConvoKit output's files)."""
    if not (corpus / CONVOKIT_UTTERANCES).is_file():
        raise ConvoKitOutputError(f"{corpus} is not a ConvoKit corpus directory with {CONVOKIT_UTTERANCES}.")
    out, src = output.resolve(), corpus.resolve()
    if out == src or src in out.parents:
        raise ConvoKitOutputError(f"The output directory {output} must be outside the corpus {corpus}.")
    ours = checkpoint_path(convokit_records(output, prefix)).exists()
    if output.exists() and (not output.is_dir() or any(output.iterdir())) and not ours:
        raise ConvoKitOutputError(
            f"{output} exists and is not an annotate output of this corpus; choose a new directory."
        )


def copy_corpus(corpus: Path, output: Path) -> None:
    """Copy every file of the corpus but the merged ones into ``output``."""
    output.mkdir(parents=True, exist_ok=True)
    for path in corpus.iterdir():
        if path.name not in MERGED_FILES:
            if path.is_dir():
                shutil.copytree(path, output / path.name, dirs_exist_ok=True)
            else:
                shutil.copy2(path, output / path.name)


def run_convokit(model: str, corpus, output, *, meta_prefix: str = DEFAULT_PREFIX,
                 source: Optional[SourceOptions] = None, errors=None, overwrite: bool = False,
                 with_probs: bool = False, **options: Any) -> Summary:
    """Annotate a ConvoKit corpus into a copy of it (module doc); ``options``
    go to ``run_local``."""
    corpus, output = Path(corpus), Path(output)
    check_prefix(meta_prefix)
    source = source or SourceOptions()
    if source.fmt not in (None, "convokit"):
        raise ConvoKitOutputError(f"--output-format convokit needs ConvoKit input, not {source.fmt!r}.")
    source.fmt = "convokit"
    check_paths(corpus, output, meta_prefix)
    check_no_clash(corpus, meta_prefix, with_probs)
    if overwrite:  # the files an earlier run merged
        for name in MERGED_FILES:
            (output / name).unlink(missing_ok=True)
    records = convokit_records(output, meta_prefix)
    errors = Path(errors) if errors is not None else convokit_errors(records)
    # The run's checkpoint is the first file in the directory, so that from
    # then on check_paths knows it as this run's; the corpus is copied after.
    summary = run_local(model, corpus, records, source=source, errors=errors, overwrite=overwrite,
                        with_probs=with_probs, output_format="convokit", **options)
    merged = [name for name in MERGED_FILES if name != CONVOKIT_INDEX or (corpus / name).exists()]
    if summary.already_done and all((output / name).exists() for name in merged):
        return summary
    copy_corpus(corpus, output)
    merge(corpus, output, records, errors, meta_prefix, with_probs)
    return summary


def utterance_meta(records: Iterable[Mapping[str, Any]], prefix: str, with_probs: bool) -> Iterator[Tuple[str, Dict[str, Any]]]:
    """(utterance id, meta to add) for every utterance the records touch."""
    current: Dict[str, Dict[str, Any]] = {}
    conversation = object()
    for record in records:
        if record[CONVERSATION_ID.key] != conversation:
            yield from current.items()
            current, conversation = {}, record[CONVERSATION_ID.key]
        pair_id = record[PAIR_ID.key]
        for utt_id in record[SECOND.key][TURN_FIELDS.utterance_ids]:
            meta = current.setdefault(utt_id, {})
            meta.update({prefix + key: record[key] for key in RECORD_KEYS})
            meta.setdefault(prefix + "paraphrase_spans", [])
            if with_probs:
                meta[prefix + "paraphrase_probs"] = []
        for utt_id in record[FIRST.key][TURN_FIELDS.utterance_ids]:
            meta = current.setdefault(utt_id, {})
            meta.setdefault(prefix + "source_spans", [])
            if with_probs:
                meta.setdefault(prefix + "source_probs", {})[pair_id] = []
        for span in record[SPANS.key]:
            entry = {k: span[k] for k in (SPAN_FIELDS.start, SPAN_FIELDS.end, SPAN_FIELDS.text, SPAN_FIELDS.score)}
            if span[SPAN_FIELDS.side] == FIRST.key:
                current[span[SPAN_FIELDS.utterance_id]][prefix + "source_spans"].append(dict(entry, pair_id=pair_id))
            else:
                current[span[SPAN_FIELDS.utterance_id]][prefix + "paraphrase_spans"].append(entry)
        for side, words in (record.get(WORDS.key) or {}).items():
            for word in words:
                meta = current[word[WORD_FIELDS.utterance_id]]
                probs = meta[prefix + "paraphrase_probs"] if side == SECOND.key else meta[prefix + "source_probs"][pair_id]
                probs.append(word[WORD_FIELDS.prob])
    yield from current.items()


def conversation_counts(records: Iterable[Mapping[str, Any]], errors: Path) -> Dict[str, List[int]]:
    """conversation id -> [pairs written, paraphrases, pairs skipped]."""
    counts: Dict[str, List[int]] = {}
    for record in records:
        c = counts.setdefault(record[CONVERSATION_ID.key], [0, 0, 0])
        c[0] += 1
        c[1] += bool(record[IS_PARAPHRASE.key])
    if errors.exists():
        for entry in error_entries(errors):
            if entry.get(ERROR_KIND) == SKIPPED:
                counts.setdefault(entry["conversation_id"], [0, 0, 0])[2] += 1
    return counts


def merge(corpus: Path, output: Path, records: Path, errors: Path, prefix: str, with_probs: bool) -> None:
    """Write the three merged files of the output (module doc): the merged
    utterances are written to a temporary file first, the other two files
    then, and the utterances put in place last."""
    utt_keys, conv_keys = output_keys(prefix, with_probs)

    def write_all(utterances_tmp: Path) -> None:
        _write_merged_utterances(corpus, output, records, prefix, with_probs, utterances_tmp)
        counts = conversation_counts(read_records(records), errors)
        _write_json(output / CONVOKIT_CONVERSATIONS, _merged_conversations(corpus, counts, conv_keys))
        index = _load_json(corpus / CONVOKIT_INDEX, None)
        if index is not None:
            for name, keys in (("utterances-index", utt_keys), ("conversations-index", conv_keys)):
                index.setdefault(name, {}).update({k: [v] for k, v in keys.items()})
            _write_json(output / CONVOKIT_INDEX, index)

    atomic_write(output / CONVOKIT_UTTERANCES, write_all)


def _write_merged_utterances(corpus: Path, output: Path, records: Path, prefix: str, with_probs: bool,
                             target: Path) -> None:
    store_path = output / f"{prefix}annotate.merge.sqlite"
    store_path.unlink(missing_ok=True)
    store = sqlite3.connect(str(store_path))
    try:
        store.execute("CREATE TABLE meta (id TEXT PRIMARY KEY, value TEXT)")
        store.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            ((utt_id, json.dumps(meta)) for utt_id, meta in utterance_meta(read_records(records), prefix, with_probs)),
        )
        store.commit()
        _merge_utterances(corpus / CONVOKIT_UTTERANCES, target, store)
    except sqlite3.Error as err:  # e.g. "database or disk is full"
        raise OSError(None, f"merging the results failed ({err})", str(store_path)) from None
    finally:
        store.close()
        store_path.unlink(missing_ok=True)


def _merge_utterances(source: Path, target: Path, store: sqlite3.Connection) -> None:
    with open(source, "rb") as src, open(target, "wb") as out:
        for line in src:
            try:
                utterance = json.loads(line)
                found = store.execute("SELECT value FROM meta WHERE id = ?", (str(utterance["id"]),)).fetchone()
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                found = None  # a malformed line (reported by the reader) is copied as it is
            if found is None:
                out.write(line)
                continue
            meta = utterance.get("meta")
            meta = meta if isinstance(meta, dict) else {}
            added = json.loads(found[0])
            clash = sorted(set(added) & set(meta))
            if clash:
                raise ConvoKitOutputError(f"utterance {utterance['id']!r} already has meta key(s) {clash}.")
            meta.update(added)
            utterance["meta"] = meta
            out.write((json.dumps(utterance) + "\n").encode("utf-8"))


def _merged_conversations(corpus: Path, counts: Dict[str, List[int]], keys: Mapping[str, str]):
    conversations = _load_json(corpus / CONVOKIT_CONVERSATIONS, {})
    new_format = any(conversation_meta(e) is not e for e in conversations.values())
    for conv_id in counts:
        conversations.setdefault(conv_id, {"meta": {}, "vectors": []} if new_format else {})
    for conv_id, entry in conversations.items():
        meta = conversation_meta(entry)
        clash = sorted(set(keys) & set(meta))
        if clash:
            raise ConvoKitOutputError(f"conversation {conv_id!r} already has meta key(s) {clash}.")
        meta.update(zip(keys, counts.get(conv_id, [0, 0, 0])))  # keys: CONVERSATION_KEYS, in their order
    return conversations


def _write_json(path: Path, value: Any) -> None:
    atomic_write(path, lambda tmp: tmp.write_text(json.dumps(value), encoding="utf-8"))
