"""Inside the sandbox: the submission, loaded once, and a fresh process for every run.

``python -m grader.session JOB`` is what ``grader.sandbox_session`` starts under
``grader.sandbox``, once per submission. It installs the file-step hook, loads the
student's definitions (``grader.extract``'s module) and tells the grader which names it
defined, then serves runs one at a time: for each, it forks a fresh process (what a run
changes in memory never reaches the next; loading once is what makes a crash search's
dozens of instances affordable) in a process group of its own, which

- works in the run's directory (its files, its output in ``output.txt``);
- calls a student's function, or a grader-written driver (its source is sent; its
  parameters are resolved by name: the student's definitions, ``lab`` on the question's
  grading cluster through the grader's proxy, ``bootstrap_servers``, ``workdir``,
  ``sink``, and the driver's JSON arguments);
- writes what it returned (``grader.wire``) or what it raised to ``result.json``.

Nothing here is trusted by the grader: the student's code runs in this process and could
change any of it. The grader reads only data (the result file, the names), validates it,
and judges in its own process. This module's job is to make an honest submission's runs
cheap and faithful, not to be believed.
"""

from __future__ import annotations

import builtins
import faulthandler
import importlib.util
import json
import os
import resource
import signal
import socket
import sys
import traceback
import types
from pathlib import Path
from typing import Any

from grader import file_steps, wire

MAX_MESSAGE = 1 << 20
SPECIAL = ("lab", "cluster", "bootstrap_servers", "workdir", "sink")
SINK_PREFIX = "sink-"


class _Pristine:
    """The interpreter's builtins and imported modules as they were before the student's
    code ran. The student's code may replace them (``builtins.isinstance = ...``,
    ``sys.modules["json"] = ...``); this process's own work (serving runs, writing a result)
    puts them back first, so such a replacement changes nothing but the student's own code."""

    def __init__(self) -> None:
        self.builtins = dict(vars(builtins))
        self.modules = dict(sys.modules)

    def restore(self) -> None:
        vars(builtins).update(self.builtins)
        for name, module in self.modules.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    _preload()
    pristine = _Pristine()
    file_steps.install(job["steps_fd"])
    control = socket.socket(fileno=job["control_fd"])
    module = types.ModuleType("submission")
    module.__file__ = job["submission"]
    sys.modules["submission"] = module
    try:
        _load(Path(job["submission"]), module)
    except BaseException as exc:
        pristine.restore()
        traceback.print_exc()
        error = f"{type(exc).__name__} when it was loaded: {exc}"
        control.send(json.dumps({"ready": False, "error": error}).encode())
        return 1
    pristine.restore()
    defined = sorted(n for n in vars(module) if not n.startswith("__"))
    control.send(json.dumps({"ready": True, "defined": defined}).encode())
    while message := control.recv(MAX_MESSAGE):
        workdir = Path(json.loads(message)["dir"])
        request = json.loads((workdir / "request.json").read_text())
        _serve({**request, "dir": str(workdir)}, module, control, job["cluster_fd"], pristine)
    return 0


def _preload() -> None:
    """What a run with a cluster imports (the lab's API: pandas, kafka-python), imported
    once here rather than in every forked run: a second or more of CPU per run saved."""
    import grader.channel  # noqa: F401, PLC0415
    import kafkalite.lab.lab  # noqa: F401, PLC0415


def _load(path: Path, module: types.ModuleType) -> None:
    spec = importlib.util.spec_from_file_location("submission", path)
    assert spec is not None and spec.loader is not None
    for name in SPECIAL:  # as in the notebook, ``lab`` exists before the student's code runs
        setattr(module, name, _Unset(name))
    spec.loader.exec_module(module)


def _serve(
    request: dict[str, Any],
    module: types.ModuleType,
    control: socket.socket,
    cluster_fd: int,
    pristine: _Pristine,
) -> None:
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        control.close()  # a run answers in its result file only
        try:
            _run(request, module, cluster_fd, pristine)
        finally:
            os._exit(0)
    control.send(json.dumps({"started": request["id"], "pid": pid}).encode())
    _, status = os.waitpid(pid, 0)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    control.send(json.dumps({"ended": request["id"], "status": code}).encode())


