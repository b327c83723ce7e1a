"""Settings shared by every test directory.

Hypothesis's per-example deadline (200 ms by default) is a timing assertion: on a loaded
two-core machine a single example of the protocol stream tests has taken 295 ms once and
3 ms when replayed, failing CI as "flaky". Speed is measured in bench/, never by tests, so
the deadline is off for the whole suite; each test's example count still bounds its time.
"""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("ferrymq", deadline=None)
settings.load_profile("ferrymq")
