"""Connection authentication's rules (server.connauth): CHCKCLNT/CHCKLOCL, ADOPTCTX, the
administrators' back-stop, and the MQSC spellings of the security commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from ferrymq.admin.mqsc import MqscSyntaxError, parse, to_command
from ferrymq.engine.authority import Authorities
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.server.connauth import Authenticator
from ferrymq.store.users import UserRegistry


@pytest.fixture
def auth(tmp_path: Path) -> Authenticator:
    reg = UserRegistry(tmp_path, creator="root")
    reg.add("app", "app-pw")
    reg.add("boss", "boss-pw", ["mqm"])
    oam = Authorities()
    oam.enabled = True
    oam.groups_of = reg.groups_of
    oam.superusers = {"root"}
    return Authenticator(reg, oam)


def test_required_needs_a_password_and_checks_it(auth: Authenticator) -> None:
    auth.oam.alter_authinfo(chckclnt=F.MQCHK_REQUIRED)
    assert auth.decide(local_user="", user="", password="").refusal
    assert auth.decide(local_user="", user="", password="", channel_user="app").refusal
    assert auth.decide(local_user="", user="app", password="").refusal
    d = auth.decide(local_user="", user="app", password="app-pw")
    assert (d.user, d.verify, d.refusal) == ("app", ("app", "app-pw"), "")
    assert auth.verify("app", "app-pw") and not auth.verify("app", "nope") and not auth.verify("ghost", "x")
    assert auth.cached("app", "app-pw") and not auth.cached("app", "nope")


@pytest.mark.parametrize("check", [F.MQCHK_NONE, F.MQCHK_OPTIONAL, F.MQCHK_REQUIRED_ADMIN])
def test_an_administrator_over_tcp_always_needs_a_password(auth: Authenticator, check: int) -> None:
    auth.oam.alter_authinfo(chckclnt=check)
    for admin in ("boss", "root"):
        assert auth.decide(local_user="", user=admin, password="").refusal
    assert auth.decide(local_user="", user="app", password="").user == "app"  # asserted, as IBM's
    none = auth.decide(local_user="", user="boss", password="wrong")
    assert none.verify is None if check == F.MQCHK_NONE else none.verify == ("boss", "wrong")


def test_reqdadm_is_the_default_and_a_channels_mcauser_needs_no_password(auth: Authenticator) -> None:
    assert auth.oam.authinfo.chckclnt == F.MQCHK_REQUIRED_ADMIN  # IBM's default for a new queue manager
    assert auth.decide(local_user="", user="", password="").refusal == "no user given"
    assert auth.decide(local_user="", user="", password="", channel_user="app").user == "app"
    assert auth.decide(local_user="", user="ghost", password="", channel_user="app").user == "ghost"  # chlgate: app
    for admin in ("boss", "root"):  # an administrator channel user, or one asserted, gives a password
        assert "administrator" in auth.decide(local_user="", user="", password="", channel_user=admin).refusal
        assert auth.decide(local_user="", user=admin, password="", channel_user="app").refusal
    checked = auth.decide(local_user="", user="boss", password="boss-pw", channel_user="app")
    assert checked.verify == ("boss", "boss-pw") and not checked.refusal


def test_local_connections_are_their_os_user_unless_a_password_is_adopted(auth: Authenticator) -> None:
    assert auth.decide(local_user="root", user="boss", password="").user == "root"  # the claim is ignored
    adopted = auth.decide(local_user="root", user="app", password="app-pw")
    assert (adopted.user, adopted.verify) == ("app", ("app", "app-pw"))
    auth.oam.alter_authinfo(adoptctx=False)
    kept = auth.decide(local_user="root", user="app", password="app-pw")
    assert (kept.user, kept.verify) == ("root", ("app", "app-pw"))  # checked, but not adopted
    auth.oam.alter_authinfo(chcklocl=F.MQCHK_REQUIRED)
    assert auth.decide(local_user="root", user="", password="").refusal


def test_a_blank_connauth_checks_no_password(tmp_path: Path) -> None:
    reg = UserRegistry(tmp_path)
    oam = Authorities()
    oam.enabled = True
    auth = Authenticator(reg, oam, connauth=lambda: " ")
    assert auth.decide(local_user="", user="app", password="anything").verify is None


def test_security_mqsc_parses_to_ibms_pcf() -> None:
    cmd = to_command(parse("SET AUTHREC PROFILE(APP.**) OBJTYPE(QUEUE) PRINCIPAL('app') AUTHADD(GET, PUT,INQ)"))
    assert cmd.command == F.MQCMD_SET_AUTH_REC
    assert cmd.params[F.MQCACF_PRINCIPAL_ENTITY_NAMES] == ("app",)
    assert cmd.params[F.MQIACF_AUTH_ADD_AUTHS] == (F.MQAUTH_INPUT, F.MQAUTH_OUTPUT, F.MQAUTH_INQUIRE)
    cmd = to_command(parse("DISPLAY ENTAUTH GROUP('apps') OBJNAME(APP.Q) OBJTYPE(QUEUE)"))
    assert (cmd.command, cmd.params[F.MQIACF_ENTITY_TYPE]) == (F.MQCMD_INQUIRE_ENTITY_AUTH, 2)
    cmd = to_command(parse("ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) CHCKCLNT(REQDADM) "
                           "ADOPTCTX(NO) FAILDLAY(3)"))
    assert cmd.params[C.MQIA_CHECK_CLIENT_BINDING] == F.MQCHK_REQUIRED_ADMIN
    assert (cmd.params[C.MQIA_ADOPT_CONTEXT], cmd.params[C.MQIA_AUTHENTICATION_FAIL_DELAY]) == (0, 3)
    # IBM's: PROFILE may be left out for OBJTYPE(QMGR), and only for it
    for verb in ("SET", "DELETE"):
        cmd = to_command(parse(f"{verb} AUTHREC OBJTYPE(QMGR) PRINCIPAL('app')"
                               + (" AUTHADD(CONNECT)" if verb == "SET" else "")))
        assert F.MQCACF_AUTH_PROFILE_NAME not in cmd.params and cmd.params[F.MQIACF_OBJECT_TYPE] == C.MQOT_Q_MGR
    for bad in ("SET AUTHREC PROFILE(A) OBJTYPE(QUEUE) AUTHADD(GET)", "SET AUTHREC(A) PROFILE(A)",
                "SET AUTHREC OBJTYPE(QUEUE) PRINCIPAL('a') AUTHADD(GET)",
                "DELETE AUTHREC OBJTYPE(TOPIC) PRINCIPAL('a')",
                "SET AUTHREC PROFILE(A) OBJTYPE(QUEUE) PRINCIPAL('a') AUTHADD(FLY)",
                "ALTER AUTHINFO(X) CHCKCLNT(SOMETIMES)", "DELETE AUTHREC PROFILE(A) OBJTYPE(NOPE) GROUP('g')"):
        with pytest.raises(MqscSyntaxError):
            to_command(parse(bad))
