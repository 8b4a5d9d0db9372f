# Kafka-Lite's images, one per target (docker-compose.yml builds both):
#   broker  one `python -m kafkalite.broker` per container, as the course stack runs them
#   lab     JupyterLab with the labs and every client they use (Spark and Java with
#           --build-arg WITH_SPARK=1; also the image JupyterHub gives each student)
#   hub     JupyterHub with DockerSpawner and configurable-http-proxy (docker/jupyterhub/)
#
# Layers go from what changes least to what changes most: the base (CA certificates, init,
# user, virtualenv), then the dependencies (requirements.txt), and last the code, so a
# change to kafkalite/ rebuilds two small layers in seconds. Written for the classic
# builder too (Debian's docker-compose 1.29 builds without BuildKit): no RUN --mount.

# Any Debian-based image with Python >= 3.11 and its venv module; where no registry is
# reachable, scripts/build-base-image.sh makes one from Debian's packages.
ARG BASE_IMAGE=python:3.11-slim-bookworm

FROM ${BASE_IMAGE} AS base
LABEL org.kafkalite.image=kafkalite
# Networks that intercept HTTPS: their CA certificates (PEM text, any number) are added to
# the system store before anything is downloaded, and pip is told to use that store.
ARG EXTRA_CA_CERTS=""
ENV PATH=/opt/venv/bin:$PATH \
    VIRTUAL_ENV=/opt/venv \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    PYTHONUNBUFFERED=1
