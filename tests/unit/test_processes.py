"""PROCESS objects through MQSC and PCF: define, display, alter, copy, delete, persistence
across a restart, refusals; the queue attributes that name one (TRIGGER, INITQ, PROCESS)."""

from __future__ import annotations

from pathlib import Path

from engine_helpers import Env

from ferrymq.admin.session import Session
from ferrymq.engine.api import FakeClock
from ferrymq.engine.commands.pcfmap import run
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command
from ferrymq.store.file import FileJournal


def _mqsc(qm: QueueManager, text: str) -> list[str]:
    return Session(lambda cmd: run(qm, cmd)).execute(text).messages


def test_mqsc_define_display_alter_copy_delete() -> None:
    qm = Env().qm
    assert _mqsc(qm, "DEFINE PROCESS(APP.PROC) APPLICID('/opt/app/bin/serve -v') APPLTYPE(UNIX) "
                     "USERDATA('u d') ENVRDATA('&') DESCR('the server')") == ["AMQ8010I: IBM MQ process created."]
    shown = " ".join(_mqsc(qm, "DISPLAY PROCESS(APP.PROC) ALL"))
    for part in ("PROCESS(APP.PROC)", "APPLICID(/opt/app/bin/serve -v)", "APPLTYPE(UNIX)", "USERDATA(u d)",
                 "ENVRDATA(&)", "DESCR(the server)"):
        assert part in shown, shown
    assert _mqsc(qm, "ALTER PROCESS(APP.PROC) USERDATA(other)") == ["AMQ8011I: IBM MQ process changed."]
    _mqsc(qm, "DEFINE PROCESS(APP.COPY) LIKE(APP.PROC)")
    assert qm.state.processes.require("APP.COPY").attrs["USERDATA"] == "OTHER"  # unquoted: upper-cased
    assert qm.state.processes.require("APP.COPY").attrs["APPLICID"] == "/opt/app/bin/serve -v"
    shown = " ".join(_mqsc(qm, "DISPLAY PROCESS(APP.*)"))
    assert "PROCESS(APP.PROC)" in shown and "PROCESS(APP.COPY)" in shown and "SYSTEM.DEFAULT.PROCESS" not in shown
    assert _mqsc(qm, "DELETE PROCESS(APP.COPY)") == ["AMQ8012I: IBM MQ process deleted."]
    assert qm.state.processes.find("APP.COPY") is None
    assert "AMQ8147E" in " ".join(_mqsc(qm, "DELETE PROCESS(APP.COPY)"))
    assert "AMQ8150E" in " ".join(_mqsc(qm, "DEFINE PROCESS(APP.PROC)"))
    _mqsc(qm, "DEFINE PROCESS(APP.PROC) APPLTYPE(65536) REPLACE")
    assert qm.state.processes.require("APP.PROC").attrs["APPLTYPE"] == 65536


def test_pcf_create_inquire_and_refusals() -> None:
    qm = Env().qm
    [resp] = run(qm, Command(F.MQCMD_CREATE_PROCESS, {C.MQCA_PROCESS_NAME: "P1", C.MQCA_APPL_ID: "prog",
                                                      C.MQIA_APPL_TYPE: C.MQAT_UNIX}))
    assert resp.reason == 0
    [row] = run(qm, Command(F.MQCMD_INQUIRE_PROCESS, {C.MQCA_PROCESS_NAME: "P1", F.MQIACF_PROCESS_ATTRS: (F.MQIACF_ALL,)}))
    assert row.params[C.MQCA_APPL_ID] == "prog" and row.params[C.MQIA_APPL_TYPE] == C.MQAT_UNIX
    [bad] = run(qm, Command(F.MQCMD_CREATE_PROCESS, {C.MQCA_PROCESS_NAME: "P2", C.MQIA_APPL_TYPE: 12345}))
    assert (bad.comp, bad.reason) == (C.MQCC_FAILED, F.MQRCCF_ATTR_VALUE_ERROR)
    assert qm.state.processes.find("P2") is None
    [names] = run(qm, Command(F.MQCMD_INQUIRE_PROCESS_NAMES, {C.MQCA_PROCESS_NAME: "*"}))
    assert names.params[F.MQCACF_PROCESS_NAMES] == ("P1", "SYSTEM.DEFAULT.PROCESS")


def test_processes_and_trigger_attributes_survive_a_restart(tmp_path: Path) -> None:
    clock = FakeClock()
    qm = QueueManager.start("QM1", FileJournal(tmp_path), clock)
    _mqsc(qm, "DEFINE PROCESS(APP.PROC) APPLICID('run me')")
    _mqsc(qm, "DEFINE QLOCAL(APP.Q) TRIGGER TRIGTYPE(DEPTH) TRIGDPTH(7) TRIGMPRI(3) TRIGDATA('td') "
              "INITQ(SYSTEM.DEFAULT.INITIATION.QUEUE) PROCESS(APP.PROC)")
    qm.take_sync_lsn()
    qm.journal.sync()
    qm.journal.close()
    again = QueueManager.start("QM1", FileJournal(tmp_path), clock)
    assert again.state.processes.require("APP.PROC").attrs["APPLICID"] == "run me"
    attrs = again.objects.require("APP.Q").attrs
    assert (attrs["TRIGGER"], attrs["TRIGTYPE"], attrs["TRIGDPTH"], attrs["TRIGMPRI"]) == (1, C.MQTT_DEPTH, 7, 3)
    assert (attrs["TRIGDATA"], attrs["PROCESS"]) == ("td", "APP.PROC")
    shown = " ".join(_mqsc(again, "DISPLAY QLOCAL(APP.Q) TRIGGER TRIGTYPE INITQ"))
    assert "TRIGGER(TRIGGER)" in shown and "TRIGTYPE(DEPTH)" in shown and "INITQ(SYSTEM.DEFAULT.INITIATION.QUEUE)" in shown
    again.journal.close()
