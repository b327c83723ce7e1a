"""The object authority manager (engine.authority) in the engine: profiles and their
specificity, groups, administrators, the checks of MQCONN, MQOPEN (each option), MQPUT1,
MQSUB and of commands, and the records surviving a restart."""

from __future__ import annotations

import pytest

from ferrymq.engine.api import FakeClock, ObjectDescriptor, PutOptions, SubDescriptor
from ferrymq.engine.authority import GROUP, PRINCIPAL, Authorities
from ferrymq.engine.commands.executor import execute
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Response
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

GROUPS = {"alice": frozenset({"apps"}), "root": frozenset({"mqm"})}


def secured(journal: MemoryJournal | None = None) -> QueueManager:
    qm = QueueManager.start("QM1", journal or MemoryJournal(), FakeClock())
    oam = qm.state.authority
    oam.enabled = True
    oam.groups_of = lambda user: GROUPS.get(user, frozenset())
    oam.persist()
    qm.objects.define("QLOCAL", "APP.Q", {})
    qm.objects.define("QLOCAL", "APP.OTHER", {})
    qm.objects.define("QLOCAL", "PAY.Q", {})
    return qm


def grant(qm: QueueManager, profile: str, objtype: int, entity: tuple[str, str], *auths: int) -> None:
    qm.state.authority.set_record(profile, objtype, [entity], auths)


def refused(call: object) -> int:
    with pytest.raises(MQError) as info:
        call()  # type: ignore[operator]
    return info.value.reason


def test_the_most_specific_profile_decides() -> None:
    oam = Authorities()
    oam.enabled = True
    oam.set_record("APP.**", C.MQOT_Q, [(PRINCIPAL, "bob")], [F.MQAUTH_INPUT, F.MQAUTH_OUTPUT])
    oam.set_record("APP.*", C.MQOT_Q, [(PRINCIPAL, "bob")], [F.MQAUTH_BROWSE])
    oam.set_record("APP.SECRET", C.MQOT_Q, [(PRINCIPAL, "bob")], [F.MQAUTH_INQUIRE])
    assert oam.granted("bob", C.MQOT_Q, "APP.A.B") == {F.MQAUTH_INPUT, F.MQAUTH_OUTPUT}  # only ** reaches two levels
    assert oam.granted("bob", C.MQOT_Q, "APP.A") == {F.MQAUTH_BROWSE}  # APP.* has more literal characters
    assert oam.granted("bob", C.MQOT_Q, "APP.SECRET") == {F.MQAUTH_INQUIRE}  # an exact name wins
    assert oam.granted("bob", C.MQOT_Q, "PAY.Q") == frozenset()
    assert oam.granted("bob", C.MQOT_TOPIC, "APP.A") == frozenset()  # another object type
    oam.set_record("AP?.Q", C.MQOT_Q, [(PRINCIPAL, "eve")], [F.MQAUTH_ALL_MQI])
    assert F.MQAUTH_SET_ALL_CONTEXT in oam.granted("eve", C.MQOT_Q, "APX.Q")
    assert oam.granted("eve", C.MQOT_Q, "APXX.Q") == frozenset()


def test_groups_and_principals_add_up() -> None:
    qm = secured()
    oam = qm.state.authority
    grant(qm, "APP.*", C.MQOT_Q, (GROUP, "apps"), F.MQAUTH_INPUT)
    grant(qm, "APP.Q", C.MQOT_Q, (PRINCIPAL, "alice"), F.MQAUTH_OUTPUT)
    assert oam.granted("alice", C.MQOT_Q, "APP.Q") == {F.MQAUTH_INPUT, F.MQAUTH_OUTPUT}
    assert oam.granted("alice", C.MQOT_Q, "APP.OTHER") == {F.MQAUTH_INPUT}
    assert oam.granted("root", C.MQOT_Q, "SYSTEM.DEAD.LETTER.QUEUE") >= {F.MQAUTH_DELETE, F.MQAUTH_SET_ALL_CONTEXT}


