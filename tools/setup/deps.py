"""Make sure the Debian packages needed to build and boot the kernels are installed.

apt is only touched when something is missing, so `make` stays fast and works
offline once the machine is set up.
"""

import os

from common.arches import get_arch
from common import ToolError, is_root, progress, run

COMMON_PACKAGES = (
    "linux-source-6.12", "bc", "bison", "flex", "libelf-dev", "libssl-dev", "python3",
    "make", "gcc", "git", "xz-utils", "perl", "ccache",
    # checks of the kernel code: sparse (C=1), codespell and checkpatch's SPDX check (spdxcheck.py)
    "sparse", "codespell", "python3-ply", "python3-git",
    # the series as maintainers take it: git send-email (with the Perl module it needs) and b4
    "git-email", "libmailtools-perl", "b4",
)


def required_packages(arch_names):
    """Common packages plus each arch's own (kernel and guest selftests), in a stable order without duplicates."""
    packages = list(COMMON_PACKAGES)
    for name in arch_names:
        arch = get_arch(name)
        for package in arch.packages + arch.guest_packages:
            if package not in packages:
                packages.append(package)
    return packages


def missing_packages(packages, runner=run):
    """Packages dpkg does not report as installed."""
    proc = runner(["dpkg-query", "-W", "-f=${Package} ${db:Status-Abbrev}\n", *packages],
                  check=False, hint="this tool needs Debian's dpkg (Debian 12)")
    installed = set()
    for line in proc.stdout.splitlines():
        name, _, status = line.partition(" ")
        if status[1:2] == "i":  # "ii " installed, "hi " held but installed
            installed.add(name.split(":")[0])
    return [package for package in packages if package not in installed]


def ensure(arch_names, runner=run, root=None):
    """Install whatever is missing, or tell a non-root user what to install."""
    packages = required_packages(arch_names)
    missing = missing_packages(packages, runner)
    if not missing:
        progress("deps", f"all {len(packages)} packages installed ({' '.join(arch_names)})")
        return []
    root = is_root() if root is None else root
    if not root:
        raise ToolError(f"missing Debian packages: {' '.join(missing)}",
                        f"install them as root: sudo apt-get install --no-install-recommends {' '.join(missing)}"
                        " (or run `sudo make deps`)")
    progress("deps", f"installing {' '.join(missing)} ...")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    apt_hint = "check network access to the Debian archive and /etc/apt/sources.list, then rerun `make deps`"
    runner(["apt-get", "update"], env=env, what="apt-get update", hint=apt_hint)
    runner(["apt-get", "install", "-y", "--no-install-recommends", *missing], env=env,
           what=f"apt-get install {' '.join(missing)}", hint=apt_hint)
    still_missing = missing_packages(packages, runner)
    if still_missing:
        raise ToolError(f"apt-get finished but these are still not installed: {' '.join(still_missing)}",
                        "check that they exist for this Debian release: apt-cache policy " + " ".join(still_missing))
    progress("deps", f"installed {len(missing)} package(s)")
    return missing
