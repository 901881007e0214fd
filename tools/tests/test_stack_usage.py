import unittest

import helpers  # noqa: F401  (puts tools/ on sys.path)

from common import stack_usage

CONSOLE = """\
[    1.20] kworker/u4:0 (12) used greatest stack depth: 7000 bytes left
guest: posix_timers begins
posix_timers (80) used greatest stack depth: 6008 bytes left
guest: kt_nanosleep| ok 8 the time leftkt_ptp (95) used greatest stack depth: 5580 bytes left
stack depth: 10 bytes left (not a record line)
"""


class StackUsageTest(unittest.TestCase):
    def test_records_in_order(self):
        records = stack_usage.records(CONSOLE.splitlines())
        self.assertEqual([(r.task, r.bytes_left) for r in records],
                         [("kworker/u4:0", 7000), ("posix_timers", 6008), ("leftkt_ptp", 5580)])

    def test_deepest_and_bytes_used(self):
        record = stack_usage.deepest(CONSOLE.splitlines())
        self.assertEqual(record.to_dict(), {"task": "leftkt_ptp", "bytes_left": 5580, "used": 8192 - 5580})
        self.assertIsNone(stack_usage.deepest(["no record here"]))
