"""The Ray engine (annotate/ray_engine.py, docs/ray.md) on a real local Ray
cluster: the same records, skips and counts as the local engine."""
import json
import math
import random

import pytest

from tests.util import skip_optional

try:
    import ray  # noqa: F401
except ImportError:
    skip_optional("ray is not installed (pip install 'spacy-paraphrase[ray]', Python >= 3.10)", module=True)

import ray  # noqa: E402

from spacy_paraphrase.annotate.local import run_local  # noqa: E402
from spacy_paraphrase.annotate.ray_engine import prepare_output, run_ray, stage  # noqa: E402
from spacy_paraphrase.annotate.record_format import part_files, read_records  # noqa: E402
from spacy_paraphrase.dialogs import SourceOptions  # noqa: E402
from spacy_paraphrase.annotate.staging import line_pair  # noqa: E402
from spacy_paraphrase.dialogs import DialogCorpus  # noqa: E402
from tests.util import make_examples, make_nlp  # noqa: E402

SHARD_ROWS = 40
WORDS = ("the weather was awful terrible indeed we won game congratulations on win I bought a car "
         "what about lunch caf\u00e9 na\u00efve \U0001F600 \u2028 1/2 \"quoted\"").split(" ")


def write_corpus(path, conversations=70, seed=0):
    """Chat conversations: merged turns (one role twice in a row), some
    whitespace-only messages (skipped pairs), one malformed line."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf8") as f:
        for c in range(conversations):
            messages = []
            for m in range(rng.randint(2, 9)):
                role = "user" if m % 2 == 0 or rng.random() < 0.2 else "assistant"
                text = " ".join(rng.choices(WORDS, k=rng.randint(1, 14))) if rng.random() > 0.04 else "  "
                messages.append({"role": role, "content": text})
            f.write(json.dumps({"id": f"c{c}", "messages": messages}, ensure_ascii=c % 2 == 0) + "\n")
            if c == 10:
                f.write("{not json\n")
    return path


@pytest.fixture(scope="module")
def model_dir(tiny_bert, tmp_path_factory):
    """The tests' tiny pipeline (untrained, fixed seed) saved to disk."""
    from thinc.api import fix_random_seed

    fix_random_seed(0)
    nlp = make_nlp(tiny_bert)
    nlp.initialize(lambda: make_examples(nlp))
    path = tmp_path_factory.mktemp("model") / "model"
    nlp.to_disk(path)
    return str(path)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write_corpus(tmp_path_factory.mktemp("corpus") / "chats.jsonl")


