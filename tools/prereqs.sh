#!/bin/sh
# What `make test` needs besides what pip installs: Python 3.11+, Java 17+ (Spark's tests
# run a real Spark, which runs on a JVM) and Chromium with its chromedriver (the web console's
# test drives a real headless browser). Checked first, so a missing one is one clear line
# instead of a failure deep in the test run. Chromium is installed from Debian's packages when
# it is missing and this runs as root with apt-get (as CI does). Usage: tools/prereqs.sh [python]
py="${1:-python3}"
missing=0

if ! "$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
    if command -v "$py" >/dev/null 2>&1; then found=$("$py" --version 2>&1 | head -n 1); else found="no $py"; fi
    echo "make test: needs Python 3.11 or newer as '$py' (found: $found); run 'make test PY=python3.12' to pick one" >&2
    missing=1
fi

java="java"
[ -n "${JAVA_HOME:-}" ] && java="$JAVA_HOME/bin/java"
version=$("$java" -version 2>&1 | sed -n 's/.*version "\([0-9][0-9]*\).*/\1/p' | head -n 1)
if [ -z "$version" ]; then
    echo "make test: needs Java 17 or newer for the Spark tests, and '$java' is not there; install one" \
         "(Debian/Ubuntu: apt-get install openjdk-17-jre-headless) or set JAVA_HOME" >&2
    missing=1
elif [ "$version" -lt 17 ]; then
    echo "make test: needs Java 17 or newer for the Spark tests; '$java' is Java $version: install 17+ or set JAVA_HOME" >&2
    missing=1
fi

# The web console's browser test (tests/integration/test_web_console_browser.py): Debian's
# chromium and chromium-driver, never a browser downloaded by a test tool.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "make test: installing chromium and chromium-driver for the web console's browser test" >&2
        if ! { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null ||
               { apt-get update -qq >/dev/null &&
                 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; }; }; then
            echo "make test: could not install chromium and chromium-driver with apt-get" >&2
            missing=1
        fi
    else
        echo "make test: needs Chromium and its driver for the web console's browser test; install them" \
             "(Debian/Ubuntu: apt-get install chromium chromium-driver, as root)" >&2
        missing=1
    fi
fi
exit "$missing"
