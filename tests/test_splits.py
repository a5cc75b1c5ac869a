import pytest
import spacy
from spacy.tokens import DocBin
from typer.testing import CliRunner

from spacy_paraphrase.cli import app
from spacy_paraphrase.pair_doc import get_turns, make_pair_doc
from spacy_paraphrase.splits import sample_docs, split_docs

runner = CliRunner()


def _docs(n):
    nlp = spacy.blank("xx")
    docs = []
    for i in range(n):
        doc = make_pair_doc(nlp, f"first {i} text", f"second {i}", pair_id=f"p{i}")
        doc.cats = {"IS_PARAPHRASE": float(i % 2), "NOT_PARAPHRASE": float(1 - i % 2)}
        docs.append(doc)
    return nlp, docs



def test_split_is_a_seeded_partition():
    _, docs = _docs(20)
    train, dev = split_docs(docs, 5, seed=3)
    assert len(train) == 15 and len(dev) == 5
    assert sorted(d.text for d in train + dev) == sorted(d.text for d in docs)
    train2, dev2 = split_docs(docs, 5, seed=3)
    assert [d.text for d in dev2] == [d.text for d in dev]
    _, dev3 = split_docs(docs, 5, seed=4)
    assert [d.text for d in dev3] != [d.text for d in dev]


@pytest.mark.parametrize("n_dev", [0, -1, 20, 25])
def test_split_rejects_impossible_sizes(n_dev):
    _, docs = _docs(20)
    with pytest.raises(ValueError):
        split_docs(docs, n_dev)


def test_sample_is_seeded_and_bounded():
    _, docs = _docs(10)
    a = sample_docs(docs, 4, seed=0)
    assert len(a) == 4 and len({d.text for d in a}) == 4
    assert [d.text for d in sample_docs(docs, 4, seed=0)] == [d.text for d in a]
    assert len(sample_docs(docs, 50)) == 10
    with pytest.raises(ValueError):
        sample_docs(docs, 0)


def test_split_and_sample_cli_keep_turns_and_cats(tmp_path):
    nlp, docs = _docs(12)
    src = tmp_path / "all.spacy"
    DocBin(docs=docs, store_user_data=True).to_disk(src)
    res = runner.invoke(app, ["split", str(src), str(tmp_path / "train.spacy"), str(tmp_path / "dev.spacy"), "--dev", "4"])
    assert res.exit_code == 0, res.output
    train = list(DocBin().from_disk(tmp_path / "train.spacy").get_docs(nlp.vocab))
    dev = list(DocBin().from_disk(tmp_path / "dev.spacy").get_docs(nlp.vocab))
    assert len(train) == 8 and len(dev) == 4
    by_text = {d.text: d for d in docs}
    for doc in train + dev:
        first, second = get_turns(doc)
        orig_first, orig_second = get_turns(by_text[doc.text])
        assert (first.start, first.end, second.start, second.end) == (orig_first.start, orig_first.end, orig_second.start, orig_second.end)
        assert doc.spans["turns"].attrs["id"] == by_text[doc.text].spans["turns"].attrs["id"]
        assert doc.cats == by_text[doc.text].cats
    res = runner.invoke(app, ["sample", str(src), str(tmp_path / "s.spacy"), "--n", "5"])
    assert res.exit_code == 0, res.output
    assert len(list(DocBin().from_disk(tmp_path / "s.spacy").get_docs(nlp.vocab))) == 5
    res = runner.invoke(app, ["split", str(src), str(tmp_path / "a.spacy"), str(tmp_path / "b.spacy"), "--dev", "12"])
    assert res.exit_code == 1 and "Cannot hold out" in res.output
    res = runner.invoke(app, ["sample", str(tmp_path / "missing.spacy"), str(tmp_path / "x.spacy"), "--n", "5"])
    assert res.exit_code == 1 and "missing.spacy" in res.output
    before = src.read_bytes()
    for args in (["split", str(src), str(tmp_path / "t.spacy"), str(src), "--dev", "4"],
                 ["split", str(src), str(tmp_path / "t.spacy"), str(tmp_path / "t.spacy"), "--dev", "4"],
                 ["sample", str(src), str(src), "--n", "5"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 1 and "give each output its own path" in " ".join(res.output.split()), res.output
    assert src.read_bytes() == before and not (tmp_path / "t.spacy").exists()
