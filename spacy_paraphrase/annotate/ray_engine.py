"""The annotate job on a Ray cluster (``--engine ray``; docs/ray.md).

The driver streams the corpus's pairs (``dialogs.DialogCorpus``), writes skips and
malformed records to the errors file as the local engine does, and stages the
valid pairs as JSON Lines shards cut at conversation boundaries (``staging``).
Ray Data then reads the shards, runs ``PairAnnotatorActor`` on a fixed pool
of actors (each loads the pipeline once from the model path; no ``nlp``
object is pickled) and writes each record exactly as the local engine
serializes it. OUTPUT is a directory of JSON Lines files, in no particular
order; the records are those of the local engine (README, "What the
component writes").
"""
import math
import time
from itertools import islice
from pathlib import Path
from typing import Any, Dict, Iterable, Mapping, Optional

import numpy

try:
    import ray
    import ray.data
    from ray.data.datasource import BlockBasedFileDatasink
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError(
        "The Ray engine needs Ray Data (Python >= 3.10): pip install 'spacy-paraphrase[ray]'"
    ) from err

from tqdm import tqdm

from ..dialogs.pairing import DialogCorpus, SourceOptions
from .annotator import PairAnnotator, PairFailed
from .heap import DEFAULT_HEAP_POLICY
from .local import Summary
from .record_format import IS_PARAPHRASE, dumps, part_files, problem_entry, skip_entry
from .resume import default_errors_path
from .paths import check_ray_output, open_job
from .staging import LINE_COLUMN, ShardWriter, line_pair, remove_staging, shard_dir

RECORD_COLUMN = "record"
PARAPHRASE_COLUMN = "is_paraphrase"
OUTPUT_SUFFIX = "jsonl"
DEFAULT_SHARD_ROWS = 1024


class PairAnnotatorActor:
    """Ray Data callable class: loads the pipeline once per actor (from
    ``model``, a path every node sees or an installed package) and turns a
    batch of staged pairs into serialized records."""

    def __init__(self, model: str, *, batch_size: int = 64, with_probs: bool = False,
                 use_gpu: bool = False, threads: Optional[int] = None, heap: str = DEFAULT_HEAP_POLICY):
        if threads:
            import torch

            torch.set_num_threads(threads)
        # Ray makes the GPUs it gave this actor visible from index 0 on.
        self.annotator = PairAnnotator(model, batch_size=batch_size, with_probs=with_probs,
                                       gpu_id=0 if use_gpu else -1, heap=heap)

    def __call__(self, batch: Mapping[str, Any]) -> Dict[str, numpy.ndarray]:
        records = self.annotator.annotate([line_pair(line) for line in batch[LINE_COLUMN]])
        return {
            RECORD_COLUMN: numpy.array([dumps(record) for record in records], dtype=object),
            PARAPHRASE_COLUMN: numpy.array([bool(r[IS_PARAPHRASE.key]) for r in records], dtype=bool),
        }


class RecordLinesDatasink(BlockBasedFileDatasink):
    """Writes the ``record`` column's bytes as they are (one JSON line each)
    into ``*.jsonl`` files under a directory; counts records and paraphrases."""

    def __init__(self, path: str):
        super().__init__(path, file_format=OUTPUT_SUFFIX)
        self.written = 0
        self.paraphrases = 0

    def write_block_to_file(self, block, file) -> None:
        table = block.to_arrow()
        file.write(b"".join(table.column(RECORD_COLUMN).to_pylist()))

    def write(self, blocks: Iterable[Any], ctx) -> int:
        blocks = list(blocks)
        super().write(blocks, ctx)
        from ray.data.block import BlockAccessor

        return sum(
            sum(BlockAccessor.for_block(block).to_arrow().column(PARAPHRASE_COLUMN).to_pylist())
            for block in blocks
        )

    def on_write_complete(self, write_result) -> None:
        super().on_write_complete(write_result)
        self.written = int(write_result.num_rows)
        self.paraphrases = int(sum(n for n in write_result.write_returns if n))


def prepare_output(output: Path, errors: Path, *, overwrite: bool, inputs: Iterable[Path] = ()) -> None:
    """Check (``paths.check_ray_output``) and with ``overwrite`` clear
    OUTPUT, a directory of record files outside the run's ``inputs``, and
    the errors file."""
    check_ray_output(output, errors, overwrite=overwrite, inputs=inputs)
    for path in part_files(output):
        path.unlink()
    output.mkdir(parents=True, exist_ok=True)
    errors.parent.mkdir(parents=True, exist_ok=True)


def stage(corpus: DialogCorpus, directory: Path, errors: Path, *, shard_rows: int, limit: Optional[int],
          total: Optional[int], progress_bar: bool) -> Summary:
    """Stream the pairs: valid ones into shards under ``directory``, skips and
    malformed records into ``errors`` (in reading order)."""
    summary = Summary(str(directory), str(errors))
    with open(errors, "wb") as err_file, ShardWriter(directory, shard_rows) as shards, tqdm(
        total=total, unit="pairs", desc="staging", disable=not progress_bar, dynamic_ncols=True
    ) as bar:

        def on_problem(problem) -> None:
            summary.malformed += 1
            err_file.write(dumps(problem_entry(problem)))

        def on_drop(pair) -> None:
            summary.role_dropped += 1

        for pair in islice(corpus.pairs(on_problem, on_drop), limit):
            skip = skip_entry(pair)
            if skip is None:
                shards.write(pair)
            else:
                summary.skipped += 1
                err_file.write(dumps(skip))
            summary.consumed += 1
            bar.update(1)
    return summary


