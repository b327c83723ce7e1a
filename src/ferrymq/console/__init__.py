"""L4: the web console — a few server-rendered pages the queue manager process serves (app.py)."""
