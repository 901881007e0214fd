"""The architectures we can run KUnit on: one table entry per arch.

Adding an arch = adding one Arch(...) line. kunit.py must know the arch too
(tools/testing/kunit/qemu_configs/<arch>.py in the kernel tree).
"""

from dataclasses import dataclass

from common import ToolError


@dataclass(frozen=True)
class Arch:
    name: str                   # kunit.py --arch value (= kernel ARCH)
    cross_compile: str = ""     # CROSS_COMPILE prefix; "" builds with the host gcc
    packages: tuple = ()        # Debian packages needed beyond the common list (QEMU, cross gcc)
    qemu_args: str = ""         # extra QEMU arguments for every run (-smp comes from kunit_configs/matrix)
    qemu: bool = True           # False: no QEMU (um), so no --qemu_args at all
    kernel_args: tuple = ()     # kernel arguments for every boot of it, KUnit and guest selftests
    # The guest selftests (make selftest): prefix of the gcc that builds static user
    # programs, and the packages with it and its C library; "" = not supported yet.
    user_cross_compile: str = ""
    guest_packages: tuple = ()

    @property
    def gcc(self):
        return f"{self.cross_compile}gcc"


# tsc=reliable: under QEMU TCG on a loaded host a vCPU stall at boot let the clocksource watchdog
# mark the TSC unstable against jiffies (95 ms skew over 480 ms); on refined-jiffies hrtimers never
# go high-res and ktimer_engine_resolution_test failed (docs/running.md#the-tsc-of-x86-guests).
X86_KERNEL_ARGS = ("tsc=reliable",)

ARCHES = {
    arch.name: arch
    for arch in (
        Arch("i386", packages=("qemu-system-x86",), kernel_args=X86_KERNEL_ARGS, user_cross_compile="i686-linux-gnu-",
             guest_packages=("gcc-i686-linux-gnu", "libc6-dev-i386-cross")),
        Arch("x86_64", packages=("qemu-system-x86",), kernel_args=X86_KERNEL_ARGS),
        Arch("arm", "arm-linux-gnueabihf-", ("qemu-system-arm", "gcc-arm-linux-gnueabihf"),
             user_cross_compile="arm-linux-gnueabihf-",
             guest_packages=("gcc-arm-linux-gnueabihf", "libc6-dev-armhf-cross")),
        Arch("arm64", "aarch64-linux-gnu-", ("qemu-system-arm", "gcc-aarch64-linux-gnu")),
        Arch("riscv", "riscv64-linux-gnu-", ("qemu-system-misc", "opensbi", "gcc-riscv64-linux-gnu")),
        Arch("um", qemu=False),  # User Mode Linux runs as a host process, no QEMU
    )
}

DEFAULT_ARCHES = ("i386", "arm")


def get_arch(name):
    try:
        return ARCHES[name]
    except KeyError:
        raise ToolError(f"unknown arch {name!r}",
                        f"use one of: {', '.join(ARCHES)} (or add it to tools/common/arches.py)") from None
