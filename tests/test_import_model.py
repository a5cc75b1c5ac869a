"""import-model: a Hugging Face token classifier of the ContextDeP authors'
kind as a paraphrase_spans pipeline, checked against an independent
implementation of the authors' inference written here from the facts of their
protocol (docs/paper-model.md): one sequence ``first words + ["[SEP]"] +
second words`` (``is_split_into_words``, ``truncation=True``), softmax label 1
at each word's first sub-word (their ``word_ids`` walk, the "[SEP]" word
dropped), a word highlighted when its probability is > 0.5, a pair a
paraphrase when a word of both turns is."""
import csv
import json
import os
import sys
import warnings

import numpy
import pytest
import spacy
import torch
from typer.testing import CliRunner

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.cli import app
from spacy_paraphrase.import_model import ABOVE_HALF, import_model
from tests.util import DATA_DIR, DEBERTA_TOKENIZER, PAIRS, make_token_classifier

runner = CliRunner()
KINDS = ["bert", "deberta"]

# Pairs used when the ContextDeP data is not at hand (the tests then still
# run): words the DeBERTa-v3-style tokenizer starts with a lone "▁" piece
# ("each", "--"), punctuation attached, an empty word.
FALLBACK_PAIRS = [(a, b) for a, b, _, _ in PAIRS] + [
    ("At some point, somebody has to blink, but they're waiting for each other. Meanwhile --".split(" "),
     "They'll be waiting a while.".split(" ")),
    ("We  won the game.".split(" "), "You won it?".split(" ")),
]


def dev_pairs():
    """ContextDeP dev pairs (words = ``text.split(" ")``), else the fallback pairs."""
    path = DATA_DIR / "contextdep" / "dev.tsv"
    if not path.is_file():
        return FALLBACK_PAIRS
    csv.field_size_limit(10 ** 9)
    pairs = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            pairs.setdefault(row["QID"], (row["Guest Tokens"].split(" "), row["Host Tokens"].split(" ")))
    return list(pairs.values()) + FALLBACK_PAIRS[-2:]


class AuthorsInference:
    """The authors' inference of a token classifier folder, as their
    evaluation script runs it (written from the protocol, not from this
    package's code)."""

    def __init__(self, folder):
        from transformers import AutoModelForTokenClassification, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self.model = AutoModelForTokenClassification.from_pretrained(str(folder)).eval()

    def encode(self, first, second):
        return self.tokenizer(first + ["[SEP]"] + second, is_split_into_words=True, truncation=True,
                              padding=True, return_tensors="pt")

    def __call__(self, first, second):
        """(first-turn word probabilities, second-turn ones, n pieces), read
        as their script reads them: a word kept when its index equals the
        count so far (an empty word shifts the rest)."""
        enc = self.encode(first, second)
        with torch.no_grad():
            probs = torch.softmax(self.model(**enc).logits, dim=-1)[0, :, 1].numpy()
        words = []
        for i, w in enumerate(enc.word_ids(0)):
            if w is not None and w == len(words):
                words.append(float(probs[i]))
        sep = len(first)
        return numpy.array(words[:sep]), numpy.array(words[sep + 1:]), int(enc["input_ids"].shape[1])

    @staticmethod
    def decide(p_first, p_second):
        highlighted = (p_first > 0.5, p_second > 0.5)
        return bool(highlighted[0].any() and highlighted[1].any()), highlighted


@pytest.fixture(scope="module", params=KINDS)
def imported(request, tmp_path_factory):
    """(kind, checkpoint folder, imported pipeline folder)."""
    if request.param == "deberta" and not DEBERTA_TOKENIZER.is_dir():
        pytest.skip(f"the DeBERTa-v3-style tokenizer is not at {DEBERTA_TOKENIZER}")
    base = tmp_path_factory.mktemp(f"import_{request.param}")
    checkpoint = make_token_classifier(base / "checkpoint", request.param)
    out = base / "pipeline"
    import_model(str(checkpoint), out)
    return request.param, checkpoint, out


def pipeline_probs(nlp, pairs):
    docs = list(nlp.pipe([make_pair_doc(nlp, a, b) for a, b in pairs]))
    return docs, [numpy.asarray(doc.spans["paraphrase"].attrs["token_probs"], dtype="float64") for doc in docs]


