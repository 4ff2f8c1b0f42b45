"""``fairroll mirror TABLE s3://bucket/prefix``: a table's tiles copied to an S3-compatible
bucket (moto's standalone server here, a real HTTP server speaking the S3 API),
incrementally as to a directory, each object with the server's cache header; the
bucket's objects, read over plain HTTP as a public bucket or a CDN serves them, verify as
the table's export does. The requests are signed by fairroll's own SigV4 (stdlib), held
here to botocore's signer."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest
from botocore import auth as botocore_auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from moto.server import ThreadedMotoServer

from fairroll.mirror_target import sign_v4
from fairroll.redis_server import free_port
from support import TEST_ROOT, fairroll_cli
from test_tiles import roll

BUCKET = "tiles-mirror"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "fairroll-test", "AWS_SECRET_ACCESS_KEY": "not-a-secret"}


@pytest.fixture
def bucket(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An S3-compatible server with an empty bucket; the standard AWS variables point at
    it (the CLI the tests run inherits them)."""
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    for name, value in {
        **CREDENTIALS,
        "AWS_REGION": "eu-west-1",
        "AWS_ENDPOINT_URL": endpoint,
    }.items():
        monkeypatch.setenv(name, value)
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="eu-west-1")
    s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    try:
        yield s3, endpoint
    finally:
        server.stop()


def mirror_to(live_server: Any, table: str, target: str) -> Any:
    return fairroll_cli("mirror", table, target, "--server", live_server.url, "--root", TEST_ROOT)


def test_our_sigv4_signs_as_botocore_signs() -> None:
    """The same request at the same second: the same Authorization, for a PUT with a body
    and a session token, and for a GET of a key that needs escaping."""
    when = datetime.datetime(2026, 12, 3, 17, 0, 5, tzinfo=datetime.UTC)
    cases = [
        (
            "PUT",
            "https://bucket.s3.eu-west-1.amazonaws.com/tables/t-1/tile/0/000.p/12",
            b"\x00" * 40,
            "tok",
        ),
        ("GET", "http://127.0.0.1:9000/bucket/a%20b/tile/entries/x001/000", b"", None),
    ]
    for method, url, body, token in cases:
        ours = sign_v4(
            method,
            url,
            body,
            key_id="AKID",
            secret="SECRET",
            region="eu-west-1",
            token=token,
            now=when,
        )
        request = AWSRequest(method=method, url=url, data=body)
        signer = botocore_auth.S3SigV4Auth(Credentials("AKID", "SECRET", token), "s3", "eu-west-1")
        original = botocore_auth.get_current_datetime
        botocore_auth.get_current_datetime = lambda: when.replace(tzinfo=None)  # type: ignore[assignment]
        try:
            signer.add_auth(request)
        finally:
            botocore_auth.get_current_datetime = original
        assert ours["Authorization"] == request.headers["Authorization"], (method, url)


def test_a_mirror_to_a_bucket_is_incremental_cached_as_served_and_verifies_as_the_export(
    live_server: Any, client: httpx.Client, table: str, bucket: Any, tmp_path: Path
) -> None:
    s3, endpoint = bucket
    target = f"s3://{BUCKET}/logs/{table}"
    roll(client, table, 3)
    first = mirror_to(live_server, table, target)
    assert first.returncode == 0 and "size 0 -> 3" in first.stdout, first.stdout + first.stderr
    roll(client, table, 255)
    second = mirror_to(live_server, table, target)
    assert second.returncode == 0 and "size 3 -> 258" in second.stdout, second.stdout
    assert "5 new files" in second.stdout, second.stdout
    again = mirror_to(live_server, table, target)
    assert again.returncode == 0 and "0 new files" in again.stdout, again.stdout
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=f"logs/{table}/")["Contents"]
    names = sorted(o["Key"].removeprefix(f"logs/{table}/") for o in listed)
    assert names == [
        "checkpoint",
        "tile/0/000",
        "tile/0/000.p/3",
        "tile/0/001.p/2",
        "tile/1/000.p/1",
        "tile/entries/000",
        "tile/entries/000.p/3",
        "tile/entries/001.p/2",
    ]

    def cache(name: str) -> str:
        said: str = s3.head_object(Bucket=BUCKET, Key=f"logs/{table}/{name}")["CacheControl"]
        return said

    assert cache("tile/0/000") == "public, max-age=31536000, immutable"
    assert cache("tile/entries/001.p/2") == "public, max-age=60"
    assert cache("checkpoint") == "no-cache"
    # Served as a public bucket serves it (the operator's read-only policy, as
    # docs/operations.md gives it): plain GETs, no fairroll, no signature.
    public = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": "*",
                "Action": "s3:GetObject",
                "Resource": f"arn:aws:s3:::{BUCKET}/logs/*",
            }
        ],
    }
    s3.put_bucket_policy(Bucket=BUCKET, Policy=json.dumps(public))
    (tmp_path / "keys.json").write_bytes(client.get("/v1/keys").content)
    (tmp_path / "export.ndjson").write_bytes(client.get(f"/v1/tables/{table}/export").content)
    note = s3.get_object(Bucket=BUCKET, Key=f"logs/{table}/checkpoint")["Body"].read()
    (tmp_path / "checkpoint").write_bytes(note)
    keys = ("--keys", tmp_path / "keys.json", "--root", TEST_ROOT, "--no-replay", "--json")
    tiles_url = f"{endpoint}/{BUCKET}/logs/{table}"
    from_bucket = fairroll_cli("verify", "--tiles", tiles_url, *keys, timeout=120)
    exported = fairroll_cli(
        "verify", tmp_path / "export.ndjson", "--checkpoint", tmp_path / "checkpoint", *keys
    )
    assert from_bucket.returncode == 0, from_bucket.stdout + from_bucket.stderr
    assert json.loads(from_bucket.stdout) == json.loads(exported.stdout)
    # A bundle flipped in the bucket: named by the verifier.
    key = f"logs/{table}/tile/entries/001.p/2"
    flipped = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()[:-1] + b"!"
    s3.put_object(Bucket=BUCKET, Key=key, Body=flipped)
    caught = fairroll_cli("verify", "--tiles", tiles_url, *keys[:-1], timeout=120)
    assert caught.returncode == 1 and "tile/entries/001.p/2 is not its leaf" in caught.stdout


def test_a_bucket_mirror_without_credentials_says_which_variable(
    live_server: Any, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    done = mirror_to(live_server, table, f"s3://{BUCKET}/x")
    assert done.returncode == 2 and "AWS_ACCESS_KEY_ID" in done.stderr, done.stderr
