"""Boot the KUnit kernel image with the guest initramfs in QEMU and capture its console.

The QEMU binary, machine, console and kernel image come from the kernel tree's
tools/testing/kunit/qemu_configs/<arch>.py, as kunit.py uses them, plus the arch's
qemu_args (tools/common/arches.py); we only add -initrd, -smp and our kernel arguments:
KUnit off, /init from the initramfs, reboot on panic, and the ktimer.users column.
The guest's /init reboots when done, and -no-reboot turns that into QEMU exiting.
"""

import ast
import queue
import shlex
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from common import KTIMER_WATCHDOG_ARG, ToolError, format_duration, progress, rel

QEMU_CONFIGS = "tools/testing/kunit/qemu_configs"
HEARTBEAT_SECONDS = 60
BOOT_ALLOWANCE_SECONDS = 180    # kernel boot and power-off under emulation, on top of the plan's time
TAIL_LINES = 15


@dataclass(frozen=True)
class QemuParams:
    qemu_arch: str
    kernel_path: str            # relative to the build dir, e.g. arch/x86/boot/bzImage
    console: str                # kernel_command_line of the config, e.g. console=ttyS0
    extra: tuple = ()
    serial: str = "stdio"


@dataclass
class Boot:
    command: list
    lines: list = field(default_factory=list)
    returncode: int = None
    timed_out: bool = False
    seconds: float = 0.0
    stderr: list = field(default_factory=list)      # QEMU's own messages ("qemu-system-arm: ...")


def qemu_params(tree, arch_name):
    """Read QemuArchParams(...) of the kernel tree's kunit qemu config without importing it."""
    path = Path(tree) / QEMU_CONFIGS / f"{arch_name}.py"
    try:
        module = ast.parse(path.read_text())
    except OSError:
        raise ToolError(f"{rel(path)} is missing: kunit.py has no QEMU setup for {arch_name}",
                        "run `make tree` for a complete kernel tree") from None
    for node in ast.walk(module):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "QemuArchParams":
            values = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}
            return QemuParams(values["qemu_arch"], values["kernel_path"], values["kernel_command_line"],
                              tuple(values.get("extra_qemu_params", ())), values.get("serial", "stdio"))
    raise ToolError(f"{rel(path)} has no QemuArchParams(...): cannot tell how to boot {arch_name}")


def kernel_args(params, users_on, extra=()):
    """extra: more arguments; NAME=value ones the kernel does not know reach /init's environment."""
    # slab_nomerge: /init counts the live objects of a slab cache of ours (report_pclock_objects);
    # oops=panic: an oops ends the boot at once with its console, instead of leaving the guest to run
    # out its timeout (20 minutes of CI once) on a kernel whose further results mean nothing
    return ["kunit.enable=0", "rdinit=/init", "panic=-1", "oops=panic", KTIMER_WATCHDOG_ARG, "slab_nomerge", params.console, f"ktimer.users={1 if users_on else 0}",
            *extra]


def qemu_command(params, kernel, initramfs, users_on, smp=2, arch=None, extra_args=()):
    """arch: the Arch whose qemu_args and kernel_args every boot of it gets (common/arches.py)."""
    arch_kernel_args = arch.kernel_args if arch else ()
    return [f"qemu-system-{params.qemu_arch}", "-nodefaults", "-m", "1024", "-kernel", str(kernel),
            "-initrd", str(initramfs), "-append",
            " ".join(kernel_args(params, users_on, (*arch_kernel_args, *extra_args))),
            "-no-reboot", "-nographic", "-serial", params.serial, *params.extra,
            *shlex.split(arch.qemu_args if arch else ""), "-smp", str(smp)]


def _reader(stream, lines):
    for line in stream:
        lines.put(line)
    lines.put(None)


def run(command, console_path, timeout, label, on_line=None):
    """Run QEMU, write the console to console_path, stop it after `timeout` seconds; returns a Boot."""
    boot = Boot(command)
    progress("selftest", "$ " + shlex.join(command), label)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1)
    except FileNotFoundError:
        raise ToolError(f"{command[0]} is not installed", "run `make deps` (as root)") from None
    lines = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    last_beat = start
    with open(console_path, "w", buffering=1) as console:   # line-buffered: readable while it runs
        while True:
            now = time.monotonic()
            if now - start > timeout:
                boot.timed_out = True
                proc.kill()
                break
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                line = ""
            if line is None:
                break
            if line:
                line = line.rstrip("\r\n")
                console.write(line + "\n")
                boot.lines.append(line)
                if line.startswith(f"qemu-system-{command[0].rsplit('-', 1)[-1]}: "):
                    boot.stderr.append(line)
                if on_line:
                    on_line(line)
            if now - last_beat > HEARTBEAT_SECONDS:
                last_beat = now
                progress("selftest", f"guest running ({format_duration(now - start)} elapsed, "
                                     f"timeout {timeout}s)", label)
    boot.returncode = proc.wait()
    boot.seconds = time.monotonic() - start
    return boot


def trouble(boot, finished, console_path):
    """What went wrong with QEMU or the guest, and what to do next; None if it finished normally."""
    tail = "\n".join(f"    {line}" for line in boot.lines[-TAIL_LINES:])
    where = f"the whole console is in {rel(console_path)}"
    if boot.timed_out:
        return ("TIMEOUT", f"QEMU did not exit within {int(boot.seconds)}s: the guest hung or a test ran "
                           f"past its time; last console lines:\n{tail}\n  -> {where}; if the tests are only "
                           "slow, raise their timeouts in selftests/plan")
    if boot.stderr or (boot.returncode not in (0, None) and not finished):
        messages = "\n".join(f"    {line}" for line in boot.stderr) or tail
        return ("CRASH", f"QEMU failed (exit {boot.returncode}):\n{messages}\n  -> check that "
                         f"{boot.command[0]} is installed (`make deps`) and that the kernel image exists "
                         f"(`make kunit CONFIG=default ARCH=...`); {where}")
    if not finished:
        return ("CRASH", f"the guest stopped before its /init said `guest: done` (kernel panic, or /init "
                         f"died); last console lines:\n{tail}\n  -> {where}; a panic names the cause above "
                         "the `Kernel panic` line")
    return None
