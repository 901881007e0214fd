import tempfile
import unittest
from pathlib import Path

import helpers
from helpers import write

from common import doc_refs

REPO = helpers.TOOLS_DIR.parent
HEADER = """\
struct ktimer_clock {
	const char	*name;
	ktime_t		(*get_time)(void);
	unsigned int	flags;
};

#define KTIMER_CLOCK_MANUAL	BIT(0)
#define KTIMER_MAX_CLOCKS	8

int ktimer_register_clock(struct ktimer_clock *clock);
"""
TEST = """\
static struct kunit_case ktimer_cases[] = {
	KUNIT_CASE(ktimer_fires_test),
	KUNIT_CASE_PARAM(ktimer_nanosleep_full_test, clocks_gen_params),
	{}
};
static struct kunit_suite ktimer_suite = { .name = "ktimer_realclock", .test_cases = ktimer_cases };
"""
MAKEFILE = "## test: the gate\ntest:\n\t@true\n\nimport:\n\t@true\n"
GOOD = """\
# How to

## Register it

`ktimer_register_clock()` fails when all `KTIMER_MAX_CLOCKS` (8) are taken;
`.flags = KTIMER_CLOCK_MANUAL`; see `kernel/include/linux/ktimer.h` and write
`kernel/patches/NNNN-ktimers-add-...patch`, then `make import`.
The `ktimer_realclock` suite runs `ktimer_fires_test` and `ktimer_nanosleep_*_test`.
See [above](#register-it) and [the other page](other.md#its-heading).

```c
struct ktimer_clock my_clock = {
	.name		= "mine",
	.get_time	= my_get_time,
};

static ktime_t my_get_time(void)
{
	return 0;
}

static int __init my_init(void)
{
	return ktimer_register_clock(&my_clock);
}
```
"""


class DocReferencesTest(unittest.TestCase):
    def setUp(self):
        self.repo = Path(tempfile.mkdtemp())
        write(self.repo / "kernel/include/linux/ktimer.h", HEADER)
        write(self.repo / "kernel/kernel/time/ktimer_realclock_test.c", TEST)
        write(self.repo / "kernel/patches/0001-ktimers-core.patch", "")
        write(self.repo / "Makefile", MAKEFILE)
        write(self.repo / "docs/other.md", "# Other\n\n## Its heading\n")

    def problems(self, text):
        return doc_refs.check(write(self.repo / "docs/howto.md", text), self.repo)

    def broken(self, old, new):
        self.assertIn(old, GOOD)
        return self.problems(GOOD.replace(old, new))

    def test_a_page_whose_references_all_exist_passes(self):
        self.assertEqual(self.problems(GOOD), [])

    def test_each_kind_of_stale_reference_is_named(self):
        cases = {
            "a renamed function": ("`ktimer_register_clock()`", "`ktimer_add_clock()`", "ktimer_add_clock"),
            "a renamed constant": ("`KTIMER_MAX_CLOCKS`", "`KTIMER_NR_CLOCKS`", "KTIMER_NR_CLOCKS"),
            "a changed value": ("(8)", "(16)", "says 16"),
            "a flag in an assignment": ("= KTIMER_CLOCK_MANUAL`", "= KTIMER_CLOCK_SIMULATED`", "SIMULATED"),
            "a moved file": ("ktimer.h`", "ktimers.h`", "ktimers.h"),
            "a folder that is gone": ("kernel/patches/NNNN", "kernel/series/NNNN", "kernel/series"),
            "a make target": ("`make import`", "`make fetch`", "fetch"),
            "a renamed case": ("`ktimer_fires_test`", "`ktimer_fired_test`", "ktimer_fired_test"),
            "a glob that matches none": ("`ktimer_nanosleep_*_test`", "`ktimer_sleep_*_test`", "ktimer_sleep_*"),
            "a renamed suite": ("`ktimer_realclock`", "`ktimer_real_clock`", "ktimer_real_clock"),
            "an anchor": ("#register-it", "#register", "#register"),
            "a page": ("other.md", "others.md", "others.md"),
            "a struct field": (".get_time\t=", ".read\t=", "no field read"),
            "a called function": ("return ktimer_register_clock(", "return ktimer_add_clock(", "ktimer_add_clock"),
        }
        for what, (old, new, named) in cases.items():
            with self.subTest(what):
                problems = self.broken(old, new)
                self.assertEqual(len(problems), 1, problems)
                self.assertIn(named, problems[0])

    def test_kernel_names_resolve_in_the_tree_and_are_left_alone_without_it(self):
        text = "`ktime_get_boottime()` and `CLOCK_BOOTTIME`\n"
        self.assertEqual(self.problems(text), [])
        tree = self.repo / "tree"
        write(tree / "Makefile", "")
        write(tree / "include/linux/timekeeping.h", "extern ktime_t ktime_get_boottime(void);\n")
        write(tree / "include/uapi/linux/time.h", "#define CLOCK_MONOTONIC 1\n")
        problems = doc_refs.check(self.repo / "docs/howto.md", self.repo, tree)
        self.assertEqual(problems, ["no #define or enum constant CLOCK_BOOTTIME"])

    def test_a_function_a_patch_adds_to_an_existing_file_resolves_in_a_tree_without_the_series(self):
        tree = self.repo / "tree"
        write(tree / "Makefile", "")
        write(tree / "include/linux/posix-clock.h", "int posix_clock_register(struct posix_clock *clk);\n")

        def problems(text):
            return doc_refs.check(write(self.repo / "docs/howto.md", text), self.repo, tree)

        text = "`posix_clock_register_timers()`\n"
        self.assertEqual(problems(text), ["no function posix_clock_register_timers()"])
        write(self.repo / "kernel/patches/0001-ktimers-core.patch",
              "+++ b/include/linux/posix-clock.h\n"
              "+int posix_clock_register_timers(struct posix_clock *clk);\n"
              "-int posix_clock_unregister_timers(struct posix_clock *clk);\n")
        self.assertEqual(problems(text), [])
        self.assertEqual(problems("`posix_clock_unregister_timers()`\n"),
                         ["no function posix_clock_unregister_timers()"])

    def test_prose_in_backticks_is_not_a_reference(self):
        self.assertEqual(self.problems("`git am`, `-EBUSY`, `name`, `import`, `..._stop_test`\n"), [])


class HowToPagesTest(unittest.TestCase):
    def test_adding_a_clock_base_names_only_what_exists(self):
        tree = REPO / "build" / "linux"
        self.assertEqual(doc_refs.check(REPO / "docs" / "adding-a-clock-base.md", REPO, tree), [])


if __name__ == "__main__":
    unittest.main()
