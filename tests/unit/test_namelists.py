"""NAMELIST objects through PCF and MQSC: define, inquire, change, copy, delete, persistence,
refusals."""

from __future__ import annotations

import pytest
from engine_helpers import Env

from ferrymq.admin.session import Session
from ferrymq.engine.api import FakeClock
from ferrymq.engine.commands.pcfmap import answer, run
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.messages import from_command
from ferrymq.pcf.model import Command, Filter
from ferrymq.store.file import FileJournal
from ferrymq.wire import pcf as P


def _pcf(qm: QueueManager, cmd: Command, encoding: int = P.NATIVE) -> list[P.PCFMessage]:
    raw = from_command(cmd).pack(encoding)
    return [P.PCFMessage.unpack(r, encoding) for r in answer(qm, raw, encoding)]


def ok(qm: QueueManager, cmd: Command, encoding: int = P.NATIVE) -> list[dict[int, object]]:
    out = _pcf(qm, cmd, encoding)
    assert [(m.header.comp_code, m.header.reason) for m in out] == [(0, 0)] * len(out), out
    return [{p.parameter: getattr(p, "value", getattr(p, "values", None)) for p in m.params} for m in out]


def fails(qm: QueueManager, cmd: Command, reason: int) -> None:
    out = _pcf(qm, cmd)
    assert [(m.header.comp_code, m.header.reason) for m in out] == [(C.MQCC_FAILED, reason)]


def create(name: str, names: tuple[str, ...], more: dict[int, int | str] | None = None) -> Command:
    params: dict[int, object] = {C.MQCA_NAMELIST_NAME: name, C.MQCA_NAMES: names}
    params.update(more or {})
    return Command(F.MQCMD_CREATE_NAMELIST, params)  # type: ignore[arg-type]


def inquire(name: str, *attrs: int) -> Command:
    return Command(F.MQCMD_INQUIRE_NAMELIST, {C.MQCA_NAMELIST_NAME: name,
                                              F.MQIACF_NAMELIST_ATTRS: attrs or (F.MQIACF_ALL,)})


def listed(row: dict[int, object]) -> list[str]:
    value = row[C.MQCA_NAMES]
    assert isinstance(value, tuple)
    return [str(v).rstrip() for v in value]


@pytest.mark.parametrize("encoding", [P.NATIVE, P.REVERSED])
def test_create_inquire_change_copy_delete(encoding: int) -> None:
    qm = Env().qm
    ok(qm, create("CLUSTERS", ("ONE", "TWO", "THREE"), {C.MQCA_NAMELIST_DESC: "the clusters",
                                                          C.MQIA_NAMELIST_TYPE: C.MQNT_CLUSTER}), encoding)
    [row] = ok(qm, inquire("CLUSTERS"), encoding)
    assert listed(row) == ["ONE", "TWO", "THREE"]
    assert row[C.MQIA_NAME_COUNT] == 3 and row[C.MQIA_NAMELIST_TYPE] == C.MQNT_CLUSTER
    assert str(row[C.MQCA_NAMELIST_DESC]).rstrip() == "the clusters"
    # CHANGE replaces the whole list; an attribute left out stays
    ok(qm, Command(F.MQCMD_CHANGE_NAMELIST, {C.MQCA_NAMELIST_NAME: "CLUSTERS", C.MQCA_NAMES: ("FOUR",)}), encoding)
    [row] = ok(qm, inquire("CLUSTERS", C.MQCA_NAMES, C.MQIA_NAME_COUNT), encoding)
    assert (listed(row), row[C.MQIA_NAME_COUNT]) == (["FOUR"], 1)
    assert C.MQCA_NAMELIST_DESC not in row  # only what was asked for (and the name)
    # COPY takes every value from the source, the list included, but what it gives itself
    ok(qm, Command(F.MQCMD_COPY_NAMELIST, {F.MQCACF_FROM_NAMELIST_NAME: "CLUSTERS",
                                           F.MQCACF_TO_NAMELIST_NAME: "MORE"}), encoding)
    [row] = ok(qm, inquire("MORE"), encoding)
    assert listed(row) == ["FOUR"] and row[C.MQIA_NAMELIST_TYPE] == C.MQNT_CLUSTER
    rows = ok(qm, Command(F.MQCMD_INQUIRE_NAMELIST, {C.MQCA_NAMELIST_NAME: "*", C.MQIA_NAMELIST_TYPE: C.MQNT_CLUSTER}),
              encoding)
    assert sorted(str(r[C.MQCA_NAMELIST_NAME]).rstrip() for r in rows) == ["CLUSTERS", "MORE"]
    [names] = ok(qm, Command(F.MQCMD_INQUIRE_NAMELIST_NAMES, {C.MQCA_NAMELIST_NAME: "*"}), encoding)
    assert [str(n).rstrip() for n in names[F.MQCACF_NAMELIST_NAMES]] == [  # type: ignore[attr-defined]
        "CLUSTERS", "MORE", "SYSTEM.DEFAULT.NAMELIST"]
    ok(qm, Command(F.MQCMD_DELETE_NAMELIST, {C.MQCA_NAMELIST_NAME: "MORE"}), encoding)
    assert qm.state.namelists.find("MORE") is None


