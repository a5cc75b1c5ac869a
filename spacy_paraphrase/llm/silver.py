"""Silver training data from an LLM pipeline: run it on pair Docs and write
them as reference Docs for ``spacy train`` with ``paraphrase_spans``.

    python -m spacy_paraphrase llm silver LLM_PIPELINE pairs.spacy silver.spacy [--soft]   (cli/llm.py)

Each written Doc is a fresh copy of the pair (tokens, turns, their attrs)
with ``doc.spans["paraphrase"]`` = the LLM's spans and, with ``--soft``,
``attrs["token_targets"]`` = the LLM's token probabilities and
``cats["PARAPHRASE"]`` = its pair score (the vote share); without it,
``cats["PARAPHRASE"]`` = 1.0 / 0.0 by the pipeline's threshold. Pairs without
a parsed sample (failed request, unparsable answers: pair score NaN) are left
out and counted; the command exits 1 when none is left. Input Docs that
carry gold annotations keep none of them.
"""
import math
from pathlib import Path
from typing import Dict, Iterable, List, Tuple

import numpy
from spacy.tokens import Doc, Span

from ..corpus import read_pair_docs
from ..loading import load_pipeline
from ..pair_doc import copy_pair_doc
from ..splits import check_outputs, write_docs


def _readout(nlp):
    for _, pipe in nlp.pipeline:
        readout = getattr(pipe, "readout", None)
        if readout is not None:
            return readout
    raise ValueError(f"The pipeline has no component with a readout (components: {nlp.pipe_names}): "
                     "use a paraphrase_llm (or paraphrase_spans) pipeline")


def silver_docs(nlp, docs: Iterable[Doc], soft: bool = False, batch_size: int = 8) -> Tuple[List[Doc], Dict[str, int]]:
    readout = _readout(nlp)
    key, cats_key = readout.spans_key, readout.cats_key
    inputs = [copy_pair_doc(d, nlp.vocab) for d in docs]
    out: List[Doc] = []
    counts = {"pairs": 0, "written": 0, "no_answer": 0, "paraphrases": 0}
    for doc in nlp.pipe(inputs, batch_size=batch_size):
        counts["pairs"] += 1
        score = float(doc.cats.get(cats_key, float("nan")))
        if math.isnan(score):
            counts["no_answer"] += 1
            continue
        new = copy_pair_doc(doc, nlp.vocab)
        new.spans[key] = [Span(new, s.start, s.end, label=s.label_) for s in doc.spans[key]]
        passed = score >= readout.threshold
        counts["paraphrases"] += int(passed)
        if soft:
            probs = numpy.asarray(doc.spans[key].attrs["token_probs"], dtype="float32")
            new.spans[key].attrs["token_targets"] = numpy.nan_to_num(probs, nan=0.0)
            new.cats[cats_key] = score
        else:
            new.cats[cats_key] = 1.0 if passed else 0.0
        out.append(new)
        counts["written"] += 1
    return out, counts



def write_silver(model: str, input_path: Path, output_path: Path, soft: bool = False,
                 batch_size: int = 8) -> Dict[str, int]:
    """Run the LLM pipeline ``model`` on the pairs of ``input_path`` and write
    the silver Docs to ``output_path``; returns the counts. ValueError (the
    output is the input, no pipeline, unreadable pairs, no pair answered)."""
    check_outputs([input_path], [output_path])
    nlp = load_pipeline(model)
    try:
        docs, counts = silver_docs(nlp, read_pair_docs(input_path, nlp.vocab), soft, batch_size)
    except FileNotFoundError as err:
        raise ValueError(str(err)) from None
    if not docs:
        raise ValueError(f"no pair of {input_path} got an answer ({counts['no_answer']} without a parsed "
                         "answer): nothing written")
    write_docs(docs, output_path)
    return counts
