"""JupyterHub for a whole class: each student gets a container of the lab image, with the
brokers as processes inside it (the local backend), so students never see each other's
clusters and none of them sees the Docker socket (only the hub has it).

On one server each student is a container (DockerSpawner: docker-compose.yml beside this
file); past one server each student is a swarm service placed on any node of a Docker
swarm (SwarmSpawner: swarm-stack.yml). Settings come from the environment:

KAFKALITE_LAB_IMAGE       the students' image (docker compose build lab)
KAFKALITE_HUB_SPAWNER     docker (one server, the default) or swarm
KAFKALITE_HUB_NETWORK     the network the hub and the students' servers share
KAFKALITE_HUB_PREFIX      prefix of the students' container, service and volume names
KAFKALITE_HUB_PASSWORD    the students' shared password (at least 8 characters; a course
                          with its own login replaces the authenticator: see docs/course.md)
KAFKALITE_HUB_USERS       who may log in, comma-separated (default: any name)
KAFKALITE_STUDENT_MEMORY  memory limit of one student's server (default: bench.course's)
KAFKALITE_STUDENT_CPUS    CPU limit of one student's server (default none: students
                          share the CPUs; a quota of 1 makes a cluster start slowly)
KAFKALITE_STUDENT_CONSTRAINTS  swarm only: where students' services may run, comma-
                          separated placement constraints (e.g. node.role==worker)
KAFKALITE_CULL_IDLE_S     stop a server nobody used for this long (default 3600; 0: never);
                          the student's home volume keeps their work
KAFKALITE_HUB_PUBLIC_URL  the address students and staff open (https://hub.example.edu/):
                          the hub tells each server its own public address, so that
                          `kafkalite demo` in an instructor's server prints a link to open
                          (default none: the hub learns no address, the demo prints a path)
KAFKALITE_HUB_ADMIN_TOKEN the course-admin service's API token (default: one made once and
                          kept in /srv/jupyterhub/course-admin-token for kafkalite-course)
"""

import os
import secrets
import sys
from pathlib import Path

import docker
from docker.types import Mount
from dockerspawner import DockerSpawner, SwarmSpawner
from dockerspawner.volumenamingstrategy import default_format_volume_name

c = get_config()  # noqa: F821  (JupyterHub's config loader provides it)

PREFIX = os.environ.get("KAFKALITE_HUB_PREFIX", "kafkalite-student")
LABELS = {"org.kafkalite.role": "student-lab", "org.kafkalite.hub": PREFIX}
STATE = Path("/srv/jupyterhub")

# ---- the hub and its proxy ------------------------------------------------------------
c.JupyterHub.bind_url = "http://0.0.0.0:8000"
c.JupyterHub.hub_ip = "0.0.0.0"  # the students' servers call the hub's API
c.JupyterHub.hub_connect_ip = "hub"  # the hub's service name on the shared network
c.JupyterHub.cookie_secret_file = str(STATE / "cookie_secret")
c.JupyterHub.db_url = f"sqlite:///{STATE}/jupyterhub.sqlite"
c.JupyterHub.cleanup_servers = True  # the hub's shutdown stops every student's server
# only when given: a wrong one would send every browser's login to that address
if os.environ.get("KAFKALITE_HUB_PUBLIC_URL"):
    c.JupyterHub.public_url = os.environ["KAFKALITE_HUB_PUBLIC_URL"]

# ---- who may log in: one shared password (a real course plugs in its own login) -------
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = os.environ["KAFKALITE_HUB_PASSWORD"]
USERS = {u.strip() for u in os.environ.get("KAFKALITE_HUB_USERS", "").split(",") if u.strip()}
if USERS:
    c.Authenticator.allowed_users = USERS
else:
    c.Authenticator.allow_all = True