def test_an_empty_list_and_a_filter_on_the_names() -> None:
    qm = Env().qm
    ok(qm, create("EMPTY", ()))
    ok(qm, create("QUEUES", ("APP.IN", "APP.OUT"), {C.MQIA_NAMELIST_TYPE: C.MQNT_Q}))
    [row] = ok(qm, inquire("EMPTY", C.MQIA_NAME_COUNT, C.MQCA_NAMES))
    assert (row[C.MQIA_NAME_COUNT], listed(row)) == (0, [])
    rows = ok(qm, Command(F.MQCMD_INQUIRE_NAMELIST, {C.MQCA_NAMELIST_NAME: "*"},
                          [Filter(C.MQCA_NAMES, F.MQCFOP_CONTAINS_GEN, "APP.*")]))
    assert [str(r[C.MQCA_NAMELIST_NAME]).rstrip() for r in rows] == ["QUEUES"]


def test_refusals_change_nothing() -> None:
    qm = Env().qm
    ok(qm, create("NL", ("A",)))
    before = {n.name: (dict(n.attrs), n.names) for n in qm.state.namelists}
    fails(qm, create("NL", ("B",)), F.MQRCCF_OBJECT_ALREADY_EXISTS)
    fails(qm, create("BAD NAME", ("B",)), F.MQRCCF_OBJECT_NAME_ERROR)
    fails(qm, create("LONG", ("X" * 49,)), F.MQRCCF_ATTR_VALUE_ERROR)
    fails(qm, create("MANY", tuple(f"N{i}" for i in range(C.MQNC_MAX_NAMELIST_NAME_COUNT + 1))),
          F.MQRCCF_ATTR_VALUE_ERROR)
    fails(qm, create("TYPE", ("B",), {C.MQIA_NAMELIST_TYPE: 3}), F.MQRCCF_ATTR_VALUE_ERROR)
    fails(qm, create("READONLY", ("B",), {C.MQIA_NAME_COUNT: 1}), F.MQRCCF_CFIN_PARM_ID_ERROR)
    fails(qm, Command(F.MQCMD_CHANGE_NAMELIST, {C.MQCA_NAMELIST_NAME: "NOPE", C.MQCA_NAMES: ("B",)}),
          C.MQRC_UNKNOWN_OBJECT_NAME)
    fails(qm, Command(F.MQCMD_DELETE_NAMELIST, {C.MQCA_NAMELIST_NAME: "NOPE"}), C.MQRC_UNKNOWN_OBJECT_NAME)
    fails(qm, inquire("NOPE"), C.MQRC_UNKNOWN_OBJECT_NAME)
    fails(qm, Command(F.MQCMD_COPY_NAMELIST, {F.MQCACF_FROM_NAMELIST_NAME: "NOPE", F.MQCACF_TO_NAMELIST_NAME: "X"}),
          C.MQRC_UNKNOWN_OBJECT_NAME)
    assert {n.name: (dict(n.attrs), n.names) for n in qm.state.namelists} == before


