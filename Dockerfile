# fairroll: build wheels in one stage, run them in a slim image with no compilers.
# Build: docker build -t fairroll:0.1.0 .
# Run:   docker run --rm -p 8000:8000 -e REDIS_URL=redis://redis:6379/0 \
#          -e FAIRROLL_SIGNING_KEY=... fairroll:0.1.0
# Every dependency is the locked version, checked against the lock's hashes
# (requirements/service.lock, made by pip-compile from pyproject.toml).
FROM python:3.11-slim-bookworm AS build
WORKDIR /src
COPY requirements/service.lock ./requirements/
RUN pip download --no-cache-dir --require-hashes --dest /wheels -r requirements/service.lock
COPY pyproject.toml README.md ./
COPY service ./service
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim-bookworm
# tini is PID 1: it forwards SIGTERM to the server (which drains in-flight requests)
# and reaps children.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini=0.19.0-1+b3 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /wheels /wheels
COPY requirements/service.lock /tmp/service.lock
RUN pip install --no-cache-dir --no-index --find-links=/wheels --require-hashes \
        -r /tmp/service.lock \
    && pip install --no-cache-dir --no-index --no-deps /wheels/fairroll-0.1.0-*.whl \
    && rm -rf /wheels /tmp/service.lock
ENV FAIRROLL_HOST=0.0.0.0 \
    FAIRROLL_PORT=8000 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 10001:10001
WORKDIR /tmp
EXPOSE 8000
# Liveness only (the process answers); orchestrators also probe /readyz (Redis reachable).
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/livez', timeout=2)"]
ENTRYPOINT ["tini", "--", "fairroll", "serve"]
