"""How the LLM's votes enter the ``paraphrase_spans`` contract.

The LLM task computes, per pair, the share of samples answering "yes" (the
pair score) and, per token, the share of samples whose quotes cover it (the
token probabilities). Everything else — spans, ``scores``, ``vote_share``,
``agreement``, ``margin`` and the rest — is written by the shared ``Readout``
of ``spacy_paraphrase.paraphrase_spans.readout``, so the LLM output follows whatever
that rule is. The task passes the vote share to ``Readout.annotate`` as the
pair score (instead of "min over turns of the max token probability"); a
re-annotation (``Readout.reannotate``: a threshold sweep, ``check-strings``)
keeps the pair score stored in the spans group's attrs, so it stays the vote
share. ``VoteReadout`` adds the LLM details to the spans group's attrs.

The LLM's details live in ``doc.user_data[llm_key(spans_key)]`` (they
survive ``DocBin``, ``to_bytes`` and a re-annotation by a plain ``Readout``)
and are copied to ``doc.spans[spans_key].attrs["llm"]``.
"""
import dataclasses
from typing import Any, Dict, Iterable, Optional

from spacy.tokens import Doc
from spacy.training import Example

from ..pair_doc import SPANS_KEY
from ..paraphrase_spans.readout import Readout
from ..paraphrase_spans.scorer import score_paraphrase_spans

LLM_ATTR = "llm"


def llm_key(spans_key: str) -> str:
    return f"spacy_paraphrase.llm:{spans_key}"


def llm_details(doc: Doc, spans_key: str = SPANS_KEY) -> Optional[Dict[str, Any]]:
    """The LLM details stored on a Doc the LLM task processed, else None."""
    return doc.user_data.get(llm_key(spans_key))


@dataclasses.dataclass(frozen=True)
class VoteReadout(Readout):
    """``Readout`` that also copies the LLM details (``llm_details``) into
    ``doc.spans[spans_key].attrs["llm"]``. The pair score is the vote share
    the task passes (kept by ``reannotate``); NaN for a pair without any
    parsed sample (nothing passes)."""

    def annotate(self, doc: Doc, probs, **kwargs) -> None:
        super().annotate(doc, probs, **kwargs)
        details = llm_details(doc, self.spans_key)
        if details is not None:
            doc.spans[self.spans_key].attrs[LLM_ATTR] = details


def _as_no(eg: Example, readout: Readout) -> Example:
    doc = eg.predicted.copy()
    doc.cats[readout.cats_key] = 0.0
    doc.spans[readout.spans_key].attrs["vote_share"] = 0.0
    return Example(doc, eg.reference)


def score_paraphrase_llm(examples: Iterable[Example], **kwargs) -> Dict[str, Optional[float]]:
    """``score_paraphrase_spans`` after re-annotating the predicted Docs with
    the ``VoteReadout`` of the given settings: the pair decision stays the
    vote share even when a caller (``tune``'s sweep) re-annotated
    the Docs with a plain ``Readout``. Adds ``{name}_llm_no_answer`` (pairs
    without a parsed sample, scored as "no"), ``{name}_llm_unparsed`` (share
    of samples not parsed, after re-asking), ``{name}_llm_reasked`` (share
    of samples whose first answer did not parse and that were asked again),
    ``{name}_llm_reasks`` (re-asked answers per sample: the extra requests)
    and ``{name}_llm_quotes_lost`` (share of the yes-samples' quotes that
    gave no span)."""
    examples = list(examples)
    readout = VoteReadout.from_cfg(kwargs)
    no_answer = []
    n_samples = n_unparsed = n_quotes = n_lost = n_reasked = n_reasks = 0
    for eg in examples:
        details = llm_details(eg.predicted, readout.spans_key)
        if details is None:
            continue
        readout.reannotate(eg.predicted)
        n_samples += int(details["n_samples"])
        n_unparsed += int(details["n_unparsed"])
        n_reasked += int(details.get("n_reasked", 0))
        n_reasks += int(details.get("reasks", 0))
        for sample in details["samples"]:
            for quote in sample["quotes"]:
                n_quotes += 1
                n_lost += int(quote.get("start") is None)
        if details.get("pair_score") is None:
            no_answer.append(eg.predicted)
    # a pair without any parsed sample is scored as "not a paraphrase" (pair
    # score 0), on a copy: its own Doc keeps NaN; counted in {name}_llm_no_answer
    unanswered = {id(doc) for doc in no_answer}
    scored = [_as_no(eg, readout) if id(eg.predicted) in unanswered else eg for eg in examples]
    scores = score_paraphrase_spans(scored, **kwargs)
    name = kwargs.get("name", "paraphrase_spans")
    scores[f"{name}_llm_no_answer"] = len(no_answer)
    scores[f"{name}_llm_unparsed"] = n_unparsed / n_samples if n_samples else None
    scores[f"{name}_llm_reasked"] = n_reasked / n_samples if n_samples else None
    scores[f"{name}_llm_reasks"] = n_reasks / n_samples if n_samples else None
    scores[f"{name}_llm_quotes_lost"] = n_lost / n_quotes if n_quotes else None
    return scores

