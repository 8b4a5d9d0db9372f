"""Students per server, measured through JupyterHub, as a class uses it.

    python -m bench.course [--steps 20,40,60] [--max 200]

Brings up the class's hub (``docker/jupyterhub/``, idle culling off), then adds students in
steps. Each student is created through the hub's REST API with the course-admin token,
their server started through it (spawn time: the request until the hub says the server
is ready), and a kernel started in their server through the hub's proxy, as JupyterLab
starts one, which runs ``lab = kafkalite.lab.connect()``: each student's cluster of three
brokers starts in their own container. At each step, once the class has settled:

- **at rest**: each container's memory as its cgroup counts it (``usage``, and the working
  set without inactive page cache, what the kernel would not give back first) and CPU over
  ``--window-s``; the hub's too; what the engine spends outside the containers (one
  ``containerd-shim`` per container); the machine's available memory and load average;
  and one student's processes by kind (PSS: shared pages split among those mapping them);
- **10 % of the class run lab 04's kill step at the same moment** (the master's cell,
  verbatim: a producer at 50 records/s with ``acks="all"``, SIGKILL of the partition's
  leader 1.5 s in): for each, kill → the ``leader_elected`` event of a new leader;
- **no container killed for memory** (the engine's ``OOMKilled``, or a server gone).

The class grows until a step misses a target (a kill → new leader over 1.5 s, an OOM
kill, a server that does not start, less than ``RESERVE_MIB`` of the machine's memory
left) or ``--max``: the result names the largest class that met every target and what
the next step hit. First of all, one student runs every lab top to bottom (but the Spark
lab), each in a kernel of its own: the peak of their container's working set sets the
memory limit per student this bench recommends (the hub's default and the Kubernetes
values use it); then their server is stopped as the idle culler stops it, and started
again: the seconds until their cluster is back.

Other work on the machine (several test suites share it) inflates every figure: the
load average is recorded beside each.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import os
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import nbformat
import psutil
from docker.models.containers import Container

from bench.common import record
from tests.containers.engine import REPO, Engine, start_engine
from tests.containers.hub import CONNECT, Hub, HubClient, Kernel
from tests.containers.stack import LAB_04, base_image
from tests.support.ports import free_base_port
from tests.support.waiting import wait_for

MIB = 2**20
KILL_TARGET_S = 1.5
KILLING_SHARE = 0.1
RESERVE_MIB = 1024
SETTLE_S = 30.0
WINDOW_S = 30.0
SPAWN_AT_ONCE = 5
SPAWN_TIMEOUT_S = 300.0
HEADROOM = 1.5
LIMIT_STEP_MIB = 256
NOTEBOOK = LAB_04.name
MEASURE_KILL = """
import json as _json
_killed = next(w for w in lab.cluster.faults.windows if w.verb == "kill")
_elected = [
    e["time_ms"] / 1000
    for e in lab.cluster.events()
    if e["type"] == "leader_elected" and e.get("topic") == "orders"
    and e["broker"] != _killed.broker and e["time_ms"] / 1000 >= _killed.start
]
print(_json.dumps({
    "killed": _killed.broker, "kill_at": _killed.start,
    "to_new_leader_s": round(min(_elected) - _killed.start, 3) if _elected else None,
    "sent": sent, "lost": lab.check(failover).counts["lost"],
}))
"""


def lab_cells(master: Path = LAB_04) -> list[str]:
    """A lab's code cells (its master: the student's steps and the reference answers)."""
    notebook = nbformat.read(master, as_version=4)  # type: ignore[no-untyped-call]
    return [c.source for c in notebook.cells if c.cell_type == "code"]


def kill_cell() -> str:
    """Lab 04's kill step, as a student runs it."""
    return next(cell for cell in lab_cells() if "crash_the_leader" in cell)


def labs_without_spark() -> list[Path]:
    """Every lab the students' image runs (the Spark lab needs the image built with it)."""
    masters = sorted((REPO / "grader" / "masters").glob("*.ipynb"))
    return [m for m in masters if "kafkalite.spark" not in m.read_text()]