def _run(
    request: dict[str, Any], module: types.ModuleType, cluster_fd: int, pristine: _Pristine
) -> None:
    """One run, in its forked process: the result (or what was raised) to result.json."""
    cpu = int(request["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    workdir = Path(request["dir"])
    os.chdir(workdir)
    output = os.open(workdir / "output.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(output, 1)
    os.dup2(output, 2)
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # where a stuck run waits
    names = _cluster_names(request, cluster_fd)
    vars(module).update(names)
    if request.get("steps"):
        file_steps.arm(workdir, str(request["id"]))
    try:
        function = _function(request, module)
        args = wire.decode(request["args"], rich=True)
        kwargs = wire.decode(request["kwargs"], rich=True)
        if request["kind"] == "driver":
            kwargs = _resolve(function, kwargs, module, {**names, "workdir": workdir})
        returned = function(*args, **kwargs)
        pristine.restore()
        result: dict[str, Any] = {"returned": wire.encode(returned)}
    except _Missing as missing:
        result = {"missing": str(missing)}
    except BaseException as exc:
        pristine.restore()
        result = {"raised": _raised(exc)}
    file_steps.disarm()
    sys.stdout.flush()
    sys.stderr.flush()
    _write_result(workdir, result)


class _Missing(Exception):
    """A name the run needs that the submission does not define."""


class _Unset:
    """``lab`` and its friends at load time, before a run gives them their values."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        raise RuntimeError(f"`{self._name}` cannot be used while your definitions load")


def _function(request: dict[str, Any], module: types.ModuleType) -> Any:
    if request["kind"] == "call":
        name = request["name"]
        if not callable(getattr(module, name, None)):
            raise _Missing(name)
        return getattr(module, name)
    namespace: dict[str, Any] = {"__name__": "driver"}
    exec(compile(request["source"], "<driver>", "exec"), namespace)  # the grader's code
    return namespace[request["name"]]


def _resolve(
    function: Any, kwargs: dict[str, Any], module: types.ModuleType, special: dict[str, Any]
) -> dict[str, Any]:
    """A driver's arguments by parameter name: what the grader passed, else the run's
    special names, else the student's definitions."""
    code = function.__code__
    resolved = {}
    for name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
        if name in kwargs:
            resolved[name] = kwargs[name]
        elif name in special:
            resolved[name] = special[name]
        elif name == "sink":
            resolved[name] = Sink
        elif name in vars(module) and not isinstance(vars(module)[name], _Unset):
            resolved[name] = vars(module)[name]
        else:
            raise _Missing(name)
    return resolved


def _cluster_names(request: dict[str, Any], cluster_fd: int) -> dict[str, Any]:
    """``lab``, ``cluster`` and ``bootstrap_servers`` for this run: the question's grading
    cluster, reached through the grader's proxy, its fault verbs done by the grader."""
    cluster_dir = request.get("cluster_dir")
    if cluster_dir is None:
        absent = _NoCluster()
        return {"lab": absent, "cluster": absent, "bootstrap_servers": absent}
    from grader.channel import GradingCluster  # noqa: PLC0415  (pandas: only with a cluster)
    from kafkalite.lab.lab import Lab  # noqa: PLC0415

    proxy = {int(b): int(p) for b, p in request["proxy_ports"].items()}
    cluster = GradingCluster.over(Path(cluster_dir), cluster_fd, proxy)
    lab = Lab(cluster)
    return {"lab": lab, "cluster": cluster, "bootstrap_servers": cluster.bootstrap_servers}


class _NoCluster:
    """``lab`` in a run graded without a cluster: a function that reaches for one anyway
    is told why, instead of failing on a missing name."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(
            f"this question is graded without a cluster (its tests pass you the data), "
            f"so `lab.{name}` is not available: use the arguments your function is given"
        )


class Sink:
    """A driver's output that survives a SIGKILL: ``sink("output").append(value)``
    reports the append as a durable step, then appends the value (one line of
    ``grader.wire`` JSON) to the file, so the grader reads every value appended before a
    kill, and nothing after it."""

    def __init__(self, name: str = "output") -> None:
        self.path = SINK_PREFIX + name

    def append(self, value: Any) -> None:
        line = wire.dumps(value) + "\n"
        file_steps.report("sink.append()", _shown(value))
        with file_steps.muted():
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _raised(exc: BaseException) -> dict[str, Any]:
    frames = traceback.extract_tb(exc.__traceback__)
    return {
        "type": type(exc).__name__,
        "module": type(exc).__module__,
        "message": str(exc)[:2000],
        "frames": [[f.filename, f.lineno or 0, f.name, f.line or ""] for f in frames][-12:],
    }


def _write_result(workdir: Path, result: dict[str, Any]) -> None:
    try:
        text = json.dumps(result, allow_nan=True)
    except (TypeError, ValueError) as exc:
        text = json.dumps({"raised": {"type": "WireError", "module": "grader.wire",
                                      "message": str(exc), "frames": []}})  # fmt: skip
    temporary = workdir / "result.json.tmp"
    temporary.write_text(text)
    os.replace(temporary, workdir / "result.json")


if __name__ == "__main__":
    code = main(sys.argv[1])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
