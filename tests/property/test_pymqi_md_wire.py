"""pymqi's MD keeps its packed form between calls and splices changed fields into it: whatever
a program sets, in any order, ``wire()`` is what packing every field afresh gives."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ferrymq.pymqi import MD
from ferrymq.pymqi.errors import PYIFError
from ferrymq.pymqi.structs import _MD_AT

FIELDS = sorted(_MD_AT)


def _value(name: str) -> st.SearchStrategy[object]:
    _, size, kind = _MD_AT[name]
    if kind == "l":
        return st.integers(-(2**31), 2**31 - 1)
    return st.binary(max_size=size + 2) | st.text(alphabet="AB Z", max_size=size)  # too long: pack refuses


SETS = st.lists(st.sampled_from(FIELDS).flatmap(lambda n: st.tuples(st.just(n), _value(n))), max_size=8)


@given(st.sampled_from([None, 1, 2]), SETS, st.lists(st.sampled_from([1, 2]), max_size=2))
def test_wire_is_what_packing_afresh_gives(version: int | None, sets: list[tuple[str, object]],
                                           versions: list[int]) -> None:
    md = MD() if version is None else MD(Version=version)
    for i, (name, value) in enumerate(sets):
        setattr(md, name, value)
        if i < len(versions):
            md.Version = versions[i]
    try:
        got = md.wire()
    except PYIFError:
        got = None
    md.__dict__["_w"] = None  # forget the kept bytes: pack every field
    try:
        fresh = md.wire()
    except PYIFError:
        fresh = None
    assert got == fresh


@given(SETS)
def test_unpack_then_wire_reads_back(sets: list[tuple[str, object]]) -> None:
    md = MD(Version=2)
    for name, value in sets:
        setattr(md, name, value)
    try:
        packed = md.pack()
    except PYIFError:
        return
    back = MD()
    back.unpack(packed)
    assert back.wire() == packed and back.pack() == packed  # what a get brings reads back as it came
    assert back.MsgId == packed[48:72] and back.CorrelId == packed[72:96]


@given(SETS, st.sampled_from([1, 2]))
def test_a_received_md_reads_as_an_unpacked_one(sets: list[tuple[str, object]], version: int) -> None:
    md = MD(Version=2)
    for name, value in sets:
        setattr(md, name, value)
    try:
        packed = md.pack()
    except PYIFError:
        return
    eager, lazy = MD(), MD()
    eager.unpack(packed)
    eager.Version = version
    lazy.received(packed, version)  # what a get does: decoded when first read
    assert lazy.get() == eager.get()
    lazy2 = MD()
    lazy2.received(packed, version)
    lazy2.Priority = 7  # a set decodes first: the other fields are the message's
    eager.Priority = 7
    assert lazy2.get() == eager.get() and lazy2.wire() == eager.wire()


@given(SETS)
def test_an_md_made_with_fields_packs_as_one_made_afresh(sets: list[tuple[str, object]]) -> None:
    fields = dict(sets)
    for _ in range(2):  # the second time from what the first one kept
        try:
            md = MD(**fields)
            got = md.wire()
        except PYIFError:
            continue
        assert md.get() == {**MD().get(), **fields}
        md.__dict__["_w"] = None
        assert got == md.wire()