def test_definitions_survive_a_restart(tmp_path: object) -> None:
    path = str(tmp_path)
    clock = FakeClock()
    journal = FileJournal(path)
    qm = QueueManager.start("QM1", journal, clock)
    ok(qm, create("KEEP", ("A", "B"), {C.MQCA_NAMELIST_DESC: "kept"}))
    ok(qm, create("GONE", ("C",)))
    ok(qm, Command(F.MQCMD_CHANGE_NAMELIST, {C.MQCA_NAMELIST_NAME: "KEEP", C.MQCA_NAMES: ("A", "B", "D")}))
    ok(qm, Command(F.MQCMD_DELETE_NAMELIST, {C.MQCA_NAMELIST_NAME: "GONE"}))
    qm.take_sync_lsn()
    journal.sync()
    journal.close()
    journal = FileJournal(path)
    again = QueueManager.start("QM1", journal, clock)
    kept = again.state.namelists.require("KEEP")
    assert (kept.names, kept.attrs["DESCR"]) == (("A", "B", "D"), "kept")
    assert again.state.namelists.find("GONE") is None
    assert again.state.namelists.find("SYSTEM.DEFAULT.NAMELIST") is not None
    journal.close()


def _mqsc(qm: QueueManager, text: str) -> list[str]:
    return Session(lambda cmd: run(qm, cmd)).execute(text).messages


def test_mqsc_define_display_alter_copy_delete() -> None:
    qm = Env().qm
    assert _mqsc(qm, "DEFINE NAMELIST(CL.LIST) NAMES(ONE, TWO , THREE) DESCR('my clusters') NLTYPE(CLUSTER)") == [
        "AMQ8552I: IBM MQ namelist created."]
    shown = " ".join(_mqsc(qm, "DISPLAY NAMELIST(CL.LIST) ALL"))
    for part in ("NAMELIST(CL.LIST)", "NAMES(ONE, TWO, THREE)", "DESCR(my clusters)", "NLTYPE(CLUSTER)", "NAMCOUNT(3)"):
        assert part in shown
    _mqsc(qm, "ALTER NAMELIST(CL.LIST) NAMES(FOUR)")
    assert qm.state.namelists.require("CL.LIST").names == ("FOUR",)
    _mqsc(qm, "DEFINE NL(COPY) LIKE(CL.LIST)")
    assert qm.state.namelists.require("COPY").names == ("FOUR",)
    shown = " ".join(_mqsc(qm, "DISPLAY NAMELIST(*) NLTYPE(CLUSTER)"))
    assert "NAMELIST(CL.LIST)" in shown and "NAMELIST(COPY)" in shown and "SYSTEM.DEFAULT.NAMELIST" not in shown
    _mqsc(qm, "DEFINE NAMELIST(EMPTY) NAMES()")
    assert qm.state.namelists.require("EMPTY").names == ()
    assert "NAMELIST(EMPTY)" not in " ".join(_mqsc(qm, "DISPLAY NAMELIST(*) WHERE(NAMCOUNT GT 0)"))
    assert _mqsc(qm, "DELETE NAMELIST(COPY)") == ["AMQ8553I: IBM MQ namelist deleted."]
    assert qm.state.namelists.find("COPY") is None


@pytest.mark.parametrize(("text", "says"), [
    ("DEFINE NAMELIST(CL.LIST) NAMES(X)", "AMQ8150E"),  # exists, no REPLACE
    ("DELETE NAMELIST(NOPE)", "AMQ8147E"),
    ("DISPLAY NAMELIST(*) NLTYPE(SOME)", "NLTYPE is ALL, NONE, QUEUE, CLUSTER or AUTHINFO"),
    ("DEFINE NAMELIST(X) NAMCOUNT(3)", "not a settable attribute"),
])
def test_mqsc_refusals_say_why(text: str, says: str) -> None:
    qm = Env().qm
    _mqsc(qm, "DEFINE NAMELIST(CL.LIST) NAMES(A)")
    assert says in " ".join(_mqsc(qm, text))
    assert qm.state.namelists.require("CL.LIST").names == ("A",)