@dataclass
class Student:
    name: str
    spawn_s: float
    kernel: Kernel | None = None
    connect_s: float | None = None
    killed: dict[str, Any] = field(default_factory=dict)


def spawn(client: HubClient, name: str) -> Student:
    """Start the student's server through the API; the seconds until the hub says ready."""
    started = time.monotonic()
    client.start_server(name)
    wait_for(lambda: client.server_ready(name), SPAWN_TIMEOUT_S, f"{name}'s server")
    return Student(name, round(time.monotonic() - started, 2))


def connect(client: HubClient, student: Student) -> None:
    """A kernel in the student's server runs ``connect()``: their cluster starts."""
    student.kernel = client.kernel(student.name, NOTEBOOK)
    done = student.kernel.execute(CONNECT)
    if done.error:
        raise RuntimeError(f"{student.name}: connect() failed: {done.error}")
    student.connect_s = float(done.output.split()[-1])


def one_shot(container: Container) -> dict[str, Any]:
    """The container's resource counters now (no second sample: ``one-shot``)."""
    assert container.client is not None and container.id is not None
    stats = container.client.api.stats(container.id, stream=False, one_shot=True)
    return cast(dict[str, Any], stats)


def memory_of(stats: dict[str, Any]) -> dict[str, float]:
    """``usage`` as the cgroup counts it (page cache included), the working set without
    its inactive file pages, and the anonymous memory (cgroup v1's ``rss``)."""
    memory = stats["memory_stats"]
    extra = memory.get("stats", {})
    usage = memory["usage"]
    inactive = extra.get("total_inactive_file", extra.get("inactive_file", 0))
    return {
        "usage_mib": usage / MIB,
        "working_set_mib": (usage - inactive) / MIB,
        "anon_mib": extra.get("total_rss", extra.get("anon", 0)) / MIB,
        "peak_mib": memory.get("max_usage", 0) / MIB,
    }


def at_rest(containers: dict[str, Container], window_s: float) -> dict[str, dict[str, float]]:
    """Per container: CPU as a share of one core over ``window_s``, and its memory."""
    with ThreadPoolExecutor(16) as pool:
        first = dict(zip(containers, pool.map(one_shot, containers.values()), strict=True))
        time.sleep(window_s)  # the measurement window itself
        last = dict(zip(containers, pool.map(one_shot, containers.values()), strict=True))
    result = {}
    for name in containers:
        used = last[name]["cpu_stats"]["cpu_usage"]["total_usage"]
        used -= first[name]["cpu_stats"]["cpu_usage"]["total_usage"]
        result[name] = {"cpu_cores": used / 1e9 / window_s, **memory_of(last[name])}
    return result


def summary(values: list[float]) -> dict[str, float]:
    return {
        "mean": round(statistics.mean(values), 3),
        "median": round(statistics.median(values), 3),
        "max": round(max(values), 3),
    }


def process_kind(command: str) -> str:
    for needle, kind in (
        ("jupyterhub-singleuser", "jupyter server"),
        ("ipykernel", "kernel"),
        ("kafkalite.broker", "broker (each)"),
        ("link_proxies", "link proxies"),
    ):
        if needle in command:
            return kind
    return "other"


def processes_by_kind(container: Container) -> dict[str, dict[str, float]]:
    """The student's processes by kind, from the host (the engine runs here): RSS, PSS."""
    found: dict[str, list[psutil.Process]] = {}
    for pid, _, command in container.top(ps_args="-o pid,uid,args")["Processes"]:
        with contextlib.suppress(psutil.Error):
            found.setdefault(process_kind(command), []).append(psutil.Process(int(pid)))
    result = {}
    for kind, procs in found.items():
        infos = [p.memory_full_info() for p in procs]
        each = len(procs) if kind == "broker (each)" else 1
        result[kind] = {
            "rss_mib": round(sum(i.rss for i in infos) / MIB / each, 1),
            "pss_mib": round(sum(i.pss for i in infos) / MIB / each, 1),
        }
    return result


