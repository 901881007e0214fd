import stat
import unittest

from helpers import TempDirTestCase  # noqa: F401  (puts tools/ on sys.path)

from guest import cpio


def read_newc(data):
    """A minimal newc reader: [(name, mode, data, (major, minor))] up to the trailer."""
    entries, offset = [], 0
    while True:
        assert data[offset:offset + 6] == b"070701", data[offset:offset + 6]
        fields = [int(data[offset + 6 + 8 * i:offset + 14 + 8 * i], 16) for i in range(13)]
        name_size, file_size = fields[11], fields[6]
        name_start = offset + 110
        name = data[name_start:name_start + name_size - 1].decode()
        assert data[name_start + name_size - 1] == 0
        data_start = name_start + name_size + (-(110 + name_size) % 4)
        body = data[data_start:data_start + file_size]
        offset = data_start + file_size + (-file_size % 4)
        if name == cpio.TRAILER:
            assert offset == len(data)
            return entries
        entries.append((name, fields[1], body, (fields[9], fields[10])))


class CpioTest(unittest.TestCase):
    def test_round_trip_of_dirs_files_and_the_console_node(self):
        archive = cpio.Archive()
        archive.add_dir("dev")
        archive.add_char_device("dev/console", 5, 1)
        archive.add_file("/init", b"\x7fELF...", 0o755)
        archive.add_file("plan", b"g 10 nanosleep\n")
        entries = read_newc(archive.to_bytes())
        self.assertEqual([e[0] for e in entries], ["dev", "dev/console", "init", "plan"])
        self.assertTrue(stat.S_ISDIR(entries[0][1]))
        self.assertTrue(stat.S_ISCHR(entries[1][1]))
        self.assertEqual(entries[1][3], (5, 1))
        self.assertEqual(stat.S_IMODE(entries[2][1]), 0o755)
        self.assertEqual(entries[2][2], b"\x7fELF...")
        self.assertEqual(entries[3][2], b"g 10 nanosleep\n")

    def test_every_entry_is_aligned_to_four_bytes(self):
        for size in range(0, 9):
            archive = cpio.Archive()
            archive.add_file("x" * (size + 1), b"y" * size)
            data = archive.to_bytes()
            self.assertEqual(len(data) % 4, 0)
            self.assertEqual(read_newc(data)[0][2], b"y" * size)

    def test_header_fields_are_eight_hex_digits(self):
        header = cpio.header(cpio.Entry("a", stat.S_IFREG | 0o644, b"abc"), 7)
        self.assertEqual(len(header), 110)
        self.assertEqual(header[6:14], b"00000007")
        self.assertEqual(header[54:62], b"00000003")   # file size


if __name__ == "__main__":
    unittest.main()
