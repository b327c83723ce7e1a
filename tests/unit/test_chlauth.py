"""Channel authentication records (engine.chlauth) as pure functions: IBM's address
patterns, SSLPEER matching, which record applies (precedence), SET CHLAUTH's actions, the
default records, and the records surviving a restart inside the security journal record."""

from __future__ import annotations

import pytest

from ferrymq.admin.mqsc import parse, to_command
from ferrymq.engine import chlauth as X
from ferrymq.engine.api import FakeClock
from ferrymq.engine.authority import Authorities
from ferrymq.engine.commands.executor import execute
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.server import chlgate
from ferrymq.store.memory import MemoryJournal

ADMINS = {"mqadm", "root"}


def is_admin(user: str) -> bool:
    return user in ADMINS


@pytest.mark.parametrize(("pattern", "address", "matches"), [
    ("*", "203.0.113.9", True),
    ("*", "not-an-address", True),
    ("9.20.1-30.*", "9.20.1.1", True),
    ("9.20.1-30.*", "9.20.30.255", True),
    ("9.20.1-30.*", "9.20.31.1", False),
    ("9.20.1-30.*", "9.20.0.1", False),
    ("9.20.1-30.*", "9.21.4.4", False),
    ("192.0.*", "192.0.2.1", True),  # a trailing * covers every part after it
    ("192.0.*", "192.1.2.1", False),
    ("192.0.2.*", "192.0.2.77", True),
    ("192.0.*.7", "192.0.200.7", True),  # * for one part in the middle
    ("192.0.*.7", "192.0.200.8", False),
    ("127.0.0.1", "127.0.0.1", True),
    ("127.0.0.1", "127.0.0.2", False),
    ("127.0.0.1", "::ffff:127.0.0.1", True),  # an IPv4-mapped IPv6 peer is its IPv4 address
    ("10.1-5.*", "10.3.0.0", True),
    ("::1", "::1", True),
    ("2001:db8:*", "2001:db8::5", True),
    ("2001:db8:*", "2001:db9::5", False),
    ("fe80:0-ff:*", "fe80:a0::1", True),
    ("127.0.0.1", "::1", False),  # an IPv4 pattern never matches an IPv6 address
    ("10.*", "myhost.example.org", False),  # host names are not looked up
])
def test_address_patterns(pattern: str, address: str, matches: bool) -> None:
    assert X.address_matches(pattern, address) is matches


@pytest.mark.parametrize(("pattern", "reason"), [
    ("1.2.3", F.MQRCCF_IPADDR_ERROR),  # four parts, or a trailing *
    ("1.2..3", F.MQRCCF_IPADDR_ERROR),
    ("1.2.3.x", F.MQRCCF_IPADDR_ERROR),
    ("1.2.3.4.5", F.MQRCCF_IPADDR_ERROR),
    ("1.2.30-10.*", F.MQRCCF_IPADDR_RANGE_ERROR),
    ("1.2.3.256", F.MQRCCF_IPADDR_RANGE_ERROR),
    ("", F.MQRCCF_IPADDR_ERROR),
])
def test_bad_address_patterns_are_refused_with_ibms_reason(pattern: str, reason: int) -> None:
    with pytest.raises(MQError) as info:
        X.check_address(pattern)
    assert info.value.reason == reason


def test_address_specificity_prefers_exact_parts_then_narrow_ranges() -> None:
    order = ["*", "9.*", "9.20.*", "9.20.1-30.*", "9.20.1-5.*", "9.20.4.*", "9.20.4.5"]
    ranks = [X.address_specificity(p) for p in order]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)


@pytest.mark.parametrize(("pattern", "dn", "matches"), [
    ("CN=alice", "CN=alice,OU=apps,O=Example", True),
    ("CN=alice,O=Example", "CN=alice, OU=apps, O=Example", True),
    ("cn=ALICE", "CN=alice,O=Example", True),  # without case
    ("CN=al*", "CN=alice,O=Example", True),
    ("CN=bob", "CN=alice,O=Example", False),
    ("CN=alice,O=Other", "CN=alice,O=Example", False),
    ("OU=apps,OU=eu", "CN=x,OU=apps,OU=eu,O=Example", True),  # each OU its own
    ("OU=apps,OU=us", "CN=x,OU=apps,OU=eu,O=Example", False),
    ("CN=alice", "", False),  # no certificate, no match
    ('CN="Smith, J"', 'CN="Smith, J",O=Example', True),  # a quoted comma stays in the value
])
def test_sslpeer_patterns(pattern: str, dn: str, matches: bool) -> None:
    assert X.sslpeer_matches(pattern, dn) is matches