def engine_overhead(containers: int) -> dict[str, float]:
    """What the engine spends beside the containers: its shims' memory per container."""
    shims = [
        p
        for p in psutil.process_iter(["name"])
        if (p.info["name"] or "").startswith("containerd-shim")
    ]
    pss = 0.0
    for shim in shims:
        with contextlib.suppress(psutil.Error):
            pss += shim.memory_full_info().pss
    return {
        "shims": len(shims),
        "shim_pss_mib_per_container": round(pss / MIB / max(containers, 1), 1),
    }


def rest_figures(hub: Hub, students: list[Student], window_s: float) -> dict[str, Any]:
    containers = {s.name: hub.student_container(s.name) for s in students}
    load_before = os.getloadavg()
    measured = at_rest({"hub": hub.hub_container(), **containers}, window_s)
    hub_figures = measured.pop("hub")
    cpu = [m["cpu_cores"] for m in measured.values()]
    memory = psutil.virtual_memory()
    return {
        "load_average": [round(x, 2) for x in load_before],
        "students_cpu_cores_total": round(sum(cpu), 3),
        "student_cpu_cores": summary(cpu),
        "student_working_set_mib": summary([m["working_set_mib"] for m in measured.values()]),
        "student_usage_mib": summary([m["usage_mib"] for m in measured.values()]),
        "student_anon_mib": summary([m["anon_mib"] for m in measured.values()]),
        "students_working_set_total_mib": round(
            sum(m["working_set_mib"] for m in measured.values())
        ),
        "hub": {k: round(v, 3) for k, v in hub_figures.items()},
        "engine": engine_overhead(len(containers) + 1),
        "one_student_by_process": processes_by_kind(containers[students[-1].name]),
        "machine_available_mib": round(memory.available / MIB),
        # what the rest of the machine holds (other work sharing it): in use, less the class
        "machine_used_by_others_mib": round(
            (memory.total - memory.available) / MIB
            - sum(m["working_set_mib"] for m in measured.values())
            - hub_figures["working_set_mib"]
        ),
    }


def kill_step(students: list[Student]) -> list[dict[str, Any]]:
    """Each student runs the lab's kill step, all starting at the same moment."""
    at = time.time() + 2.0  # every kernel has its request by then
    cell = f"import time\ntime.sleep(max(0.0, {at} - time.time()))\n{kill_cell()}"

    def run(student: Student) -> dict[str, Any]:
        assert student.kernel is not None
        done = student.kernel.execute(cell)
        if done.error:
            return {"student": student.name, "error": done.error}
        measured = student.kernel.execute(MEASURE_KILL)
        if measured.error:
            return {"student": student.name, "error": measured.error}
        return {"student": student.name, **json.loads(measured.output.splitlines()[-1])}

    with ThreadPoolExecutor(len(students)) as pool:
        results = list(pool.map(run, students))
    for student, result in zip(students, results, strict=True):
        student.killed = result
    return results


def memory_kills(hub: Hub, names: list[str]) -> list[str]:
    """Students whose container the engine killed for memory, or whose server is gone."""
    gone = []
    for name in names:
        try:
            container = hub.student_container(name)
        except ValueError:  # not running any more
            gone.append(f"{name}: container gone")
            continue
        state = hub.inspect(container).get("State", {})
        if state.get("OOMKilled") or state.get("Status") != "running":
            gone.append(f"{name}: {state.get('Status')}, OOMKilled={state.get('OOMKilled')}")
    return gone