def test_connect_and_each_open_option_need_their_authority() -> None:
    qm = secured()
    assert refused(lambda: qm.connect(user="alice")) == C.MQRC_NOT_AUTHORIZED
    grant(qm, "QM1", C.MQOT_Q_MGR, (PRINCIPAL, "alice"), F.MQAUTH_CONNECT)
    hconn = qm.connect(user="alice")
    od = ObjectDescriptor(object_name="APP.Q")
    options = [(C.MQOO_INPUT_AS_Q_DEF, F.MQAUTH_INPUT), (C.MQOO_OUTPUT, F.MQAUTH_OUTPUT),
               (C.MQOO_BROWSE, F.MQAUTH_BROWSE), (C.MQOO_INQUIRE, F.MQAUTH_INQUIRE), (C.MQOO_SET, F.MQAUTH_SET),
               (C.MQOO_OUTPUT | C.MQOO_SET_ALL_CONTEXT, F.MQAUTH_SET_ALL_CONTEXT),
               (C.MQOO_OUTPUT | C.MQOO_SET_IDENTITY_CONTEXT, F.MQAUTH_SET_IDENTITY_CONTEXT),
               (C.MQOO_OUTPUT | C.MQOO_PASS_ALL_CONTEXT, F.MQAUTH_PASS_ALL_CONTEXT),
               (C.MQOO_OUTPUT | C.MQOO_PASS_IDENTITY_CONTEXT, F.MQAUTH_PASS_IDENTITY_CONTEXT)]
    for oo, auth in options:
        handles = len(qm.handles)
        assert refused(lambda oo=oo: qm.open(hconn, od, oo)) == C.MQRC_NOT_AUTHORIZED, oo
        assert len(qm.handles) == handles  # a refused open holds nothing
        grant(qm, "APP.Q", C.MQOT_Q, (PRINCIPAL, "alice"), auth)
        qm.close(hconn, qm.open(hconn, od, oo).hobj)
    assert refused(lambda: qm.open(hconn, ObjectDescriptor(object_name="NOT.DEFINED"), C.MQOO_OUTPUT)) == \
        C.MQRC_NOT_AUTHORIZED  # an unauthorised user learns nothing of what exists


def test_put1_needs_the_context_authority_its_options_imply() -> None:
    qm = secured()
    grant(qm, "QM1", C.MQOT_Q_MGR, (PRINCIPAL, "alice"), F.MQAUTH_CONNECT)
    grant(qm, "APP.Q", C.MQOT_Q, (PRINCIPAL, "alice"), F.MQAUTH_OUTPUT)
    hconn = qm.connect(user="alice")
    od = ObjectDescriptor(object_name="APP.Q")
    forged = MQMD(user_identifier="root")
    assert refused(lambda: qm.put1(hconn, od, forged, PutOptions(C.MQPMO_SET_IDENTITY_CONTEXT), b"x")) == \
        C.MQRC_NOT_AUTHORIZED
    assert refused(lambda: qm.put1(hconn, od, forged, PutOptions(C.MQPMO_SET_ALL_CONTEXT), b"x")) == \
        C.MQRC_NOT_AUTHORIZED
    assert qm.objects.require("APP.Q").messages.depth == 0
    qm.put1(hconn, od, forged, PutOptions(0), b"x")  # no context option: the queue manager's own context
    grant(qm, "APP.Q", C.MQOT_Q, (PRINCIPAL, "alice"), F.MQAUTH_SET_IDENTITY_CONTEXT)
    qm.put1(hconn, od, forged, PutOptions(C.MQPMO_SET_IDENTITY_CONTEXT), b"y")
    assert qm.objects.require("APP.Q").messages.depth == 2


def test_subscribe_needs_sub_on_the_topic_tree() -> None:
    qm = secured()
    grant(qm, "QM1", C.MQOT_Q_MGR, (PRINCIPAL, "alice"), F.MQAUTH_CONNECT)
    hconn = qm.connect(user="alice")
    sd = SubDescriptor(C.MQSO_CREATE | C.MQSO_MANAGED | C.MQSO_NON_DURABLE, object_string="prices/fruit")
    assert refused(lambda: qm.subscribe(hconn, sd)) == C.MQRC_NOT_AUTHORIZED
    grant(qm, "SYSTEM.BASE.TOPIC", C.MQOT_TOPIC, (GROUP, "apps"), F.MQAUTH_SUBSCRIBE)
    qm.subscribe(hconn, sd)
    od = ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string="prices/fruit")
    assert refused(lambda: qm.open(hconn, od, C.MQOO_OUTPUT)) == C.MQRC_NOT_AUTHORIZED  # publishing needs +pub