def test_channel_profiles_are_generic_with_star_across_dots() -> None:
    assert X.name_matches("SYSTEM.*", "SYSTEM.DEF.SVRCONN")
    assert X.name_matches("*.SVRCONN", "APP.SVRCONN")
    assert not X.name_matches("APP.*", "APPX.SVRCONN")
    assert X.specificity("SYSTEM.ADMIN.SVRCONN") > X.specificity("SYSTEM.ADMIN.*") > X.specificity("SYSTEM.*") \
        > X.specificity("*")


DEFAULTS = X.with_defaults("2026-11-27 03.00.00")


def svrconn(channel: str, user: str = "app", address: str = "127.0.0.1", dn: str = "") -> X.Partner:
    return X.Partner(channel, F.MQCHT_SVRCONN, address, user, peer_dn=dn)


@pytest.mark.parametrize(("channel", "user", "refused", "why"), [
    ("SYSTEM.DEF.SVRCONN", "app", F.MQRQ_CHANNEL_BLOCKED_NOACCESS, "SYSTEM.*"),  # every SYSTEM.* channel
    ("SYSTEM.ADMIN.SVRCONN", "app", 0, "SYSTEM.ADMIN.SVRCONN"),  # the more specific profile lets it in
    ("SYSTEM.ADMIN.SVRCONN", "mqadm", F.MQRQ_CHANNEL_BLOCKED_USERID, "*"),  # but no administrator
    ("APP.SVRCONN", "app", 0, None),  # no mapping record: the channel runs as it would
    ("APP.SVRCONN", "root", F.MQRQ_CHANNEL_BLOCKED_USERID, "*"),
])
def test_ibms_default_records(channel: str, user: str, refused: int, why: str | None) -> None:
    d = X.resolve(DEFAULTS, svrconn(channel, user), is_admin)
    assert d.refused == refused
    assert (d.record.profile if d.record is not None else None) == why


def rec(profile: str, kind: int, **values: object) -> X.Record:
    return X.check(X.Record(profile, kind, **values), F.MQACT_ADD)  # type: ignore[arg-type]


def test_the_most_specific_channel_profile_wins_before_the_type() -> None:
    records = [rec("APP.*", X.USERMAP, clntuser="alice", usersrc=C.MQUSRC_MAP, mcauser="u1"),
               rec("APP.SVRCONN", X.ADDRESSMAP, address="*", usersrc=C.MQUSRC_MAP, mcauser="u2")]
    d = X.resolve(records, svrconn("APP.SVRCONN", "alice"), is_admin)
    assert d.user == "u2"  # the exact profile's ADDRESSMAP beats the generic profile's USERMAP


def test_within_a_profile_identity_beats_address() -> None:
    records = [rec("APP.SVRCONN", X.ADDRESSMAP, address="127.0.0.1", usersrc=C.MQUSRC_MAP, mcauser="byaddr"),
               rec("APP.SVRCONN", X.USERMAP, clntuser="alice", usersrc=C.MQUSRC_MAP, mcauser="byuser"),
               rec("APP.SVRCONN", X.SSLPEERMAP, sslpeer="CN=alice", usersrc=C.MQUSRC_MAP, mcauser="bydn")]
    assert X.resolve(records, svrconn("APP.SVRCONN", "alice", dn="CN=alice,O=Ex"), is_admin).user == "bydn"
    assert X.resolve(records, svrconn("APP.SVRCONN", "alice"), is_admin).user == "byuser"
    assert X.resolve(records, svrconn("APP.SVRCONN", "bob"), is_admin).user == "byaddr"
    assert X.resolve(records, svrconn("APP.SVRCONN", "bob", address="10.0.0.1"), is_admin).record is None