# ---- each student's server -------------------------------------------------------------
HOME_VOLUME = f"{PREFIX}-{{username}}"
c.DockerSpawner.image = os.environ["KAFKALITE_LAB_IMAGE"]
c.DockerSpawner.network_name = os.environ["KAFKALITE_HUB_NETWORK"]
c.DockerSpawner.use_internal_ip = True
c.DockerSpawner.prefix = PREFIX
c.DockerSpawner.remove = True  # the container goes when the server stops; the home stays
c.DockerSpawner.volumes = {HOME_VOLUME: "/home/kafkalite"}
c.DockerSpawner.cmd = ["kafkalite-lab"]
c.DockerSpawner.extra_create_kwargs = {"labels": LABELS}
c.DockerSpawner.mem_limit = os.environ.get("KAFKALITE_STUDENT_MEMORY") or "1024M"
if os.environ.get("KAFKALITE_STUDENT_CPUS"):
    c.DockerSpawner.cpu_limit = float(os.environ["KAFKALITE_STUDENT_CPUS"])
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180


def label_home_volume(spawner: DockerSpawner) -> None:
    """Create the student's home volume with labels before Docker would create it bare, so
    a course's clean-up finds every volume it made."""
    name = default_format_volume_name(HOME_VOLUME, spawner)
    client = docker.from_env(version="auto")
    try:
        client.volumes.create(name, labels=LABELS)
    finally:
        client.close()


class StudentService(SwarmSpawner):
    """A student as a swarm service, on whichever node the swarm places it. Its home is a
    named volume on that node (SwarmSpawner itself mounts only host folders), created
    with the course's labels by the node's engine when the task starts."""

    @property
    def mounts(self) -> list[Mount]:
        return [
            Mount(target=v["bind"], source=name, type="volume", labels=LABELS)
            for name, v in self.volume_binds.items()
        ]


if os.environ.get("KAFKALITE_HUB_SPAWNER", "docker") == "swarm":
    c.JupyterHub.spawner_class = StudentService
    # the swarm's virtual IPs need IPVS, which not every node's kernel has: the proxy
    # reaches each student's task by its name in DNS instead
    c.SwarmSpawner.extra_endpoint_spec = {"mode": "dnsrr"}
    c.SwarmSpawner.extra_container_spec = {"labels": LABELS}
    constraints = os.environ.get("KAFKALITE_STUDENT_CONSTRAINTS", "")
    c.SwarmSpawner.extra_placement_spec = {
        "constraints": [rule.strip() for rule in constraints.split(",") if rule.strip()]
    }
else:
    c.JupyterHub.spawner_class = DockerSpawner
    c.Spawner.pre_spawn_hook = label_home_volume

# ---- services: the instructor's admin token and the idle culler ------------------------
TOKEN_FILE = STATE / "course-admin-token"
ADMIN_TOKEN = os.environ.get("KAFKALITE_HUB_ADMIN_TOKEN", "")
if not ADMIN_TOKEN:
    if not TOKEN_FILE.exists():
        TOKEN_FILE.write_text(secrets.token_hex(32))
        TOKEN_FILE.chmod(0o600)
    ADMIN_TOKEN = TOKEN_FILE.read_text().strip()
CULL_IDLE_S = int(os.environ.get("KAFKALITE_CULL_IDLE_S", "3600"))
# the hub must hear of a student's activity well within the idle time, or a student at
# work would be culled: the proxy's and each server's reports come 3 times per idle time
ACTIVITY_S = min(300, max(CULL_IDLE_S // 3, 1)) if CULL_IDLE_S else 300
c.JupyterHub.last_activity_interval = ACTIVITY_S
c.Spawner.environment = {
    "KAFKALITE_BACKEND": "local",
    "JUPYTERHUB_ACTIVITY_INTERVAL": str(ACTIVITY_S),
}

c.JupyterHub.services = [{"name": "course-admin", "api_token": ADMIN_TOKEN}]
c.JupyterHub.load_roles = [
    {
        # kafkalite-course: list students, read the routing table, ask each server for its
        # cluster; also what a script needs to create students and start their servers
        "name": "course-admin",
        "scopes": ["admin:users", "admin:servers", "access:servers", "proxy"],
        "services": ["course-admin"],
    }
]
if CULL_IDLE_S:
    c.JupyterHub.services.append(
        {
            "name": "idle-culler",
            "command": [
                sys.executable,
                "-m",
                "jupyterhub_idle_culler",
                f"--timeout={CULL_IDLE_S}",
                f"--cull-every={max(CULL_IDLE_S // 6, 1)}",
            ],
        }
    )
    c.JupyterHub.load_roles.append(
        {
            "name": "idle-culler",
            "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
            "services": ["idle-culler"],
        }
    )
