"""Instructor demos: the lecture's scenarios, step by step, on the lab's real cluster.

``kafkalite demo`` serves a presenter app (a notebook rendered by Voilà, no code shown) in
which an instructor steps through a scenario with a clicker (→ next, ← back, R reset): each
step says in one sentence what happens next, asks the class a question before a fault
where the lecture asks one, runs the fault on the cluster with real clients, and the
scenario ends with the run's timeline and the history checker's verdict.

- ``catalog``: which scenarios there are (light: the CLI lists them without loading any).
- ``steps``: a scenario's steps and the pure state machine that walks them.
- ``scenario``: what every scenario shares (setup on a clean cluster, the verdict).
- ``scenarios/``: one module per scenario, named for what it shows.
- ``words``: the state that matters, named in words from the dashboard's state (pure).
- ``presenter``: the widgets: the stepper's view, a scaled dashboard; ``keys``: the
  clicker's keys; ``app``: what the presenter notebook (``presenter.ipynb``) runs.
- ``server``: Voilà serving the presenter, started and stopped like ``kafkalite lab``.
- ``rehearse``: every step of a scenario without a browser (``python -m
  kafkalite.demo.rehearse``), before a lecture and in the tests.

Like ``kafkalite.lab``, this package is a client of the cluster's public surfaces; it uses
the lab's API (``Lab``, histories, the dashboard, ``check``, ``timeline``).
"""