def test_the_more_specific_value_then_address_decides() -> None:
    records = [rec("C", X.USERMAP, clntuser="a*", usersrc=C.MQUSRC_MAP, mcauser="generic"),
               rec("C", X.USERMAP, clntuser="alice", usersrc=C.MQUSRC_MAP, mcauser="exact"),
               rec("C", X.ADDRESSMAP, address="10.*", usersrc=C.MQUSRC_MAP, mcauser="wide"),
               rec("C", X.ADDRESSMAP, address="10.1.2.*", usersrc=C.MQUSRC_MAP, mcauser="narrow")]
    assert X.resolve(records, svrconn("C", "alice"), is_admin).user == "exact"
    assert X.resolve(records, svrconn("C", "anna"), is_admin).user == "generic"
    assert X.resolve(records, svrconn("C", "zed", address="10.1.2.3"), is_admin).user == "narrow"
    assert X.resolve(records, svrconn("C", "zed", address="10.9.2.3"), is_admin).user == "wide"
    # A USERMAP that also names an ADDRESS applies only from there.
    scoped = [rec("C", X.USERMAP, clntuser="alice", address="10.*", usersrc=C.MQUSRC_NOACCESS)]
    assert X.resolve(scoped, svrconn("C", "alice", address="10.0.0.1"), is_admin).refused
    assert not X.resolve(scoped, svrconn("C", "alice", address="11.0.0.1"), is_admin).refused


def test_blockaddr_comes_first_and_blockuser_last() -> None:
    records = [rec("*", X.BLOCKADDR, addrlist=("192.0.2.*",)),
               rec("C", X.ADDRESSMAP, address="*", usersrc=C.MQUSRC_MAP, mcauser="root"),
               rec("*", X.BLOCKUSER, userlist=("*MQADMIN",))]
    assert X.resolve(records, svrconn("C", address="192.0.2.9"), is_admin).refused == F.MQRQ_CHANNEL_BLOCKED_ADDRESS
    # BLOCKUSER sees the user the channel will run as: the mapped administrator is blocked.
    d = X.resolve(records, svrconn("C", "app", address="198.51.100.1"), is_admin)
    assert d.refused == F.MQRQ_CHANNEL_BLOCKED_USERID and d.user == "root"


def test_a_channel_blockuser_record_lifts_the_mqadmin_rule_for_that_channel() -> None:
    records = [*DEFAULTS, rec("ADMIN.SVRCONN", X.BLOCKUSER, userlist=("nobody",))]
    assert not X.resolve(records, svrconn("ADMIN.SVRCONN", "mqadm"), is_admin).refused
    assert X.resolve(records, svrconn("ADMIN.SVRCONN", "nobody"), is_admin).refused == F.MQRQ_CHANNEL_BLOCKED_USERID
    assert X.resolve(records, svrconn("OTHER.SVRCONN", "mqadm"), is_admin).refused


def test_blockuser_and_usermap_are_for_svrconn_channels_qmgrmap_for_the_others() -> None:
    records = [rec("*", X.BLOCKUSER, userlist=("*MQADMIN",)),
               rec("TO.QM1", X.QMGRMAP, qmname="QM2", usersrc=C.MQUSRC_MAP, mcauser="partner"),
               rec("TO.QM1", X.USERMAP, clntuser="root", usersrc=C.MQUSRC_NOACCESS)]
    rcvr = X.Partner("TO.QM1", F.MQCHT_RECEIVER, "127.0.0.1", clntuser="root", qmname="QM2")
    d = X.resolve(records, rcvr, is_admin, lambda mapped: mapped or "root")
    assert not d.refused and d.user == "partner"
    assert X.resolve(records, svrconn("TO.QM1", "root"), is_admin).refused == F.MQRQ_CHANNEL_BLOCKED_NOACCESS


def test_warn_yes_lets_the_channel_through_and_says_why() -> None:
    records = [rec("C", X.ADDRESSMAP, address="*", usersrc=C.MQUSRC_NOACCESS, warn=True)]
    d = X.resolve(records, svrconn("C"), is_admin)
    assert not d.refused and d.warnings[0][0] == F.MQRQ_CHANNEL_BLOCKED_NOACCESS


def test_the_chckclnt_of_the_matching_record_is_reported() -> None:
    records = [rec("C", X.ADDRESSMAP, address="*", usersrc=C.MQUSRC_CHANNEL, chckclnt=F.MQCHK_REQUIRED_ADMIN)]
    assert X.resolve(records, svrconn("C"), is_admin).chckclnt == F.MQCHK_REQUIRED_ADMIN


