"""Load a pipeline once and turn valid turn pairs (``record_format.invalid_reason``
is None) into annotate records: the piece both engines (local and Ray) run
per batch."""
import contextlib
import gc
import re
import sys
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc

from ..dialogs.turns import TurnPair
from ..loading import load_pipeline
from ..pair_doc import make_pair_doc
from ..paraphrase_spans.readout import Readout
from .heap import DEFAULT_HEAP_POLICY, bound_native_memory, trim_heap
from .paths import check_settings
from .record_format import make_record


# Pairs between two loads of the pipeline (``PairAnnotator.memory_zone``).
RELOAD_PAIRS = 10_000


def turn_speakers(pair: TurnPair) -> Optional[Tuple[str, str]]:
    """``speakers=`` for ``make_pair_doc``: both speaker names, or None when
    either is unknown, empty or not valid Unicode, e.g. holds a lone surrogate
    (the turns are then labelled FIRST / SECOND; the record keeps the names)."""
    names = (pair.first.speaker, pair.second.speaker)
    try:
        return names if all(isinstance(name, str) and name and name.encode("utf-8") for name in names) else None
    except UnicodeEncodeError:
        return None


class PairFailed(ValueError):
    """The component could not score a pair (an LLM request that still failed
    after its retries): the run stops with this message before the pair's
    buffer is written, so the same command resumes at it."""

    RESUME = ("The records before it are saved; run the same command again to resume from it (answers already "
              "received are in the model's cache).")
    # the first sentence, as found again in the text Ray hands back for a worker's exception
    TEXT = re.compile(r"Pair .{1,300}?: the LLM request failed after its retries \(.*?\)(?=\. )")

    @classmethod
    def of(cls, pair_id: Any, error: str) -> "PairFailed":
        return cls(f"Pair {pair_id!r}: the LLM request failed after its retries ({error}). {cls.RESUME}")


def pair_error(doc: Doc, spans_key: str) -> Optional[str]:
    """Why the component gave a pair no score: the error of an LLM request
    that failed after its retries (``attrs["llm"]["error"]`` with no parsed
    sample), else None."""
    group = doc.spans.get(spans_key)
    details = group.attrs.get("llm") if group is not None else None
    if isinstance(details, Mapping) and details.get("error") and details.get("pair_score") is None:
        return str(details["error"])
    return None


def find_readout(nlp: Language) -> Readout:
    """The readout (spans_key, cats_key, threshold) of the pipeline's first
    component that writes paraphrase spans; ValueError when there is none."""
    for name, pipe in nlp.pipeline:
        readout = getattr(pipe, "readout", None)
        if isinstance(readout, Readout):
            return readout
    raise ValueError(
        f"The pipeline has no paraphrase_spans component (components: {nlp.pipe_names}); "
        "annotate needs a pipeline trained with spacy-paraphrase."
    )


class PairAnnotator:
    """A loaded pipeline plus the settings of one annotate run."""

    def __init__(self, model: str, *, batch_size: int = 64, with_probs: bool = False, gpu_id: int = -1,
                 reload_pairs: int = RELOAD_PAIRS, heap: str = DEFAULT_HEAP_POLICY):
        check_settings(batch_size=batch_size)
        self.model = model
        self.batch_size = batch_size
        self.with_probs = with_probs
        self.gpu_id = gpu_id
        self.reload_pairs = reload_pairs
        bound_native_memory(heap)  # before the first forward pass (heap.py)
        self._load()
        self.readout = find_readout(self.nlp)

    def _load(self) -> None:
        self.nlp = None  # the old pipeline goes before the new one comes
        gc.collect()
        self.nlp = load_pipeline(self.model, self.gpu_id)
        self.warm = False
        self.pairs_since_load = 0

    def _renew_vocab(self) -> None:
        """The vocab and the tokenizer loaded again from the pipeline's
        directory, in place of the ones the run has filled: the components
        and their weights stay. Loading the whole pipeline again (the weights
        read, unpacked and copied into a new model) takes a few times the
        weights' size for a moment, although the old pipeline is freed first
        (with MiniLM a peak of about 1,000 MiB over a steady 650); the vocab
        and the tokenizer alone take a few MB. Should anything still hold the old vocab afterwards, the
        whole pipeline is loaded again, so that the old tables are freed either
        way (docs/annotate.md, "Memory over a long run")."""
        nlp = self.nlp
        old = nlp.vocab  # (a Vocab takes no weak reference)
        fresh = load_pipeline(self.model, self.gpu_id, exclude=nlp.component_names)
        nlp.vocab, nlp.tokenizer = fresh.vocab, fresh.tokenizer
        for _, pipe in nlp.components:
            if hasattr(pipe, "vocab"):
                pipe.vocab = fresh.vocab
        del fresh, nlp
        gc.collect()
        held = sys.getrefcount(old) > 2  # more than ``old`` and the call's argument
        del old
        if held:
            self._load()
        else:
            self.warm, self.pairs_since_load = False, 0

    @contextlib.contextmanager
    def memory_zone(self) -> Iterator[None]:
        """Where a run processes its pairs: the first block warms spaCy's
        caches (its new words stay in the vocab and the tokenizer's cache,
        which is not filled inside a memory zone), every later block is an
        ``nlp.memory_zone()``, whose new strings and lexemes are freed when
        it ends, so the vocab does not grow with the corpus; after each block
        the heap's free pages go back to the system (``heap.trim_heap``). A
        block that starts after ``reload_pairs`` pairs loads the vocab and the
        tokenizer again first (``_renew_vocab``): the vocab's hash tables keep
        the slots of freed strings (they only ever double), about 1 KB per
        pair that a reload gives back (docs/annotate.md, "Memory over a long
        run"). No Doc made inside may be used after the block."""
        if self.reload_pairs and self.pairs_since_load >= self.reload_pairs:
            self._renew_vocab()
        if not self.warm:
            self.warm = True
            yield
        else:
            with self.nlp.memory_zone():
                yield
        trim_heap()

    def make_doc(self, pair: TurnPair) -> Doc:
        """The pair Doc of a valid pair."""
        self.pairs_since_load += 1
        return make_pair_doc(self.nlp, pair.first.text, pair.second.text, speakers=turn_speakers(pair),
                             pair_id=pair.pair_id)

    def make_record(self, doc: Doc, pair: TurnPair) -> Dict[str, Any]:
        """The record of a processed Doc under this run's settings;
        ``PairFailed`` when the component could not score it (never a record
        that reads as "not a paraphrase")."""
        error = pair_error(doc, self.readout.spans_key)
        if error is not None:
            raise PairFailed.of(pair.pair_id, error)
        return make_record(doc, pair, self.readout, with_probs=self.with_probs)

    def annotate(self, pairs: List[TurnPair]) -> List[Dict[str, Any]]:
        """Records for valid pairs, in the pairs' order (the pipeline sees
        them sorted by length, so batches hold pairs of similar length), each
        call in its own ``memory_zone``."""
        pairs = list(pairs)
        order = sorted(range(len(pairs)), key=lambda i: pair_length(pairs[i]))
        records: List[Dict[str, Any]] = [{} for _ in pairs]
        with self.memory_zone():  # no Doc outlives the zone
            docs = (self.make_doc(pairs[i]) for i in order)
            for i, doc in zip(order, self.nlp.pipe(docs, batch_size=self.batch_size)):
                records[i] = self.make_record(doc, pairs[i])
        return records


def pair_length(pair: TurnPair) -> int:
    """The sort key for batching: characters of both turns."""
    return len(pair.first.text) + len(pair.second.text)