def every_lab(hub: Hub, student: Student) -> dict[str, Any]:
    """The student runs every lab top to bottom, each in a kernel of its own that is shut
    down when the lab is done (as closing its tab and its kernel does): their container's
    peak working set sets the memory limit per student."""
    container = hub.student_container(student.name)
    peak = 0.0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            with contextlib.suppress(Exception):
                peak = max(peak, memory_of(one_shot(container))["working_set_mib"])
            stop.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    labs = {}
    kernel_at_rest = []
    for master in labs_without_spark():
        kernel = hub.client.kernel(student.name, master.name)
        started = time.monotonic()
        errors = []
        for index, cell in enumerate(lab_cells(master)):
            done = kernel.execute(cell)
            if done.error:
                errors.append(f"cell {index}: {done.error}")
        labs[master.stem] = {"seconds": round(time.monotonic() - started, 1), "errors": errors}
        print(master.stem, labs[master.stem], flush=True)
        with_kernel = memory_of(one_shot(container))["working_set_mib"]
        kernel.close()
        shut_down = functools.partial(hub.client.kernel_gone, student.name, kernel.kernel_id)
        wait_for(shut_down, 60, "the lab's kernel shut down")
        kernel_at_rest.append(with_kernel - memory_of(one_shot(container))["working_set_mib"])
    stop.set()
    sampler.join(10)
    return {
        "labs": labs,
        "peak_working_set_mib": round(peak, 1),
        "a_kernel_after_its_lab_mib": summary(kernel_at_rest),
        "recommended_memory_limit_mib": math.ceil(peak * HEADROOM / LIMIT_STEP_MIB)
        * LIMIT_STEP_MIB,
    }


