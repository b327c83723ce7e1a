"""Properties put either way — through a message handle, or as an MQRFH2 at the start of the
data in either byte order and any NameValueCCSID — are the same message to every kind of
getter, before and after a restart (hypothesis over random typed property sets): the same
typed properties and the same body, though a getter taking an MQRFH2 gets the putter's own
headers byte for byte (as IBM returns them) where the handle's are written fresh. Random
bytes where an MQRFH2 belongs are refused with IBM's RFH reasons and store nothing."""

from __future__ import annotations

import string

from engine_helpers import Env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ferrymq.engine.api import GetOptions, GetResult, PutOptions
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.properties import rules
from ferrymq.properties.model import Property, PropertySet, coerce
from ferrymq.properties.rfh2map import absorb, build_folders
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.rfh2 import MQRFH2

BODY = b"payload"
_IDENT = st.text(string.ascii_letters + "_", min_size=1, max_size=6).filter(
    lambda s: s.upper() not in rules.SQL_WORDS and not s.startswith("JMS") and s[:2].lower() != "mq")
# jms.* would also fill MQMD fields from an MQRFH2 (JMS mapping), which a handle does not do.
_NAMES = _IDENT | st.builds(lambda f, e: f"{f}.{e}", st.sampled_from(["acme", "mcd", "mqext"]), _IDENT)
_VALUES = st.one_of(
    st.tuples(st.just(C.MQTYPE_NULL), st.none()),
    st.tuples(st.just(C.MQTYPE_BOOLEAN), st.booleans()),
    st.tuples(st.just(C.MQTYPE_BYTE_STRING), st.binary(max_size=8)),
    st.tuples(st.just(C.MQTYPE_INT8), st.integers(-128, 127)),
    st.tuples(st.just(C.MQTYPE_INT16), st.integers(-(2**15), 2**15 - 1)),
    st.tuples(st.just(C.MQTYPE_INT32), st.integers(-(2**31), 2**31 - 1)),
    st.tuples(st.just(C.MQTYPE_INT64), st.integers(-(2**63), 2**63 - 1)),
    st.tuples(st.just(C.MQTYPE_FLOAT32), st.floats(width=32, allow_nan=False)),
    st.tuples(st.just(C.MQTYPE_FLOAT64), st.floats(allow_nan=False)),
    st.tuples(st.just(C.MQTYPE_STRING), st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)),
)
# Every kind of application: (queue PROPCTL, MQGMO property option, has a message handle).
GETTERS = [(C.MQPROP_ALL, 0, True), (C.MQPROP_ALL, 0, False), (C.MQPROP_COMPATIBILITY, 0, True),
           (C.MQPROP_COMPATIBILITY, 0, False), (C.MQPROP_NONE, 0, False),
           (C.MQPROP_ALL, C.MQGMO_PROPERTIES_FORCE_MQRFH2, True), (C.MQPROP_ALL, C.MQGMO_NO_PROPERTIES, True)]


@st.composite
def property_sets(draw: st.DrawFn) -> PropertySet:
    ps = PropertySet()
    for name, (ptype, value) in draw(st.dictionaries(_NAMES, _VALUES, min_size=1, max_size=6)).items():
        ps.put(name, Property(ptype, coerce(ptype, value)))
    return ps


def _restart(env: Env) -> None:
    env.journal.sync()
    env.journal = env.journal.crash()
    env.qm = QueueManager.start("QM1", env.journal, env.clock)
    env.hconn = env.qm.connect()


def _typed(ps: PropertySet | None) -> dict[str, tuple[int, object]] | None:
    return None if ps is None else {k: (p.type, p.value) for k, p in ps.typed_items()}


