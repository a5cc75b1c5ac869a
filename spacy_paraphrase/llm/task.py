"""The spacy-llm task ``spacy_paraphrase.ContextDeP.v1``: the ContextDeP
paper's in-context detector (docs/llm.md).

``generate_prompts`` renders, per pair Doc, the jinja template with the
few-shot examples, the two turns and the speakers' names (the labels of
``doc.spans["turns"]``, left out when they are the defaults FIRST / SECOND
or the role itself, e.g. GUEST),
and asks for ``n_samples`` samples at ``temperature`` (a ``Prompt``: the
models of this package read these settings from it), and for up to
``reask_unparsed`` more answers per sample whose answer does not parse
(``reask_samples``; the models of this package do it, each re-ask cached).
``parse_responses`` parses every sample (``parser.parse_answer``), aligns each quote in its turn
(``align.locate_quote``) and writes the ``paraphrase_spans`` contract through
``VoteReadout``:

- pair score = (samples answering yes) / (samples whose answer parsed);
  NaN when none parsed (or the request failed): such a pair never passes;
- ``token_probs`` = (yes-samples whose kept quotes cover the token) /
  (samples whose answer parsed); all NaN when none parsed;
- the rest (spans, ``vote_share``, ``agreement``, ...) as ``paraphrase_spans``;
- ``attrs["llm"]`` (also ``doc.user_data``): the counts (re-asks too), every
  quote's status, method, score and span, the parse problems, and the request
  error if any.
"""
import dataclasses
import importlib.resources
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import jinja2.sandbox
import numpy
import srsly
from spacy import util
from spacy.tokens import Doc
from spacy.training import Example

from ..pair_doc import DEFAULT_TURN_LABELS, PARAPHRASE_LABEL, SPANS_KEY, get_turns
from ..paraphrase_spans.readout import READOUT_KEYS
from .align import DEFAULT_MIN_SCORE, DEFAULT_SHORT_EVIDENCE, lenient_evidence, locate_quote
from .parser import parse_answer
from .readout import VoteReadout, llm_details, llm_key, score_paraphrase_llm

DEFAULT_REASKS = 2
QUESTION = "In the reply, does the host paraphrase something specific the guest says?"
EXAMPLE_KEYS = ("guest", "host", "explanation", "guest_quotes", "host_quotes", "answer")


class LLMPairWarning(UserWarning):
    """Some pairs of a batch got no parsed sample (failed request or unparsable answers)."""


def default_template() -> str:
    return importlib.resources.files(__package__).joinpath("templates/contextdep.v1.jinja").read_text("utf8")


def default_examples_path() -> Path:
    return Path(str(importlib.resources.files(__package__).joinpath("examples/contextdep_train.yml")))


@dataclasses.dataclass(frozen=True)
class Prompt:
    """One pair's prompt and the sampling it asks for. ``str(prompt)`` is the text.
    ``reask``: how many more requests a model may make for a sample whose
    answer ``parses`` rejects (``reask_samples``)."""

    text: str
    n: int = 1
    temperature: float = 1.0
    reask: int = 0
    parses: Optional[Callable[[str], bool]] = dataclasses.field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return self.text


@dataclasses.dataclass
class Completion:
    """A model's answer for one prompt: the sampled ``texts``, or an ``error``
    (after retries); ``requests`` made for it (0 = all from the cache);
    ``asks``: per sample, the answers asked for it (1 = the first answer was
    kept; more when it was re-asked, ``reask_samples``)."""

    texts: List[str]
    error: Optional[str] = None
    requests: int = 0
    cached: bool = False
    asks: List[int] = dataclasses.field(default_factory=list)

    def __str__(self) -> str:
        return self.error if self.error else "\n---\n".join(self.texts)


def reask_samples(prompt: Any, texts: List[str], ask_again: Callable[[int, int], Optional[str]]) -> List[int]:
    """Re-ask every sample whose answer does not parse: while
    ``prompt.parses(texts[i])`` is false and fewer than ``prompt.reask`` more
    answers were asked for it, ``texts[i]`` becomes ``ask_again(i, k)`` (the
    k-th re-ask of sample i, k = 1, 2, ...; None: no answer came, stop). The
    last answer is kept, parsed or not. Returns the answers asked per sample
    (``Completion.asks``). A plain-string prompt is not re-asked."""
    asks = [1] * len(texts)
    if not isinstance(prompt, Prompt) or prompt.parses is None:
        return asks
    for i in range(len(texts)):
        while asks[i] <= prompt.reask and not prompt.parses(texts[i]):
            text = ask_again(i, asks[i])
            if text is None:
                break
            texts[i] = text
            asks[i] += 1
    return asks


