"""Model settings that the config decides, also when a saved pipeline loads.

thinc saves a model's ``attrs`` with its weights and, when a pipeline is
loaded, writes the saved values over the ones the config has just built
(``Model.from_dict``). A setting kept in ``attrs`` would then ignore an
override such as ``spacy.load(path, config={"components.transformer.model.
long_pairs": "windows"})``. Wrapped by ``from_config``, a setting is saved as
before (its plain value) but loading keeps the config's value: the config is
where such a setting lives (the pair transformer's ``max_length``,
``max_padding``, ``long_pairs``, ``token_types``; the tagger's ``pooling``).
"""
import srsly
from thinc.model import deserialize_attr, serialize_attr


class ConfigStr(str):
    """A str setting decided by the config (module doc)."""


class ConfigInt(int):
    """An int setting decided by the config (module doc)."""


class ConfigFloat(float):
    """A float setting decided by the config (module doc)."""


_PLAIN = {ConfigStr: str, ConfigInt: int, ConfigFloat: float}
_MARKED = {plain: marked for marked, plain in _PLAIN.items()}


def from_config(value):
    """``value`` (a str, int or float; a marked one as it is) marked as
    decided by the config (module doc)."""
    if type(value) in _PLAIN:
        return value
    if type(value) not in _MARKED:
        raise TypeError(f"from_config takes a str, int or float, got {value!r}")
    return _MARKED[type(value)](value)


@serialize_attr.register(ConfigStr)
@serialize_attr.register(ConfigInt)
@serialize_attr.register(ConfigFloat)
def _serialize(_, value, name, model) -> bytes:
    return srsly.msgpack_dumps(_PLAIN[type(value)](value))


@deserialize_attr.register(ConfigStr)
@deserialize_attr.register(ConfigInt)
@deserialize_attr.register(ConfigFloat)
def _keep_config_value(default, value, name, model):
    return default
