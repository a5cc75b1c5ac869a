"""The OpenAI-compatible model against a small local HTTP server (127.0.0.1)
that answers 429, 500, malformed JSON, slowly, or well, as each test scripts it."""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from .helpers import GUEST, HOST, answer, require

require("spacy_llm", "the LLM models")

from spacy_paraphrase.llm.client import OpenAICompatibleModel  # noqa: E402
from spacy_paraphrase.llm.task import Prompt  # noqa: E402


class Server:
    """Each request pops the next scripted reply: ("ok", texts) | (status, body) | ("slow", seconds)
    | ("bad", raw bytes); when the script is empty, replies ok with one "fine" per asked n."""

    def __init__(self):
        self.script = []
        self.requests = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append((self.path, dict(self.headers), body))
                    step = server.script.pop(0) if server.script else None
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                self.counted = True
                try:
                    self.reply(step, body)
                finally:
                    self.uncount()

            def uncount(self):
                # before the answer is written: the client may send its next
                # request as soon as it has read this one
                if getattr(self, "counted", False):
                    self.counted = False
                    with server.lock:
                        server.in_flight -= 1

            def reply(self, step, body):
                if step is None or step[0] in ("ok", "slow"):
                    if step is not None and step[0] == "slow":
                        time.sleep(step[1])
                    texts = step[1] if step is not None and step[0] == "ok" else ["fine"] * body.get("n", 1)
                    key = "message" if "messages" in body else "text"
                    choices = [{"index": i, key: {"role": "assistant", "content": t} if key == "message" else t}
                               for i, t in enumerate(texts)]
                    self.send(200, json.dumps({"choices": choices}).encode())
                elif step[0] == "bad":
                    self.send(200, step[1])
                else:
                    self.send(step[0], json.dumps({"error": step[1]}).encode(), {"Retry-After": "0"})

            def send(self, status, data, headers=()):
                self.uncount()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in dict(headers).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


def model(server, **kw):
    kw = {"base_url": server.url, "model": "m", "backoff_s": 0.01, "max_retries": 3, **kw}
    return OpenAICompatibleModel(**kw)


def complete(m, prompt):
    return list(m([[prompt]]))[0][0]


