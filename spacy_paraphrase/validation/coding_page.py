"""The coding page ``validate sheet`` writes beside the CSV (``SHEET.coding.html``):
one self-contained HTML file (inline CSS and JS, no server, no network) in
which a coder answers, pair by pair, "does the second speaker paraphrase the
first?" and, on yes, clicks or drags over the words of both turns, as
ContextDeP's annotators did. Progress is kept in the browser's localStorage
under the sheet's id; "Export" gives the coded file (a download, and the same
text to copy), which ``validate score`` and ``convert coded`` read
(``coded.py``). The page holds the pairs' ids, speakers and words, nothing
derived from the model.

The coded file (JSON): ``format`` (``FORMAT``), ``version``, ``sheet`` (the
sheet's id), ``sheet_name``, ``coder``, and ``pairs``: one entry per coded
pair, ``pair_id``, ``paraphrase`` (true / false), ``first`` and ``second``
(``speaker``, ``words``, ``highlight``: indices of the highlighted words,
empty on a "no") and ``note``."""
import hashlib
import json
from html import escape
from typing import Any, Dict, List, Sequence

from .words import turn_words

FORMAT = "spacy-paraphrase coded pairs"
VERSION = 1
STORAGE_PREFIX = "spacy-paraphrase-coding:"

GUIDELINES = [
    "Read both turns. The question is whether the second speaker, in their turn, says again something the first "
    "speaker said in theirs: restates it, rephrases it in other words, sums it up, or repeats it back (also as a "
    "question, e.g. to check they understood). It may be a part of either turn, and the words may differ "
    "completely; what counts is that, in this conversation, the second speaker expresses the same content.",
    "Not a paraphrase: the second speaker only stays on the same topic, answers a question of the first, adds "
    "something new, agrees or disagrees (\u201cyes\u201d, \u201cright\u201d) without restating, or repeats a single "
    "word without its content. Judge the meaning in context, not the overlap of words.",
    "On yes: mark the words in BOTH turns: in the first turn the words whose content is taken up, in the second "
    "turn the words that restate them. Mark the words that carry the shared content, no more; the marked words need "
    "not be next to each other.",
]
KEYS = ("Keys: Y yes, N no, \u2192 or J next pair, \u2190 or K previous pair, U next uncoded pair; Tab moves over "
        "the words of a yes pair, Enter or Space marks a word.")

CSS = """
body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:1rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.3rem}details{background:#f6f8fa;border-radius:6px;padding:.5rem 1rem}
.bar{display:flex;gap:.6rem;align-items:center;flex-wrap:wrap;margin:.8rem 0}
.card{border:1px solid #d0d7de;border-radius:8px;padding:.6rem 1.2rem;margin:.8rem 0}
.who{color:#57606a;font-size:.9rem;margin-top:.6rem}.turn{margin:.2rem 0 .6rem;user-select:none}
.w{padding:1px 2px;border-radius:3px;cursor:default}.yes .w{cursor:pointer}
.yes .w:hover{background:#ddf4ff}.w.on{background:#ffd33d}.w:focus{outline:2px solid #0969da}
.q{font-weight:600}button{font:inherit;padding:.25rem .8rem;border-radius:6px;border:1px solid #d0d7de;
background:#f6f8fa;cursor:pointer}button.chosen{background:#0969da;color:#fff;border-color:#0969da}
.status{color:#57606a}.warn{color:#9a6700}textarea{width:100%;height:10rem;font:12px monospace}
input[type=text]{font:inherit;padding:.2rem .4rem}
"""

