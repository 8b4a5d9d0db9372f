"""``python -m kafkalite.cluster.link_proxies --dir D``: the link-proxy daemon of a cluster
(the proxies themselves are in ``faults``).

A module of its own so that running the daemon does not execute ``faults`` a second time as
``__main__`` (the package already imported it), which Python warns about.
"""

from kafkalite.cluster.faults import main

if __name__ == "__main__":
    raise SystemExit(main())