def test_commands_need_their_authority_and_system_objects_are_administrators() -> None:
    qm = secured()
    delete_dlq = Command(F.MQCMD_DELETE_Q, {C.MQCA_Q_NAME: "SYSTEM.DEAD.LETTER.QUEUE", C.MQIA_Q_TYPE: C.MQQT_LOCAL})
    alter_qmgr = Command(F.MQCMD_CHANGE_Q_MGR, {C.MQCA_DEAD_LETTER_Q_NAME: "APP.Q"})
    for cmd in (delete_dlq, alter_qmgr):
        assert refused(lambda cmd=cmd: execute(qm, cmd, "alice")) == C.MQRC_NOT_AUTHORIZED
    assert qm.objects.find("SYSTEM.DEAD.LETTER.QUEUE") is not None
    assert qm.objects.qmgr_status("DEADQ") == "SYSTEM.DEAD.LETTER.QUEUE"
    display = Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "APP.Q"})
    assert refused(lambda: execute(qm, display, "alice")) == C.MQRC_NOT_AUTHORIZED
    grant(qm, "APP.*", C.MQOT_Q, (GROUP, "apps"), F.MQAUTH_DISPLAY)
    assert execute(qm, display, "alice")
    execute(qm, alter_qmgr, "root")  # an administrator (group mqm)
    set_rec = Command(F.MQCMD_SET_AUTH_REC, {F.MQCACF_AUTH_PROFILE_NAME: "PAY.Q", F.MQIACF_OBJECT_TYPE: C.MQOT_Q,
                                             F.MQCACF_PRINCIPAL_ENTITY_NAMES: ("alice",),
                                             F.MQIACF_AUTH_ADD_AUTHS: (F.MQAUTH_ALL,)})
    assert refused(lambda: execute(qm, set_rec, "alice")) == C.MQRC_NOT_AUTHORIZED  # no granting oneself
    execute(qm, set_rec)  # the queue manager's own caller (an embedded program) is not checked


def test_records_and_authinfo_survive_a_restart() -> None:
    journal = MemoryJournal()
    qm = secured(journal)
    grant(qm, "APP.**", C.MQOT_Q, (PRINCIPAL, "alice"), F.MQAUTH_INPUT, F.MQAUTH_OUTPUT)
    qm.state.authority.alter_authinfo(chckclnt=F.MQCHK_OPTIONAL, faildelay=3)
    qm.take_sync_lsn()
    journal.sync()
    again = QueueManager.start("QM1", journal.crash(), FakeClock())
    oam = again.state.authority
    assert oam.enabled
    assert oam.granted("alice", C.MQOT_Q, "APP.X.Y") == {F.MQAUTH_INPUT, F.MQAUTH_OUTPUT}
    assert (oam.authinfo.chckclnt, oam.authinfo.faildelay) == (F.MQCHK_OPTIONAL, 3)


def test_refusals_change_nothing() -> None:
    oam = Authorities()
    with pytest.raises(MQError) as info:
        oam.set_record("APP.Q", C.MQOT_Q, [(PRINCIPAL, "bob")], [999])
    assert info.value.reason == F.MQRCCF_AUTH_VALUE_ERROR
    with pytest.raises(MQError):
        oam.set_record("A***", C.MQOT_Q, [(PRINCIPAL, "bob")], [F.MQAUTH_INPUT])
    with pytest.raises(MQError):
        oam.set_record("APP.Q", C.MQOT_Q, [], [F.MQAUTH_INPUT])
    with pytest.raises(MQError):
        oam.alter_authinfo(chckclnt=77)
    assert not oam.profiles and oam.authinfo.chckclnt == F.MQCHK_REQUIRED_ADMIN
    oam.set_record("APP.Q", C.MQOT_Q, [(PRINCIPAL, "bob")], [F.MQAUTH_INPUT])
    with pytest.raises(MQError):
        oam.delete_record("APP.Q", C.MQOT_Q, [(PRINCIPAL, "carol")])
    oam.delete_record("APP.Q", C.MQOT_Q, [(PRINCIPAL, "bob")])
    assert not oam.profiles


