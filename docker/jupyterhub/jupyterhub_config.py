"""JupyterHub for a whole class on one server: each student gets a container of the lab
image, with the brokers as processes inside it (the local backend), so students never see
each other's clusters and none of them sees the Docker socket (only the hub has it).

Settings come from the environment (docker/jupyterhub/docker-compose.yml sets them):

KAFKALITE_LAB_IMAGE       the students' image (docker compose build lab)
KAFKALITE_HUB_NETWORK     the network the hub and the students' containers share
KAFKALITE_HUB_PREFIX      prefix of the students' container and volume names
KAFKALITE_HUB_PASSWORD    the students' shared password (at least 8 characters; a course
                          with its own login replaces the authenticator: see the README)
KAFKALITE_HUB_USERS       who may log in, comma-separated (default: any name)
KAFKALITE_STUDENT_MEMORY  memory limit of one student's container (default 1536M)
KAFKALITE_STUDENT_CPUS    CPU limit of one student's container (default none: students
                          share the CPUs; a quota of 1 makes a cluster start slowly)
"""

import os

import docker
from dockerspawner import DockerSpawner
from dockerspawner.volumenamingstrategy import default_format_volume_name

c = get_config()  # noqa: F821  (JupyterHub's config loader provides it)

PREFIX = os.environ.get("KAFKALITE_HUB_PREFIX", "kafkalite-student")
LABELS = {"org.kafkalite.role": "student-lab", "org.kafkalite.hub": PREFIX}

# ---- the hub and its proxy ------------------------------------------------------------
c.JupyterHub.bind_url = "http://0.0.0.0:8000"
c.JupyterHub.hub_ip = "0.0.0.0"  # the students' containers call the hub's API
c.JupyterHub.hub_connect_ip = "hub"  # the hub's service name on the shared network
c.JupyterHub.cookie_secret_file = "/srv/jupyterhub/cookie_secret"
c.JupyterHub.db_url = "sqlite:////srv/jupyterhub/jupyterhub.sqlite"
c.JupyterHub.cleanup_servers = True  # the hub's shutdown stops every student's container

# ---- who may log in: one shared password (a real course plugs in its own login) -------
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = os.environ["KAFKALITE_HUB_PASSWORD"]
USERS = {u.strip() for u in os.environ.get("KAFKALITE_HUB_USERS", "").split(",") if u.strip()}
if USERS:
    c.Authenticator.allowed_users = USERS
else:
    c.Authenticator.allow_all = True

# ---- each student's container ----------------------------------------------------------
c.JupyterHub.spawner_class = "dockerspawner.DockerSpawner"
c.DockerSpawner.image = os.environ["KAFKALITE_LAB_IMAGE"]
c.DockerSpawner.network_name = os.environ["KAFKALITE_HUB_NETWORK"]
c.DockerSpawner.use_internal_ip = True
c.DockerSpawner.prefix = PREFIX
c.DockerSpawner.remove = True  # the container goes when the server stops; the home stays
HOME_VOLUME = f"{PREFIX}-{{username}}"
c.DockerSpawner.volumes = {HOME_VOLUME: "/home/kafkalite"}
c.DockerSpawner.cmd = ["kafkalite-lab"]
c.DockerSpawner.environment = {"KAFKALITE_BACKEND": "local"}
c.DockerSpawner.extra_create_kwargs = {"labels": LABELS}
c.DockerSpawner.mem_limit = os.environ.get("KAFKALITE_STUDENT_MEMORY", "1536M")
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


c.Spawner.pre_spawn_hook = label_home_volume