def test_every_word_and_decision_equals_the_authors_inference(imported):
    kind, checkpoint, out = imported
    authors = AuthorsInference(checkpoint)
    nlp = spacy.load(out)
    pairs = dev_pairs()
    docs, probs = pipeline_probs(nlp, pairs)
    clean = shifted = lone_piece = 0
    for (first, second), doc, p in zip(pairs, docs, probs):
        ref_a, ref_b, n_pieces = authors(first, second)
        n_a = len(first)
        if "" in first or "" in second:
            # the documented difference: their walk drops an empty word's slot and
            # shifts every later word; here every word keeps its index (the empty
            # one gets the rule for tokens without pieces). The non-empty words
            # equal the authors' inference over the pair without its empty words.
            shifted += 1
            assert len(ref_a) + len(ref_b) < len(first) + len(second)
            kept_a, kept_b = [w for w in first if w], [w for w in second if w]
            unshifted_a, unshifted_b, _ = authors(kept_a, kept_b)
            got_a = p[:n_a][[i for i, w in enumerate(first) if w]]
            got_b = p[n_a:][[i for i, w in enumerate(second) if w]]
            assert numpy.abs(got_a - unshifted_a).max() <= 1e-5
            assert numpy.abs(got_b - unshifted_b).max() <= 1e-5
            continue
        assert n_pieces <= 512
        clean += 1
        lone_piece += "▁" in authors.encode(first, second).tokens()
        assert numpy.abs(p[:n_a] - ref_a).max() <= 1e-5, (kind, first[:5])
        assert numpy.abs(p[n_a:] - ref_b).max() <= 1e-5, (kind, second[:5])
        is_paraphrase, (hl_a, hl_b) = AuthorsInference.decide(ref_a, ref_b)
        assert (doc.cats["PARAPHRASE"] >= nlp.get_pipe("paraphrase_spans").cfg["threshold"]) == is_paraphrase
        flags = numpy.zeros((len(doc),), dtype=bool)
        for span in doc.spans["paraphrase"]:
            flags[span.start:span.end] = True
        if is_paraphrase:
            assert flags.tolist() == hl_a.tolist() + hl_b.tolist()
        else:
            assert not flags.any()
    assert shifted >= 1 and clean >= min(80, len(pairs) - shifted)
    if kind == "deberta":  # the words whose first sub-word is a lone "▁" were among them
        assert lone_piece >= 1


@pytest.mark.parametrize("setting,value", [
    ("components.paraphrase_spans.model.pooling", "mean"),
    ("components.transformer.model.token_types", "pair"),
])
def test_switching_a_protocol_setting_back_breaks_exactness(imported, setting, value):
    kind, checkpoint, out = imported
    if kind == "deberta" and setting.endswith("token_types"):
        pytest.skip("DeBERTa-v3 has no token-type embeddings: the setting cannot matter there")
    pairs = dev_pairs()[:12]
    _, exact = pipeline_probs(spacy.load(out), pairs)
    _, changed = pipeline_probs(spacy.load(out, config={setting: value}), pairs)
    diff = max(float(numpy.nanmax(numpy.abs(a - b))) for a, b in zip(exact, changed))
    assert diff > 1e-3


def test_above_half_is_the_authors_strict_threshold(imported):
    _, _, out = imported
    nlp = spacy.load(out)
    pipe = nlp.get_pipe("paraphrase_spans")
    assert pipe.cfg["threshold"] == pipe.cfg["highlight_threshold"] == ABOVE_HALF
    after_half = float(numpy.nextafter(numpy.float32(0.5), numpy.float32(1)))
    assert 0.5 < ABOVE_HALF < after_half and numpy.float32(ABOVE_HALF) == numpy.float32(after_half)
    doc = make_pair_doc(nlp, ["We", "won"], ["You", "won"])
    half = numpy.float32(0.5)
    pipe.readout.annotate(doc, numpy.array([half, 0.9, half, 0.9], dtype="float32"))
    assert doc.cats["PARAPHRASE"] >= ABOVE_HALF and [s.text for s in doc.spans["paraphrase"]] == ["won", "won"]
    pipe.readout.annotate(doc, numpy.array([half, 0.1, 0.9, 0.2], dtype="float32"))
    assert doc.cats["PARAPHRASE"] < ABOVE_HALF and len(doc.spans["paraphrase"]) == 0  # 0.5 is not > 0.5


