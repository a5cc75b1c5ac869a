from pathlib import Path

import spacy

from spacy_paraphrase.backbones.resolve import META_KEY
from spacy_paraphrase.backbones.resolve import file_sha256
from tests.util import make_examples, make_nlp


def sourcing_pipeline(trained):
    """A new span pipeline whose transformer is sourced from ``trained``."""
    nlp = spacy.blank("en")
    nlp.add_pipe("transformer", source=trained)
    nlp.add_pipe("paraphrase_spans", config={"model": {
        "@architectures": "spacy_paraphrase.ParaphraseTagger.v1",
        "tok2vec": {"@architectures": "spacy_paraphrase.PairTransformerListener.v1"}}})
    return nlp


def test_a_trained_pipeline_records_its_backbone(tmp_path, tiny_bert):
    nlp = make_nlp(tiny_bert)
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    record = nlp.meta[META_KEY]["backbone"]
    assert record["name"] == Path(tiny_bert).name and record["source"] == "local"
    assert record["sha256"] == file_sha256(f"{tiny_bert}/model.safetensors")
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.meta[META_KEY]["backbone"] == record
    # the record travels with the transformer's weights: a pipeline that
    # sources the trained transformer (transfer) records the same backbone,
    # also when, as in `spacy train`, the sourced component is disabled while
    # the others initialize
    for disabled in ([], ["transformer"]):
        second = sourcing_pipeline(loaded)
        with second.select_pipes(disable=disabled):
            second.initialize(lambda: make_examples(second))
        assert second.meta[META_KEY]["backbone"] == record
    # and a copied transformer model (spaCy's replace_listeners) keeps it
    assert loaded.get_pipe("transformer").model.copy().attrs["backbone"] == record


def test_the_pair_classifier_records_it_too(tiny_bert):
    nlp = spacy.blank("en")
    nlp.add_pipe("transformer", config={"model": {
        "@architectures": "spacy_paraphrase.PairTransformerModel.v1", "name": tiny_bert}})
    nlp.add_pipe("pair_classifier", config={"labels": ["PARA", "NOT"]})
    examples = make_examples(nlp)
    for eg in examples:
        para = bool(eg.reference.cats.pop("PARAPHRASE"))
        eg.reference.cats.update({"PARA": float(para), "NOT": float(not para)})
    nlp.initialize(lambda: examples)
    assert nlp.meta[META_KEY]["backbone"]["source"] == "local"