def check_examples(examples: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Validate few-shot examples; ValueError naming the example and field."""
    out = []
    for i, eg in enumerate(examples):
        if not isinstance(eg, dict):
            raise ValueError(f"Few-shot example {i} must be a mapping, got {type(eg).__name__}")
        missing = [k for k in EXAMPLE_KEYS if k not in eg]
        if missing:
            raise ValueError(f"Few-shot example {i} lacks {missing} (needs {list(EXAMPLE_KEYS)})")
        answer = str(eg["answer"]).strip().rstrip(".").capitalize()
        if answer not in ("Yes", "No"):
            raise ValueError(f"Few-shot example {i}: answer must be Yes or No, got {eg['answer']!r}")
        for key in ("guest_quotes", "host_quotes"):
            if not isinstance(eg[key], (list, tuple)) or not all(isinstance(q, str) for q in eg[key]):
                raise ValueError(f"Few-shot example {i}: {key} must be a list of strings, got {eg[key]!r}")
        for key in ("guest", "host", "explanation"):
            if not isinstance(eg[key], str) or not eg[key].strip():
                raise ValueError(f"Few-shot example {i}: {key} must be a non-empty string")
        out.append({**eg, "answer": answer, "guest_quotes": list(eg["guest_quotes"]),
                    "host_quotes": list(eg["host_quotes"])})
    return out


class ContextDePTask:
    """The task object spacy-llm's ``llm`` component runs (module doc)."""

    def __init__(
        self,
        *,
        template: str,
        examples: Sequence[Dict[str, Any]],
        n_samples: int = 3,
        temperature: float = 1.0,
        speaker_labels: Sequence[str] = ("Guest", "Host"),
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
    ):
        if int(n_samples) != n_samples or n_samples < 1:
            raise ValueError(f"n_samples must be a whole number >= 1, got {n_samples!r}")
        if not 0 <= float(temperature) <= 2:
            raise ValueError(f"temperature must be in [0, 2], got {temperature!r}")
        lenient_evidence(short_evidence)  # checks the value
        if isinstance(reask_unparsed, bool) or int(reask_unparsed) != reask_unparsed or reask_unparsed < 0:
            raise ValueError(f"reask_unparsed must be a whole number >= 0, got {reask_unparsed!r}")
        labels = list(speaker_labels)
        if len(labels) != 2 or not all(isinstance(x, str) and x.strip() for x in labels) or labels[0] == labels[1]:
            raise ValueError(f"speaker_labels must be two different non-empty strings, got {speaker_labels!r}")
        self._template = template
        self._prompt_examples = check_examples(list(examples))
        self.n_samples = int(n_samples)
        self.temperature = float(temperature)
        self.speaker_labels = labels
        self.question = question
        self.min_score = float(min_score)
        self.use_other_turn = bool(use_other_turn)
        self.short_evidence = short_evidence
        self.reask_unparsed = int(reask_unparsed)
        self.scorer_name = scorer_name
        # The readout settings, under the same keys as paraphrase_spans' cfg.
        self.cfg: Dict[str, Any] = {
            "spans_key": spans_key, "cats_key": cats_key, "threshold": float(threshold),
            "highlight_threshold": float(highlight_threshold), "highlight_scale": highlight_scale,
        }
        self.readout  # validates the settings

    @property
    def readout(self) -> VoteReadout:
        return VoteReadout.from_cfg(self.cfg)

    @property
    def prompt_examples(self) -> List[Dict[str, Any]]:
        return list(self._prompt_examples)

    # -- prompts ---------------------------------------------------------
    def _render_text(self, doc: Doc) -> str:
        first, second = get_turns(doc)
        # a turn label that is a default (FIRST / SECOND) or the role itself (GUEST for "Guest",
        # as ContextDeP's converted Docs have) is no name
        names = [None if t.label_ in DEFAULT_TURN_LABELS or t.label_.lower() == role.lower() else t.label_
                 for t, role in zip((first, second), self.speaker_labels)]
        env = jinja2.sandbox.SandboxedEnvironment()
        text = env.from_string(self._template).render(
            prompt_examples=self._prompt_examples, guest=first.text, host=second.text,
            guest_name=names[0], host_name=names[1], question=self.question,
        )
        a, b = self.speaker_labels
        if (a, b) != ("Guest", "Host"):
            text = text.replace("Verbatim Quote Guest", f"Verbatim Quote {a}").replace(
                "Verbatim Quote Host", f"Verbatim Quote {b}")
            text = _relabel_lines(text, a, b)
        return text

    def generate_prompts(self, docs: Iterable[Doc]) -> Iterable[Any]:
        for doc in docs:
            yield Prompt(self._render_text(doc), self.n_samples, self.temperature, self.reask_unparsed, self.parses)

    def parses(self, text: str) -> bool:
        """Whether a sampled answer parses (a yes or a no); one that does not
        is asked again, ``reask_unparsed`` times at most."""
        return parse_answer(text, labels=tuple(self.speaker_labels)).parsed

    # -- responses -------------------------------------------------------
    def parse_responses(self, docs: Iterable[Doc], responses: Iterable[Any]) -> Iterable[Doc]:
        n_failed = 0
        out = []
        for doc, response in zip(docs, responses):
            items = list(response) if isinstance(response, (list, tuple)) else [response]
            completion = items[0] if len(items) == 1 else Completion([], error=f"expected one response, got {len(items)}")
            self.annotate(doc, completion)
            if llm_details(doc, self.cfg["spans_key"])["pair_score"] is None:
                n_failed += 1
            out.append(doc)
        if n_failed:
            warnings.warn(f"{n_failed} of {len(out)} pairs got no parsed LLM sample (see "
                          f"doc.spans[{self.cfg['spans_key']!r}].attrs['llm']); their pair score is NaN",
                          LLMPairWarning)
        return out

    def annotate(self, doc: Doc, completion: Any) -> Doc:
        """Write the contract for one pair Doc from one ``Completion`` (or a
        list of sampled strings, or one string)."""
        if isinstance(completion, str):
            completion = Completion([completion])
        elif isinstance(completion, (list, tuple)):
            completion = Completion(list(completion))
        elif not isinstance(completion, Completion):
            completion = Completion([], error=f"unexpected response type {type(completion).__name__}")
        first, second = get_turns(doc)
        counts = numpy.zeros((len(doc),), dtype="float32")
        n_yes = n_no = n_unparsed = 0
        problems: Counter = Counter()
        statuses: Counter = Counter()
        samples = []
        a, b = self.speaker_labels
        for text in completion.texts:
            parsed = parse_answer(text, labels=(a, b))
            problems.update(parsed.problems)
            sample: Dict[str, Any] = {"answer": parsed.answer, "problems": parsed.problems, "quotes": []}
            if parsed.answer is None:
                n_unparsed += 1
            elif parsed.answer:
                n_yes += 1
                covered = numpy.zeros((len(doc),), dtype=bool)
                for side, quotes in (("first", parsed.guest_quotes), ("second", parsed.host_quotes)):
                    for quote in quotes:
                        status = locate_quote(doc, quote, side, min_score=self.min_score,
                                              use_other_turn=self.use_other_turn,
                                              short_evidence=self.short_evidence)
                        statuses[status.status if status.status != "aligned" else f"aligned_{status.method}"] += 1
                        sample["quotes"].append(status.to_dict())
                        if status.kept:
                            covered[status.start : status.end] = True
                counts += covered
            else:
                n_no += 1
            samples.append(sample)
        asks = list(completion.asks) or [1] * len(completion.texts)
        for sample, n_asked in zip(samples, asks):
            sample["asks"] = n_asked
        n_parsed = n_yes + n_no
        if n_parsed:
            probs = counts / n_parsed
            pair_score: Optional[float] = n_yes / n_parsed
        else:
            probs = numpy.full((len(doc),), numpy.nan, dtype="float32")
            pair_score = None
        outside = numpy.ones((len(doc),), dtype=bool)
        outside[first.start : first.end] = False
        outside[second.start : second.end] = False
        probs = probs.astype("float32")
        probs[outside] = numpy.nan
        details = {
            "pair_score": pair_score, "n_samples": len(completion.texts), "n_yes": n_yes, "n_no": n_no,
            "n_unparsed": n_unparsed, "n_reasked": sum(1 for k in asks if k > 1), "reasks": sum(asks) - len(asks),
            "problems": dict(problems), "quote_status": dict(statuses),
            "samples": samples, "error": completion.error, "requests": completion.requests,
            "cached": completion.cached,
        }
        spans_key = self.cfg["spans_key"]
        doc.user_data[llm_key(spans_key)] = details
        self.readout.annotate(doc, probs, pair_score=float("nan") if pair_score is None else pair_score)
        return doc

    # -- scoring, config, serialization ---------------------------------
    def scorer(self, examples: Iterable[Example]) -> Dict[str, Any]:
        return score_paraphrase_llm(examples, name=self.scorer_name, **self.cfg)

    def get_cfg(self) -> Dict[str, Any]:
        return {
            "readout": dict(self.cfg), "n_samples": self.n_samples, "temperature": self.temperature,
            "speaker_labels": list(self.speaker_labels), "question": self.question,
            "min_score": self.min_score, "use_other_turn": self.use_other_turn,
            "short_evidence": self.short_evidence, "reask_unparsed": self.reask_unparsed,
        }

    def set_cfg(self, cfg: Dict[str, Any]) -> None:
        readout = {k: v for k, v in dict(cfg.get("readout", {})).items() if k in READOUT_KEYS}
        VoteReadout.from_cfg({**self.cfg, **readout})
        self.cfg.update(readout)
        lenient_evidence(cfg.get("short_evidence", self.short_evidence))  # checks the value
        for key in ("n_samples", "temperature", "question", "min_score", "use_other_turn", "short_evidence",
                    "reask_unparsed"):
            if key in cfg:
                setattr(self, key, cfg[key])
        if "speaker_labels" in cfg:
            self.speaker_labels = list(cfg["speaker_labels"])

    def to_bytes(self, *, exclude: Tuple[str, ...] = tuple()) -> bytes:
        return util.to_bytes({
            "cfg": lambda: srsly.json_dumps(self.get_cfg()),
            "prompt_examples": lambda: srsly.json_dumps(self._prompt_examples),
            "template": lambda: self._template.encode("utf8"),
        }, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Tuple[str, ...] = tuple()) -> "ContextDePTask":
        util.from_bytes(bytes_data, {
            "cfg": lambda b: self.set_cfg(srsly.json_loads(b)),
            "prompt_examples": lambda b: setattr(self, "_prompt_examples", check_examples(srsly.json_loads(b))),
            "template": lambda b: setattr(self, "_template", b.decode("utf8")),
        }, exclude)
        return self

    def to_disk(self, path: Path, *, exclude: Tuple[str, ...] = tuple()) -> None:
        util.to_disk(path, {
            "cfg": lambda p: srsly.write_json(p, self.get_cfg()),
            "prompt_examples": lambda p: srsly.write_json(p, self._prompt_examples),
            "template": lambda p: Path(p).write_text(self._template, encoding="utf8"),
        }, exclude)

    def from_disk(self, path: Path, *, exclude: Tuple[str, ...] = tuple()) -> "ContextDePTask":
        util.from_disk(path, {
            "cfg": lambda p: self.set_cfg(srsly.read_json(p)),
            "prompt_examples": lambda p: setattr(self, "_prompt_examples", check_examples(srsly.read_json(p))),
            "template": lambda p: setattr(self, "_template", Path(p).read_text(encoding="utf8")),
        }, exclude)
        return self


def _relabel_lines(text: str, a: str, b: str) -> str:
    lines = []
    for line in text.split("\n"):
        if line.startswith("Guest:") or line.startswith("Guest ("):
            line = a + line[len("Guest"):]
        elif line.startswith("Host:") or line.startswith("Host ("):
            line = b + line[len("Host"):]
        lines.append(line)
    return "\n".join(lines)

