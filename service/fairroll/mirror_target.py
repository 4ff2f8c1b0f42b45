"""Where ``fairroll mirror`` keeps a table's tiles: a directory, or an S3-compatible bucket
(``s3://bucket/prefix``), each read back (the checkpoint and tiles it holds, to fetch
only what is new) and written file by file, the checkpoint last.

The bucket is spoken to with two requests of the S3 API, ``GetObject`` and ``PutObject``,
signed with AWS Signature Version 4 (stdlib ``hmac``/``hashlib``: no SDK in the image).
Its endpoint and credentials come from the standard AWS variables: ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN`` (temporary credentials),
``AWS_REGION`` (or ``AWS_DEFAULT_REGION``; default ``us-east-1``) and
``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL`` (another S3-compatible store: MinIO,
Ceph, R2, ...; path-style URLs there, virtual-hosted ones on AWS itself). Each object
gets the ``Cache-Control`` the server gives the same path, so the bucket (or a CDN in
front of it) serves the log as the server does.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Protocol

__all__ = ["DirectoryTarget", "MirrorTarget", "S3Target", "open_target"]

#: The cache headers of the server's answers (api/caching.py, api/controllers/log_tiles.py).
IMMUTABLE = "public, max-age=31536000, immutable"
PARTIAL = "public, max-age=60"
NOTE = "no-cache"


class MirrorTarget(Protocol):
    def read(self, name: str) -> bytes | None:
        """The file ``name`` (``checkpoint``, ``tile/0/000``) as kept, or None."""

    def write(self, files: Iterable[tuple[str, bytes]]) -> None:
        """Each file written whole, in order (the checkpoint comes last)."""


def open_target(location: str, environ: Mapping[str, str] = os.environ) -> MirrorTarget:
    """The target ``location`` names: ``s3://bucket[/prefix]`` or a directory."""
    if location.startswith("s3://"):
        bucket, _, prefix = location.removeprefix("s3://").partition("/")
        if not bucket:
            raise ValueError(f"{location!r} names no bucket (s3://bucket/prefix)")
        return S3Target(bucket, prefix.strip("/"), environ)
    return DirectoryTarget(Path(location))


class DirectoryTarget:
    """A directory any static web server serves as it is."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def read(self, name: str) -> bytes | None:
        path = self.folder / name
        return path.read_bytes() if path.exists() else None

    def write(self, files: Iterable[tuple[str, bytes]]) -> None:
        """Each file through a temporary one renamed into place: a reader never sees half
        a file."""
        for name, data in files:
            path = self.folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            part = path.with_name(path.name + ".part")
            part.write_bytes(data)
            part.replace(path)


class S3Target:
    """Objects ``<prefix>/<name>`` of an S3-compatible bucket (a PUT is atomic: a reader
    sees the old object or the new one)."""

    def __init__(self, bucket: str, prefix: str, environ: Mapping[str, str]) -> None:
        try:
            self.key_id = environ["AWS_ACCESS_KEY_ID"]
            self.secret = environ["AWS_SECRET_ACCESS_KEY"]
        except KeyError as missing:
            raise ValueError(f"an s3:// mirror needs {missing.args[0]} set") from None
        self.token = environ.get("AWS_SESSION_TOKEN")
        self.region = environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        endpoint = environ.get("AWS_ENDPOINT_URL_S3") or environ.get("AWS_ENDPOINT_URL")
        if endpoint:  # another S3-compatible store: path-style
            self.base = f"{endpoint.rstrip('/')}/{bucket}"
        else:
            self.base = f"https://{bucket}.s3.{self.region}.amazonaws.com"
        self.prefix = prefix

    def url(self, name: str) -> str:
        key = f"{self.prefix}/{name}" if self.prefix else name
        return f"{self.base}/{urllib.parse.quote(key, safe='/-_.~')}"

    def read(self, name: str) -> bytes | None:
        try:
            with urllib.request.urlopen(self._request("GET", name), timeout=60) as answer:  # noqa: S310
                data: bytes = answer.read()
        except urllib.error.HTTPError as refused:
            if refused.code == 404:
                return None
            raise
        return data

    def write(self, files: Iterable[tuple[str, bytes]]) -> None:
        for name, data in files:
            with urllib.request.urlopen(self._request("PUT", name, data), timeout=60):  # noqa: S310
                pass

    def _request(self, method: str, name: str, body: bytes = b"") -> urllib.request.Request:
        url = self.url(name)
        headers = sign_v4(
            method,
            url,
            body,
            key_id=self.key_id,
            secret=self.secret,
            region=self.region,
            token=self.token,
        )
        if method == "PUT":
            headers["Content-Type"] = (
                "text/plain; charset=utf-8"
                if name == "checkpoint"
                else ("application/octet-stream")
            )
            headers["Cache-Control"] = (
                NOTE if name == "checkpoint" else PARTIAL if ".p/" in name else IMMUTABLE
            )
        data = body if method == "PUT" else None
        return urllib.request.Request(url, data=data, headers=headers, method=method)  # noqa: S310


def sign_v4(
    method: str,
    url: str,
    body: bytes,
    *,
    key_id: str,
    secret: str,
    region: str,
    token: str | None = None,
    service: str = "s3",
    now: datetime.datetime | None = None,
) -> dict[str, str]:
    """The headers that sign a request with AWS Signature Version 4 (the canonical
    request, the string to sign, the key derived by date, region and service), signing
    ``host``, ``x-amz-content-sha256``, ``x-amz-date`` and the session token if any
    (tests/test_tiles_s3.py holds it to botocore's signer)."""
    when = (now or datetime.datetime.now(datetime.UTC)).strftime("%Y%m%dT%H%M%SZ")
    day = when[:8]
    parts = urllib.parse.urlsplit(url)
    payload = hashlib.sha256(body).hexdigest()
    headers = {"host": parts.netloc, "x-amz-content-sha256": payload, "x-amz-date": when}
    if token:
        headers["x-amz-security-token"] = token
    names = sorted(headers)
    query = "&".join(
        f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}"
        for k, v in sorted(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    )
    canonical = "\n".join(
        [
            method,
            parts.path or "/",
            query,
            "".join(f"{n}:{headers[n].strip()}\n" for n in names),
            ";".join(names),
            payload,
        ]
    )
    scope = f"{day}/{region}/{service}/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", when, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = f"AWS4{secret}".encode()
    for part in (day, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return {
        **{n: headers[n] for n in names if n != "host"},
        "Authorization": f"AWS4-HMAC-SHA256 Credential={key_id}/{scope}, "
        f"SignedHeaders={';'.join(names)}, Signature={signature}",
    }
