"""The annotate job on one machine: stream a dialog corpus's turn pairs
through the pipeline and write one record per pair (docs/annotate.md).

Pairs are read in buffers of ``buffer_batches × batch_size``; each buffer is
sorted by length for batching; a few buffers at a time (a *zone*) run through
one ``nlp.pipe(as_tuples=True, n_process=...)`` inside ``nlp.memory_zone()``;
the records are written in input order, then the checkpoint (``resume``).
Memory does not grow with the corpus: at most a zone of buffers is held at a
time, and the strings and lexemes a zone adds to the vocab are freed when it
ends (docs/annotate.md, "Speed and memory").
"""
import time
from collections import deque
from dataclasses import dataclass, field, fields
from itertools import chain, islice
from pathlib import Path
from typing import Any, Callable, Deque, Dict, Iterator, List, Optional, Tuple

from tqdm import tqdm

from ..dialogs.pairing import DialogCorpus, SourceOptions
from ..dialogs.turns import TurnPair
from .annotator import PairAnnotator, pair_length
from .heap import DEFAULT_HEAP_POLICY
from .paths import open_job, own_files
from .record_format import ERROR_KIND, IS_PARAPHRASE, MALFORMED, MAX_TURN_CHARS, SKIPPED, problem_entry, skip_entry
from .resume import JobFiles, Progress, checkpoint_path, default_errors_path, fingerprint

BUFFER_BATCHES = 16
# Buffers per memory zone (and per nlp.pipe call): the vocab's new strings and
# lexemes are freed after each zone (``PairAnnotator.memory_zone``). With
# --n-process the worker processes are started again for each zone, hence
# longer zones there.
ZONE_BUFFERS = 1
ZONE_BUFFERS_MULTIPROCESS = 4


@dataclass
class Summary:
    """What a run did (counts include the runs it resumed)."""

    output: str
    errors: str
    written: int = 0
    paraphrases: int = 0
    skipped: int = 0
    malformed: int = 0
    consumed: int = 0
    seconds: float = 0.0
    resumed_at: int = 0
    already_done: bool = False
    role_dropped: int = 0  # pairs the role filter left out (not in ``consumed``)

    @classmethod
    def of(cls, progress: Progress, output, errors, resumed_at: int = 0, already_done: bool = False):
        counts = {f.name: getattr(progress, f.name) for f in fields(cls) if hasattr(progress, f.name)}
        return cls(str(output), str(errors), resumed_at=resumed_at, already_done=already_done, **counts)

    def lines(self) -> List[str]:
        rate = self.consumed / self.seconds if self.seconds > 0 else 0.0
        out = [
            f"pairs written: {self.written} ({self.paraphrases} paraphrases)",
            f"pairs skipped (empty or invalid turn): {self.skipped}",
            f"malformed records: {self.malformed}",
            f"time: {self.seconds:.1f} s ({rate:.1f} pairs/s)",
            f"records: {self.output}",
        ]
        if self.role_dropped:
            out.insert(1, f"pairs left out by the role filter (--first-role / --second-role): {self.role_dropped}")
        if self.skipped or self.malformed:
            out.append(f"skips and malformed records (file, line, reason): {self.errors}")
        if self.resumed_at:
            out.insert(0, f"resumed after {self.resumed_at} pairs")
        return out


@dataclass
class _Buffer:
    index: int
    pairs: List[TurnPair]
    valid: List[int]
    entries: List[Dict[str, Any]]  # malformed records and skips, in reading order
    consumed: int  # pairs consumed once this buffer is written
    problems_seen: int
    dropped_seen: int  # pairs the role filter left out, from the start of the input to here
    records: Dict[int, Dict[str, Any]] = field(default_factory=dict)


class _Reader:
    """Buffers of pairs and errors-file entries from the corpus, starting
    after ``progress.consumed`` pairs and ignoring the malformed records that
    the earlier runs already reported (the readers report them in a fixed
    order)."""

    def __init__(self, corpus: DialogCorpus, progress: Progress, limit: Optional[int], size: int,
                 max_length: int = MAX_TURN_CHARS):
        self.problems = 0
        self.dropped = 0  # counted from the start of the input, also over the pairs a resumed run skips
        self.skip_problems = progress.problems_seen
        self.entries: List[Dict[str, Any]] = []
        self.pairs = islice(corpus.pairs(self._on_problem, self._on_drop), progress.consumed, limit)
        self.max_length = max_length
        self.consumed = progress.consumed
        self.size = size

    def _on_problem(self, problem) -> None:
        self.problems += 1
        if self.problems > self.skip_problems:
            self.entries.append(problem_entry(problem))

    def _on_drop(self, pair) -> None:
        self.dropped += 1

    def __iter__(self) -> Iterator[_Buffer]:
        index = 0
        while True:
            pairs = list(islice(self.pairs, self.size))
            skips = [skip_entry(pair, self.max_length) for pair in pairs]
            valid = [i for i, skip in enumerate(skips) if skip is None]
            entries, self.entries = self.entries + [skip for skip in skips if skip is not None], []
            self.consumed += len(pairs)
            if pairs or entries:
                yield _Buffer(index, pairs, valid, entries, self.consumed, self.problems, self.dropped)
                index += 1
            if len(pairs) < self.size:
                return