def _deliveries(ps: PropertySet, way: str, ccsid: int, big: bool) -> list[object]:
    env = Env()
    for i, (propctl, _, _) in enumerate(GETTERS):
        env.define(f"Q{i}", PROPCTL=propctl)
        h = env.open(f"Q{i}")
        if way == "handle":
            md = MQMD(format=C.MQFMT_STRING, coded_char_set_id=1208, persistence=C.MQPER_PERSISTENT)
            env.qm.put(env.hconn, h, md, PutOptions(), BODY, ps)
        else:  # the MQRFH2 in the MQMD's byte order, the body after it in the native one
            header = MQRFH2(tuple(build_folders(ps)), C.MQENC_NATIVE, 1208, C.MQFMT_STRING, name_value_ccsid=ccsid)
            md = MQMD(format=C.MQFMT_RF_HEADER_2, encoding=273 if big else C.MQENC_NATIVE, coded_char_set_id=1208,
                      persistence=C.MQPER_PERSISTENT)
            env.qm.put(env.hconn, h, md, PutOptions(), header.pack(big_endian=big) + BODY)
    out: list[object] = []
    for phase in ("before", "after"):
        for i, (_, option, handle) in enumerate(GETTERS):
            gmo = GetOptions(option | C.MQGMO_BROWSE_FIRST, msg_handle=handle)
            res = env.qm.get(env.hconn, env.open(f"Q{i}"), MQMD(), gmo, 1 << 16)
            assert isinstance(res, GetResult)
            split = absorb(res.data, res.md.format, res.md.encoding, res.md.coded_char_set_id)
            if split is None:
                seen: tuple[object, ...] = (res.data, res.md.format, res.md.encoding, res.md.coded_char_set_id)
            else:  # an MQRFH2: what it says, not how its bytes say it
                seen = (_typed(split.props), split.data, split.format, split.encoding, split.ccsid)
            out.append((phase, i, *seen, _typed(res.properties)))
        _restart(env)
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(property_sets(), st.sampled_from([1208, 1200, 13488, 17584]), st.booleans())
def test_a_handle_put_and_an_mqrfh2_put_are_one_message_to_every_getter(ps: PropertySet, ccsid: int,
                                                                         big: bool) -> None:
    by_handle = _deliveries(ps, "handle", ccsid, big)
    assert by_handle == _deliveries(ps, "rfh2", ccsid, big)
    assert by_handle[0][-1] == _typed(ps)  # the getter with a handle sees every property, typed


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=120), st.integers(0, 200))
def test_random_bytes_where_an_mqrfh2_belongs_are_refused_with_rfh_reasons(raw: bytes, length: int) -> None:
    env = Env()
    env.define("Q")
    h = env.open("Q")
    fixed = MQRFH2(format=C.MQFMT_STRING).pack()
    for data in (raw, fixed[:8] + length.to_bytes(4, "little") + fixed[12:] + raw):
        before = env.depth("Q")
        try:
            env.qm.put(env.hconn, h, MQMD(format=C.MQFMT_RF_HEADER_2), PutOptions(), data)
        except MQError as exc:
            assert (exc.comp, exc.reason) in ((C.MQCC_FAILED, C.MQRC_RFH_ERROR), (C.MQCC_FAILED, C.MQRC_RFH_FORMAT_ERROR))
            assert env.depth("Q") == before


def test_the_descriptor_format_comes_back_blank_padded() -> None:
    env = Env()
    env.define("Q", PROPCTL=C.MQPROP_ALL)
    h = env.open("Q")
    header = MQRFH2(("<usr><a>1</a></usr>",), C.MQENC_NATIVE, 1208, C.MQFMT_STRING)
    env.qm.put(env.hconn, h, MQMD(format=C.MQFMT_RF_HEADER_2), PutOptions(), header.pack() + BODY)
    for handle, fmt in ((True, C.MQFMT_STRING), (False, C.MQFMT_RF_HEADER_2)):
        res = env.qm.get(env.hconn, h, MQMD(), GetOptions(C.MQGMO_BROWSE_FIRST, msg_handle=handle), 100)
        # Format is held blank-padded, as IBM returns it (its bytes); read as text, without the blanks
        assert isinstance(res, GetResult) and res.md.format == fmt.rstrip()


def test_a_copy_and_its_original_change_apart() -> None:
    """copy shares the items until either set changes: a change to one, any way a set
    changes, is never seen by the other, and each packs as it holds."""
    from ferrymq.properties.model import PropertySet, pack

    original = PropertySet({"a": 1, "b": "x"})
    packed = pack(original)
    for change in (lambda s: s.set("c", 2), lambda s: s.__delitem__("a"), lambda s: s.update_from(PropertySet({"d": 3})),
                   lambda s: s.__setitem__("b", "y"), lambda s: s.pop("b"), lambda s: s.clear()):
        for changed_one in ("copy", "original"):
            first = PropertySet({"a": 1, "b": "x"})
            second = first.copy()
            changed, kept = (second, first) if changed_one == "copy" else (first, second)
            change(changed)
            assert dict(kept) == {"a": 1, "b": "x"} and pack(kept) == packed
            assert pack(changed) == pack(PropertySet(dict(changed)))
    twice = original.copy().copy()
    twice.set("z", True)
    assert dict(original) == {"a": 1, "b": "x"}


def test_a_framed_set_is_its_length_and_packed_form_as_it_changes() -> None:
    """framed (a frame's props field) is pack's form after its length, for a set and its
    copies, framed before or after copying, and again after either changes."""
    import struct

    from ferrymq.properties.model import PropertySet, framed, pack

    def field(s: PropertySet) -> bytes:
        raw = pack(PropertySet(dict(s)))
        return struct.pack(">I", len(raw)) + raw

    for frame_first in (True, False):
        original = PropertySet({"a": 1, "b": "x"})
        if frame_first:
            framed(original)
        copy = original.copy()
        assert framed(copy) == framed(original) == field(original)
        copy.set("c", 2)
        assert framed(copy) == field(copy) != framed(original)
        original.pop("a")
        assert framed(original) == field(original)
    assert framed({"k": "v"}) == field(PropertySet({"k": "v"}))
