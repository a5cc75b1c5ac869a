"""What the records do not carry, for ``report --by``: the meta of the dialog
corpus annotate read (``--dialogs PATH``) and speaker roles from name
patterns (``--role-pattern ROLE=REGEX``). docs/report.md, "Fields".

Records keep speaker names and utterance ids but no conversation meta (a
MediaSum program or date, a chat's extra keys) and no utterance meta (a turn
table's other columns). ``join_dialogs`` reads the corpus again as annotate
read it (a ``dialogs.DialogCorpus``), with the format and reader options of the
annotate run when its checkpoint is beside the records (else the format is
guessed), and keeps the meta of the conversations and turn-opening
utterances the records name, and of a ConvoKit corpus's speakers
(``records.join_corpus``: the same join as for a ConvoKit output).
"""
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence

from ..annotate.resume import run_fingerprint
from ..dialogs import DialogCorpus, DialogFormatError, SourceOptions, role_getter
from ..dialogs.turns import Utterance
from ..annotate.record_format import RecordsFileError, output_files
from .records import Records, join_corpus


def run_source(inputs: Sequence[Path]) -> Optional[Dict[str, Any]]:
    """The input options (a ``SourceOptions`` as a dict) of the first annotate
    run whose checkpoint is beside one of ``inputs``; None without one."""
    for path in inputs:
        try:
            _, output, _ = output_files(Path(path))
        except (RecordsFileError, OSError):
            continue
        stored = (run_fingerprint(output) or {}).get("source")
        if isinstance(stored, dict):
            return stored
    return None


def join_dialogs(data: Records, dialogs: Path, source: Optional[Dict[str, Any]] = None) -> int:
    """Fill ``data``'s conversation, utterance and speaker meta (and
    timestamps) from the dialog corpus ``dialogs``, read with ``source``'s
    format and reader options (``run_source``; ``records.join_corpus``);
    returns how many of the records' conversations it found. RecordsFileError
    when the corpus cannot be read or holds none of them."""
    dialogs = Path(dialogs)
    if not dialogs.exists():
        raise RecordsFileError(f"--dialogs {dialogs}: no such file or directory")
    options = SourceOptions(fmt=(source or {}).get("fmt"), reader_options=dict((source or {}).get("reader_options") or {}))
    try:
        with DialogCorpus(dialogs, options) as corpus:
            found = join_corpus(data, corpus)
    except (DialogFormatError, ValueError, OSError) as err:
        raise RecordsFileError(f"--dialogs {dialogs}: {err}") from None
    if not found and not data.utterance_meta:
        raise RecordsFileError(f"--dialogs {dialogs}: none of the records' conversations is in it "
                           "(give the corpus these records were annotated from)")
    return found


def speaker_roles(patterns: Dict[str, str]) -> Callable[[Optional[str]], Optional[str]]:
    """Speaker name -> the first role whose regular expression matches it
    (case-insensitive; annotate's ``--role-source pattern``), None if none
    does. ValueError for a bad expression."""
    role_of = role_getter("pattern", patterns=patterns)
    return lambda name: None if name is None else role_of(Utterance("", "", str(name), ""))
