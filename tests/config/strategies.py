"""Hypothesis strategies: random ModelConfig messages drawn from the schema itself."""

from __future__ import annotations

from google.protobuf import message_factory
from google.protobuf.descriptor import FieldDescriptor
from hypothesis import strategies as st

from studio.config.descriptors import is_map, is_message, is_repeated
from studio.config.schema import _INT_RANGES

F = FieldDescriptor

names = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=12
)


def scalar_values(fd: FieldDescriptor):
    c = fd.cpp_type
    if c in _INT_RANGES:
        lo, hi = _INT_RANGES[c]
        return st.one_of(st.integers(0, 64), st.integers(lo, hi))
    if c == F.CPPTYPE_FLOAT:
        return st.floats(width=32, allow_nan=False)
    if c == F.CPPTYPE_DOUBLE:
        return st.floats(allow_nan=False)
    if c == F.CPPTYPE_BOOL:
        return st.booleans()
    if c == F.CPPTYPE_ENUM:
        return st.sampled_from([v.number for v in fd.enum_type.values])
    if fd.type == F.TYPE_BYTES:
        return st.binary(max_size=8)
    return names


def fill_message(draw, msg, depth: int = 0, max_depth: int = 3, p_set: float = 0.35) -> None:
    for fd in msg.DESCRIPTOR.fields:
        if not draw(st.booleans()) or draw(st.floats(0, 1)) > p_set * (2 if depth == 0 else 1):
            continue
        if is_message(fd):
            if depth >= max_depth:
                continue
            if is_map(fd):
                kfd = fd.message_type.fields_by_name["key"]
                vfd = fd.message_type.fields_by_name["value"]
                container = getattr(msg, fd.name)
                for key in draw(st.lists(scalar_values(kfd), max_size=2, unique=True)):
                    if is_message(vfd):
                        fill_message(draw, container[key], depth + 1, max_depth, p_set)
                    else:
                        container[key] = draw(scalar_values(vfd))
            elif is_repeated(fd):
                for _ in range(draw(st.integers(0, 2))):
                    fill_message(draw, getattr(msg, fd.name).add(), depth + 1, max_depth, p_set)
            else:
                sub = getattr(msg, fd.name)
                sub.SetInParent()
                fill_message(draw, sub, depth + 1, max_depth, p_set)
        elif is_repeated(fd):
            getattr(msg, fd.name).extend(draw(st.lists(scalar_values(fd), max_size=3)))
        else:
            setattr(msg, fd.name, draw(scalar_values(fd)))


@st.composite
def messages(draw, desc=None, max_depth: int = 3):
    from tritonclient.grpc import model_config_pb2

    desc = desc or model_config_pb2.ModelConfig.DESCRIPTOR
    msg = message_factory.GetMessageClass(desc)()
    fill_message(draw, msg, 0, max_depth)
    return msg
