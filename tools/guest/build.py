"""Build the guest's userspace for one arch: the kernel tree's timer selftests, the project's
own selftests (selftests/user/*.c), our /init and /bin/sh (tools/guest/*.c), all static,
packed with the plan into an initramfs.

Everything lands in build/guest/<arch>/ (build.log, selftests/, init, sh,
initramfs.cpio). It takes seconds, so it is redone on every run.
"""

import contextlib
import fcntl
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from guest import cpio
from common.arches import get_arch
from common import BUILD_DIR, REPO_ROOT, ToolError, progress, rel
from kunit.run import child_env

SELFTESTS = "tools/testing/selftests/timers"
GUEST_SOURCES = REPO_ROOT / "tools" / "guest"
# The project's own selftests: one program per C file, next to the header they share.
USER_SOURCES = REPO_ROOT / "selftests" / "user"
USER_FLAGS = ("-pthread",)
GUEST_BUILD_DIR = BUILD_DIR / "guest"
# valid-adjtimex defines its own clock_adjtime(), which a static glibc also has: we link it
# again letting the first definition (the test's own) win, as dynamic linking would.
DUPLICATE_SYMBOL_TESTS = {"valid-adjtimex": "-Wl,--allow-multiple-definition"}


@dataclass
class GuestImage:
    arch: str
    initramfs: Path
    built: list = field(default_factory=list)       # selftests that were built
    not_built: dict = field(default_factory=dict)   # name -> why


def user_compiler(arch_name):
    """The C compiler for the arch's user space, checked to exist."""
    arch = get_arch(arch_name)
    if not arch.user_cross_compile:
        raise ToolError(f"no user-space cross compiler is known for {arch_name}",
                        "add user_cross_compile and its packages to tools/common/arches.py")
    compiler = f"{arch.user_cross_compile}gcc"
    if not shutil.which(compiler):
        raise ToolError(f"{compiler} is not installed: it builds the guest selftests for {arch_name}",
                        f"run `make deps` (as root); it installs {' '.join(arch.guest_packages)}")
    return compiler


def compile_static(compiler, source, output, log, flags=()):
    cmd = [compiler, "-static", "-O2", "-Wall", "-Wextra", *flags, "-o", str(output), str(source)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write("$ " + " ".join(cmd) + "\n" + proc.stdout)
    if proc.returncode:
        hint = "install the arch's static C library: run `make deps` (as root)" \
            if "cannot find -lc" in proc.stdout else f"see {rel(log.name)}"
        raise ToolError(f"cannot compile {rel(source)} with {compiler}:\n{proc.stdout.strip()}", hint)


def make_selftests(tree, compiler, out_dir, log, targets=(), ldflags="-static"):
    """`make -k` in the selftests dir: one test that does not build must not stop the others."""
    cmd = ["make", "-k", "-C", str(Path(tree) / SELFTESTS), f"OUTPUT={out_dir}", f"CC={compiler}",
           f"LDFLAGS={ldflags}", *[str(Path(out_dir) / target) for target in targets]]
    log.write("$ " + " ".join(cmd) + "\n")
    log.flush()
    subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=child_env())


def build_own(compiler, out_dir, log, sources=USER_SOURCES):
    """Compile each selftests/user/*.c into out_dir, next to the kernel's selftests; returns the names.
    One that does not compile, or that would replace a kernel selftest, stops the build."""
    names = []
    for source in sorted(Path(sources).glob("*.c")):
        output = Path(out_dir) / source.stem
        if output.exists():
            raise ToolError(f"{rel(source)} would replace the kernel's timer selftest `{source.stem}`",
                            "rename it: the project's own programs are named kt_<area>")
        compile_static(compiler, source, output, log, USER_FLAGS)
        names.append(source.stem)
    return names


def build_reason(log_text, name):
    """The linker's or compiler's first complaint about one test, for the report."""
    for line in log_text.splitlines():
        if f"/{name}" in line and ("multiple definition" in line or "error" in line):
            return line.strip()[-200:]
    return f"not built (see {rel(GUEST_BUILD_DIR)}/<arch>/build.log)"


@contextlib.contextmanager
def exclusive(arch_name, out_root=GUEST_BUILD_DIR):
    """Hold build/guest/<arch>.lock: one run at a time builds and boots that arch's guest, since the
    build starts by removing what another run may be booting (`make test` beside `make repeat`)."""
    Path(out_root).mkdir(parents=True, exist_ok=True)
    with open(Path(out_root) / f"{arch_name}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress("selftest", f"waiting for another run's guest of {arch_name} "
                                 f"({rel(Path(out_root) / f'{arch_name}.lock')})", arch_name)
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def build(tree, arch_name, plan, out_root=GUEST_BUILD_DIR):
    """Build everything and write the initramfs; returns a GuestImage."""
    compiler = user_compiler(arch_name)
    out = Path(out_root) / arch_name
    selftests = out / "selftests"
    shutil.rmtree(out, ignore_errors=True)
    selftests.mkdir(parents=True)
    if not (Path(tree) / SELFTESTS / "Makefile").is_file():
        raise ToolError(f"{rel(tree)} has no {SELFTESTS}", "run `make tree` first")
    progress("selftest", f"building the timer selftests, ours, /init and /bin/sh with {compiler}", arch_name)
    with open(out / "build.log", "w") as log:
        make_selftests(tree, compiler, selftests, log)
        for name, flag in DUPLICATE_SYMBOL_TESTS.items():
            if not (selftests / name).exists():
                make_selftests(tree, compiler, selftests, log, targets=[name], ldflags=f"-static {flag}")
        build_own(compiler, selftests, log)
        compile_static(compiler, GUEST_SOURCES / "init.c", out / "init", log)
        compile_static(compiler, GUEST_SOURCES / "sh.c", out / "sh", log)
    log_text = (out / "build.log").read_text(errors="replace")
    image = GuestImage(arch_name, out / "initramfs.cpio")
    for test in plan.tests:
        if (selftests / test.name).is_file():
            image.built.append(test.name)
        else:
            image.not_built[test.name] = build_reason(log_text, test.name)
    # every built test goes in, planned or not: set-2038 runs ./nsleep-lat and others itself
    everything = sorted(path.name for path in selftests.iterdir() if path.is_file() and path.stat().st_mode & 0o111)
    image.initramfs.write_bytes(initramfs(out, selftests, everything, plan.guest_plan(image.built)))
    progress("selftest", f"{len(image.built)} selftest(s) built"
             + (f", not built: {', '.join(image.not_built)}" if image.not_built else "")
             + f"; {rel(image.initramfs)} {image.initramfs.stat().st_size // 1024} KiB", arch_name)
    return image


def initramfs(out, selftests, names, plan_text):
    archive = cpio.Archive()
    for directory in ("dev", "etc", "proc", "sys", "tmp", "bin", "selftests"):
        archive.add_dir(directory)
    # for a guest without an RTC driver, whose clock would start at 1970 (init.c: set_wall_clock)
    archive.add_file("etc/host-time", f"{int(time.time())}\n".encode())
    # the kernel opens /dev/console for init's stdin/stdout/stderr before devtmpfs is mounted
    archive.add_char_device("dev/console", 5, 1)
    archive.add_file("init", (out / "init").read_bytes(), 0o755)
    archive.add_file("bin/sh", (out / "sh").read_bytes(), 0o755)
    archive.add_file("plan", plan_text.encode())
    for name in names:
        archive.add_file(f"selftests/{name}", (selftests / name).read_bytes(), 0o755)
    return archive.to_bytes()