@pytest.mark.parametrize(("record", "reason"), [
    (X.Record("APP", X.BLOCKADDR, addrlist=("1.2.3.4",)), F.MQRCCF_CHLAUTH_NAME_ERROR),  # only on '*'
    (X.Record("A" * 21, X.USERMAP, clntuser="a", usersrc=C.MQUSRC_CHANNEL), F.MQRCCF_CHLAUTH_NAME_ERROR),
    (X.Record("APP", 99), F.MQRCCF_CHLAUTH_TYPE_ERROR),
    (X.Record("APP", X.USERMAP, usersrc=C.MQUSRC_CHANNEL), F.MQRCCF_PARM_MISSING),  # no CLNTUSER
    (X.Record("APP", X.ADDRESSMAP, address="*"), F.MQRCCF_CHLAUTH_USERSRC_ERROR),  # MAP without MCAUSER
    (X.Record("APP", X.ADDRESSMAP, address="*", usersrc=C.MQUSRC_CHANNEL, mcauser="x"),
     F.MQRCCF_CHLAUTH_USERSRC_ERROR),
    (X.Record("APP", X.ADDRESSMAP, address="*", usersrc=C.MQUSRC_CHANNEL, warn=True), F.MQRCCF_CHLAUTH_WARN_ERROR),
    (X.Record("APP", X.QMGRMAP, qmname="Q", usersrc=C.MQUSRC_CHANNEL, chckclnt=F.MQCHK_REQUIRED),
     F.MQRCCF_CHLAUTH_CHKCLI_ERROR),
    (X.Record("APP", X.ADDRESSMAP, address="300.1.1.1", usersrc=C.MQUSRC_CHANNEL), F.MQRCCF_IPADDR_RANGE_ERROR),
    (X.Record("*", X.BLOCKUSER, userlist=tuple(f"u{i}" for i in range(101))), F.MQRCCF_PARM_VALUE_ERROR),
])
def test_set_refuses_what_ibm_refuses(record: X.Record, reason: int) -> None:
    table = X.ChannelAuthRecords()
    with pytest.raises(MQError) as info:
        table.set(record, F.MQACT_ADD)
    assert info.value.reason == reason and table.records == []


def test_actions_on_mapping_records() -> None:
    table = X.ChannelAuthRecords()
    one = X.Record("APP", X.USERMAP, clntuser="alice", usersrc=C.MQUSRC_MAP, mcauser="u1")
    table.set(one)
    with pytest.raises(MQError) as info:
        table.set(one)
    assert info.value.reason == F.MQRCCF_CHLAUTH_ALREADY_EXISTS
    table.set(X.Record("APP", X.USERMAP, clntuser="alice", usersrc=C.MQUSRC_MAP, mcauser="u2"), F.MQACT_REPLACE)
    table.set(X.Record("APP", X.USERMAP, clntuser="bob", usersrc=C.MQUSRC_NOACCESS), F.MQACT_REPLACE)  # adds
    assert [(r.clntuser, r.mcauser) for r in table.records] == [("alice", "u2"), ("bob", "")]
    table.set(X.Record("APP", X.USERMAP, clntuser="alice"), F.MQACT_REMOVE)
    assert [r.clntuser for r in table.records] == ["bob"]
    with pytest.raises(MQError) as info:
        table.set(X.Record("APP", X.USERMAP, clntuser="alice"), F.MQACT_REMOVE)
    assert info.value.reason == F.MQRCCF_CHLAUTH_NOT_FOUND
    table.set(X.Record("APP", X.USERMAP), F.MQACT_REMOVEALL)
    assert table.records == []


def test_actions_on_block_lists() -> None:
    table = X.ChannelAuthRecords()
    table.set(X.Record("*", X.BLOCKUSER, userlist=("a", "b")))
    table.set(X.Record("*", X.BLOCKUSER, userlist=("b", "c")), F.MQACT_ADD)  # adds to the list
    assert list(table.records[0].userlist) == ["a", "b", "c"]
    table.set(X.Record("*", X.BLOCKUSER, userlist=("a",)), F.MQACT_REMOVE)
    assert list(table.records[0].userlist) == ["b", "c"]
    table.set(X.Record("*", X.BLOCKUSER, userlist=("z",)), F.MQACT_REPLACE)
    assert list(table.records[0].userlist) == ["z"]
    table.set(X.Record("*", X.BLOCKUSER, userlist=("z",)), F.MQACT_REMOVE)  # the last one: no record left
    assert table.records == []