def test_a_generic_display_shows_only_what_the_user_may_display() -> None:
    qm = secured()
    grant(qm, "APP.*", C.MQOT_Q, (GROUP, "apps"), F.MQAUTH_DISPLAY)
    shown = execute(qm, Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "*"}), "alice")
    assert sorted(str(r.params[C.MQCA_Q_NAME]).strip() for r in shown) == ["APP.OTHER", "APP.Q"]
    names = execute(qm, Command(F.MQCMD_INQUIRE_Q_NAMES, {C.MQCA_Q_NAME: "*"}), "alice")[0].params
    assert sorted(str(n).strip() for n in names[F.MQCACF_Q_NAMES]) == ["APP.OTHER", "APP.Q"]  # type: ignore[union-attr]
    assert len(names[F.MQIACF_Q_TYPES]) == 2  # type: ignore[arg-type]
    assert execute(qm, Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "SYSTEM.*"}), "bob") == []
    assert refused(lambda: execute(qm, Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "PAY.Q"}), "alice")) == \
        C.MQRC_NOT_AUTHORIZED


def test_the_queue_managers_own_records_follow_a_new_name() -> None:
    journal = MemoryJournal()
    qm = secured(journal)
    grant(qm, "QM1", C.MQOT_Q_MGR, (PRINCIPAL, "bob"), F.MQAUTH_CONNECT)
    grant(qm, "QM*", C.MQOT_Q_MGR, (GROUP, "apps"), F.MQAUTH_INQUIRE)
    qm.take_sync_lsn()
    journal.sync()
    journal = journal.crash()
    renamed = QueueManager.start("QM9", journal, FakeClock())
    oam = renamed.state.authority
    assert F.MQAUTH_CONNECT not in oam.granted("bob", C.MQOT_Q_MGR, "QM9")  # the profile still names QM1
    oam.set_record("QM9", C.MQOT_Q_MGR, [(PRINCIPAL, "bob")], [F.MQAUTH_INQUIRE])
    assert oam.rename_qmgr("QM1", "QM9") == 1 and oam.rename_qmgr("QM1", "QM9") == 0
    renamed.take_sync_lsn()
    journal.sync()
    again = QueueManager.start("QM9", journal.crash(), FakeClock()).state.authority
    again.groups_of = lambda user: GROUPS.get(user, frozenset())
    assert again.granted("bob", C.MQOT_Q_MGR, "QM9") == {F.MQAUTH_CONNECT, F.MQAUTH_INQUIRE}
    assert again.granted("alice", C.MQOT_Q_MGR, "QM9") == {F.MQAUTH_INQUIRE}  # generic: untouched
    assert (C.MQOT_Q_MGR, "QM1") not in again.profiles


def test_a_qmgr_record_without_a_profile_is_the_queue_managers_own() -> None:
    qm = secured()

    def run(cmd: Command) -> list[Response]:
        return execute(qm, cmd)

    set_rec = Command(F.MQCMD_SET_AUTH_REC, {F.MQIACF_OBJECT_TYPE: C.MQOT_Q_MGR,
                                             F.MQCACF_PRINCIPAL_ENTITY_NAMES: ("bob",),
                                             F.MQIACF_AUTH_ADD_AUTHS: (F.MQAUTH_CONNECT,)})
    run(set_rec)
    assert qm.state.authority.granted("bob", C.MQOT_Q_MGR, "QM1") == {F.MQAUTH_CONNECT}
    no_profile = Command(F.MQCMD_SET_AUTH_REC, {**set_rec.params, F.MQIACF_OBJECT_TYPE: C.MQOT_Q})
    assert refused(lambda: run(no_profile)) == F.MQRCCF_PARM_MISSING  # any other type still needs its profile
    gone = Command(F.MQCMD_DELETE_AUTH_REC, {F.MQIACF_OBJECT_TYPE: C.MQOT_Q_MGR,
                                             F.MQCACF_PRINCIPAL_ENTITY_NAMES: ("bob",)})
    run(gone)
    assert not qm.state.authority.granted("bob", C.MQOT_Q_MGR, "QM1")