def run_local(
    model: str,
    input_path,
    output,
    *,
    source: Optional[SourceOptions] = None,
    errors=None,
    batch_size: int = 64,
    n_process: int = 1,
    gpu_id: int = -1,
    limit: Optional[int] = None,
    with_probs: bool = False,
    count: bool = True,
    overwrite: bool = False,
    progress_bar: bool = True,
    buffer_batches: int = BUFFER_BATCHES,
    output_format: str = "jsonl",
    heap: str = DEFAULT_HEAP_POLICY,
) -> Summary:
    """Annotate every turn pair of ``input_path`` into ``output`` (JSON
    Lines); resumes an interrupted run with the same arguments. ``heap``:
    the heap policy (``heap.HEAP_POLICIES``; speed or the least memory)."""
    errors = Path(errors) if errors is not None else default_errors_path(output)
    checkpoint = checkpoint_path(output)
    corpus = open_job(model, input_path, source,
                      [("OUTPUT", Path(output)), ("The errors file", errors), ("The checkpoint", checkpoint)],
                      batch_size=batch_size, n_process=n_process, gpu_id=gpu_id, limit=limit,
                      own=own_files(checkpoint, Path(output), errors), heap=heap)
    with corpus:  # closed however the run ends
        files = JobFiles(output, errors, fingerprint(model, corpus, with_probs=with_probs, limit=limit, errors=errors,
                                                     output_format=output_format), overwrite=overwrite)
        progress = files.open()
        if progress.done:
            return Summary.of(progress, output, errors, already_done=True)
        resumed_at = progress.consumed
        try:
            annotator = PairAnnotator(model, batch_size=batch_size, with_probs=with_probs, gpu_id=gpu_id, heap=heap)
            total = corpus.count(limit) if count else limit
            with tqdm(total=total, initial=progress.consumed, unit="pairs", disable=not progress_bar,
                      dynamic_ncols=True, smoothing=0.1) as bar:
                _annotate(annotator, files, progress, _Reader(corpus, progress, limit, buffer_batches * batch_size,
                                                              annotator.nlp.max_length), n_process, bar)
        finally:
            files.close()
        return Summary.of(progress, output, errors, resumed_at=resumed_at)


def _annotate(annotator: PairAnnotator, files: JobFiles, progress: Progress, reader: _Reader,
              n_process: int, bar) -> None:
    started = time.perf_counter()
    seconds_before = progress.seconds

    def flush(buffer: _Buffer) -> None:
        records = [buffer.records[i] for i in buffer.valid]
        files.write(records, buffer.entries)
        progress.consumed = buffer.consumed
        progress.problems_seen = buffer.problems_seen
        progress.role_dropped = buffer.dropped_seen
        progress.written += len(records)
        progress.paraphrases += sum(1 for r in records if r[IS_PARAPHRASE.key])
        progress.skipped += sum(1 for e in buffer.entries if e[ERROR_KIND] == SKIPPED)
        progress.malformed += sum(1 for e in buffer.entries if e[ERROR_KIND] == MALFORMED)
        progress.seconds = seconds_before + time.perf_counter() - started
        files.commit(progress)
        bar.update(len(buffer.pairs))

    buffers = iter(reader)
    zone_buffers = ZONE_BUFFERS if n_process == 1 else ZONE_BUFFERS_MULTIPROCESS
    for first in buffers:
        # one nlp.pipe per zone of buffers, all its records written inside the zone
        with annotator.memory_zone():
            _annotate_zone(annotator, chain([first], islice(buffers, zone_buffers - 1)), n_process, flush)
    progress.role_dropped = reader.dropped  # the input is read to its end (or --limit) now
    progress.done = True
    progress.seconds = seconds_before + time.perf_counter() - started
    files.save(progress)


def _annotate_zone(annotator: PairAnnotator, buffers: Iterator[_Buffer], n_process: int,
                   flush: Callable[[_Buffer], None]) -> None:
    """Run the pairs of ``buffers`` through one ``nlp.pipe`` and flush each
    buffer, in input order, as soon as all its records are made."""
    pending: Deque[_Buffer] = deque()

    def docs() -> Iterator[Tuple[Any, Tuple[int, int]]]:
        for buffer in buffers:
            pending.append(buffer)
            for i in sorted(buffer.valid, key=lambda i: pair_length(buffer.pairs[i])):
                yield annotator.make_doc(buffer.pairs[i]), (buffer.index, i)

    stream = annotator.nlp.pipe(docs(), as_tuples=True, batch_size=annotator.batch_size, n_process=n_process)
    for doc, (index, i) in stream:
        while pending[0].index < index:
            flush(pending.popleft())
        buffer = pending[0]
        buffer.records[i] = annotator.make_record(doc, buffer.pairs[i])
        if len(buffer.records) == len(buffer.valid):  # all its records made
            flush(pending.popleft())
    while pending:
        flush(pending.popleft())