JS = r"""
(function(){
var D = JSON.parse(document.getElementById('spp-data').textContent);
var KEY = '%PREFIX%' + D.sheet, S = {coder: '', pos: 0, codes: {}}, stored = 1;
try { var old = JSON.parse(localStorage.getItem(KEY) || 'null'); if (old && old.codes) S = old; }
catch (e) { stored = 0; }
function $(id){ return document.getElementById(id); }
function save(){ try { localStorage.setItem(KEY, JSON.stringify(S)); } catch (e) { stored = 0; } }
function code(p){ return S.codes[p.id]; }
function done(c){ return c && (c.p === 0 || (c.p === 1 && c.a.length > 0 && c.b.length > 0)); }
var drag = null;
function render(){
  var i = Math.max(0, Math.min(S.pos, D.pairs.length - 1)), p = D.pairs[i], c = code(p);
  S.pos = i;
  $('spp-pos').textContent = 'Pair ' + (i + 1) + ' of ' + D.pairs.length;
  $('spp-id').textContent = p.id;
  $('spp-s1').textContent = p.a.s; $('spp-s2').textContent = p.b.s;
  $('spp-q2').textContent = p.b.s; $('spp-q1').textContent = p.a.s;
  [['a', 'spp-t1'], ['b', 'spp-t2']].forEach(function(side){
    var box = $(side[1]); box.textContent = '';
    p[side[0]].w.forEach(function(word, j){
      var e = document.createElement('span'); e.className = 'w'; e.textContent = word;
      e.setAttribute('data-i', j); e.setAttribute('data-side', side[0]);
      if (c && c.p === 1) { e.tabIndex = 0; if (c[side[0]].indexOf(j) >= 0) e.className = 'w on'; }
      box.appendChild(e); box.appendChild(document.createTextNode(' '));
    });
  });
  $('spp-card').className = 'card' + (c && c.p === 1 ? ' yes' : '');
  $('spp-yes').className = c && c.p === 1 ? 'chosen' : ''; $('spp-no').className = c && c.p === 0 ? 'chosen' : '';
  $('spp-hint').textContent = !c ? 'Answer the question (Y / N).' : c.p === 0 ? 'Coded: no paraphrase.' :
    done(c) ? 'Coded: paraphrase, words marked in both turns.' : 'Mark the words in both turns (click or drag).';
  $('spp-note').value = c && c.note || '';
  $('spp-coder').value = S.coder || '';
  var n = D.pairs.filter(function(q){ return done(code(q)); }).length;
  $('spp-progress').textContent = n + ' of ' + D.pairs.length + ' coded' + (stored ? '' :
    ' (this browser does not keep progress: export before closing)');
  save();
}
function answer(v){
  var p = D.pairs[S.pos], c = code(p) || {a: [], b: [], note: ''};
  c.p = v; if (v === 0) { c.a = []; c.b = []; }
  S.codes[p.id] = c; render();
}
function setWord(side, j, on){
  var c = code(D.pairs[S.pos]); if (!c || c.p !== 1) return;
  var list = c[side], k = list.indexOf(j);
  if (on && k < 0) list.push(j); if (!on && k >= 0) list.splice(k, 1);
  list.sort(function(x, y){ return x - y; });
}
function word(e){ return e.target && e.target.classList && e.target.classList.contains('w') ? e.target : null; }
function go(i){ S.pos = i; render(); }
function nextUncoded(){
  for (var k = 1; k <= D.pairs.length; k++) {
    var i = (S.pos + k) % D.pairs.length; if (!done(code(D.pairs[i]))) return go(i);
  }
}
document.addEventListener('mousedown', function(e){
  var w = word(e), c = code(D.pairs[S.pos]); if (!w || !c || c.p !== 1) return;
  e.preventDefault();
  var side = w.getAttribute('data-side'), j = +w.getAttribute('data-i'), on = c[side].indexOf(j) < 0;
  drag = {side: side, on: on}; setWord(side, j, on); w.className = on ? 'w on' : 'w';
});
document.addEventListener('mouseover', function(e){
  var w = word(e); if (!drag || !w || w.getAttribute('data-side') !== drag.side) return;
  setWord(drag.side, +w.getAttribute('data-i'), drag.on); w.className = drag.on ? 'w on' : 'w';
});
document.addEventListener('mouseup', function(){ if (drag) { drag = null; render(); } });
document.addEventListener('keydown', function(e){
  var t = e.target && e.target.tagName; if (t === 'INPUT' || t === 'TEXTAREA' || e.ctrlKey || e.metaKey || e.altKey) return;
  var w = word(e), k = e.key;
  if (w && (k === 'Enter' || k === ' ')) {
    e.preventDefault(); var side = w.getAttribute('data-side'), j = +w.getAttribute('data-i');
    setWord(side, j, !w.classList.contains('on')); render();
    var again = document.querySelector('.w[data-side=' + side + '][data-i="' + j + '"]'); if (again) again.focus();
    return;
  }
  if (k === 'y' || k === 'Y') answer(1); else if (k === 'n' || k === 'N') answer(0);
  else if (k === 'ArrowRight' || k === 'j' || k === 'J') go(S.pos + 1);
  else if (k === 'ArrowLeft' || k === 'k' || k === 'K') go(S.pos - 1);
  else if (k === 'u' || k === 'U') nextUncoded();
  else return;
  e.preventDefault();
});
$('spp-yes').onclick = function(){ answer(1); }; $('spp-no').onclick = function(){ answer(0); };
$('spp-prev').onclick = function(){ go(S.pos - 1); }; $('spp-next').onclick = function(){ go(S.pos + 1); };
$('spp-uncoded').onclick = nextUncoded;
$('spp-jump').onchange = function(){ var v = parseInt(this.value, 10); if (v >= 1) go(v - 1); this.value = ''; };
$('spp-note').oninput = function(){ var c = code(D.pairs[S.pos]); if (c) { c.note = this.value; save(); } };
$('spp-coder').oninput = function(){ S.coder = this.value.trim(); save(); };
$('spp-export').onclick = function(){
  var coder = (S.coder || '').trim();
  if (!coder) { $('spp-out-msg').textContent = 'Type your name first (it goes into the file).'; $('spp-coder').focus(); return; }
  var pairs = [], open = 0;
  D.pairs.forEach(function(p){
    var c = code(p); if (!c) return; if (!done(c)) { open++; return; }
    pairs.push({pair_id: p.id, paraphrase: c.p === 1,
                first: {speaker: p.a.s, words: p.a.w, highlight: c.a.slice()},
                second: {speaker: p.b.s, words: p.b.w, highlight: c.b.slice()}, note: c.note || ''});
  });
  var head = JSON.stringify({format: D.format, version: D.version, sheet: D.sheet, sheet_name: D.name, coder: coder});
  var text = head.slice(0, -1) + ',"pairs":[\n' + pairs.map(function(q){ return JSON.stringify(q); }).join(',\n') + '\n]}\n';
  var name = D.name.replace(/\.csv$/i, '') + '.' + coder.replace(/[^A-Za-z0-9_-]+/g, '_') + '.coded.json';
  $('spp-out').value = text; $('spp-out').style.display = 'block';
  $('spp-out-msg').textContent = pairs.length + ' coded pairs in ' + name + (open ? '; ' + open +
    ' answered yes without words in both turns are left out' : '') + '. Send that file (or the text below).';
  var a = $('spp-download'); a.download = name;
  try { a.href = URL.createObjectURL(new Blob([text], {type: 'application/json'})); a.click(); } catch (e) {}
};
render();
window.__sppReady = 1;
})();
"""


