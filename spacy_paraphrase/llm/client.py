"""A model for any OpenAI-compatible completions endpoint (OpenAI, llama.cpp's
server, llama-cpp-python's server, vLLM, Ollama): ``spacy_paraphrase.OpenAICompatible.v1``.

Per prompt (a ``task.Prompt``, or a plain string), it asks for ``n`` samples
(the prompt's, else the model's ``n``) at the prompt's temperature (else the
model's), ``samples_per_request`` at a time (servers that ignore ``n``, such as
llama.cpp and Ollama, need 1), and asks again while fewer came back. Up to
``max_concurrency`` requests are in flight. A 429, a 5xx, a timeout, a
dropped connection or a body that is not the expected JSON is retried
``max_retries`` times with exponential backoff (``backoff_s`` × 2^attempt,
or the server's ``Retry-After`` when it is longer, at most 60 s); any other
4xx is not retried. A prompt that still fails gets a ``Completion`` with the
``error`` (the task records it for that pair; nothing is cached, so a re-run
asks again) — the run goes on.

The API key is read from the environment variable ``api_key_env`` when the
model is called (never stored in a config); no key is sent when it is unset
or empty (local servers need none). Nothing is sent at construction.
"""
import email.utils
import json
import os
import random
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from .cache import ResponseCache
from .task import Completion, Prompt, reask_samples

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
MAX_WAIT_S = 60.0


class RequestFailed(Exception):
    def __init__(self, message: str, retry: bool, wait: Optional[float] = None, attempts: int = 0):
        super().__init__(message)
        self.retry = retry
        self.wait = wait
        self.attempts = attempts


def _retry_after(value: Optional[str]) -> Optional[float]:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
        except (TypeError, ValueError):
            return None


