#!/bin/sh
# What `make test` needs besides what pip installs: Python 3.11+ and Java 17+ (Spark's tests
# run a real Spark, which runs on a JVM). Checked first, so a missing one is one clear line
# instead of a failure deep in the test run. Usage: tools/prereqs.sh [python]
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
exit "$missing"
