"""Coded files of the coding page: ``convert coded`` gives the Docs
ContextDeP's converter gives for the same annotations; bad files stop
``validate score`` and ``convert coded`` with one line naming the file and the
pair, nothing written."""
import csv
import json

import numpy
import pytest
import spacy
from spacy.tokens import DocBin
from typer.testing import CliRunner

from spacy_paraphrase.cli import app
from spacy_paraphrase.converters import convert_contextdep
from spacy_paraphrase.converters.coded import convert_coded
from tests.report.helpers import corpus, failed, write_records
from tests.util import DATA_DIR, HEADER, row
from tests.validation.coded_files import coded_file, sheet_rows

runner = CliRunner()
ATTRS = ("votes", "highlight_counts", "token_targets")


def contextdep_pairs(n=20, coders=3, seed=0, real=True):
    """(qid, guest words, host words, [(annotator, label, guest 0/1, host 0/1)]) of ``n`` pairs, ``coders``
    annotations each: the first pairs of ContextDeP dev with single-spaced texts when it is at hand, else random."""
    dev = DATA_DIR / "contextdep" / "dev.tsv"
    out = []
    if real and dev.is_file():
        with dev.open(newline="", encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f, delimiter="\t") if r.get("Host Highlights")]
        by_qid = {}
        for r in rows:
            by_qid.setdefault(r["QID"], []).append(r)
        for qid, group in by_qid.items():
            guest, host = group[0]["Guest Tokens"], group[0]["Host Tokens"]
            if guest.split(" ") != guest.split() or host.split(" ") != host.split() or len(group) < coders:
                continue
            anns = [(f"coder{i}", int(r["Is Paraphrase"]), json.loads(r["Guest Highlights"]),
                     json.loads(r["Host Highlights"])) for i, r in enumerate(group[:coders])]
            out.append((qid, guest.split(), host.split(), anns))
            if len(out) == n:
                return out
    rng = numpy.random.default_rng(seed)
    for q in range(n):
        g, h = [f"g{q}w{i}" for i in range(rng.integers(3, 9))], [f"h{q}w{i}" for i in range(rng.integers(2, 7))]
        anns = []
        for i in range(coders):
            label = int(rng.random() < 0.6)
            gh, hh = (rng.random(len(g)) < 0.4 * label).astype(int), (rng.random(len(h)) < 0.5 * label).astype(int)
            gh[0], hh[-1] = max(gh[0], label), max(hh[-1], label)  # a "yes" marks words in both turns
            anns.append((f"coder{i}", label, gh.tolist(), hh.tolist()))
        out.append((f"Q{q}", g, h, anns))
    return out


def coded_files_of(pairs, tmp_path):
    """The TSV of ``pairs`` (contextdep_pairs) and its annotators' coded files."""
    tsv = tmp_path / "dev20.tsv"
    tsv.write_text(HEADER + "".join(row(qid, a, label, " ".join(g), gh, " ".join(h), hh)
                                    for qid, g, h, anns in pairs for a, label, gh, hh in anns), encoding="utf-8")
    rows = [{"pair_id": qid, "first_speaker": "GUEST", "first_text": " ".join(g), "second_speaker": "HOST",
             "second_text": " ".join(h)} for qid, g, h, _ in pairs]
    files = []
    for c in range(3):
        codes = {}
        for qid, g, h, anns in pairs:
            _, label, gh, hh = anns[c]
            # an annotator who said no highlights nothing (ContextDeP's converter drops such highlights)
            codes[qid] = (bool(label), [i for i, v in enumerate(gh) if v and label],
                          [i for i, v in enumerate(hh) if v and label])
        files.append(coded_file(tmp_path / f"coder{c}.json", rows, codes, f"coder{c}", "s1"))
    return tsv, files


def test_convert_coded_gives_contextdeps_votes_and_counts(tmp_path):
    pairs = contextdep_pairs()
    assert len(pairs) == 20
    tsv, files = coded_files_of(pairs, tmp_path)
    vocab = spacy.blank("en").vocab
    for mode in ("majority", "soft", "all"):
        ours, _ = convert_coded(files, vocab, mode=mode)
        theirs, _ = convert_contextdep(tsv, vocab, mode=mode)
        assert len(ours) == len(theirs) == (60 if mode == "all" else 20)
        for a, b in zip(ours, theirs):
            assert [t.text for t in a] == [t.text for t in b]
            assert a.cats == b.cats
            for key in ATTRS:
                assert a.spans["paraphrase"].attrs[key] == b.spans["paraphrase"].attrs[key], (mode, key)
            assert [(s.start, s.end, s.label_) for s in a.spans["paraphrase"]] == \
                   [(s.start, s.end, s.label_) for s in b.spans["paraphrase"]]
    out = tmp_path / "coded.spacy"
    result = runner.invoke(app, ["convert", "coded", *map(str, files), str(out), "--mode", "soft"])
    assert result.exit_code == 0, result.output
    docs = list(DocBin().from_disk(out).get_docs(vocab))
    assert len(docs) == 20 and all("votes" in d.spans["paraphrase"].attrs for d in docs)


