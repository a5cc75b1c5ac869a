"""The report's HTML page: one self-contained file (inline CSS and SVG, no
script, no link outside DIR but the pairs page beside it)."""
from html import escape
from typing import Any, Dict, List, Optional, Sequence

CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem auto;max-width:60rem;color:#1f2328;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #d0d7de;padding:.2rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}td:first-child{min-width:12rem}td.n{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:1rem 0}figure svg{max-width:100%;height:auto}figcaption{color:#57606a;font-size:.9rem}
.note{color:#57606a;font-size:.9rem}.warn{color:#9a6700}
"""


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def count(n: int, noun: str) -> str:
    """"1 conversation", "2 conversations"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def interval(row: Dict[str, Any]) -> str:
    if row.get("low") is None:
        return row.get("note") or "not estimable"
    return f"{fmt(row['low'])} – {fmt(row['high'])}"


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[bool] = ()) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header) if any(header) else ""
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            html = cell if isinstance(cell, Markup) else escape(fmt(cell))
            cls = ' class="n"' if i < len(numeric) and numeric[i] else ""
            cells.append(f"<td{cls}>{html}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    thead = f"<thead><tr>{head}</tr></thead>" if head else ""
    return f"<table>{thead}<tbody>{''.join(body)}</tbody></table>"


class Markup(str):
    """Text that is HTML already (a link), not escaped again."""


def link(href: str, text: str) -> Markup:
    return Markup(f'<a href="{escape(href)}">{escape(text)}</a>')


def figure(svg: str, caption: str, name: str) -> str:
    return (f'<figure class="report-figure" data-figure="{escape(name)}">{svg}'
            f"<figcaption>{escape(caption)}</figcaption></figure>")


def section(title: str, *parts: str, anchor: str = "") -> str:
    ident = f' id="{escape(anchor)}"' if anchor else ""
    return f"<section{ident}><h2>{escape(title)}</h2>" + "".join(parts) + "</section>"


def paragraph(text: str, cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    return f"<p{attr}>{escape(text)}</p>"


def page(title: str, sections: List[str], footer: Optional[str] = None) -> str:
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{escape(title)}</title>", f"<style>{CSS.strip()}</style>", "</head>", "<body>",
             f"<h1>{escape(title)}</h1>", *sections]
    if footer:
        parts.append(paragraph(footer, "note"))
    parts += ["</body>", "</html>"]
    return "\n".join(parts)
