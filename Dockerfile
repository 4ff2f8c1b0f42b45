# fairroll: install the locked dependencies in one stage, run them in an image with no compilers.
# Build: docker build -t fairroll:0.1.0 .
# Run:   docker run --rm -p 8000:8000 --read-only --tmpfs /tmp \
#          -e REDIS_URL=redis://redis:6379/0 -e FAIRROLL_SIGNING_KEY=... fairroll:0.1.0
# BASE is any Debian bookworm with python3 and its venv module: the slim Python image by
# default, or one bootstrapped from Debian's packages with no registry (scripts/image.sh,
# which CI runs). Every dependency is the locked version, checked against the lock's hashes
# (requirements/service.lock, made by pip-compile from pyproject.toml and image.in).
ARG BASE=python:3.11-slim-bookworm

FROM ${BASE} AS build
# A CA bundle for pip where the build's network sits behind an inspecting proxy (CI's does).
ARG PIP_CERT
WORKDIR /src
RUN python3 -m venv /opt/fairroll
COPY requirements/service.lock ./requirements/
RUN /opt/fairroll/bin/pip install --no-cache-dir --disable-pip-version-check --require-hashes \
        -r requirements/service.lock
COPY pyproject.toml README.md hatch_build.py ./
COPY service ./service
# The VTT integrations' sources and, where they were built first (CI builds them), their
# bundles: the build hook puts built ones in the wheel, so the image serves them too.
COPY clients/vtt/foundry ./clients/vtt/foundry
COPY clients/vtt/owlbear ./clients/vtt/owlbear
COPY docs ./docs
RUN /opt/fairroll/bin/pip install --no-cache-dir --disable-pip-version-check --no-deps . \
    && /opt/fairroll/bin/pip uninstall --yes --disable-pip-version-check pip setuptools

FROM ${BASE}
# tini is PID 1: it forwards SIGTERM to the server (which drains in-flight requests) and
# reaps children. A bootstrapped base has it already.
RUN if ! command -v tini >/dev/null; then \
        apt-get update \
        && apt-get install -y --no-install-recommends tini=0.19.0-1+b3 \
        && rm -rf /var/lib/apt/lists/*; \
    fi
COPY --from=build /opt/fairroll /opt/fairroll
ENV PATH=/opt/fairroll/bin:$PATH \
    FAIRROLL_HOST=0.0.0.0 \
    FAIRROLL_PORT=8000 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 10001:10001
WORKDIR /tmp
EXPOSE 8000
# Liveness only (the process answers); orchestrators also probe /readyz (Redis reachable).
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
    CMD ["python3", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/livez', timeout=2)"]
ENTRYPOINT ["tini", "--", "fairroll", "serve"]