def run_ray(
    model: str,
    input_path,
    output,
    *,
    address: Optional[str] = None,
    source: Optional[SourceOptions] = None,
    errors=None,
    batch_size: int = 64,
    concurrency: int = 1,
    num_cpus: float = 1.0,
    num_gpus: float = 0.0,
    memory: Optional[int] = None,
    gpu_id: int = -1,
    limit: Optional[int] = None,
    with_probs: bool = False,
    shard_rows: int = DEFAULT_SHARD_ROWS,
    count: bool = False,
    overwrite: bool = False,
    progress_bar: bool = True,
    runtime_env: Optional[Dict[str, Any]] = None,
    keep_staging: bool = False,
    heap: str = DEFAULT_HEAP_POLICY,
) -> Summary:
    """Annotate every turn pair of ``input_path`` into the directory
    ``output`` on Ray (module doc; options: docs/ray.md). Connects to
    ``address`` (None: Ray's default, i.e. ``RAY_ADDRESS``, else a cluster
    started on this machine, else a new local one) unless Ray is initialized already;
    ``gpu_id >= 0`` means one GPU per actor when ``num_gpus`` is 0."""
    output = Path(output)
    errors = Path(errors) if errors is not None else default_errors_path(output)
    if concurrency < 1:
        raise ValueError(f"concurrency (the number of actors) must be at least 1, got {concurrency}")
    if num_cpus < 0 or num_gpus < 0:
        raise ValueError("num_cpus and num_gpus per actor must be >= 0")
    if gpu_id >= 0 and num_gpus == 0:
        num_gpus = 1.0
    corpus = open_job(model, input_path, source, [("The errors file", errors)], batch_size=batch_size, limit=limit,
                      heap=heap)
    with corpus:  # closed however the run ends
        prepare_output(output, errors, overwrite=overwrite, inputs=corpus.files() + [Path(model)])
        started = time.perf_counter()
        staging = shard_dir(output)
        try:
            total = corpus.count(limit) if count else limit
            summary = stage(corpus, staging, errors, shard_rows=shard_rows, limit=limit, total=total,
                            progress_bar=progress_bar)
            staged = summary.consumed - summary.skipped
            if staged:
                sink = annotate_staged(
                    model, staging, output, address=address, runtime_env=runtime_env, batch_size=batch_size,
                    pairs_per_call=shard_rows, concurrency=concurrency, num_cpus=num_cpus, num_gpus=num_gpus,
                    memory=memory, with_probs=with_probs, progress_bar=progress_bar, heap=heap,
                )
                if sink.written != staged:
                    raise RuntimeError(f"Ray wrote {sink.written} records for {staged} staged pairs.")
                summary.written, summary.paraphrases = sink.written, sink.paraphrases
        finally:
            if not keep_staging:
                remove_staging(staging)
        summary.output = str(output)
        summary.seconds = time.perf_counter() - started
        return summary


def annotate_staged(model: str, staging: Path, output: Path, *, address: Optional[str],
                    runtime_env: Optional[Dict[str, Any]], batch_size: int, pairs_per_call: int,
                    concurrency: int, num_cpus: float, num_gpus: float, memory: Optional[int],
                    with_probs: bool, progress_bar: bool, heap: str = DEFAULT_HEAP_POLICY) -> RecordLinesDatasink:
    """read_text(staging) -> map_batches(PairAnnotatorActor) -> OUTPUT, on the
    running Ray instance or one started (and stopped) here."""
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, runtime_env=runtime_env)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = progress_bar
        sink = RecordLinesDatasink(str(output.resolve()))
        # Reading shards and writing records take no CPU of their own: with
        # the actors holding every CPU, tasks that wait for one would never run.
        dataset = ray.data.read_text(str(staging.resolve()), num_cpus=0)
        dataset = dataset.map_batches(
            PairAnnotatorActor,
            fn_constructor_kwargs={
                "model": model,
                "batch_size": batch_size,
                "with_probs": with_probs,
                "use_gpu": num_gpus > 0,
                "threads": max(1, math.floor(num_cpus)) if num_cpus else None,
                "heap": heap,
            },
            batch_size=pairs_per_call,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=concurrency),
            num_cpus=num_cpus,
            num_gpus=num_gpus or None,
            memory=memory,
            udf_modifying_row_count=False,
        )
        try:
            dataset.write_datasink(sink, ray_remote_args={"num_cpus": 0})
        except Exception as err:  # Ray wraps a worker's exception (RayTaskError and the like)
            failed = _pair_failed(err)
            if failed is None:
                raise
            raise PairFailed(
                f"{failed}. The Ray engine does not resume: run the same command with --overwrite (answers "
                "already received are in the model's cache)."
            ) from None
        return sink
    finally:
        if started_here:
            ray.shutdown()


def _pair_failed(err: BaseException) -> Optional[str]:
    """The first sentence of the ``PairFailed`` a Ray worker raised, else None.
    Ray Data hands back its text only (a ``UserCodeException`` without the
    original), so it is found in the text of the error and its causes."""
    texts, seen = [], set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        texts.append(str(err))
        cause = getattr(err, "cause", None)
        err = cause if isinstance(cause, BaseException) else err.__cause__
    found = PairFailed.TEXT.search("\n".join(texts))
    return found.group(0) if found else None
