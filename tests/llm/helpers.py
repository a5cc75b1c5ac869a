"""Shared pieces of the LLM tests: skips, pair Docs, recorded answers."""
import importlib.util

from tests.util import skip_optional


def require(module: str, why: str) -> None:
    if importlib.util.find_spec(module) is None:
        skip_optional(f"{module} is not installed ({why}; pip install '.[llm]')")


def answer(yes: bool, guest=(), host=(), explanation="The host restates it.") -> str:
    def line(quotes):
        return " ".join(f'"{q}"' for q in quotes) if quotes else "None."

    word = "Yes" if yes else "No"
    return (f"{explanation} Therefore, the answer is {word.lower()}.\n"
            f"Verbatim Quote Guest: {line(guest)}\nVerbatim Quote Host: {line(host)}\nClassification: {word}.")


GUEST = "We are coming back daryn to a normal winter, I think."
HOST = "Coming back to a normal winter, OK."