def test_chat_request_and_answer(server, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sekret")
    server.script = [("ok", ["a", "b", "c"])]
    c = complete(model(server, api_key_env="MY_KEY", max_tokens=99), Prompt("hello", n=3, temperature=0.5))
    assert c.texts == ["a", "b", "c"] and c.error is None and c.requests == 1
    path, headers, body = server.requests[0]
    assert path == "/v1/chat/completions" and headers["Authorization"] == "Bearer sekret"
    assert body["messages"] == [{"role": "user", "content": "hello"}]
    assert (body["n"], body["temperature"], body["max_tokens"], body["model"]) == (3, 0.5, 99, "m")


def test_completions_api_and_no_key(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    c = complete(model(server, api="completions", stop=["\n\n"]), "hello")
    assert c.texts == ["fine"]
    path, headers, body = server.requests[0]
    assert path == "/v1/completions" and body["prompt"] == "hello" and body["stop"] == ["\n\n"]
    assert "Authorization" not in headers


@pytest.mark.parametrize("failure", [(429, "slow down"), (500, "oops"), (503, "busy"), ("bad", b"{not json"),
                                     ("bad", b'{"choices": [{"nothing": 1}]}')])
def test_retried_then_answered(server, failure):
    server.script = [failure, failure, ("ok", ["yes"])]
    m = model(server)
    c = complete(m, "hello")
    assert c.texts == ["yes"] and c.error is None and c.requests == 3 and m.stats["retries"] == 2


def test_gives_up_after_retries_with_an_error_not_a_crash(server):
    server.script = [(500, "down")] * 10
    m = model(server, max_retries=2)
    out = list(m([["p1"], ["p2"]]))
    assert [o[0].texts for o in out] == [[], []]
    assert all("HTTP 500" in o[0].error and "after 3 attempt(s)" in o[0].error for o in out)
    assert out[0][0].requests == 3 and m.stats["failed_prompts"] == 2


def test_client_errors_are_not_retried(server):
    server.script = [(401, "bad key")]
    c = complete(model(server), "hello")
    assert "HTTP 401" in c.error and "bad key" in c.error and len(server.requests) == 1


def test_slow_answer_times_out_and_is_retried(server):
    server.script = [("slow", 1.5), ("ok", ["late but fine"])]
    c = complete(model(server, timeout_s=0.3), "hello")
    assert c.texts == ["late but fine"] and c.requests == 2


def test_server_ignoring_n_is_asked_again(server):
    server.script = [("ok", ["one"]), ("ok", ["two"]), ("ok", ["three"])]
    c = complete(model(server), Prompt("hello", n=3))
    assert c.texts == ["one", "two", "three"] and len(server.requests) == 3
    assert [r[2]["n"] for r in server.requests] == [3, 2, 1]


def test_samples_per_request(server):
    c = complete(model(server, samples_per_request=1), Prompt("hello", n=3))
    assert len(c.texts) == 3 and [r[2]["n"] for r in server.requests] == [1, 1, 1]


def test_concurrency_is_bounded(server):
    server.script = [("slow", 0.2)] * 8
    m = model(server, max_concurrency=2)
    t = time.perf_counter()
    out = list(m([[f"p{i}"] for i in range(8)]))
    assert len(out) == 8 and all(o[0].error is None for o in out)
    assert server.max_in_flight == 2
    assert time.perf_counter() - t >= 0.75  # 8 slow answers, 2 at a time


def test_bad_settings():
    with pytest.raises(ValueError, match="base_url"):
        OpenAICompatibleModel(base_url="localhost:8080", model="m")
    with pytest.raises(ValueError, match="api"):
        OpenAICompatibleModel(base_url="http://x", model="m", api="responses")
    with pytest.raises(ValueError, match="max_concurrency"):
        OpenAICompatibleModel(base_url="http://x", model="m", max_concurrency=0)


def test_cache_second_run_sends_nothing_and_keys_on_everything(server, tmp_path):
    m = model(server, cache_dir=str(tmp_path / "cache"))
    assert complete(m, Prompt("pair A", n=2)).requests == 1
    again = model(server, cache_dir=str(tmp_path / "cache"))
    c = complete(again, Prompt("pair A", n=2))
    assert c.cached and c.requests == 0 and c.texts == ["fine", "fine"] and len(server.requests) == 1
    assert again.cache.hits == 1
    # any change of prompt, sampling or model is another entry
    for other, prompt in [(again, Prompt("pair B", n=2)), (again, Prompt("pair A", n=3)),
                          (again, Prompt("pair A", n=2, temperature=0.2)),
                          (model(server, cache_dir=str(tmp_path / "cache"), model="m2"), Prompt("pair A", n=2)),
                          (model(server, cache_dir=str(tmp_path / "cache"), max_tokens=7), Prompt("pair A", n=2))]:
        assert not complete(other, prompt).cached
    assert len(server.requests) == 6


def test_failed_answers_are_not_cached(server, tmp_path):
    server.script = [(500, "x")] * 2
    m = model(server, cache_dir=str(tmp_path / "c"), max_retries=1)
    assert complete(m, "p").error
    assert complete(m, "p").texts == ["fine"]


def test_swapped_turns_do_not_share_a_cache_entry(server, tmp_path):
    import spacy

    from spacy_paraphrase import make_pair_doc

    nlp = spacy.blank("en")
    nlp.add_pipe("llm", config={
        "task": {"@llm_tasks": "spacy_paraphrase.ContextDeP.v1", "n_samples": 1},
        "model": {"@llm_models": "spacy_paraphrase.OpenAICompatible.v1", "base_url": server.url, "model": "m",
                  "cache_dir": str(tmp_path / "c"), "backoff_s": 0.01},
    })
    server.script = [("ok", [answer(True, ["normal winter"], ["normal winter"])]), ("ok", [answer(False)])]
    a = nlp(make_pair_doc(nlp, GUEST, HOST))
    b = nlp(make_pair_doc(nlp, HOST, GUEST))
    assert a.cats["PARAPHRASE"] == 1.0 and b.cats["PARAPHRASE"] == 0.0 and len(server.requests) == 2
    again = nlp(make_pair_doc(nlp, GUEST, HOST))
    assert again.cats["PARAPHRASE"] == 1.0 and len(server.requests) == 2
    assert again.spans["paraphrase"].attrs["llm"]["cached"] is True


def parses(text):
    return text.startswith("ok")


def test_unparsed_samples_are_asked_again_and_cached(server, tmp_path):
    # sample 0 parses; sample 1 is asked twice more and parses on the second re-ask;
    # sample 2 never parses: it keeps its last answer after 2 re-asks
    server.script = [("ok", ["ok 0"]), ("ok", ["?"]), ("ok", ["?"]),
                     ("ok", ["still ?"]), ("ok", ["ok 1"]), ("ok", ["no"]), ("ok", ["nope"])]
    m = model(server, samples_per_request=1, cache_dir=str(tmp_path / "c"))
    c = complete(m, Prompt("pair", n=3, reask=2, parses=parses))
    assert c.texts == ["ok 0", "ok 1", "nope"] and c.asks == [1, 3, 3]
    assert c.requests == 7 and m.stats["reasks"] == 4 and not c.cached
    assert [r[2]["n"] for r in server.requests] == [1] * 7
    # a re-run: the first answers and every re-ask come from the cache
    again = model(server, samples_per_request=1, cache_dir=str(tmp_path / "c"))
    c2 = complete(again, Prompt("pair", n=3, reask=2, parses=parses))
    assert (c2.texts, c2.asks, c2.requests, c2.cached) == (c.texts, c.asks, 0, True)
    assert len(server.requests) == 7
    # one more re-ask allowed: only that one is sent
    server.script = [("ok", ["ok 2"])]
    c3 = complete(again, Prompt("pair", n=3, reask=3, parses=parses))
    assert c3.texts == ["ok 0", "ok 1", "ok 2"] and c3.asks == [1, 3, 4] and c3.requests == 1


def test_no_reask_without_a_check_or_when_off(server):
    server.script = [("ok", ["?", "?"])]
    c = complete(model(server), Prompt("pair", n=2, reask=0, parses=parses))
    assert c.texts == ["?", "?"] and c.asks == [1, 1] and len(server.requests) == 1
    server.script = [("ok", ["?"])]
    c = complete(model(server), Prompt("pair", n=1, reask=2))  # no parse check: nothing to re-ask for
    assert c.asks == [1] and len(server.requests) == 2


def test_failed_reask_keeps_the_unparsed_answer(server):
    server.script = [("ok", ["?"]), (500, "down"), (500, "down")]
    m = model(server, max_retries=1)
    c = complete(m, Prompt("pair", n=1, reask=2, parses=parses))
    assert c.error is None and c.texts == ["?"] and c.asks == [1] and c.requests == 3
    assert m.stats["failed_reasks"] == 1
