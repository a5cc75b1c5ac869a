"""A model that replays recorded answers: ``spacy_paraphrase.Replay.v1``,
for tests and for trying the pipeline without a server.

The recordings are a JSONL file (or a list of dicts), one record per pair:
``{"match": TEXT, "texts": [sample, ...]}`` answers a prompt whose *query
part* (the text after the prompt's last ``Classification:`` line, i.e. the
pair itself, not the few-shot examples) contains ``TEXT``; the first
matching record wins. ``{"match": TEXT, "error": MESSAGE}`` replays a
failed request. A record may also have ``"reasks": [text, ...]``: the
answers given, in order, when the task re-asks a sample whose answer does
not parse (``task.reask_samples``); without it nothing is re-asked. A record with ``"match": ""`` matches every prompt (a
default). A prompt that no record matches raises ValueError (``strict``),
or gets a failed ``Completion``. ``calls`` counts the prompts answered.
"""
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Union

import srsly

from .cache import ResponseCache
from .task import Completion, Prompt, reask_samples


def query_part(text: str) -> str:
    cut = text.rfind("Classification:")
    if cut < 0:
        return text
    newline = text.find("\n", cut)
    return text[newline + 1 :] if newline >= 0 else ""


class ReplayModel:
    def __init__(self, records: Union[str, Path, List[Dict[str, Any]]], *, strict: bool = True,
                 cache_dir: Optional[str] = None):
        if isinstance(records, (str, Path)):
            path = Path(records)
            if not path.is_file():
                raise ValueError(f"Replay recordings {path} do not exist")
            records = list(srsly.read_jsonl(path))
        self.records = []
        for i, rec in enumerate(records):
            if not isinstance(rec, dict) or "match" not in rec or ("texts" in rec) == ("error" in rec):
                raise ValueError(f"Replay record {i} needs 'match' and one of 'texts' / 'error': {rec!r}")
            for key in ("texts", "reasks"):
                if key in rec and not (isinstance(rec[key], list) and all(isinstance(t, str) for t in rec[key])):
                    raise ValueError(f"Replay record {i}: {key!r} must be a list of strings")
            self.records.append(rec)
        self.strict = strict
        self.calls = 0
        self.cache = ResponseCache(cache_dir) if cache_dir else None

    def _record(self, text: str) -> Optional[Dict[str, Any]]:
        query = query_part(text)
        for rec in self.records:
            if rec["match"] in query:
                return rec
        if self.strict:
            raise ValueError(f"No replay record matches the pair {query[:200]!r}")
        return None

    def complete(self, prompt: Any) -> Completion:
        text = str(prompt)
        n = prompt.n if isinstance(prompt, Prompt) else None
        fields = {"replay": True, "prompt": text, "n": n}
        texts = self.cache.get(fields) if self.cache is not None else None
        cached = texts is not None
        if not cached:
            self.calls += 1
        rec = self._record(text)
        if texts is None:
            if rec is None:
                return Completion([], error="no replay record for this pair", requests=1)
            if "error" in rec:
                return Completion([], error=str(rec["error"]), requests=1)
            texts = list(rec["texts"])
            if self.cache is not None:
                self.cache.put(fields, texts)
        more = iter(rec.get("reasks", []) if rec is not None else [])
        asks = reask_samples(prompt, texts, lambda sample, attempt: next(more, None))
        reasks = sum(asks) - len(asks)
        return Completion(texts, requests=reasks + (0 if cached else 1), cached=cached and not reasks, asks=asks)

    def __call__(self, prompts: Iterable[Iterable[Any]]) -> Iterable[Iterable[Any]]:
        return [[self.complete(p) for p in batch] for batch in prompts]
