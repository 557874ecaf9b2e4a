"""The Nu HTML Checker (vnu.jar, the W3C validator's engine), run with Debian's Java.

vnu.jar comes from the npm registry at test time (`npm pack vnu-jar`, the version and its
sha512 pinned below), cached under `tests/.cache/` so only the first run needs the
registry, like axe-core (`tests/axe.py`). Java is Debian's `default-jre-headless`, which
`.ci/run` installs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from tests.support import ROOT, need_outside

VNU_VERSION = "26.9.27"
VNU_INTEGRITY = (
    "sha512-TkQd5DFfOaWC9ebtvozTsrH2Vaod3jYg+vrOeREzIXxBexLz9+rS2DNtjn7+RPUiZhgli0SghgBX6RJR"
    "Nea0KA=="
)
CACHE = ROOT / "tests" / ".cache"


def java_path() -> str:
    found = shutil.which("java")
    if found is None:
        need_outside(
            "Java", "install Debian's default-jre-headless (apt-get install default-jre-headless)"
        )
    assert found is not None
    return found


def vnu_jar() -> Path:
    """vnu.jar of the pinned release, fetched once with `npm pack` and checked."""
    target = CACHE / f"vnu-{VNU_VERSION}.jar"
    if target.exists():
        return target
    npm = shutil.which("npm")
    if npm is None:
        need_outside("npm", "install Debian's npm package (apt-get install npm)")
    assert npm is not None
    CACHE.mkdir(parents=True, exist_ok=True)
    # Each fetch packs into its own directory and renames the checked file into place, so
    # test processes side by side (pytest-xdist) never read a half-written one.
    with tempfile.TemporaryDirectory(dir=CACHE) as scratch:
        packed = subprocess.run(  # noqa: S603 - npm from PATH, fixed arguments
            [npm, "pack", f"vnu-jar@{VNU_VERSION}", "--pack-destination", scratch, "--json"],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if packed.returncode != 0:
            need_outside("vnu-jar from the npm registry", packed.stderr.strip()[-500:])
        tarball = Path(scratch) / json.loads(packed.stdout)[0]["filename"]
        algorithm, _, expected = VNU_INTEGRITY.partition("-")
        digest = base64.b64encode(hashlib.new(algorithm, tarball.read_bytes()).digest()).decode()
        if digest != expected:
            raise AssertionError(f"vnu-jar {VNU_VERSION} from npm does not match its sha512")
        with tarfile.open(tarball) as archive:
            member = archive.extractfile("package/build/dist/vnu.jar")
            assert member is not None
            unpacked = Path(scratch) / "vnu.jar"
            unpacked.write_bytes(member.read())
        unpacked.replace(target)
    return target


def check(files: list[Path]) -> list[dict[str, Any]]:
    """The Nu checker's errors in `files` (HTML documents), each with its file."""
    java = java_path()
    jar = vnu_jar()
    ran = subprocess.run(  # noqa: S603 - Java from PATH, the pinned jar, our own files
        [java, "-jar", str(jar), "--format", "json", "--errors-only", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    try:
        report = json.loads(ran.stderr or ran.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"vnu did not answer in JSON: {ran.stderr[-800:]}") from None
    messages: list[dict[str, Any]] = report.get("messages", [])
    return [m for m in messages if m.get("type") == "error" or m.get("subType") == "fatal"]