def test_display_match_generic_exact_and_all() -> None:
    table = X.ChannelAuthRecords(DEFAULTS)
    assert [r.profile for r in table.select("SYSTEM.*")] == ["SYSTEM.*", "SYSTEM.ADMIN.SVRCONN"]
    assert [r.profile for r in table.select("SYSTEM.*", match=F.MQMATCH_EXACT)] == ["SYSTEM.*"]
    assert [r.profile for r in table.select("SYSTEM.DEF.SVRCONN", match=F.MQMATCH_ALL)] == ["*", "SYSTEM.*"]
    assert [r.profile for r in table.select("*", F.MQCAUT_BLOCKUSER)] == ["*"]


def test_records_survive_a_restart_and_old_security_records_have_none() -> None:
    oam = Authorities()
    oam.chlauth = X.ChannelAuthRecords(DEFAULTS)
    copy = Authorities()
    copy.load(oam.encode())
    assert copy.chlauth.records == DEFAULTS
    old = oam.encode().replace(b', "chlauth": ', b', "ignored": ')
    copy.load(old)
    assert copy.chlauth.records == []


def test_mqsc_set_and_display_chlauth_through_the_command_server() -> None:
    qm = QueueManager.start("QM1", MemoryJournal(), FakeClock())

    def run(text: str) -> list[dict[int, object]]:
        return [dict(r.params) for r in execute(qm, to_command(parse(text)))]

    run("SET CHLAUTH('APP.*') TYPE(BLOCKUSER) USERLIST('eve', 'mallory') DESCR('no thanks')")
    run("SET CHLAUTH('APP.SVRCONN') TYPE(USERMAP) CLNTUSER('alice') USERSRC(MAP) MCAUSER('app')")
    shown = run("DISPLAY CHLAUTH('APP.*')")
    assert [(p[F.MQCACH_CHANNEL_NAME], p[F.MQIACF_CHLAUTH_TYPE]) for p in shown] == [
        ("APP.*", X.BLOCKUSER), ("APP.SVRCONN", X.USERMAP)]
    assert shown[0][F.MQCACH_MCA_USER_ID_LIST] == ("eve", "mallory")
    check = run("DISPLAY CHLAUTH('APP.SVRCONN') MATCH(RUNCHECK) ADDRESS('127.0.0.1') CLNTUSER('alice')")
    assert [p[F.MQCACH_MCA_USER_ID] for p in check] == ["app"]
    check = run("DISPLAY CHLAUTH('APP.SVRCONN') MATCH(RUNCHECK) ADDRESS('127.0.0.1') CLNTUSER('eve')")
    assert [p[F.MQIACF_CHLAUTH_TYPE] for p in check] == [X.BLOCKUSER]
    with pytest.raises(MQError) as info:
        run("DISPLAY CHLAUTH('APP.*') MATCH(RUNCHECK) ADDRESS('127.0.0.1') CLNTUSER('eve')")
    assert info.value.reason == F.MQRCCF_CHLAUTH_RUNCHECK_ERROR
    run("ALTER QMGR CHLAUTH(DISABLED)")
    assert qm.state.qmgr_attr("CHLAUTH") == F.MQCHLA_DISABLED


@pytest.mark.parametrize(("mapped", "adopted", "channel_user", "final"), [
    ("", False, "", "alice"),  # nothing else: the user the client gave
    ("", False, "chl", "chl"),  # the channel's MCAUSER over an unadopted user (ADOPTCTX NO)
    ("", True, "chl", "alice"),  # the authenticated user, adopted, over the channel's MCAUSER
    ("map", True, "chl", "map"),  # a USERSRC(MAP) record over everything (early adopt)
    ("map", False, "", "map"),
])
def test_the_user_a_client_connection_runs_as(mapped: str, adopted: bool, channel_user: str, final: str) -> None:
    assert chlgate.final_user(mapped, "alice", adopted, channel_user) == final


def test_a_client_partner_is_its_peer_address_and_its_channel() -> None:
    p = chlgate.partner_of("", "127.0.0.1:5000", " bob ")
    assert (p.channel, p.address, p.clntuser, p.chltype) == ("SYSTEM.DEF.SVRCONN", "127.0.0.1", "bob", F.MQCHT_SVRCONN)
    assert chlgate.partner_of("APP.SVRCONN", "::1:5000", "bob").address == "::1"
