"""Check that what a how-to names in code still exists (docs/adding-a-clock-base.md).

A how-to that names a function which was renamed since teaches the wrong thing
without anyone noticing. `check(doc, repo)` lists every reference of the page
that no longer resolves:

- `` `path/to/file` `` exists in the repository (one with `NNNN` or `...`, a file the
  reader writes, needs its folder);
- `` `name()` `` is defined or declared at file scope in kernel/ (its new files and the
  lines its patches add to existing files) or in the kernel tree;
- `` `UPPER_CASE` `` is a #define or an enum constant, and `` `NAME` (N) `` has the value N;
- `` `*_test` `` names (globs allowed) are KUnit cases, `` `ktimer_...` `` suites or symbols;
- `` `make target` `` is a target of the Makefile;
- `[text](page.md#anchor)` points at a page and a heading that exist;
- in C blocks, `struct name var = { .field = ... }` names fields of that struct, and
  the functions called are defined somewhere (the block itself, kernel/, the tree).

Names the kernel itself provides (ktime_get_boottime, core_initcall) are looked up in
the extracted tree when there is one (build/linux) and left unchecked otherwise.
"""

import fnmatch
import re
from pathlib import Path

C_SUFFIXES = (".c", ".h")
# C words that look like calls in an example block.
C_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined"}


class Sources:
    """The C text a reference may resolve in: the project's kernel/ and, if present, the tree."""

    def __init__(self, repo, tree=None):
        self.repo = Path(repo)
        # an edit of an existing file (posix-clock.h) is only in a patch: the tree may
        # not have the series applied when this runs (make test checks before apply)
        self.own = self._read(self.repo / "kernel") + "\n" + self._added_lines(self.repo / "kernel")
        self.tree_root = Path(tree) if tree and Path(tree, "Makefile").is_file() else None
        self._tree_text = None

    @staticmethod
    def _read(root):
        return "\n".join(path.read_text(errors="replace") for path in sorted(root.rglob("*"))
                         if path.suffix in C_SUFFIXES and path.is_file())

    @staticmethod
    def _added_lines(root):
        return "\n".join(line[1:] for path in sorted(root.rglob("*.patch"))
                         for line in path.read_text(errors="replace").splitlines()
                         if line.startswith("+") and not line.startswith("+++"))

    def search(self, pattern, name):
        """True if pattern matches; None if only the absent tree could say.

        The project's own names (those with "ktimer" in them) must be in kernel/.
        """
        if re.search(pattern, self.own, re.M):
            return True
        if "ktimer" in name.lower():
            return False
        return self._search_tree(pattern)

    def _search_tree(self, pattern):
        if self.tree_root is None:
            return None
        if self._tree_text is None:
            # include/ holds what a clock base uses of the kernel; read once, searched per name
            self._tree_text = self._read(self.tree_root / "include")
        return bool(re.search(pattern, self._tree_text, re.M))


