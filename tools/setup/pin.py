"""kernel/base.pin: which Debian kernel source package ktimers is tested against.

check() compares the pin with what is installed: the same version and tarball
checksum is fine, another 6.12.y only warns (the port should still apply), and
anything else is an error. repin() rewrites the pin from the installed package
(`make pin`).
"""

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from common import PIN_FILE, ToolError, progress, rel, run, warn

PIN_KEYS = ("package", "version", "tarball", "sha256", "kernelversion")
DEFAULT_PACKAGE = "linux-source-6.12"


@dataclass
class Pin:
    package: str
    version: str
    tarball: str
    sha256: str
    kernelversion: str


@dataclass
class CheckResult:
    pin: Pin
    installed_version: str
    tarball: Path
    sha256: str
    warnings: list = field(default_factory=list)

    @property
    def kernelversion(self):
        return kernel_version_of(self.installed_version)


def read_pin(path=PIN_FILE):
    path = Path(path)
    if not path.is_file():
        raise ToolError(f"{path} is missing",
                        "run `make pin` to create it from the installed linux-source-6.12 package")
    values = {}
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ToolError(f"{path}:{number}: expected 'key = value', got {raw!r}",
                            "fix the line or run `make pin` to rewrite the file")
        values[key.strip()] = value.strip()
    missing = [key for key in PIN_KEYS if not values.get(key)]
    if missing:
        raise ToolError(f"{path} lacks {', '.join(missing)}",
                        "run `make pin` to rewrite it from the installed package")
    return Pin(**{key: values[key] for key in PIN_KEYS})


def write_pin(pin, path=PIN_FILE):
    text = (
        "# Kernel base the ktimers series is tested against.\n"
        "# `make pin` rewrites this file from the installed Debian package.\n"
        + "".join(f"{key} = {getattr(pin, key)}\n" for key in PIN_KEYS)
    )
    Path(path).write_text(text)


def kernel_version_of(package_version):
    """'6.12.118-1~deb12u1' -> '6.12.118' (the upstream part of a Debian version)."""
    match = re.match(r"(?:\d+:)?(\d+\.\d+(?:\.\d+)?)", package_version or "")
    if not match:
        raise ToolError(f"cannot read a kernel version from package version {package_version!r}")
    return match.group(1)


def kernel_series(kernelversion):
    """'6.12.118' -> '6.12'."""
    return ".".join(kernelversion.split(".")[:2])


def installed_version(package, runner=run):
    """Installed version of a Debian package, or None if it is not installed."""
    proc = runner(["dpkg-query", "-W", "-f=${db:Status-Abbrev} ${Version}", package],
                  check=False, hint="this tool needs Debian's dpkg (Debian 12)")
    status, _, version = proc.stdout.strip().partition(" ")
    if proc.returncode != 0 or not status.startswith("ii") or not version:
        return None
    return version.strip()


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _stat_key(path):
    stat = os.stat(path)
    return {"path": str(path), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def remember_tarball_sha(path, sha, cache_file):
    if cache_file and Path(cache_file).parent.is_dir():
        Path(cache_file).write_text(json.dumps(dict(_stat_key(path), sha256=sha)) + "\n")


def tarball_sha256(path, cache_file=None):
    """sha256 of the tarball; cached by (size, mtime) because hashing 150MB each run is slow."""
    key = _stat_key(path)
    if cache_file and Path(cache_file).is_file():
        try:
            cached = json.loads(Path(cache_file).read_text())
            if {k: cached.get(k) for k in key} == key and cached.get("sha256"):
                return cached["sha256"]
        except (ValueError, OSError):
            pass  # a broken cache just means we hash again
    progress("pin", f"computing sha256 of {path} ...")
    sha = file_sha256(path)
    remember_tarball_sha(path, sha, cache_file)
    return sha


def repin_hint():
    return "`make pin` rewrites kernel/base.pin from the installed package"


def check(pin_path=PIN_FILE, cache_file=None, query=installed_version, quiet=False):
    """Validate the installed kernel source against the pin; return what to build from."""
    pin = read_pin(pin_path)
    found = query(pin.package)
    if found is None:
        raise ToolError(f"package {pin.package} is not installed",
                        f"run `make deps` as root, or: apt-get install {pin.package}")
    found_kv = kernel_version_of(found)
    if kernel_series(found_kv) != kernel_series(pin.kernelversion):
        raise ToolError(
            f"{pin.package} {found} contains kernel {found_kv}, but ktimers targets "
            f"{kernel_series(pin.kernelversion)}.y (pinned {pin.kernelversion})",
            f"install a {kernel_series(pin.kernelversion)} linux-source package from Debian 12 "
            f"(apt-get install {pin.package}); porting to another series needs the series reworked")
    tarball = Path(pin.tarball)
    if not tarball.is_file():
        raise ToolError(f"kernel tarball {tarball} is missing although {pin.package} is installed",
                        f"reinstall it: apt-get install --reinstall {pin.package}")
    sha = tarball_sha256(tarball, cache_file)
    result = CheckResult(pin=pin, installed_version=found, tarball=tarball, sha256=sha)
    if found != pin.version:
        result.warnings.append(
            f"ktimers was tested against {pin.package} {pin.version} (kernel {pin.kernelversion}), "
            f"but {found} (kernel {found_kv}) is installed; proceeding with it. "
            f"If everything passes, {repin_hint()}.")
    elif sha != pin.sha256:
        result.warnings.append(
            f"{tarball} has sha256 {sha[:16]}..., but base.pin records {pin.sha256[:16]}... "
            f"for the same version {found}; proceeding. If this is intended, {repin_hint()}.")
    if not quiet:
        for message in result.warnings:
            warn(message)
    return result


def find_tarball(package, runner=run):
    """The .tar.xz a linux-source package ships (under /usr/src)."""
    proc = runner(["dpkg", "-L", package], what=f"dpkg -L {package}")
    for line in proc.stdout.splitlines():
        if line.endswith(".tar.xz"):
            return Path(line)
    raise ToolError(f"package {package} ships no .tar.xz kernel tarball",
                    f"reinstall it: apt-get install --reinstall {package}")


def repin(pin_path=PIN_FILE, runner=run, query=installed_version):
    """Rewrite base.pin from the installed package (`make pin`)."""
    package = read_pin(pin_path).package if Path(pin_path).is_file() else DEFAULT_PACKAGE
    version = query(package)
    if version is None:
        raise ToolError(f"package {package} is not installed",
                        f"run `make deps` as root, or: apt-get install {package}")
    tarball = find_tarball(package, runner)
    if not tarball.is_file():
        raise ToolError(f"{tarball} is missing", f"apt-get install --reinstall {package}")
    pin = Pin(package=package, version=version, tarball=str(tarball),
              sha256=tarball_sha256(tarball), kernelversion=kernel_version_of(version))
    write_pin(pin, pin_path)
    progress("pin", f"{rel(pin_path)}: {package} {version} (kernel {pin.kernelversion}), sha256 {pin.sha256[:16]}...")
    return pin