@pytest.fixture(scope="module")
def ray_cluster():
    """A real local cluster on 2 CPUs (token auth off: no ~/.ray/auth_token)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_AUTH_MODE", "disabled")
        ray.init(num_cpus=2, include_dashboard=False, object_store_memory=150 * 1024**2,
                 configure_logging=False, log_to_driver=False)
        try:
            yield
        finally:
            ray.shutdown()


@pytest.fixture(scope="module")
def runs(ray_cluster, model_dir, corpus, tmp_path_factory):
    """One local and one Ray run on the same corpus (staging kept). The 2
    actors of 1 CPU hold every CPU of the cluster: Ray's read and write
    tasks must not wait for one (they did, and the run hung)."""
    base = tmp_path_factory.mktemp("runs")
    local = run_local(model_dir, corpus, base / "local.jsonl", with_probs=True, progress_bar=False)
    remote = run_ray(model_dir, corpus, base / "ray", with_probs=True, shard_rows=SHARD_ROWS,
                     concurrency=2, num_cpus=1, progress_bar=False, keep_staging=True)
    return base, local, remote


def _staged(path):
    with open(path, encoding="utf8") as f:
        return [line_pair(line) for line in f]


def _lines(path):
    with open(path, encoding="utf8") as f:
        return [json.loads(line) for line in f]


def assert_same(a, b, where="record"):
    """Equal JSON values, floats within 1e-5."""
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), where
        assert math.isclose(a, b, rel_tol=0, abs_tol=1e-5), (where, a, b)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), (where, a, b)
        for key in a:
            assert_same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), (where, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    else:
        assert type(a) is type(b) and a == b, (where, a, b)


@pytest.mark.slow  # a local Ray cluster: workers import torch and load the pipeline (about a minute)
def test_same_records_as_the_local_engine(runs):
    base, local, remote = runs
    expected = sorted(_lines(base / "local.jsonl"), key=lambda r: r["pair_id"])
    got = sorted(read_records(base / "ray"), key=lambda r: r["pair_id"])
    assert len(expected) > 150 and sum(len(r["spans"]) for r in expected) > 50
    assert any(len(r["first"]["utterance_ids"]) > 1 for r in expected)  # merged turns
    assert [r["pair_id"] for r in got] == [r["pair_id"] for r in expected]
    for a, b in zip(expected, got):
        assert_same(a, b, a["pair_id"])
    assert len(part_files(base / "ray")) >= 1


@pytest.mark.slow
def test_same_skips_errors_and_counts(runs):
    base, local, remote = runs
    assert (remote.written, remote.paraphrases, remote.skipped, remote.malformed, remote.consumed) == (
        local.written, local.paraphrases, local.skipped, local.malformed, local.consumed)
    assert remote.skipped > 0 and remote.malformed == 1
    key = lambda entry: json.dumps(entry, sort_keys=True)  # noqa: E731
    assert sorted(map(key, _lines(base / "ray.errors.jsonl"))) == sorted(map(key, _lines(base / "local.jsonl.errors.jsonl")))


@pytest.mark.slow
def test_staged_shards_hold_whole_conversations(runs):
    base, local, remote = runs
    (staging,) = base.glob(".ray.staging-*")
    shards = [_staged(path) for path in sorted(staging.glob("shard-*.jsonl"))]
    assert len(shards) >= 4
    owner = {}
    for index, shard in enumerate(shards):
        for pair in shard:
            assert owner.setdefault(pair.conversation_id, index) == index, "a conversation crosses shards"
        last = shard[-1].conversation_id
        assert len(shard) - sum(1 for pair in shard if pair.conversation_id == last) < SHARD_ROWS
        if index < len(shards) - 1:
            assert len(shard) >= SHARD_ROWS
    staged = sorted(pair.pair_id for shard in shards for pair in shard)
    assert staged == sorted(r["pair_id"] for r in _lines(base / "local.jsonl"))


def test_stage_limit_counts_skipped_pairs(corpus, tmp_path):
    errors = tmp_path / "errors.jsonl"
    options = SourceOptions()
    summary = stage(DialogCorpus(corpus, options), tmp_path / "staging", errors, shard_rows=5, limit=30, total=None,
                    progress_bar=False)
    pairs = [pair for path in sorted((tmp_path / "staging").glob("*.jsonl")) for pair in _staged(path)]
    assert summary.consumed == 30 and len(pairs) + summary.skipped == 30
    assert len(_lines(errors)) == summary.skipped + summary.malformed


def test_stage_counts_the_pairs_the_role_filter_left_out(corpus, tmp_path):
    every = stage(DialogCorpus(corpus, SourceOptions()), tmp_path / "all", tmp_path / "all.errors.jsonl", shard_rows=5,
                  limit=None, total=None, progress_bar=False)
    users = SourceOptions(first_roles=["user"], second_roles=["assistant"])
    kept = stage(DialogCorpus(corpus, users), tmp_path / "users", tmp_path / "users.errors.jsonl", shard_rows=5,
                 limit=None, total=None, progress_bar=False)
    assert every.role_dropped == 0 and 0 < kept.role_dropped < every.consumed
    assert kept.consumed + kept.role_dropped == every.consumed


def test_a_failed_format_guess_writes_nothing(tmp_path):
    table = tmp_path / "turns.csv"
    table.write_text("conversation_id,foo\nc1,x\n", encoding="utf-8")  # guessed: turns; no speaker, text
    with pytest.raises(ValueError, match="missing column"):
        run_ray("unused", table, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["turns.csv"]


def test_output_must_be_a_new_or_empty_directory(tmp_path):
    errors = tmp_path / "out.errors.jsonl"
    afile = tmp_path / "file.jsonl"
    afile.write_text("{}\n")
    with pytest.raises(ValueError, match="is a file"):
        prepare_output(afile, errors, overwrite=True)
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.jsonl").write_text("{}\n")
    with pytest.raises(ValueError, match="--overwrite"):
        prepare_output(out, errors, overwrite=False)
    prepare_output(out, errors, overwrite=True)
    assert list(out.iterdir()) == []
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="other files"):
        prepare_output(out, errors, overwrite=True)
    assert (out / "notes.txt").exists()


def test_bad_settings_fail_before_any_work(corpus, tmp_path):
    with pytest.raises(ValueError, match="concurrency"):
        run_ray("unused", corpus, tmp_path / "out", concurrency=0)
    with pytest.raises(FileNotFoundError):
        run_ray("unused", tmp_path / "missing.jsonl", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_command_passes_the_ray_options(corpus, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from spacy_paraphrase.annotate import ray_engine
    from spacy_paraphrase.annotate.local import Summary
    from spacy_paraphrase.cli import app

    calls = []

    def fake_run_ray(model, input_path, output, **options):
        calls.append((model, input_path, output, options))
        return Summary(str(output), str(output) + ".errors.jsonl", written=7, consumed=7)

    monkeypatch.setattr(ray_engine, "run_ray", fake_run_ray)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["annotate", "some-model", str(corpus), str(out), "--engine", "ray",
                                      "--address", "ray://head:10001", "-n", "3", "--gpu-id", "0",
                                      "--limit", "5", "--with-probs"])
    assert result.exit_code == 0, result.output
    assert "pairs written: 7" in result.output
    ((model, input_path, output, options),) = calls
    assert (model, str(input_path), str(output)) == ("some-model", str(corpus), str(out))
    assert options["address"] == "ray://head:10001" and options["concurrency"] == 3
    assert options["gpu_id"] == 0 and options["limit"] == 5 and options["with_probs"] is True
    result = CliRunner().invoke(app, ["annotate", "m", str(corpus), str(out), "--engine", "ray",
                                      "--output-format", "convokit"])
    assert result.exit_code == 1 and "local engine only" in result.output


@pytest.mark.slow
def test_visualize_reads_the_ray_output_directory(runs):
    from spacy_paraphrase.visualize.inputs import load_views

    base, _, remote = runs
    views = load_views(base / "ray")
    assert [v.pair_id for v in views] == [r["pair_id"] for r in read_records(base / "ray")]
    assert len(views) == remote.written
