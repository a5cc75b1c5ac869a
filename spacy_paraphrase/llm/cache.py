"""A disk cache of LLM answers keyed by what determines them.

spacy-llm's ``spacy.BatchCache.v1`` keys a Doc by the sum of its token
hashes, so a pair and the same pair with its turns swapped share an entry.
``ResponseCache`` keys an answer by the SHA-256 of the prompt text, the
endpoint (base URL, API kind), the model name and every sampling setting
(n, temperature, max tokens, stop sequences, extra request fields): any
change in any of them is a different entry. One JSON file per entry
(``<dir>/<2 hex>/<64 hex>.json``), written atomically (a killed run leaves
the old file or none). Only complete answers are stored: a failed request is
asked again on the next run.
"""
import hashlib
import json
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from ..saving import atomic_write


def cache_key(fields: Dict[str, Any]) -> str:
    """The SHA-256 of the fields as canonical JSON (sorted keys)."""
    blob = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf8")).hexdigest()


class ResponseCache:
    """Answers on disk under ``path`` (module doc); ``hits`` / ``misses`` count lookups."""

    def __init__(self, path: Union[str, Path]):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def _file(self, key: str) -> Path:
        return self.path / key[:2] / f"{key}.json"

    def get(self, fields: Dict[str, Any]) -> Optional[List[str]]:
        key = cache_key(fields)
        file = self._file(key)
        texts = None
        if file.is_file():
            try:
                data = json.loads(file.read_text(encoding="utf8"))
                if data.get("key") == key and isinstance(data.get("texts"), list):
                    texts = [str(t) for t in data["texts"]]
            except (OSError, ValueError):
                texts = None  # a damaged entry is a miss; it is rewritten
        with self._lock:
            if texts is None:
                self.misses += 1
            else:
                self.hits += 1
        return texts

    def put(self, fields: Dict[str, Any], texts: List[str]) -> None:
        key = cache_key(fields)
        file = self._file(key)
        file.parent.mkdir(parents=True, exist_ok=True)
        entry = {"key": key, "fields": fields, "texts": list(texts)}

        def write(tmp: Path) -> None:
            with open(tmp, "w", encoding="utf8") as f:
                json.dump(entry, f, ensure_ascii=False)

        atomic_write(file, write)