def test_long_pairs_are_cut_like_the_authors_or_windowed(imported):
    kind, checkpoint, out = imported
    authors = AuthorsInference(checkpoint)
    words = "the committee said on Tuesday that every member would answer questions".split()
    first = [f"{w}{i % 7}" if i % 5 == 0 else w for i, w in enumerate(words * 40)]  # ~480 words, >512 pieces
    second = "So the committee will answer the questions on Tuesday?".split()
    nlp = spacy.load(out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = nlp(make_pair_doc(nlp, first, second))
    ref_a, ref_b, n_pieces = authors(first, second)
    assert n_pieces == 512 and len(ref_b) == 0  # the cut falls in the first turn: the second is lost
    p = numpy.asarray(doc.spans["paraphrase"].attrs["token_probs"], dtype="float64")
    assert numpy.abs(p[: len(ref_a)] - ref_a).max() <= 1e-5
    assert numpy.isnan(p[len(ref_a):]).all()
    assert doc.spans["paraphrase"].attrs["truncated"] and doc.cats["PARAPHRASE"] == 0.0
    windowed = spacy.load(out, config={"components.transformer.model.long_pairs": "windows"})
    doc_w = windowed(make_pair_doc(windowed, first, second))
    assert not numpy.isnan(doc_w.spans["paraphrase"].attrs["token_probs"]).any()
    assert doc_w.spans["paraphrase"].attrs["n_windows"] > 1


def long_pairs(n_pairs: int = 5):
    """Pairs of about 600 to 2,000 DeBERTa-v3 pieces: held-out-style turns
    joined, the first turn alone sometimes over 512 pieces."""
    words = "the committee said on Tuesday that every member would answer questions about the budget".split()
    pairs = []
    for k in range(n_pairs):
        n_first, n_second = 410 + 210 * k, 40 + 50 * k
        first = [f"{w}{i % 11}" if i % 4 == 0 else w for i, w in enumerate((words * 200)[:n_first])]
        second = [f"{w}{i % 5}" if i % 6 == 0 else w for i, w in enumerate((words[::-1] * 50)[:n_second])]
        pairs.append((first, second))
    return pairs


def test_long_pairs_are_whole_when_the_tokenizer_cuts_nothing(tmp_path):
    """The authors' DeBERTa-v3 tokenizer ("no limit" model_max_length) cuts
    nothing under truncation=True: pairs of 600-2,000 pieces equal their
    inference word for word, none cut (a clamp at 512 would lose the second
    turn of most of them). Past ``piece_limit`` such a pair is windowed, never cut."""
    if not DEBERTA_TOKENIZER.is_dir():
        pytest.skip(f"the DeBERTa-v3-style tokenizer is not at {DEBERTA_TOKENIZER}")
    checkpoint = make_token_classifier(tmp_path / "checkpoint", "deberta", model_max_length=None)
    out = tmp_path / "pipeline"
    import_model(str(checkpoint), out)
    authors = AuthorsInference(checkpoint)
    assert authors.tokenizer.model_max_length > 1e20
    nlp = spacy.load(out)
    pairs = long_pairs()
    sizes = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no truncation warning from the pipeline
        warnings.filterwarnings("ignore", message=".*(deprecated|no maximum length|Default to no truncation).*")
        docs, probs = pipeline_probs(nlp, pairs)
    for (first, second), doc, p in zip(pairs, docs, probs):
        ref_a, ref_b, n_pieces = authors(first, second)
        sizes.append(n_pieces)
        assert len(ref_a) == len(first) and len(ref_b) == len(second)
        assert numpy.abs(p[: len(first)] - ref_a).max() <= 1e-5
        assert numpy.abs(p[len(first):] - ref_b).max() <= 1e-5
        assert not doc.spans["paraphrase"].attrs["truncated"] and doc.spans["paraphrase"].attrs["n_windows"] == 1
    assert min(sizes) >= 600 and max(sizes) <= 2048 and max(sizes) >= 1800, sizes
    guarded = spacy.load(out, config={"components.transformer.model.piece_limit": 700})
    doc = list(guarded.pipe([make_pair_doc(guarded, *pairs[-1])]))[0]
    assert doc.spans["paraphrase"].attrs["n_windows"] > 1 and not doc.spans["paraphrase"].attrs["truncated"]
    assert not numpy.isnan(numpy.asarray(doc.spans["paraphrase"].attrs["token_probs"], dtype="float64")).any()


def test_meta_names_the_source_and_the_protocol(imported):
    kind, checkpoint, out = imported
    meta = json.loads((out / "meta.json").read_text())
    record = meta["spacy_paraphrase"]["imported"]
    assert record["architecture"].endswith("ForTokenClassification") and record["from"] == "local"
    assert record["sha256"] and len(record["sha256"]) == 64
    assert record["protocol"] == {"pooling": "first", "head_labels": 2, "long_pairs": "truncate",
                                  "token_types": "single", "threshold": ABOVE_HALF, "highlight_threshold": ABOVE_HALF}
    assert record["sep_word_is_separator"] is True
    assert meta["sources"][0]["name"] == str(checkpoint) and meta["license"]
    assert str(DATA_DIR) not in (out / "meta.json").read_text()


CARD = "---\nlanguage: en\nlicense: cc-by-4.0\ntags:\n- token-classification\n---\n# A model card\n"


def test_the_licence_comes_from_the_model_card(tmp_path):
    """meta.json's ``license`` (what ``spacy package`` puts in the wheel) is the
    card's front-matter ``license:``; a checkpoint with no card says it has none."""
    from spacy_paraphrase.import_model import NO_LICENCE

    with_card = make_token_classifier(tmp_path / "with_card", "bert")
    (with_card / "README.md").write_text(CARD, encoding="utf-8")
    import_model(str(with_card), tmp_path / "a")
    meta = json.loads((tmp_path / "a" / "meta.json").read_text())
    assert meta["license"] == "cc-by-4.0" == meta["sources"][0]["license"]
    assert meta["spacy_paraphrase"]["imported"]["licence"] == "cc-by-4.0"
    assert meta["spacy_paraphrase"]["backbone"]["licence"] == "cc-by-4.0"
    without = make_token_classifier(tmp_path / "without", "bert")
    import_model(str(without), tmp_path / "b")
    meta = json.loads((tmp_path / "b" / "meta.json").read_text())
    assert meta["license"] == NO_LICENCE and meta["spacy_paraphrase"]["imported"]["licence"] is None


def test_the_head_is_the_checkpoints_two_label_classifier(imported):
    from transformers import AutoModelForTokenClassification

    _, checkpoint, out = imported
    head = AutoModelForTokenClassification.from_pretrained(str(checkpoint)).classifier
    linear = spacy.load(out).get_pipe("paraphrase_spans").model.get_ref("head").layers[-1]
    assert numpy.array_equal(linear.get_param("W"), head.weight.detach().numpy())
    assert numpy.array_equal(linear.get_param("b"), head.bias.detach().numpy())


def test_refuses_bad_sources_in_one_clear_error_writing_nothing(tmp_path, monkeypatch):
    from transformers import BertConfig, BertModel

    good = make_token_classifier(tmp_path / "good", "bert")
    plain = tmp_path / "plain"
    BertModel(BertConfig(vocab_size=100, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=8)).save_pretrained(str(plain))
    three = make_token_classifier(tmp_path / "three", "bert", labels=3)
    slow = tmp_path / "slow"  # a tokenizer with no fast version (no offsets): CTRL
    slow.mkdir()
    for name in ("config.json", "model.safetensors"):
        (slow / name).write_bytes((good / name).read_bytes())
    (slow / "vocab.json").write_text(json.dumps({"a": 0, "b": 1, "<unk>": 2}))
    (slow / "merges.txt").write_text("#version: 0.2\n")
    (slow / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "CTRLTokenizer"}))
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "x").write_text("x")
    cases = [
        ([str(plain)], "is not a token classifier"),
        ([str(three)], "has 3 labels"),
        ([str(slow)], "gives no character offsets"),
        (["nobody/no-such-model"], "Cannot fetch 'nobody/no-such-model'"),
        ([str(tmp_path / "good" / "config.json")], "is a file"),
        ([str(good), "--long-pairs", "drop"], "Unknown long_pairs"),
    ]
    before = sorted(p.name for p in tmp_path.iterdir())
    for args, message in cases:
        result = runner.invoke(app, ["import-model", args[0], str(tmp_path / "out")] + args[1:])
        assert result.exit_code == 1, (args, result.output)
        assert message in " ".join(result.output.split()), (args, result.output)
        assert "Traceback" not in result.output
    for target, message in [(taken, "not empty"), (good / "inside", "inside")]:
        result = runner.invoke(app, ["import-model", str(good), str(target)])
        assert result.exit_code == 1 and message in " ".join(result.output.split()), result.output
    assert not (good / "inside").exists()
    # the hub on, but unreachable: still one error naming the way to a local copy
    import huggingface_hub

    def unreachable(*args, **kwargs):
        raise huggingface_hub.errors.LocalEntryNotFoundError("Connection error, and we cannot find the files")

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeHub.with_sizes(None))  # no request leaves this machine
    result = runner.invoke(app, ["import-model", "AnnaWegmann/Highlight-Paraphrases-in-Dialog", str(tmp_path / "out")])
    flat = " ".join(result.output.split())
    assert result.exit_code == 1 and "not reachable" in flat and "--local-dir DIR" in flat, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written, no staging left



