"""The web console in a real headless browser: Debian's Chromium driven through Selenium and
Debian's chromedriver, against a real queue-manager process (docs/operations.md).

Chromium comes from the system's packages (tools/prereqs.sh installs chromium and
chromium-driver as root); the test skips only where they cannot be installed (not root, or
no apt-get). The screenshots are kept under the test's tmp dir (pytest keeps the last three
runs': /tmp/pytest-of-$USER/pytest-current/), or in $FERRYMQ_TEST_ARTEFACTS when it is set.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from qm_process import ADMIN_PASSWORD, ADMIN_USER, QueueManagerProcess

import ferrymq.client as fc

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
SCRIPT_BODY = "<script>document.title='pwned';window.pwned=1</script><b>bold?</b> & done"


def _browser_or_skip() -> None:
    if Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists():
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        pytest.fail("chromium and chromium-driver are missing though they can be installed here: run "
                    "'sh tools/prereqs.sh' (make test does) or 'apt-get install chromium chromium-driver'")
    pytest.skip("needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver, as root)")


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[object]:
    _browser_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,900", f"--user-data-dir={tmp_path / 'chromium-profile'}",
                "--ignore-certificate-errors"):  # the TLS test's queue manager has a dev CA's certificate
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def _artefact(tmp_path: Path, name: str) -> Path:
    where = Path(os.environ.get("FERRYMQ_TEST_ARTEFACTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    return where / name


def _follow(d: Any, find: Callable[[], Any]) -> None:
    """Click the element ``find`` gives and wait for the page it leads to (a form's answer may
    take a while: a refused sign-in waits FAILDELAY). ChromeDriver now and then refuses a click
    on a node it has just handed out ("does not belong to the document"): nothing was clicked
    then, so the element is found again and clicked again, at most three times."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    for attempt in range(3):
        old = d.find_element(By.TAG_NAME, "html")
        try:
            find().click()
        except WebDriverException as exc:
            if attempt == 2 or "does not belong to the document" not in str(exc):
                raise
            time.sleep(0.2)
            continue
        WebDriverWait(d, 30).until(expected_conditions.staleness_of(old))
        return


