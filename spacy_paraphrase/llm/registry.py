"""Registered functions of the LLM detector (found through entry points,
setup.cfg): the task ``spacy_paraphrase.ContextDeP.v1`` (``llm_tasks``), the
models ``spacy_paraphrase.OpenAICompatible.v1`` and ``spacy_paraphrase.Replay.v1``
(``llm_models``); the component's factory and scorer: ``factory.py``."""
from typing import Any, Callable, Dict, Iterable, List, Optional

from spacy_llm.registry import registry

from ..pair_doc import PARAPHRASE_LABEL, SPANS_KEY
from .align import DEFAULT_MIN_SCORE, DEFAULT_SHORT_EVIDENCE
from .client import OpenAICompatibleModel
from .replay import ReplayModel
from .task import DEFAULT_REASKS, QUESTION, ContextDePTask, default_examples_path, default_template


@registry.llm_tasks("spacy_paraphrase.ContextDeP.v1")
def make_contextdep_task(
    examples: Optional[Callable[[], Iterable[Dict[str, Any]]]] = None,
    template: Optional[str] = None,
    n_samples: int = 3,
    temperature: float = 1.0,
    speaker_labels: List[str] = ["Guest", "Host"],
    question: str = QUESTION,
    min_score: float = DEFAULT_MIN_SCORE,
    use_other_turn: bool = True,
    short_evidence: str = DEFAULT_SHORT_EVIDENCE,
    reask_unparsed: int = DEFAULT_REASKS,
    spans_key: str = SPANS_KEY,
    cats_key: str = PARAPHRASE_LABEL,
    threshold: float = 0.5,
    highlight_threshold: float = 0.5,
    highlight_scale: str = "absolute",
    scorer_name: str = "llm",
) -> ContextDePTask:
    """The ContextDeP LLM task (docs/llm.md). ``examples``: a callable giving
    the few-shot examples (``spacy.FewShotReader.v1``); default: the eight
    shipped ones. ``template``: jinja text (``spacy.FileReader.v1``); default:
    the shipped template."""
    if examples is None:
        import srsly

        loaded = srsly.read_yaml(default_examples_path())
    else:
        loaded = list(examples())
    return ContextDePTask(
        template=template if template is not None else default_template(),
        examples=loaded, n_samples=n_samples, temperature=temperature, speaker_labels=speaker_labels,
        question=question, min_score=min_score, use_other_turn=use_other_turn, short_evidence=short_evidence,
        reask_unparsed=reask_unparsed,
        spans_key=spans_key, cats_key=cats_key, threshold=threshold, highlight_threshold=highlight_threshold,
        highlight_scale=highlight_scale, scorer_name=scorer_name,
    )


@registry.llm_models("spacy_paraphrase.OpenAICompatible.v1")
def make_openai_compatible(
    base_url: str,
    model: str,
    api: str = "chat",
    api_key_env: str = "OPENAI_API_KEY",
    n: int = 1,
    temperature: float = 1.0,
    max_tokens: int = 512,
    samples_per_request: int = 0,
    stop: List[str] = [],
    timeout_s: float = 120.0,
    max_retries: int = 4,
    backoff_s: float = 1.0,
    max_concurrency: int = 4,
    cache_dir: Optional[str] = None,
    extra_body: Dict[str, Any] = {},
) -> OpenAICompatibleModel:
    return OpenAICompatibleModel(
        base_url=base_url, model=model, api=api, api_key_env=api_key_env, n=n, temperature=temperature,
        max_tokens=max_tokens, samples_per_request=samples_per_request, stop=stop, timeout_s=timeout_s,
        max_retries=max_retries, backoff_s=backoff_s, max_concurrency=max_concurrency, cache_dir=cache_dir,
        extra_body=extra_body,
    )


@registry.llm_models("spacy_paraphrase.Replay.v1")
def make_replay(path: str, strict: bool = True, cache_dir: Optional[str] = None) -> ReplayModel:
    return ReplayModel(path, strict=strict, cache_dir=cache_dir)