def test_fine_tuning_a_saved_pipeline_two_steps_on_coded_pairs_lowers_the_loss(trained_pipeline, tmp_path):
    from spacy.training import Example
    from thinc.api import Adam, fix_random_seed

    nlp, _ = trained_pipeline
    nlp.to_disk(tmp_path / "saved")
    nlp = spacy.load(tmp_path / "saved")
    _, files = coded_files_of(contextdep_pairs(8, real=False), tmp_path)
    docs, _ = convert_coded(files, nlp.vocab, mode="soft")
    examples = [Example(d.copy(), d) for d in docs]
    for eg in examples:  # the predicted side: the same words and turns, no answers
        del eg.predicted.spans["paraphrase"]
        eg.predicted.cats = {}
    fix_random_seed(0)
    opt = Adam(1e-3)
    losses = []
    for _ in range(3):  # two steps of fine-tuning, then the loss once more
        step = {}
        nlp.update(examples, sgd=opt, losses=step)
        losses.append(step["paraphrase_spans"])
    assert losses[2] < losses[0], losses


@pytest.fixture(scope="module")
def sheet(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad")
    path = write_records(tmp / "r.jsonl", corpus(6, 5))
    result = runner.invoke(app, ["validate", "sheet", str(path), "-o", str(tmp / "c" / "sheet.csv"), "--n", "6"])
    assert result.exit_code == 0, result.output
    design = json.loads((tmp / "sheet.design.json").read_text())
    rows = sheet_rows(tmp / "c" / "sheet.csv")
    codes = {r["pair_id"]: (True, [2], [2]) for r in rows}
    good = coded_file(tmp / "good.json", rows, codes, "good", design["sheet_id"])
    return {"tmp": tmp, "records": path, "design": tmp / "sheet.design.json", "rows": rows,
            "id": design["sheet_id"], "codes": codes, "good": good}


def _edit(path, target, change):
    data = json.loads(path.read_text())
    change(data)
    target.write_text(json.dumps(data))
    return target


def bad_files(sheet):
    """(name, file, the words its one line must hold) of every kind of bad file."""
    tmp, good, first = sheet["tmp"], sheet["good"], sheet["rows"][0]["pair_id"]

    def out_of_range(d):
        d["pairs"][0]["second"]["highlight"] = [2, 40]

    def twice(d):
        d["pairs"].append(dict(d["pairs"][0]))

    def on_a_no(d):
        d["pairs"][0]["paraphrase"] = False

    def other_sheet(d):
        d["sheet"] = "0123456789abcdef"

    return [("range", _edit(good, tmp / "range.json", out_of_range), ["word index 40 out of range", first]),
            ("twice", _edit(good, tmp / "twice.json", twice), [f"pair {first} coded twice"]),
            ("no", _edit(good, tmp / "no.json", on_a_no), [f"pair {first}", "highlighted words on a 'no'"]),
            ("sheet", _edit(good, tmp / "other.json", other_sheet), ["another sheet", first])]


@pytest.mark.parametrize("kind", ["range", "twice", "no", "sheet"])
def test_a_bad_coded_file_stops_score_and_convert_naming_file_and_pair(sheet, kind, tmp_path):
    name, path, words = next(b for b in bad_files(sheet) if b[0] == kind)
    out = tmp_path / "s.json"
    # score: alone against the design (its sheet id), and beside a good file
    for files in ([path], [sheet["good"], path]):
        result = runner.invoke(app, ["validate", "score", *map(str, files), "-r", str(sheet["records"]),
                                     "--design", str(sheet["design"]), "-o", str(out)])
        line = failed(result)
        assert str(path) in line and all(w in line for w in words), line
        assert not out.exists()
    spacy_out = tmp_path / "o.spacy"
    result = runner.invoke(app, ["convert", "coded", str(sheet["good"]), str(path), str(spacy_out)])
    line = failed(result)
    assert str(path) in line and all(w in line for w in words if "sheet" not in w or kind == "sheet"), line
    assert not spacy_out.exists()


def test_a_coded_pair_whose_words_are_not_the_records_is_refused(sheet, tmp_path):
    def change(d):
        d["pairs"][1]["first"]["words"][0] = "Someone"
    path = _edit(sheet["good"], tmp_path / "words.json", change)
    result = runner.invoke(app, ["validate", "score", str(path), "-r", str(sheet["records"]), "--design", "none"])
    line = failed(result)
    assert str(path) in line and sheet["rows"][1]["pair_id"] in line and "first turn differ" in line
