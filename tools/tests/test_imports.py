"""The tools' import graph (tools/README.md#imports): no cycle, the layers, storage apart from presentation.

The graph comes from the source (ast), every import counted, also the ones inside functions."""

import ast
import unittest

from helpers import TOOLS_DIR

# common <- setup, kunit <- guest, results, series, bench, mutants: a package imports its own layer or lower.
LAYERS = {"common": 0, "setup": 1, "kunit": 1, "guest": 2, "results": 2, "series": 2, "bench": 2, "mutants": 2,
          "ktimers": 3}
# (module, package it may import against the layers): kunit/run.py records which series it tested
# (series/store.py's hash), lazily.
LAYER_EXCEPTIONS = {("kunit.run", "series")}
STORAGE = ("results.record", "results.db")
PRESENTATION = ("results.summary", "results.report", "results.report_html")


def module_name(path):
    parts = list(path.relative_to(TOOLS_DIR).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def sources(root=TOOLS_DIR):
    """{module name: source text} of the tools (not their tests)."""
    return {module_name(path): path.read_text() for path in sorted(root.rglob("*.py"))
            if "tests" not in path.relative_to(root).parts}


def import_graph(modules):
    """{module: {tools modules it imports}} from {module: source}."""
    graph = {}
    for name, text in modules.items():
        found = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
        graph[name] = {other for other in found if other in modules and other != name}
    return graph


def find_cycle(graph):
    """One import cycle as [a, b, ..., a], or None."""
    state = {}     # module -> 1 on the current path, 2 done

    def visit(module, path):
        state[module] = 1
        for other in sorted(graph.get(module, ())):
            if state.get(other) == 1:
                return path[path.index(other):] + [other]
            if other not in state:
                cycle = visit(other, path + [other])
                if cycle:
                    return cycle
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module, [module])
            if cycle:
                return cycle
    return None


def reachable(graph, start):
    seen, todo = set(), [start]
    while todo:
        for other in graph.get(todo.pop(), ()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return seen


class ImportGraphTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.graph = import_graph(sources())

    def test_the_graph_is_read(self):
        self.assertIn("results.db", self.graph["results.record"])
        self.assertIn("kunit.ktap", self.graph["results.summary"])
        self.assertIn("kunit.run", self.graph["ktimers"])   # `from kunit import run as kunit_run`, in a function

    def test_no_import_cycle(self):
        self.assertIsNone(find_cycle(self.graph))

    def test_the_cycle_finder_finds_one(self):
        graph = dict(self.graph, **{"results.report_html": self.graph["results.report_html"] | {"results.report"}})
        self.assertEqual(find_cycle(graph), ["results.report", "results.report_html", "results.report"])

    def test_results_storage_never_imports_presentation(self):
        for module in STORAGE:
            with self.subTest(module):
                self.assertEqual(sorted(reachable(self.graph, module) & set(PRESENTATION)), [])

    def test_packages_import_their_own_layer_or_lower(self):
        wrong = [(module, other) for module, imports in self.graph.items() for other in imports
                 if LAYERS[other.split(".")[0]] > LAYERS[module.split(".")[0]]
                 and (module, other.split(".")[0]) not in LAYER_EXCEPTIONS]
        self.assertEqual(wrong, [])
        self.assertEqual(set(LAYERS), {module.split(".")[0] for module in self.graph})


if __name__ == "__main__":
    unittest.main()
