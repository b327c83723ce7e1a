"""pymqi's structures keep their fields as plain instance attributes. Apart from MD (whose
fields a got message fills in when one is first read), no structure class has a
``__getattr__`` or ``__setattr__`` of its own: either would take every field read or write
of a put or get (a dozen on GMO and PMO) off the interpreter's specialized path. A name
that is no field is an AttributeError, as in pymqi."""

from __future__ import annotations

import pytest

from ferrymq.mq import constants as C
from ferrymq.pymqi import structs
from ferrymq.wire.mqmd import MQMD

_PLAIN = (structs.GMO, structs.PMO, structs.OD, structs.CNO, structs.SD, structs.SRO, structs.CMHO, structs.DMHO,
          structs.SMPO, structs.IMPO, structs.DMPO, structs.PD, structs.CD, structs.SCO, structs.STS)


@pytest.mark.parametrize("cls", _PLAIN, ids=lambda c: c.__name__)
def test_a_structure_has_plain_attribute_access(cls: type) -> None:
    assert getattr(cls, "__getattr__", None) is None
    assert cls.__setattr__ is object.__setattr__
    obj = cls()
    with pytest.raises(AttributeError):
        obj.NoSuchField  # noqa: B018
    obj.Version = 1
    assert obj.Version == 1


def test_a_got_md_reads_its_fields_and_refuses_other_names() -> None:
    raw = MQMD(version=2, msg_id=b"M" * 24, correl_id=b"C" * 24, priority=7, format="MQSTR").pack()
    md = structs.MD()
    md.received(raw, C.MQMD_VERSION_1)
    assert md.MsgId == b"M" * 24 and md.CorrelId == b"C" * 24
    assert md.Priority == 7 and md.Format == b"MQSTR   " and md.Version == C.MQMD_VERSION_1
    with pytest.raises(AttributeError):
        md.NoSuchField  # noqa: B018
    md.Priority = 3  # decodes the rest, then sets
    assert md.MsgId == b"M" * 24 and md.Priority == 3 and md.Version == C.MQMD_VERSION_1
    with pytest.raises(AttributeError):
        structs.MD().NoSuchField  # noqa: B018


def test_a_new_md_holds_only_what_every_get_reads_and_reads_the_rest_as_defaults() -> None:
    # A get's answer replaces the MD whole, so a new MD does not fill in its 39 fields
    md = structs.MD()
    assert len(vars(md)) <= 6
    full = {name: structs.MD._defaults[name] for name in structs.MD._defaults}
    assert md.get() == full  # every field reads as pymqi's default (b"" where pymqi has b"")
    assert md.ReplyToQ == b"" and md.Persistence == C.MQPER_PERSISTENCE_AS_Q_DEF
    md.Priority = 4  # the others stay defaults, and the packed forms agree
    assert md.wire() == structs.MD(Priority=4).wire() and md.pack() == structs.MD(Priority=4).pack()
    assert md == structs.MD(Priority=4)
    with pytest.raises(AttributeError):
        md.NoSuchField  # noqa: B018
