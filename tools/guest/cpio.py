"""Write an initramfs: a cpio archive in the "newc" format the kernel unpacks (no compression).

The format (Documentation/driver-api/early-userspace/buffer-format.rst): per entry
a 110-byte ASCII header of 13 eight-digit hex fields after the magic 070701, the
NUL-terminated name, padding to 4 bytes, the data, padding to 4 bytes; the
archive ends with an entry named TRAILER!!!. Written from Python so that no cpio
tool is needed and no device node has to exist on the host (dev/console is only
a header here).
"""

import stat
from dataclasses import dataclass

MAGIC = "070701"
TRAILER = "TRAILER!!!"


@dataclass(frozen=True)
class Entry:
    name: str           # path inside the archive, without a leading '/'
    mode: int           # file type and permission bits (stat.S_IFREG | 0o755, ...)
    data: bytes = b""
    rdev: tuple = (0, 0)  # (major, minor) of a device node


def pad4(length):
    return b"\0" * (-length % 4)


def header(entry, ino):
    nlink = 2 if stat.S_ISDIR(entry.mode) else 1
    fields = (ino, entry.mode, 0, 0, nlink, 0, len(entry.data), 0, 0,
              entry.rdev[0], entry.rdev[1], len(entry.name) + 1, 0)
    return (MAGIC + "".join(f"{value:08x}" for value in fields)).encode("ascii")


class Archive:
    """Entries in the order added; parent directories must be added before their contents."""

    def __init__(self):
        self.entries = []

    def add_dir(self, name, mode=0o755):
        self.entries.append(Entry(name.strip("/"), stat.S_IFDIR | mode))

    def add_file(self, name, data, mode=0o644):
        self.entries.append(Entry(name.strip("/"), stat.S_IFREG | mode, bytes(data)))

    def add_char_device(self, name, major, minor, mode=0o600):
        self.entries.append(Entry(name.strip("/"), stat.S_IFCHR | mode, rdev=(major, minor)))

    def to_bytes(self):
        out = bytearray()
        for ino, entry in enumerate(self.entries + [Entry(TRAILER, 0)], start=1):
            name = entry.name.encode() + b"\0"
            out += header(entry, 0 if entry.name == TRAILER else ino) + name
            out += pad4(110 + len(name))
            out += entry.data + pad4(len(entry.data))
        return bytes(out)
