"""The test-configuration matrix (kunit_configs/matrix) and the effective kunitconfig of a run.

kunit_configs/matrix is an INI file (configparser), one section per configuration:

    [lowres]
    description = same kernel as default, booted with the low-resolution engine
    fragments   =                      # kunit_configs/<name>.config, in order, after .kunitconfig
    kernel_args = ktimer.highres=0     # added to the kernel command line
    smp         = 2                    # QEMU -smp
    by_default  = yes                  # run by `make` / `make test` without CONFIG=/CONFIGS=
    arches      = arm x86_64           # only on these arches (default: every arch)
    suites      = ktimer_modes         # only the suites matching this glob run and are expected

Runs with the same fragments share a build dir (build/kunit/<arch>-<fragments joined
by '+', or 'default'>), so a configuration that only changes kernel_args or smp costs
a boot, not a build.

Why we merge the kunitconfig ourselves: kunit.py (6.12, kunit_kernel.get_parsed_kunitconfig)
refuses two --kunitconfig files that give the same option different values ("Multiple
values specified"), so a fragment cannot override `.kunitconfig`. We concatenate the
root .kunitconfig, kunit_configs/arch/<arch>.config and the configuration's fragments
with later lines overriding earlier ones for the same CONFIG_ symbol (exactly what
kunit.py does within one file), and hand kunit.py that single file. kunit.py still checks
every requested option against the final .config; `# CONFIG_X is not set` passes when X
is off or absent (e.g. HOTPLUG_CPU once SMP is off).
"""

import configparser
import fnmatch
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from common.arches import ARCHES
from common import REPO_ROOT, ToolError, rel, table_lines

MATRIX_FILE = REPO_ROOT / "kunit_configs" / "matrix"
KEYS = ("description", "fragments", "kernel_args", "smp", "by_default", "arches", "suites")
DEFAULT_SMP = 2
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
# A suite glob as kunit.py passes it on (kunit.filter_glob=): suite names and * ? [ ] only, no '.' (cases).
SUITES_RE = re.compile(r"^[A-Za-z0-9_*?\[\]-]+$")
SECTION_RE = re.compile(r"^\[([^\]]*)\]")
KEY_RE = re.compile(r"^([^\s=:#;][^=:]*?)\s*[=:]")
# The two line forms kunit.py's kunit_config.py accepts (after strip()); other '#' lines are comments.
CONFIG_RE = re.compile(r'^CONFIG_(\w+)=(\S+|".*")$')
NOT_SET_RE = re.compile(r"^# CONFIG_(\w+) is not set$")
HELP_HINT = "see the comment at the top of kunit_configs/matrix and docs/running.md#configurations"


@dataclass(frozen=True)
class Configuration:
    name: str
    description: str = ""
    fragments: tuple = ()       # names: kunit_configs/<name>.config, applied in this order
    kernel_args: tuple = ()     # kernel command-line words
    smp: int = DEFAULT_SMP      # QEMU -smp (not used for um)
    by_default: bool = False    # part of `make` / `make test` when no CONFIG=/CONFIGS= is given
    arches: tuple = ()          # the arches it runs on; () = every arch
    suites: str = ""            # glob of the suites to run (kunit.py filter_glob); "" = every suite

    def runs_on(self, arch):
        """False for an arch the configuration does not apply to (KCSAN has no i386 support, say)."""
        return not self.arches or arch in self.arches

    @property
    def build_name(self):
        """What the build dir is named after: the fragments, so equal builds share one dir."""
        return "+".join(self.fragments) or "default"

    def build_dir_name(self, arch):
        return f"{arch}-{self.build_name}"

    def results_name(self, arch):
        return f"{arch}-{self.name}"

    def runs_suite(self, suite):
        """True for a suite this configuration runs (and so expects to report)."""
        return not self.suites or fnmatch.fnmatchcase(suite, self.suites)

    def to_dict(self):
        return {"name": self.name, "fragments": list(self.fragments), "kernel_args": list(self.kernel_args),
                "smp": self.smp, "build": self.build_name, "suites": self.suites or None}


class Matrix:
    def __init__(self, configurations, path):
        self.configurations = configurations    # name -> Configuration, in file order
        self.path = Path(path)

    def names(self):
        return list(self.configurations)

    def defaults(self):
        return [c for c in self.configurations.values() if c.by_default]

    def get(self, name):
        try:
            return self.configurations[name]
        except KeyError:
            raise ToolError(f"unknown configuration {name!r}: {rel(self.path)} defines "
                            f"{', '.join(self.configurations)}",
                            f"pick one of those with CONFIG=<name> or CONFIGS='<a> <b>', or add a [{name}] "
                            f"section to {rel(self.path)} (docs/running.md#configurations)") from None

    def select(self, names=None):
        """The configurations to run: the named ones (or the defaults), in file order, once each.

        File order is the run order: default, then lowres (boot only, same build dir), then up."""
        if not names:
            return self.defaults()
        wanted = set()
        for name in names:
            self.get(name)
            wanted.add(name)
        return [c for c in self.configurations.values() if c.name in wanted]