RUN set -eu; \
    if [ -n "$EXTRA_CA_CERTS" ]; then \
      printf '%s\n' "$EXTRA_CA_CERTS" > /usr/local/share/ca-certificates/kafkalite-extra.crt; \
      update-ca-certificates >/dev/null; \
    fi; \
    if ! command -v tini >/dev/null; then \
      apt-get update -qq && apt-get install -y -qq --no-install-recommends tini >/dev/null; \
      rm -rf /var/lib/apt/lists/*; \
    fi; \
    useradd --create-home --uid 1000 --shell /bin/bash kafkalite; \
    mkdir -p /data /links /opt/kafkalite; \
    chown kafkalite:kafkalite /data /links; \
    python3 -m venv /opt/venv; \
    pip install --quiet pip==26.3 setuptools==84.2.1  # the installer, and what builds our package
WORKDIR /opt/kafkalite
# tini is PID 1: it forwards SIGTERM to the broker (docker stop = controlled shutdown) and
# reaps whatever the labs' processes leave behind.
ENTRYPOINT ["tini", "--"]

# ---- what a broker needs: the package's own dependencies, pinned by requirements.txt ----
# The list comes out of pyproject.toml in a stage of its own: pyproject.toml changes often
# (tool settings), the list seldom, and an identical list keeps the next layers cached.
FROM ${BASE_IMAGE} AS dependency-list
COPY pyproject.toml /tmp/
RUN python3 -c 'import tomllib; print("\n".join(tomllib.load(open("/tmp/pyproject.toml", "rb"))["project"]["dependencies"]))' > /tmp/runtime.txt

FROM base AS runtime-deps
COPY requirements.txt ./
COPY --from=dependency-list /tmp/runtime.txt ./
RUN pip install --quiet -c requirements.txt -r runtime.txt

FROM runtime-deps AS broker
COPY kafkalite/cluster/healthcheck.py /usr/local/bin/kafkalite-healthcheck
COPY pyproject.toml README.md ./
COPY kafkalite ./kafkalite
RUN pip install --quiet --no-deps --no-build-isolation . && rm -rf build *.egg-info
USER kafkalite
EXPOSE 9092 9192 9292
VOLUME ["/data"]
# ApiVersions on the client listener, which opens once the broker has registered with the
# controller; the probe imports nothing but the standard library (see healthcheck.py)
HEALTHCHECK --interval=2s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-I", "-S", "/usr/local/bin/kafkalite-healthcheck", "127.0.0.1", "9092"]
CMD ["python", "-m", "kafkalite.cluster.compose", "broker", "--id", "1"]

# ---- the lab: JupyterLab, every client the labs use, optionally Spark ----
FROM runtime-deps AS lab-deps
ARG WITH_SPARK=0
RUN if [ "$WITH_SPARK" = 1 ]; then \
      mkdir -p /usr/share/man/man1 \
      && apt-get update -qq \
      && apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless >/dev/null \
      && rm -rf /var/lib/apt/lists/*; \
    fi
COPY docker/requirements-lab.txt ./
# Spark's packages only with WITH_SPARK=1: pyspark alone is ~400 MB
RUN if [ "$WITH_SPARK" = 1 ]; then cp requirements.txt lab.txt; \
    else grep -v -i -E '^(pyspark)\b' requirements.txt > lab.txt; fi \
    && pip install --quiet -r lab.txt -r requirements-lab.txt \
    && pip uninstall --quiet --yes rfc3987-syntax lark
# ^ jsonschema's optional checker of the "iri" format, which Jupyter's event schemas never
#   use: compiling its grammar at import cost every student's Jupyter server 15 MiB
ENV PYSPARK_PYTHON=/opt/venv/bin/python
# JupyterLab's terminal is a login shell when its server has no tty (a container, a hub's
# spawn), and Debian's /etc/profile then sets PATH afresh: the venv's commands (kafkalite,
# the python with the labs' packages) would be missing from it without this
RUN echo 'export PATH=/opt/venv/bin:$PATH' > /etc/profile.d/kafkalite-venv.sh

FROM lab-deps AS lab
COPY docker/lab-entrypoint.sh /usr/local/bin/kafkalite-lab
COPY pyproject.toml README.md ./
COPY kafkalite ./kafkalite
# The grader, for the labs' grader.check cells (a private cluster per check); not its
# masters, which hold the solutions and the hidden tests (.dockerignore leaves them out).
COPY grader ./grader
RUN pip install --quiet --no-deps --no-build-isolation . && rm -rf build *.egg-info
# the course's view into each student's cluster (kafkalite/lab/server_extension.py)
COPY docker/jupyter-server-extension.json /opt/venv/etc/jupyter/jupyter_server_config.d/kafkalite.json
# The labs as shipped; the entry point copies them into the notebook folder when it has
# none (a JupyterHub student's first start), never over a student's work.
COPY labs ./labs
USER kafkalite
WORKDIR /home/kafkalite
EXPOSE 8888
CMD ["kafkalite-lab"]

# ---- JupyterHub for a class: the hub, its proxy from npm, and the spawner --------------
FROM base AS hub
# configurable-http-proxy 4.6 runs on Debian's Node.js 18 (5.x wants 20); npm is needed
# only to install it
RUN apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null \
    && npm install --global --no-audit --no-fund --loglevel=error configurable-http-proxy@4.6.3 \
    && apt-get purge -y -qq npm >/dev/null && apt-get autoremove -y -qq >/dev/null \
    && rm -rf /var/lib/apt/lists/* /root/.npm
COPY docker/jupyterhub/requirements.txt ./hub-requirements.txt
RUN pip install --quiet -r hub-requirements.txt
COPY docker/jupyterhub/jupyterhub_config.py /etc/jupyterhub/jupyterhub_config.py
# the instructor's command (students' cluster health, resets): standard library only
COPY kafkalite/course/hub_admin.py /usr/local/bin/kafkalite-course
RUN chmod 755 /usr/local/bin/kafkalite-course \
    && mkdir -p /srv/jupyterhub && chown kafkalite:kafkalite /srv/jupyterhub
USER kafkalite
WORKDIR /srv/jupyterhub
EXPOSE 8000
CMD ["jupyterhub", "-f", "/etc/jupyterhub/jupyterhub_config.py"]
