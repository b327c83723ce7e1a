"""L4: the ``ferrymq`` control commands — create, start, stop, list, delete (crtmqm, strmqm,
endmqm, dspmq, dltmqm).

``main`` is the click front end; ``home`` owns the data directory layout, the config
file, the run lock and the status files; ``control`` the commands' logic; ``runner`` the
server process itself (what ``start`` runs detached, or attached with ``--foreground``).
"""