def _line_of(lines, section, key=None):
    """1-based line of `[section]` (or of `key` in it), for messages; None if not found."""
    current = None
    for number, line in enumerate(lines, 1):
        header = SECTION_RE.match(line.strip())
        if header:
            current = header.group(1).strip()
            if key is None and current == section:
                return number
            continue
        if key is not None and current == section and not line[:1].isspace():
            match = KEY_RE.match(line)
            if match and match.group(1).strip().lower() == key:
                return number
    return None


def load(path=MATRIX_FILE, fragments_dir=None):
    """Parse and check the matrix file; every problem is a ToolError naming file and line."""
    path = Path(path)
    fragments_dir = Path(fragments_dir) if fragments_dir else path.parent
    where = rel(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ToolError(f"cannot read the configuration matrix {where}: {error.strerror or error}",
                        "restore it from git (`git checkout -- kunit_configs/matrix`)") from None
    lines = text.splitlines()
    # No DEFAULT section magic and no %-interpolation: what is written is what runs.
    parser = configparser.ConfigParser(interpolation=None, default_section="\0", strict=True,
                                       empty_lines_in_values=False, inline_comment_prefixes=("#",))
    try:
        parser.read_string(text, source=where)
    except configparser.MissingSectionHeaderError as error:   # a ParsingError: catch it first
        raise ToolError(f"{where}:{error.lineno}: {error.line.strip()!r} comes before the first "
                        "[configuration] header", HELP_HINT) from None
    except configparser.ParsingError as error:
        number = error.errors[0][0]   # the line itself is stored repr()'d: take it from the text
        line = lines[number - 1] if 0 < number <= len(lines) else ""
        raise ToolError(f"{where}:{number}: cannot parse {line.strip()!r}: expected `[name]`, `key = value` "
                        "or a # comment", HELP_HINT) from None
    except configparser.DuplicateSectionError as error:
        raise ToolError(f"{where}:{error.lineno}: configuration [{error.section}] is defined twice",
                        HELP_HINT) from None
    except configparser.DuplicateOptionError as error:
        raise ToolError(f"{where}:{error.lineno}: `{error.option}` is set twice in [{error.section}]",
                        HELP_HINT) from None
    except configparser.Error as error:
        raise ToolError(f"{where}: {error}", HELP_HINT) from None

    configurations = {}
    for name in parser.sections():
        section = parser[name]

        def fail(message, key=None, name=name):
            number = _line_of(lines, name, key) or _line_of(lines, name)
            raise ToolError(f"{where}:{number}: [{name}]: {message}", HELP_HINT)

        if not NAME_RE.match(name):
            fail("a configuration name is lower-case letters, digits, '-' and '_' "
                 "(it names build/results/<arch>-<name>)")
        for key in section:
            if key not in KEYS:
                fail(f"unknown key `{key}` (known: {', '.join(KEYS)})", key)
        fragments = tuple(section.get("fragments", "").split())
        for fragment in fragments:
            if fragment == "default" or not NAME_RE.match(fragment):
                fail(f"fragment {fragment!r}: give the name NAME of kunit_configs/NAME.config "
                     "(lower-case; not 'default', which names the fragment-less build)", "fragments")
            if not (fragments_dir / f"{fragment}.config").is_file():
                fail(f"fragment {fragment!r}: {rel(fragments_dir / (fragment + '.config'))} does not exist",
                     "fragments")
        if len(set(fragments)) != len(fragments):
            fail("a fragment is listed twice", "fragments")
        try:
            kernel_args = tuple(shlex.split(section.get("kernel_args", "")))
        except ValueError as error:
            fail(f"kernel_args: {error}", "kernel_args")
        smp_text = section.get("smp", str(DEFAULT_SMP)).strip()
        if not smp_text.isdigit() or int(smp_text) < 1:
            fail(f"smp must be a CPU count >= 1, not {smp_text!r}", "smp")
        try:
            by_default = section.getboolean("by_default", fallback=False)
        except ValueError:
            fail(f"by_default must be yes or no, not {section.get('by_default')!r}", "by_default")
        arches = tuple(section.get("arches", "").split())
        for arch in arches:
            if arch not in ARCHES:
                fail(f"arches: unknown arch {arch!r} (known: {', '.join(ARCHES)})", "arches")
        suites = section.get("suites", "").strip()
        if suites and not SUITES_RE.match(suites):
            fail(f"suites must be one glob of suite names (letters, digits, _, -, * ? [ ]), not {suites!r}",
                 "suites")
        configurations[name] = Configuration(name, section.get("description", "").strip(), fragments,
                                             kernel_args, int(smp_text), by_default, arches, suites)
    if not configurations:
        raise ToolError(f"{where}: no configuration defined", HELP_HINT)
    if not any(c.by_default for c in configurations.values()):
        # Otherwise `make test` would run nothing and still end with "0 failed".
        raise ToolError(f"{where}: no configuration has `by_default = yes`, so `make test` would run nothing",
                        HELP_HINT)
    return Matrix(configurations, path)


# ---- the effective kunitconfig ------------------------------------------------------

# The series' own kunitconfig (the suites and what they need), as kunit.py finds it with
# --kunitconfig=kernel/time in the applied tree; kernel/ keeps it at its in-tree path.
SERIES_KUNITCONFIG = Path("kernel") / "kernel" / "time" / ".kunitconfig"


def kunitconfig_sources(configuration, arch_name, repo=REPO_ROOT):
    """Files merged for one run, in order: the series' kernel/time/.kunitconfig, the root .kunitconfig
    (checkers), the arch fragment (if any), the configuration's fragments."""
    repo = Path(repo)
    sources = [repo / SERIES_KUNITCONFIG, repo / ".kunitconfig"]
    arch_fragment = repo / "kunit_configs" / "arch" / f"{arch_name}.config"
    if arch_fragment.is_file():
        sources.append(arch_fragment)
    sources += [repo / "kunit_configs" / f"{name}.config" for name in configuration.fragments]
    for source in sources:
        if not source.is_file():
            raise ToolError(f"kunitconfig {rel(source)} not found (needed by configuration "
                            f"{configuration.name!r})",
                            "restore it from git, or fix `fragments` in kunit_configs/matrix")
    return sources


def merge(sources):
    """[(symbol, line, origin, overridden)] in first-seen order; later lines win.

    origin is 'path:line' of the winning line; overridden lists the earlier 'line (path:line)'s."""
    entries = {}
    for source in sources:
        for number, raw in enumerate(Path(source).read_text().splitlines(), 1):
            line = raw.strip()
            if not line:
                continue
            match = CONFIG_RE.match(line) or NOT_SET_RE.match(line)
            if not match:
                if line.startswith("#"):
                    continue
                raise ToolError(f"{rel(source)}:{number}: kunit.py cannot parse {line!r}",
                                "write `CONFIG_X=value`, `# CONFIG_X is not set` or a # comment")
            origin = f"{rel(source)}:{number}"
            symbol = match.group(1)
            old = entries.get(symbol)
            overridden = [] if old is None else old[2] + ([f"{old[0]} ({old[1]})"] if old[0] != line else [])
            entries[symbol] = (line, origin, overridden)
    return [(symbol, line, origin, overridden) for symbol, (line, origin, overridden) in entries.items()]


def effective_kunitconfig(configuration, arch_name, repo=REPO_ROOT):
    """(text, sources): the single kunitconfig kunit.py gets for this arch and configuration."""
    sources = kunitconfig_sources(configuration, arch_name, repo)
    out = [f"# Effective kunitconfig for {arch_name}, build {configuration.build_name!r}, written by",
           "# tools/ktimers.py: do not edit. It merges, later lines overriding earlier ones:",
           *[f"#   {rel(source)}" for source in sources]]
    for _, line, _, overridden in merge(sources):
        for old in overridden:
            out.append(f"# overrides {old}")   # never matches kunit.py's "is not set" form
        out.append(line)
    return "\n".join(out) + "\n", sources


def write_effective_kunitconfig(configuration, arch_name, path, repo=REPO_ROOT):
    """Write the file only when its content changes; returns the sources."""
    text, sources = effective_kunitconfig(configuration, arch_name, repo)
    path = Path(path)
    if not path.is_file() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return sources


def describe(matrix):
    """The table `ktimers.py matrix` prints (and `make help` shows)."""
    header = ("config", "make test", "arches", "build dir", "smp", "fragments", "kernel args", "suites",
              "description")
    rows = [header] + [
        (c.name, "yes" if c.by_default else "no", " ".join(c.arches) or "all", c.build_dir_name("<arch>"),
         str(c.smp), " ".join(c.fragments) or "-", " ".join(c.kernel_args) or "-", c.suites or "all",
         c.description)
        for c in matrix.configurations.values()]
    return table_lines(rows, rule=False)