def sheet_id(rows: Sequence[Dict[str, Any]]) -> str:
    """The sheet's id: a hash of its pairs (ids and texts, in order); the
    coded files carry it, so a file of another sheet is told apart."""
    text = json.dumps([[str(r["pair_id"]), r["first_text"], r["second_text"]] for r in rows], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def page_data(rows: Sequence[Dict[str, Any]], name: str) -> Dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "sheet": sheet_id(rows), "name": name,
            "pairs": [{"id": str(r["pair_id"]),
                       "a": {"s": str(r["first_speaker"] or "first speaker"), "w": turn_words(r["first_text"])},
                       "b": {"s": str(r["second_speaker"] or "second speaker"), "w": turn_words(r["second_text"])}}
                      for r in rows]}


def coding_page(rows: Sequence[Dict[str, Any]], name: str) -> str:
    """The coding page of the sheet ``name`` (the CSV's file name) for ``rows``
    (``sheet.sheet_rows``)."""
    data = json.dumps(page_data(rows, name), ensure_ascii=False, separators=(",", ":"))
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    guide = "".join(f"<p>{escape(p)}</p>" for p in GUIDELINES)
    body: List[str] = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Coding {escape(name)}</title><style>{CSS}</style></head><body>",
        f"<h1>Coding {escape(name)}</h1>",
        f"<details open><summary>How to code</summary>{guide}<p>{escape(KEYS)}</p><p>Your answers are kept in this "
        "browser (on this computer) until you export them; nothing is sent anywhere.</p></details>",
        '<div class="bar"><label>Your name <input type="text" id="spp-coder" autocomplete="name"></label>'
        '<span class="status" id="spp-progress"></span></div>',
        '<div class="card" id="spp-card"><div class="bar"><b id="spp-pos"></b><span class="status" id="spp-id"></span>'
        "</div>",
        '<div class="who" id="spp-s1"></div><div class="turn" id="spp-t1"></div>',
        '<div class="who" id="spp-s2"></div><div class="turn" id="spp-t2"></div>',
        '<div class="bar"><span class="q">Does <span id="spp-q2"></span> paraphrase <span id="spp-q1"></span>?</span>'
        '<button id="spp-yes" type="button">Yes (Y)</button><button id="spp-no" type="button">No (N)</button></div>',
        '<div class="status" id="spp-hint"></div>',
        '<div class="bar"><label>Note <input type="text" id="spp-note" size="40"></label></div></div>',
        '<div class="bar"><button id="spp-prev" type="button">\u2190 Previous</button>'
        '<button id="spp-next" type="button">Next \u2192</button>'
        '<button id="spp-uncoded" type="button">Next uncoded (U)</button>'
        '<label>Go to pair <input type="text" id="spp-jump" size="4"></label>'
        '<button id="spp-export" type="button">Export</button></div>',
        '<div class="warn" id="spp-out-msg"></div><a id="spp-download" style="display:none">download</a>',
        '<textarea id="spp-out" readonly style="display:none"></textarea>',
        f'<script type="application/json" id="spp-data">{data}</script>',
        f"<script>{JS.replace('%PREFIX%', STORAGE_PREFIX)}</script>",
        "</body></html>",
    ]
    return "\n".join(body)