def back_after_culling(hub: Hub, student: Student) -> dict[str, Any]:
    """The student's server stopped as the idle culler stops it, then started again: the
    seconds until their next ``connect()`` has their cluster (lab 04's topics) back."""
    hub.client.stop_server(student.name)
    wait_for(lambda: hub.client.server(student.name) is None, 120, "the server stopped")
    spawned = spawn(hub.client, student.name)
    connect(hub.client, spawned)
    student.kernel = spawned.kernel
    assert student.kernel is not None
    topics = student.kernel.execute(
        'print(sorted({p["topic"] for p in lab.status()["partitions"]}))'
    )
    return {
        "spawn_s": spawned.spawn_s,
        "cluster_back_s": spawned.connect_s,
        "topics_back": topics.output.strip(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def class_hub(engine: Engine) -> Hub:
    hub = Hub(engine, base_image(engine), free_base_port(), env={"KAFKALITE_CULL_IDLE_S": "0"})
    hub.tag = hub.env["KAFKALITE_TAG"] = "bench"  # the tests' images stay as built
    return hub


def add_students(hub: Hub, names: list[str]) -> list[Student]:
    """Create the students, start their servers ``SPAWN_AT_ONCE`` at a time (a class
    arriving), then connect each one's kernel to a cluster of its own (as many at once)."""
    hub.client.create_students(names)
    with ThreadPoolExecutor(SPAWN_AT_ONCE) as pool:
        students = list(pool.map(lambda n: spawn(hub.client, n), names))
        list(pool.map(lambda s: connect(hub.client, s), students))
    return students


def step_verdict(
    hub: Hub, everyone: list[Student], killing: list[dict[str, Any]], rest: dict[str, Any]
) -> list[str]:
    """What this step missed (empty: every target met)."""
    missed = [
        f"{k['student']}: kill -> new leader {k.get('to_new_leader_s')} s"
        + (f" ({k['error']})" if "error" in k else "")
        for k in killing
        if "error" in k or k["to_new_leader_s"] is None or k["to_new_leader_s"] > KILL_TARGET_S
    ]
    missed += memory_kills(hub, [s.name for s in everyone])
    if rest["machine_available_mib"] < RESERVE_MIB:
        missed.append(f"machine memory: {rest['machine_available_mib']} MiB available")
    return missed


def memory_short(steps: list[dict[str, Any]], students: int) -> str | None:
    """Why ``students`` more would not fit in the machine's memory, judged by what a
    student held at the last step: the step is not tried, since the kernel's OOM killer
    would then pick among everything the machine runs, other work included."""
    if not steps:
        return None
    each = steps[-1]["at_rest"]["student_working_set_mib"]["mean"]
    available = psutil.virtual_memory().available / MIB
    if available - students * each >= RESERVE_MIB:
        return None
    return (
        f"machine memory: {available:.0f} MiB available, {students} more students need "
        f"{students * each:.0f} MiB at {each:.0f} MiB each, with {RESERVE_MIB} MiB to spare"
    )


def recommended(results: dict[str, Any]) -> dict[str, Any]:
    """What to give each student (the hub's default limit, the Kubernetes values): a
    memory limit from the peak of the whole lab, a guarantee from the mean at rest of the
    largest class that met every target (the first step if none did)."""
    steps = results["steps"]
    if not steps:
        return {}
    basis = ([s for s in steps if not s["missed"]] or steps)[-1]["at_rest"]
    return {
        "memory_limit_mib": results["one_student_every_lab"]["recommended_memory_limit_mib"],
        "memory_guarantee_mib": math.ceil(basis["student_working_set_mib"]["mean"] / 64) * 64,
        "cpu_guarantee": math.ceil(basis["student_cpu_cores"]["mean"] * 100) / 100,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench.course", description=__doc__)
    parser.add_argument("--steps", default="10,20,30,40,50,60,70,80,90,100,110,120")
    parser.add_argument("--max", type=int, default=200)
    parser.add_argument("--window-s", type=float, default=WINDOW_S)
    args = parser.parse_args(argv)
    targets = [int(n) for n in args.steps.split(",")]
    results: dict[str, Any] = {"load_average_at_start": os.getloadavg(), "steps": []}
    engine = start_engine()
    try:
        with class_hub(engine).running() as hub:
            first = add_students(hub, ["s000"])
            results["one_student_every_lab"] = every_lab(hub, first[0])
            results["one_student_back_after_culling"] = back_after_culling(hub, first[0])
            for key in ("one_student_every_lab", "one_student_back_after_culling"):
                print(key, json.dumps(results[key], indent=1), flush=True)
            everyone = first
            for target in [n for n in targets if n <= args.max]:
                fresh = [f"s{i:03d}" for i in range(len(everyone), target)]
                if short := memory_short(results["steps"], len(fresh)):
                    results["limit"] = {"students": len(everyone), "next_step_hit": short}
                    print(f"step to {target} students: {short}", flush=True)
                    break
                started = time.monotonic()
                try:
                    added = add_students(hub, fresh)
                except (AssertionError, RuntimeError, OSError) as exc:
                    hit = f"{type(exc).__name__}: {exc}"
                    results["limit"] = {"students": len(everyone), "next_step_hit": hit}
                    print(f"step to {target} students: {hit}", flush=True)
                    break
                everyone += added
                arrival_s = time.monotonic() - started
                time.sleep(SETTLE_S)  # start-up work is not the cost at rest
                rest = rest_figures(hub, everyone, args.window_s)
                untouched = [s for s in everyone if not s.killed]
                killing = kill_step(untouched[-max(1, round(KILLING_SHARE * target)) :])
                missed = step_verdict(hub, everyone, killing, rest)
                step = {
                    "students": len(everyone),
                    "arrival_of_the_new_students_s": round(arrival_s, 1),
                    "spawn_s": summary([s.spawn_s for s in added]),
                    "connect_s": summary([s.connect_s or 0.0 for s in added]),
                    "at_rest": rest,
                    "kill_step": {
                        "students": len(killing),
                        "to_new_leader_s": [k.get("to_new_leader_s") for k in killing],
                        "lost": [k.get("lost") for k in killing],
                        "kill_spread_s": round(
                            max(k.get("kill_at", 0) for k in killing)
                            - min(k.get("kill_at", 0) for k in killing),
                            3,
                        ),
                        "load_average_after": [round(x, 2) for x in os.getloadavg()],
                    },
                    "missed": missed,
                }
                results["steps"].append(step)
                print(json.dumps(step, indent=1), flush=True)
                if missed:
                    results["limit"] = {
                        "students": len(everyone) - len(added),
                        "next_step": len(everyone),
                        "next_step_hit": missed,
                    }
                    break
            else:
                results["limit"] = {"students": len(everyone), "next_step_hit": "not reached"}
    finally:
        engine.release()
    results["load_average_at_end"] = os.getloadavg()
    results["recommended"] = recommended(results)
    record("course", results)


if __name__ == "__main__":
    main()