def _sign_in(port: int, user: str, password: str) -> tuple[int, str]:
    """Sign in without a browser: the status and the session cookie (blank if none)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/login")
    page = conn.getresponse()
    token = page.getheader("Set-Cookie", "").split(";")[0].split("=", 1)[1]
    page.read()
    conn.close()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/login", urllib.parse.urlencode({"csrf": token, "user": user, "password": password}),
                 {"Cookie": f"ferrymq_console_login={token}", "Content-Type": "application/x-www-form-urlencoded"})
    resp = conn.getresponse()
    cookies = [c.split(";")[0] for k, c in resp.getheaders() if k == "Set-Cookie"]
    resp.read()
    conn.close()
    return resp.status, next((c for c in cookies if c.startswith("ferrymq_console=")), "")


def _get(port: int, path: str, cookie: str) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path, headers={"Cookie": cookie})
    resp = conn.getresponse()
    body = resp.read().decode()
    conn.close()
    return resp.status, body


def _post(base: str, path: str, form: dict[str, str], cookie: str) -> int:
    req = urllib.request.Request(base + path, data=urllib.parse.urlencode(form).encode(), method="POST",
                                 headers={"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_console_in_a_browser(tmp_path: Path, browser: object) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webdriver import WebDriver

    assert isinstance(browser, WebDriver)
    d = browser
    qm = QueueManagerProcess(tmp_path / "home", create_args=("--console-port", "0")).start()
    try:
        env = dict(os.environ, FERRYMQ_HOME=str(qm.home))
        status = json.loads(subprocess.run([sys.executable, "-m", "ferrymq.cli", "status", "QM1", "--output", "json"],
                                           env=env, capture_output=True, text=True, timeout=60, check=True).stdout)
        port = status["console_port"]
        base = f"http://127.0.0.1:{port}"
        # A user of the registry without CONNECT authority is refused, as its connection would be.
        qm.add_user("viewer", "viewer-pw")
        assert _sign_in(port, "viewer", "viewer-pw")[0] == 401

        d.get(base + "/")  # not signed in: sent to the sign-in page
        assert d.current_url.endswith("/login") and "Sign in" in d.title

        d.find_element(By.ID, "user").send_keys(ADMIN_USER)
        d.find_element(By.ID, "password").send_keys("not-the-password")
        _follow(d, lambda: d.find_element(By.ID, "sign-in"))
        assert d.find_elements(By.ID, "refused"), "a wrong password was not refused"
        assert not d.get_cookie("ferrymq_console")

        d.find_element(By.ID, "password").send_keys(ADMIN_PASSWORD)
        _follow(d, lambda: d.find_element(By.ID, "sign-in"))
        assert d.title.startswith("Status") and "QM1" in d.find_element(By.TAG_NAME, "main").text
        session = d.get_cookie("ferrymq_console")
        assert session and session["httpOnly"] and session["secure"] and session["sameSite"] == "Strict"

        # An administrator defines a queue from the MQSC box; an application puts to it.
        _follow(d, lambda: d.find_element(By.LINK_TEXT, "MQSC"))
        d.find_element(By.ID, "script").send_keys("DEFINE QLOCAL(APP.WEB) DESCR('<i>web</i>')\n"
                                                  "SET AUTHREC PROFILE(QM1) OBJTYPE(QMGR) PRINCIPAL('viewer') "
                                                  "AUTHADD(CONNECT)")
        _follow(d, lambda: d.find_element(By.ID, "run"))
        assert "AMQ8006I" in d.find_element(By.ID, "mqsc-output").text
        assert "All valid MQSC commands were processed." in d.find_element(By.ID, "mqsc-output").text
        with fc.connect("QM1", qm.conn_name) as client:
            q = client.open("APP.WEB")
            q.put(b"hello from the console test", persistent=True, properties={"colour": "blue", "n": 7})
            q.put(SCRIPT_BODY.encode())

        d.get(base + "/queues")
        row = d.find_element(By.XPATH, "//tr[td/a[text()='APP.WEB']]")
        assert row.find_elements(By.CSS_SELECTOR, "svg.spark")
        assert row.find_elements(By.TAG_NAME, "td")[1].text == "2"
        _follow(d, lambda: row.find_element(By.LINK_TEXT, "APP.WEB"))
        links = d.find_elements(By.XPATH, "//tbody/tr/td[2]/a")
        assert len(links) == 2

        _follow(d, lambda: links[0])
        assert d.find_element(By.ID, "body-text").text == "hello from the console test"
        main = d.find_element(By.TAG_NAME, "main").text
        assert "colour" in main and "blue" in main and "PutApplName" in main
        assert "68 65 6c 6c 6f" in d.find_element(By.ID, "body-hex").text
        d.save_screenshot(str(_artefact(tmp_path, "console-message.png")))

        d.back()
        _follow(d, lambda: d.find_elements(By.XPATH, "//tbody/tr/td[2]/a")[1])
        assert d.find_element(By.ID, "body-text").text == SCRIPT_BODY  # shown as characters...
        assert d.title != "pwned" and d.execute_script("return window.pwned === undefined")  # ...never run
        assert not d.find_elements(By.TAG_NAME, "script") and not d.find_elements(By.TAG_NAME, "b")
        d.save_screenshot(str(_artefact(tmp_path, "console-script-body.png")))

        # A destructive get only after its confirmation; a POST without the CSRF token is refused.
        _follow(d, lambda: d.find_element(By.PARTIAL_LINK_TEXT, "Remove this message"))
        assert "destructive get" in d.find_element(By.TAG_NAME, "main").text
        cookie = f"ferrymq_console={session['value']}"
        assert _post(base, "/message/get", {"queue": "APP.WEB", "id": "00" * 24}, cookie) == 403
        _follow(d, lambda: d.find_element(By.CSS_SELECTOR, "button.danger"))
        assert d.find_element(By.ID, "removed") and d.find_element(By.ID, "body-text").text == SCRIPT_BODY

        d.get(base + "/mqsc")
        d.find_element(By.ID, "script").send_keys("DISPLAY QLOCAL(APP.WEB) CURDEPTH DESCR\nDISPLAY QLOCAL(NONE.SUCH)")
        _follow(d, lambda: d.find_element(By.ID, "run"))
        output = d.find_element(By.ID, "mqsc-output").text
        assert "CURDEPTH(1)" in output and "DESCR(<i>web</i>)" in output and "AMQ8147E" in output
        assert not d.find_elements(By.TAG_NAME, "i")
        d.save_screenshot(str(_artefact(tmp_path, "console-mqsc.png")))

        # With CONNECT only, the viewer signs in but may neither browse APP.WEB nor use MQSC.
        code, viewer = _sign_in(port, "viewer", "viewer-pw")
        assert code == 303 and viewer
        code, page = _get(port, "/queue?name=APP.WEB", viewer)
        assert code == 200 and "Refused: reason 2035 (MQRC_NOT_AUTHORIZED)" in page
        assert _get(port, "/mqsc", viewer)[0] == 403

        d.get(base + "/channels")
        assert "SYSTEM.DEF.SVRCONN" in d.find_element(By.TAG_NAME, "main").text
        d.get(base + "/connections")
        assert "ferrymq command server" in d.find_element(By.TAG_NAME, "main").text
        _follow(d, lambda: d.find_element(By.XPATH, "//header//button"))  # sign out
        d.get(base + "/queues")
        assert d.current_url.endswith("/login")
    finally:
        qm.stop()
    assert _artefact(tmp_path, "console-message.png").stat().st_size > 1000


def test_console_over_tls_shows_the_other_queue_managers_of_its_home(tmp_path: Path, browser: object) -> None:
    """``--console-tls 1``: the console is served over HTTPS with the queue manager's own
    certificate (``ferrymq tls create-dev-certs``), which a client trusting the dev CA
    verifies; plain HTTP gets no page. Its status page lists QM2 of the same home with a
    link to QM2's console."""
    import ssl

    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webdriver import WebDriver

    assert isinstance(browser, WebDriver)
    d = browser
    home = tmp_path / "home"
    qm1 = QueueManagerProcess(home, "QM1", create_args=("--console-port", "0", "--console-tls", "1"))
    certs = json.loads(qm1._cli("tls", "create-dev-certs", "QM1", "--output", "json"))
    qm1.start()
    qm2 = QueueManagerProcess(home, "QM2", create_args=("--console-port", "0")).start()
    try:
        env = dict(os.environ, FERRYMQ_HOME=str(home))

        def status(name: str) -> dict[str, Any]:
            out = subprocess.run([sys.executable, "-m", "ferrymq.cli", "status", name, "--output", "json"], env=env,
                                 capture_output=True, text=True, timeout=60, check=True).stdout
            return dict(json.loads(out))

        st1, st2 = status("QM1"), status("QM2")
        assert st1["console_tls"] is True and not st2["console_tls"]
        port, port2 = st1["console_port"], st2["console_port"]
        trusting = ssl.create_default_context(cafile=certs["ca"])
        trusting.check_hostname = False  # the dev certificate names the queue manager, not 127.0.0.1
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=30, context=trusting)
        conn.request("GET", "/login", headers={"Host": f"127.0.0.1:{port}"})
        assert conn.sock is not None and conn.sock.getpeercert()["subject"]  # the queue manager's, verified
        page = conn.getresponse()
        assert page.status == 200 and "Sign in" in page.read().decode()
        conn.close()
        plain = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
        with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
            plain.request("GET", "/login")
            plain.getresponse().read()
        plain.close()

        d.get(f"https://127.0.0.1:{port}/")  # Chromium does not trust the dev CA: the flag below
        d.find_element(By.ID, "user").send_keys(ADMIN_USER)
        d.find_element(By.ID, "password").send_keys(ADMIN_PASSWORD)
        _follow(d, lambda: d.find_element(By.ID, "sign-in"))  # the POST's Origin is https://...: accepted
        assert d.title.startswith("Status")
        main = d.find_element(By.TAG_NAME, "main").text
        assert "Queue managers in this home" in main
        row = d.find_element(By.XPATH, "//tr[td[1][text()='QM2']]")
        assert row.find_elements(By.TAG_NAME, "td")[1].text == "Running"  # as ferrymq list says it
        assert row.find_element(By.TAG_NAME, "a").get_attribute("href") == f"http://127.0.0.1:{port2}/"
        session = d.get_cookie("ferrymq_console")
        assert session and session["secure"] and session["httpOnly"]
        d.save_screenshot(str(_artefact(tmp_path, "console-tls-home.png")))
    finally:
        qm2.stop()
        qm1.stop()
    assert _artefact(tmp_path, "console-tls-home.png").stat().st_size > 1000


def test_console_tls_without_a_certificate_does_not_start(tmp_path: Path) -> None:
    """No key repository: the start fails saying why, rather than serving plain HTTP."""
    qm = QueueManagerProcess(tmp_path / "home", "QM1", create_args=("--console-port", "0", "--console-tls", "1"))
    out = qm._cli("start", "QM1", "--output", "json", check=False)
    assert "console_tls_failed" in out and "web console over TLS" in out
    assert "--console-tls" in qm._cli("start", "--help")
