"""The ContextDeP paper's LLM detector as a spacy-llm task (docs/llm.md).

``align_quote`` and the parser need only RapidFuzz; the task, the models and
the ``paraphrase_llm`` component need spacy-llm (``pip install
'spacy-paraphrase[llm]'``, Python >= 3.10) and are registered through entry
points (``spacy_paraphrase.llm.registry``; the component's factory, which imports without
spacy-llm, in ``spacy_paraphrase.llm.factory``)."""
from .align import QuoteAlignment, align_quote, locate_quote

__all__ = ["QuoteAlignment", "align_quote", "locate_quote"]
