"""The command line shared by the table writers that turn one stored JSON
result into markdown (``table_speed``; ``studies.table_quantize``)."""
import argparse
import json
from pathlib import Path
from typing import Callable, Dict, List, Optional


def table_main(render_markdown: Callable[[Dict], str], description: str, producer: str,
               argv: Optional[List[str]] = None) -> None:
    """``python -m benchmarks.table_X RESULTS.json [--output OUT.md]``: write
    the markdown of RESULTS (default: beside it, ``.md``) and print it."""
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", type=Path, help=f"the JSON {producer} wrote")
    p.add_argument("--output", type=Path, default=None, help="markdown file (default: RESULTS with .md)")
    args = p.parse_args(argv)
    md = render_markdown(json.loads(args.results.read_text(encoding="utf-8")))
    output = args.output or args.results.with_suffix(".md")
    output.write_text(md, encoding="utf-8")
    print(md, end="")