def slug(heading):
    """GitHub's anchor of a markdown heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page):
    return {slug(line.lstrip("#")) for line in page.read_text().splitlines() if line.startswith("#")}


def makefile_targets(repo):
    text = Path(repo, "Makefile").read_text()
    return set(re.findall(r"^([A-Za-z][\w.-]*):", text, re.M))


def kunit_names(sources):
    cases = re.findall(r"KUNIT_CASE\w*\(\s*(\w+)", sources.own)
    suites = re.findall(r'\.name\s*=\s*"(\w+)"', sources.own)
    return set(cases) | set(suites)


def inline_code(text):
    """Backticked spans outside fenced blocks, with what follows each (for `NAME` (N))."""
    outside = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return [(m.group(1), outside[m.end():m.end() + 8]) for m in re.finditer(r"`([^`\n]+)`", outside)]


def c_blocks(text):
    return re.findall(r"^```c\n(.*?)^```", text, re.M | re.S)


def struct_fields(sources, name):
    body = re.search(r"^struct %s \{\n(.*?)^\};" % re.escape(name), sources.own, re.M | re.S)
    if not body:
        return None
    return set(re.findall(r"(\w+)(?:\)\s*\([^)]*\))?\s*(?:\[[^]]*\])?;", body.group(1)))


def check_symbol(sources, name, kunit, after=""):
    """None if `name` resolves (or only the absent tree could say), else what is wrong."""
    if re.fullmatch(r"[A-Z][A-Z0-9_]+", name):
        found = sources.search(r"^#define\s+%s\b|^\s+%s\b\s*[,=]" % (name, name), name)
        value = re.match(r"\s*\((\d+)\)", after)
        if found and value:
            define = re.search(r"^#define\s+%s\s+(\S+)" % name, sources.own, re.M)
            if define and define.group(1) != value.group(1):
                return "%s is %s, the page says %s" % (name, define.group(1), value.group(1))
        return None if found is not False else "no #define or enum constant %s" % name
    if "*" in name or name.endswith("_test") or name in kunit:
        if fnmatch.filter(kunit, name):
            return None
        if not name.startswith("ktimer") or "*" in name:
            return "no KUnit case or suite %s" % name
    found = sources.search(r"\b%s\b" % re.escape(name), name)
    return None if found is not False else "%s is not in kernel/" % name


def check_function(sources, name):
    # file scope: a definition or prototype starts its line, a macro is #defined
    found = sources.search(r"^(?:#define\s+%s\(|[A-Za-z_].*[\s*]%s\()" % (name, name), name)
    return None if found is not False else "no function %s()" % name


def check_path(repo, path):
    if "NNNN" in path or "..." in path:
        # a file the reader is about to write: its folder must exist
        folder = Path(repo, path).parent
        return None if folder.is_dir() else "no folder %s" % folder.relative_to(repo)
    return None if Path(repo, path).exists() else "no file %s" % path


def check_inline(repo, sources, span, after, kunit, targets):
    span = span.strip()
    if span.startswith("make "):
        target = span.split()[1]
        return None if target in targets else "no make target %s" % target
    if re.fullmatch(r"[\w.-]+/[\w./*-]*", span) or re.fullmatch(r"[\w-]+/[\w/.-]*NNNN[\w./-]*", span):
        return check_path(repo, span)
    call = re.fullmatch(r"(\w+)\(\)", span)
    if call:
        return check_function(sources, call.group(1))
    field = re.fullmatch(r"\.?(\w+)\s*=\s*(\w+)", span)
    if field:
        return check_symbol(sources, field.group(2), kunit)
    if re.fullmatch(r"[\w*]+", span) and ("_" in span or span.isupper()):
        return check_symbol(sources, span, kunit, after)
    if re.fullmatch(r"\w+\.[ch]", span):
        return None if list(Path(repo, "kernel").rglob(span)) else "no file %s in kernel/" % span
    return None  # prose in backticks: a word, a command, an error code


def check_block(sources, block):
    problems = []
    defined = set(re.findall(r"^\w[\w\s*]*?\b(\w+)\(", block, re.M))
    for struct, body in re.findall(r"struct (\w+) \w+ = \{(.*?)\};", block, re.S):
        fields = struct_fields(sources, struct)
        if fields is None:
            problems.append("no struct %s in kernel/" % struct)
            continue
        problems += ["struct %s has no field %s" % (struct, f)
                     for f in re.findall(r"^\s*\.(\w+)\s*=", body, re.M) if f not in fields]
    for name in sorted(set(re.findall(r"\b([a-z_]\w*)\(", block)) - defined - C_KEYWORDS):
        problem = check_function(sources, name)
        if problem:
            problems.append(problem)
    return problems


def check_links(doc, text):
    problems = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"\w+://", target):
            continue
        page, _, anchor = target.partition("#")
        path = doc.parent / page if page else doc
        if not path.is_file():
            problems.append("link to a missing page %s" % target)
        elif anchor and anchor not in anchors(path):
            problems.append("link to a missing heading %s" % target)
    return problems


def check(doc, repo, tree=None):
    """Every reference of the page doc that does not resolve, as one line each."""
    doc, repo = Path(doc), Path(repo)
    text = doc.read_text()
    sources = Sources(repo, tree)
    kunit, targets = kunit_names(sources), makefile_targets(repo)
    problems = [p for span, after in inline_code(text)
                for p in [check_inline(repo, sources, span, after, kunit, targets)] if p]
    for block in c_blocks(text):
        problems += check_block(sources, block)
    return problems + check_links(doc, text)