class OpenAICompatibleModel:
    """See module doc. ``stats`` counts requests, retries, failures and cache use."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api: str = "chat",
        api_key_env: str = "OPENAI_API_KEY",
        n: int = 1,
        temperature: float = 1.0,
        max_tokens: int = 512,
        samples_per_request: int = 0,
        stop: Sequence[str] = (),
        timeout_s: float = 120.0,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        max_concurrency: int = 4,
        cache_dir: Optional[str] = None,
        extra_body: Optional[Dict[str, Any]] = None,
        context_length: Optional[int] = None,
    ):
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        if api not in ("chat", "completions"):
            raise ValueError(f"api must be 'chat' (/chat/completions) or 'completions' (/completions), got {api!r}")
        if not model:
            raise ValueError("model (the name the server knows the model by) must be given")
        for name, value, low in (("n", n, 1), ("max_tokens", max_tokens, 1), ("samples_per_request", samples_per_request, 0),
                                 ("max_retries", max_retries, 0), ("max_concurrency", max_concurrency, 1)):
            if isinstance(value, bool) or int(value) != value or value < low:
                raise ValueError(f"{name} must be a whole number >= {low}, got {value!r}")
        if timeout_s <= 0 or backoff_s < 0:
            raise ValueError("timeout_s must be > 0 and backoff_s >= 0")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api = api
        self.api_key_env = api_key_env
        self.n = int(n)
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.samples_per_request = int(samples_per_request)
        self.stop = list(stop)
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.max_concurrency = int(max_concurrency)
        self.extra_body = dict(extra_body or {})
        self.context_length = context_length
        self.cache = ResponseCache(cache_dir) if cache_dir else None
        self._lock = threading.Lock()
        self.stats = {"requests": 0, "retries": 0, "failed_prompts": 0, "prompts": 0, "reasks": 0, "failed_reasks": 0}

    # -- one request -------------------------------------------------------
    def _endpoint(self) -> str:
        return f"{self.base_url}/{'chat/completions' if self.api == 'chat' else 'completions'}"

    def _body(self, text: str, n: int, temperature: float) -> Dict[str, Any]:
        body: Dict[str, Any] = {"model": self.model, "n": n, "temperature": temperature, "max_tokens": self.max_tokens}
        if self.api == "chat":
            body["messages"] = [{"role": "user", "content": text}]
        else:
            body["prompt"] = text
        if self.stop:
            body["stop"] = list(self.stop)
        body.update(self.extra_body)
        return body

    def _post(self, body: Dict[str, Any]) -> List[str]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self._endpoint(), data=json.dumps(body).encode("utf8"),
                                         headers=headers, method="POST")
        with self._lock:
            self.stats["requests"] += 1
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            detail = err.read()[:300].decode("utf8", "replace") if err.fp else ""
            retry = err.code in RETRY_STATUS or err.code >= 500
            raise RequestFailed(f"HTTP {err.code} from {self._endpoint()}: {detail}", retry,
                                _retry_after(err.headers.get("Retry-After") if err.headers else None))
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise RequestFailed(f"request to {self._endpoint()} failed: {reason}", True)
        try:
            data = json.loads(raw)
            choices = data["choices"]
            texts = []
            for choice in choices:
                text = choice["message"]["content"] if self.api == "chat" else choice["text"]
                if not isinstance(text, str):
                    raise TypeError("content is not a string")
                texts.append(text)
        except (ValueError, KeyError, TypeError, IndexError) as err:
            raise RequestFailed(f"malformed answer from {self._endpoint()} ({type(err).__name__}: {err}): "
                                f"{raw[:200]!r}", True)
        return texts

    def _post_with_retries(self, body: Dict[str, Any]) -> Tuple[List[str], int]:
        attempt = 0
        while True:
            try:
                return self._post(body), attempt + 1
            except RequestFailed as err:
                if not err.retry or attempt >= self.max_retries:
                    raise RequestFailed(f"{err} (after {attempt + 1} attempt(s))", False, attempts=attempt + 1)
                wait = self.backoff_s * (2 ** attempt) * (1 + 0.1 * random.random())
                if err.wait is not None:
                    wait = max(wait, err.wait)
                with self._lock:
                    self.stats["retries"] += 1
                time.sleep(min(wait, MAX_WAIT_S))
                attempt += 1

    # -- one prompt ----------------------------------------------------------
    def cache_fields(self, text: str, n: int, temperature: float) -> Dict[str, Any]:
        return {"base_url": self.base_url, "api": self.api, "model": self.model, "prompt": text, "n": n,
                "temperature": temperature, "max_tokens": self.max_tokens, "stop": self.stop,
                "extra_body": self.extra_body}

    def complete(self, prompt: Any) -> Completion:
        text = str(prompt)
        n = prompt.n if isinstance(prompt, Prompt) else self.n
        temperature = prompt.temperature if isinstance(prompt, Prompt) else self.temperature
        with self._lock:
            self.stats["prompts"] += 1
        fields = self.cache_fields(text, n, temperature)
        texts = self.cache.get(fields) if self.cache is not None else None
        cached = texts is not None
        requests = 0
        if texts is None:
            per = self.samples_per_request or n
            texts = []
            try:
                while len(texts) < n:
                    if requests >= 2 * n + self.max_retries:
                        raise RequestFailed(f"the server returned {len(texts)} of {n} samples after {requests} requests",
                                            False)
                    got, used = self._post_with_retries(self._body(text, min(per, n - len(texts)), temperature))
                    requests += used
                    texts.extend(got[: n - len(texts)])
            except RequestFailed as err:
                requests += err.attempts
                with self._lock:
                    self.stats["failed_prompts"] += 1
                return Completion([], error=str(err), requests=requests)
            if self.cache is not None:
                self.cache.put(fields, texts)
        reasked = [0]  # requests made for re-asks

        def ask_again(sample: int, attempt: int) -> Optional[str]:
            # each re-ask is its own cache entry: a re-run (or a larger reask setting) reuses it
            again = {**self.cache_fields(text, 1, temperature), "reask": [sample, attempt]}
            if self.cache is not None:
                hit = self.cache.get(again)
                if hit:
                    return hit[0]
            try:
                got, used = self._post_with_retries(self._body(text, 1, temperature))
            except RequestFailed as err:
                reasked[0] += err.attempts
                with self._lock:
                    self.stats["failed_reasks"] += 1
                return None  # the sample keeps its unparsed answer
            reasked[0] += used
            with self._lock:
                self.stats["reasks"] += 1
            if not got:
                return None
            if self.cache is not None:
                self.cache.put(again, got[:1])
            return got[0]

        asks = reask_samples(prompt, texts, ask_again)
        requests += reasked[0]
        return Completion(texts, requests=requests, cached=cached and not requests, asks=asks)

    def __call__(self, prompts: Iterable[Iterable[Any]]) -> Iterable[Iterable[Any]]:
        batches = [list(p) for p in prompts]
        flat = [p for batch in batches for p in batch]
        if self.max_concurrency == 1 or len(flat) <= 1:
            done = [self.complete(p) for p in flat]
        else:
            with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
                done = list(pool.map(self.complete, flat))
        out, i = [], 0
        for batch in batches:
            out.append(done[i : i + len(batch)])
            i += len(batch)
        return out
