"""The dependency lock: make it, check an install against it, audit it, and try the newest.

    python scripts/lock.py compile   # requirements/service.lock and dev.lock, with hashes
    python scripts/lock.py check     # every locked package installed at its locked version
    python scripts/lock.py audit [--strict]   # pip-audit against both locks
    python scripts/lock.py newest    # a fresh venv with the newest versions the bounds
                                     # allow (no lock), and the whole suite run in it

The locks are pip-compile's (pip-tools), from ``pyproject.toml``: ``service.lock`` the
service's dependencies (the Dockerfile installs it), ``dev.lock`` those and the dev extra
(``.ci/run`` installs it before the README's two commands, which then find every
dependency satisfied). ``service.lock`` also pins ``requirements/image.in``, what the
image's Debian Python needs beyond the project's own requirements. A change of
dependencies is a change of ``pyproject.toml`` and ``compile``, committed together.

``audit`` asks PyPI's vulnerability data through pip-audit. A machine that cannot reach
it (this workplace's reaches only the package index) gets every package skipped: without
``--strict`` that is said and passes; ``--strict`` (the scheduled job of
``docs/operations.md``) fails then too. A vulnerability found fails either way.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import venv
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCKS = ROOT / "requirements"
SERVICE, DEV = LOCKS / "service.lock", LOCKS / "dev.lock"
#: As pip-compile writes them into the locks' headers: relative to the checkout.
_SERVICE, _DEV = "requirements/service.lock", "requirements/dev.lock"
#: What the image's older Python needs beyond pyproject.toml (its comment says why).
_IMAGE = "requirements/image.in"
_PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;\\]+)", re.MULTILINE)
_COMPILE = [
    sys.executable,
    "-m",
    "piptools",
    "compile",
    "--quiet",
    "--generate-hashes",
    "--strip-extras",
    "--allow-unsafe",
    "--no-emit-index-url",
    "--no-emit-find-links",
]


def pins(lock: Path) -> dict[str, str]:
    """Package name (normalized) -> locked version."""
    return {_name(name): version for name, version in _PIN.findall(lock.read_text())}


def compile_locks() -> int:
    service = [*_COMPILE, "-o", _SERVICE, "pyproject.toml", _IMAGE]
    subprocess.run(service, cwd=ROOT, check=True)
    dev = [*_COMPILE, "--extra", "dev", "-c", _SERVICE, "-o", _DEV, "pyproject.toml"]
    subprocess.run(dev, cwd=ROOT, check=True)
    print(f"{SERVICE.name}: {len(pins(SERVICE))} pins; {DEV.name}: {len(pins(DEV))} pins")
    return 0


def check() -> int:
    """Every package dev.lock pins is installed at that version."""
    wrong = []
    for name, version in sorted(pins(DEV).items()):
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = "missing"
        if installed != version:
            wrong.append(f"{name}: locked {version}, installed {installed}")
    for line in wrong:
        print(line, file=sys.stderr)
    print(f"{len(pins(DEV)) - len(wrong)} of {len(pins(DEV))} locked packages as locked")
    return 1 if wrong else 0


def audit(*, strict: bool) -> int:
    command = [sys.executable, "-m", "pip_audit", "--disable-pip", "--no-deps", "--require-hashes"]
    command += ["-r", str(DEV), "-r", str(SERVICE), "--format", "json", "--progress-spinner=off"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        print(done.stdout + done.stderr, file=sys.stderr)
        return 1
    packages = report.get("dependencies", [])
    vulnerable = [p for p in packages if p.get("vulns")]
    skipped = [p for p in packages if p.get("skip_reason")]
    for package in vulnerable:
        ids = ", ".join(v["id"] for v in package["vulns"])
        print(f"VULNERABLE {package['name']} {package['version']}: {ids}", file=sys.stderr)
    audited = len(packages) - len(skipped)
    print(f"pip-audit: {audited} of {len(packages)} packages audited, {len(vulnerable)} vulnerable")
    if vulnerable:
        return 1
    if skipped:
        print(
            f"{len(skipped)} skipped ({skipped[0].get('skip_reason')}): the vulnerability data "
            "is out of this machine's reach; run 'python scripts/lock.py audit --strict' "
            "where it is (docs/operations.md)"
        )
        return 1 if strict else 0
    return 0


def newest() -> int:
    """The suite against the newest versions the bounds in pyproject.toml allow."""
    with tempfile.TemporaryDirectory(prefix="fairroll-newest-") as folder:
        env_dir = Path(folder) / "venv"
        venv.create(env_dir, with_pip=True)
        python = str(env_dir / "bin" / "python")
        install = [python, "-m", "pip", "install", "--quiet", "--upgrade"]
        subprocess.run(
            [*install, "--upgrade-strategy", "eager", "-e", ".[dev]"], cwd=ROOT, check=True
        )
        listed = subprocess.run(
            [python, "-m", "pip", "list", "--format", "json"],
            capture_output=True,
            text=True,
            check=True,
        )
        locked = pins(DEV)
        for package in json.loads(listed.stdout):
            name, version = _name(package["name"]), package["version"]
            if name in locked and locked[name] != version:
                print(f"newer than the lock: {name} {locked[name]} -> {version}")
        return subprocess.run([python, "-m", "pytest", "-n", "2"], cwd=ROOT, check=False).returncode


def _name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("compile")
    sub.add_parser("check")
    sub.add_parser("audit").add_argument("--strict", action="store_true")
    sub.add_parser("newest")
    args = parser.parse_args()
    if args.command == "compile":
        return compile_locks()
    if args.command == "check":
        return check()
    if args.command == "audit":
        return audit(strict=args.strict)
    return newest()


if __name__ == "__main__":
    sys.exit(main())