class FakeHub:
    """``huggingface_hub.HfApi`` answering ``model_info`` with files of the given sizes (None: unreachable)."""
    sizes = None

    @classmethod
    def with_sizes(cls, sizes):
        return type("FakeHubApi", (cls,), {"sizes": sizes})

    def model_info(self, name, **kwargs):
        from types import SimpleNamespace

        if self.sizes is None:
            raise OSError("no network in the tests")
        return SimpleNamespace(siblings=[SimpleNamespace(rfilename=f, size=n) for f, n in self.sizes.items()])


def test_each_download_failure_says_which_writing_nothing(tmp_path, monkeypatch):
    """Not found or private, gated, no such revision, the network, a full
    disk (with the bytes needed, before any download when the hub lists the
    sizes): one line each, nothing written."""
    import shutil
    import huggingface_hub
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError, RevisionNotFoundError

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeHub.with_sizes(None))
    response = type("Response", (), {"headers": {}, "status_code": 404, "request": None, "url": "x"})()

    def raising(err):
        def download(*args, **kwargs):
            raise err
        return download

    full = OSError(28, "No space left on device")
    cases = [
        (RepositoryNotFoundError("404", response=response), "no such repository, or it is private"),
        (GatedRepoError("403", response=response), "gated repository"),
        (RevisionNotFoundError("404", response=response), "has no revision"),
        (ConnectionError("down"), "not reachable"),
        (full, "the disk is full"),
    ]
    for err, message in cases:
        monkeypatch.setattr(huggingface_hub, "snapshot_download", raising(err))
        result = runner.invoke(app, ["import-model", "someone/model", str(tmp_path / "out")])
        flat = " ".join(result.output.split())
        assert result.exit_code == 1 and message in flat and "Traceback" not in result.output, (message, result.output)
        assert len(result.output.strip().splitlines()) <= 3
    free = shutil.disk_usage(tmp_path).free
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeHub.with_sizes({"model.safetensors": free * 4, "README.md": 10}))
    monkeypatch.setattr(huggingface_hub, "snapshot_download", raising(AssertionError("must not download")))
    result = runner.invoke(app, ["import-model", "someone/model", str(tmp_path / "out")])
    flat = " ".join(result.output.split())
    assert result.exit_code == 1 and "the disk is too small" in flat and "it needs" in flat, result.output
    assert not (tmp_path / "out").exists() and sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_cached_checkpoint_without_its_tokenizer_completes_itself(tmp_path, monkeypatch):
    """The cache holds the weights but no tokenizer files (the model alone was
    loaded before): the import fetches the rest (snapshot_download), and says
    so in one line when the hub is off."""
    import shutil
    import huggingface_hub
    import spacy_paraphrase.import_model as importer

    complete = make_token_classifier(tmp_path / "complete", "bert")
    cached = tmp_path / "cache"
    cached.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(complete / name, cached / name)
    monkeypatch.setattr(importer, "hub_cached_folder", lambda name: cached)
    calls = []

    def download(name, **kwargs):
        calls.append(name)
        for f in complete.iterdir():
            if not (cached / f.name).exists():
                shutil.copy(f, cached / f.name)
        return str(cached)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", download)
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeHub.with_sizes(None))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = runner.invoke(app, ["import-model", "someone/model", str(tmp_path / "offline")])
    assert result.exit_code == 1 and "without its tokenizer files" in " ".join(result.output.split()), result.output
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    result = runner.invoke(app, ["import-model", "someone/model", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert calls == ["someone/model"] and (cached / "tokenizer.json").is_file()


def test_the_positive_label_is_checked_and_can_be_named(tmp_path):
    """The authors' unnamed labels: LABEL_1. Named labels: one line asking for
    --positive-label; naming label 0 gives the probabilities of that label."""
    checkpoint = make_token_classifier(tmp_path / "named", "bert")
    config = json.loads((checkpoint / "config.json").read_text())
    config["id2label"], config["label2id"] = {"0": "PARA", "1": "O"}, {"PARA": 0, "O": 1}
    (checkpoint / "config.json").write_text(json.dumps(config))
    result = runner.invoke(app, ["import-model", str(checkpoint), str(tmp_path / "refused")])
    flat = " ".join(result.output.split())
    assert result.exit_code == 1 and "--positive-label" in flat and "'PARA'" in flat, result.output
    assert not (tmp_path / "refused").exists()
    result = runner.invoke(app, ["import-model", str(checkpoint), str(tmp_path / "x"), "--positive-label", "NOPE"])
    assert result.exit_code == 1 and "has no label 'NOPE'" in " ".join(result.output.split())
    result = runner.invoke(app, ["import-model", str(checkpoint), str(tmp_path / "out"), "--positive-label", "PARA"])
    assert result.exit_code == 0, result.output
    authors = AuthorsInference(checkpoint)
    nlp = spacy.load(tmp_path / "out")
    assert json.loads((tmp_path / "out" / "meta.json").read_text())["spacy_paraphrase"]["imported"]["positive_label"] == "PARA"
    first, second = FALLBACK_PAIRS[0]
    ref_a, ref_b, _ = authors(first, second)  # label 1's probabilities = 1 - label 0's
    _, [p] = pipeline_probs(nlp, [(first, second)])
    assert numpy.abs(p - (1.0 - numpy.concatenate([ref_a, ref_b]))).max() <= 1e-5


def test_a_sharded_checkpoint_imports_the_same(tmp_path):
    """Weights saved in shards (model.safetensors.index.json, as save_pretrained
    writes a large model) import to the same pipeline as the single file."""
    from transformers import AutoModelForTokenClassification

    single = make_token_classifier(tmp_path / "single", "bert")
    sharded = tmp_path / "sharded"
    AutoModelForTokenClassification.from_pretrained(str(single)).save_pretrained(str(sharded), max_shard_size="100KB")
    for f in single.iterdir():
        if not f.name.startswith("model") and f.name != "config.json":
            (sharded / f.name).write_bytes(f.read_bytes())
    assert (sharded / "model.safetensors.index.json").is_file() and not (sharded / "model.safetensors").exists()
    import_model(str(single), tmp_path / "a")
    import_model(str(sharded), tmp_path / "b")
    pairs = FALLBACK_PAIRS[:4]
    _, pa = pipeline_probs(spacy.load(tmp_path / "a"), pairs)
    _, pb = pipeline_probs(spacy.load(tmp_path / "b"), pairs)
    assert all(numpy.array_equal(x, y, equal_nan=True) for x, y in zip(pa, pb))
    (sharded / sorted(sharded.glob("model-*.safetensors"))[0].name).unlink()
    result = runner.invoke(app, ["import-model", str(sharded), str(tmp_path / "c")])
    assert result.exit_code == 1 and "missing" in " ".join(result.output.split()), result.output


def test_the_import_runs_lean_and_gives_the_caller_its_heap_policy_back(tmp_path, monkeypatch):
    """import-model's lean heap (a one-off peak) does not stay with the work
    a caller's process does next: a benchmark or a notebook that imports,
    then annotates, runs at the speed of its own policy."""
    from spacy_paraphrase.annotate import heap

    monkeypatch.setattr(heap, "_SET_HERE", {})
    monkeypatch.setattr(heap, "_policy", None)
    for env in (heap.MMAP_THRESHOLD_ENV, heap.TRIM_THRESHOLD_ENV):
        monkeypatch.delenv(env, raising=False)
    seen = []
    real = heap.bound_native_memory
    monkeypatch.setattr(heap, "bound_native_memory", lambda policy="fast": seen.append(policy) or real(policy))
    import_model(str(make_token_classifier(tmp_path / "checkpoint", "bert")), tmp_path / "a")
    assert seen == ["lean", "fast"] and heap.policy_in_force() == "fast"  # none before: the default's speed
    heap.bound_native_memory("lean")
    import_model(str(tmp_path / "checkpoint"), tmp_path / "b")
    assert heap.policy_in_force() == "lean"
    assert os.environ[heap.MMAP_THRESHOLD_ENV] == str(128 * 2 ** 10)


def test_training_an_imported_pipeline_moves_its_two_label_head_downhill(imported):
    """The 2-label head's gradient (d(z1 - z0): +d to label 1, -d to label 0):
    updates on gold pairs lower the loss, from the imported weights."""
    from thinc.api import Adam, fix_random_seed
    from tests.util import make_examples

    fix_random_seed(0)
    _, _, out = imported
    nlp = spacy.load(out)
    examples = make_examples(nlp)
    optimizer = Adam(1e-3)
    losses = []
    for _ in range(8):
        step = {}
        nlp.update(examples, sgd=optimizer, losses=step)
        losses.append(step["paraphrase_spans"])
    assert losses[-1] < 0.8 * losses[0], losses


def test_spacy_train_fine_tunes_from_the_imported_weights(imported, tmp_path):
    """configs/contextdep_paper_finetune.cfg sources both components from the
    imported pipeline: training starts from its head (a few small steps stay
    near it) and keeps the authors' settings."""
    import subprocess
    from spacy.tokens import DocBin
    from tests.test_project import ROOT
    from tests.util import make_examples

    kind, checkpoint, out = imported
    if kind != "bert":
        pytest.skip("one architecture is enough for the config path")
    nlp = spacy.load(out)
    data = tmp_path / "pairs.spacy"
    DocBin(docs=[eg.reference for eg in make_examples(nlp)], store_user_data=True).to_disk(data)
    result = subprocess.run(
        [sys.executable, "-m", "spacy", "train", str(ROOT / "configs" / "contextdep_paper_finetune.cfg"),
         "--paths.imported", str(out), "--paths.train", str(data), "--paths.dev", str(data),
         "--output", str(tmp_path / "trained"), "--training.max_epochs", "2", "--training.eval_frequency", "1"],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    trained = spacy.load(tmp_path / "trained" / "model-last")
    w_import = nlp.get_pipe("paraphrase_spans").model.get_ref("head").layers[-1].get_param("W")
    w_trained = trained.get_pipe("paraphrase_spans").model.get_ref("head").layers[-1].get_param("W")
    assert w_trained.shape == w_import.shape == (2, 32)
    moved = float(numpy.abs(w_trained - w_import).max())
    assert 0 < moved < 0.01 * float(numpy.abs(w_import).max())
    assert trained.get_pipe("paraphrase_spans").model.attrs["pooling"] == "first"
    assert trained.get_pipe("transformer").model.attrs["token_types"] == "single"



def test_its_scores_become_soft_silver_targets_for_a_student(imported):
    """Distillation goes through the LLM's silver path (`llm silver --soft`):
    the imported pipeline's word probabilities become the student's soft
    token targets, its pair score the pair target."""
    from spacy_paraphrase.llm.silver import silver_docs
    from spacy_paraphrase.paraphrase_spans.scorer import reference_token_targets

    _, _, out = imported
    nlp = spacy.load(out)
    pairs = FALLBACK_PAIRS[:4]
    inputs = [make_pair_doc(nlp, a, b) for a, b in pairs]
    silver, counts = silver_docs(nlp, inputs, soft=True)
    assert counts["written"] == len(pairs)
    _, probs = pipeline_probs(nlp, pairs)
    for doc, p, (a, _) in zip(silver, probs, pairs):
        targets = reference_token_targets(doc, "paraphrase")
        assert numpy.allclose(targets, numpy.nan_to_num(p, nan=0.0), atol=1e-6)
        assert doc.cats["PARAPHRASE"] == pytest.approx(float(numpy.nanmin(
            [numpy.nanmax(p[: len(a)]), numpy.nanmax(p[len(a):])])), abs=1e-6)



def test_the_commands_take_the_imported_pipeline(imported, tmp_path):
    """annotate -> visualize, report, validate sheet; evaluate: as for a trained pipeline."""
    import srsly
    from spacy.tokens import DocBin
    from tests.test_project import CHAT
    from tests.util import make_examples

    kind, _, out = imported
    if kind != "bert":
        pytest.skip("one architecture is enough for the commands")
    chat = tmp_path / "chat.jsonl"
    srsly.write_jsonl(chat, [dict(dialog, id=f"{dialog['id']}-{i}") for i in range(3) for dialog in CHAT])
    records = tmp_path / "records.jsonl"
    steps = [
        ["annotate", str(out), str(chat), str(records), "--no-count", "--with-probs"],
        ["visualize", str(records), str(tmp_path / "page.html")],
        ["report", str(records), "-o", str(tmp_path / "report")],
        ["validate", "sheet", str(records), "-o", str(tmp_path / "coding" / "sheet.csv"), "--n", "4"],
    ]
    for args in steps:
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
    rows = list(srsly.read_jsonl(records))
    assert len(rows) == 6 and all(0.0 <= r["score"] <= 1.0 for r in rows)
    assert (tmp_path / "report" / "index.html").is_file() and (tmp_path / "page.html").stat().st_size > 1000
    nlp = spacy.load(out)
    data = tmp_path / "dev.spacy"
    DocBin(docs=[eg.reference for eg in make_examples(nlp)], store_user_data=True).to_disk(data)
    result = runner.invoke(app, ["evaluate", str(out), str(data), "--output", str(tmp_path / "scores.json")])
    assert result.exit_code == 0, result.output
    assert "paraphrase_spans_pair_f" in srsly.read_json(tmp_path / "scores.json")


@pytest.mark.slow
def test_paper_model_workflow_then_its_wheel_annotates_in_a_fresh_venv(tmp_path):
    """`spacy project run paper_model` on two saved random DeBERTa-v3 token
    classifiers (standing in for the hub's): import, evaluate on dev and
    test, package; then the wheel, installed with spacy-paraphrase's own in a
    fresh venv, annotates a dialog file by package name, the checkpoints gone."""
    import shutil
    import srsly
    from tests.test_project import CHAT, ROOT, _build_package_wheel, _fresh_venv, _run
    from tests.util import HEADER, row

    if not DEBERTA_TOKENIZER.is_dir():
        pytest.skip(f"the DeBERTa-v3-style tokenizer is not at {DEBERTA_TOKENIZER}")
    aggregated = make_token_classifier(tmp_path / "ckpt_aggregated", "deberta", seed=1)
    all_annotations = make_token_classifier(tmp_path / "ckpt_all", "deberta", seed=2)
    for checkpoint in (aggregated, all_annotations):  # the hub checkpoints' cards carry their licence
        (checkpoint / "README.md").write_text(CARD, encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "project.yml", project / "project.yml")
    shutil.copytree(ROOT / "scripts", project / "scripts")
    shutil.copytree(ROOT / "configs", project / "configs")
    data = tmp_path / "data" / "contextdep"
    data.mkdir(parents=True)
    rows = [row(f"Q{i}", "A", i % 2, f"we won the game {i}", [1, 1, 1, 0, 0] if i % 2 else [0] * 5,
                f"you won {i}", [0, 1, 0] if i % 2 else [0] * 3) for i in range(6)]
    for split in ("dev", "test"):
        (data / f"{split}.tsv").write_text(HEADER + "".join(rows), encoding="utf-8")
    _run([sys.executable, "-m", "spacy", "project", "run", "paper_model", project,
          "--vars.data_dir", tmp_path / "data", "--vars.paper_model", aggregated,
          "--vars.paper_model_all", all_annotations], "spacy project run paper_model", 1200, cwd=project,
         # as `env -i PATH=/usr/bin:/bin .venv/bin/python -m spacy project run ...`: no venv on the
         # PATH, so a step that ran the PATH's `python` would fail (scripts/subcommand.py)
         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    for variant in ("aggregated", "all"):
        for split in ("dev", "test"):
            scores = srsly.read_json(project / "metrics" / f"paper_model_{variant}_{split}.json")
            for key in ("pair_f", "pair_acc", "jaccard_first", "jaccard_second",
                        "paper_pair_f", "paper_pair_p", "paper_pair_r", "paper_jaccard_first_n",
                        "paper_jaccard_second_n"):  # the paper's metrics (scorer.paper_scores)
                assert f"paraphrase_spans_{key}" in scores, (variant, split, key)
    meta = srsly.read_json(project / "training" / "paper_model" / "aggregated" / "meta.json")
    assert meta["spacy_paraphrase"]["imported"]["protocol"]["pooling"] == "first"
    assert meta["license"] == "cc-by-4.0"
    wheels = list((project / "packages").glob("**/*.whl"))
    assert len(wheels) == 1
    import zipfile

    with zipfile.ZipFile(wheels[0]) as wheel:
        metadata = next(name for name in wheel.namelist() if name.endswith(".dist-info/METADATA"))
        assert "License: cc-by-4.0" in wheel.read(metadata).decode("utf-8")
        # the weights travel as safetensors beside a weightless model file
        assert any(name.endswith("transformer/model.safetensors") for name in wheel.namelist())
    shutil.rmtree(aggregated)
    shutil.rmtree(all_annotations)

    work = tmp_path / "install"
    package_wheel = _build_package_wheel(work / "build")
    _, python, env, outside = _fresh_venv(work)
    _run([python, "-m", "pip", "install", "--no-input", package_wheel, wheels[0]], "pip install both wheels", 2400,
         env=env, cwd=outside)
    chat = outside / "chat.jsonl"
    srsly.write_jsonl(chat, CHAT)
    _run([python, "-m", "spacy_paraphrase", "annotate", "en_contextdep_paper_aggregated", chat, outside / "out.jsonl",
          "--no-count"], "annotate with the imported model's wheel", 600, env=env, cwd=outside)
    records = list(srsly.read_jsonl(outside / "out.jsonl"))
    assert [r["conversation_id"] for r in records] == ["c1", "c2"]
    for record in records:
        assert isinstance(record["score"], float) and 0.0 <= record["score"] <= 1.0, record


def test_a_roberta_token_classifier_loads_the_same_way(tmp_path):
    """RoBERTa's kind: "[SEP]" is not its separator, so the pipeline runs the
    authors' README way, a text pair ``tokenizer(text1, text2)``; each word's
    probability is label 1's softmax at its first piece there (the first piece
    whose offsets start inside the word)."""
    checkpoint = make_token_classifier(tmp_path / "checkpoint", "roberta")
    out = tmp_path / "pipeline"
    import_model(str(checkpoint), out)
    record = json.loads((out / "meta.json").read_text())["spacy_paraphrase"]["imported"]
    assert record["architecture"] == "RobertaForTokenClassification" and record["sep_word_is_separator"] is False
    authors = AuthorsInference(checkpoint)
    nlp = spacy.load(out)
    fits = lambda a, b: len(authors.tokenizer(" ".join(a), " ".join(b))["input_ids"]) <= 512  # noqa: E731
    plain = lambda words: all(w and not any(c.isspace() for c in w) for w in words)  # noqa: E731
    pairs = [(a, b) for a, b in dev_pairs() if plain(a + b) and fits(a, b)][:40]
    assert len(pairs) >= min(20, len(FALLBACK_PAIRS) - 1)
    docs, probs = pipeline_probs(nlp, pairs)
    worst = 0.0
    for (first, second), doc, p in zip(pairs, docs, probs):
        text_a, text_b = " ".join(first), " ".join(second)
        enc = authors.tokenizer(text_a, text_b, truncation=True, return_offsets_mapping=True, return_tensors="pt")
        offsets, seq = enc.pop("offset_mapping")[0].tolist(), enc.sequence_ids(0)
        with torch.no_grad():
            piece_probs = torch.softmax(authors.model(**enc).logits, dim=-1)[0, :, 1].numpy()
        expected = []
        for side, words in ((0, first), (1, second)):
            start = 0
            for word in words:
                # a byte-level lone "Ġ" piece (empty offsets at the word's start) is
                # the word's first piece, as its pre-token (" word") says
                firsts = [i for i, (s, e) in enumerate(offsets) if seq[i] == side and start <= s < start + len(word)]
                expected.append(float(piece_probs[firsts[0]]))
                start += len(word) + 1
        worst = max(worst, float(numpy.abs(p - numpy.array(expected)).max()))
        first_hl = numpy.array(expected[:len(first)]) > 0.5
        second_hl = numpy.array(expected[len(first):]) > 0.5
        decided = doc.cats["PARAPHRASE"] >= nlp.get_pipe("paraphrase_spans").cfg["threshold"]
        assert decided == bool(first_hl.any() and second_hl.any())
    assert worst <= 1e-5
