import shutil
import subprocess
import unittest
import xml.etree.ElementTree as ET

from helpers import TempDirTestCase, data_lines

from bench import parse as bench_parse, svg as bench_svg
from bench.analysis import TCG_NOTE

SVG = "{http://www.w3.org/2000/svg}"


def render(name="bench-i386-highres.log"):
    return bench_svg.render("i386", bench_parse.parse(data_lines(name)))


def markers(root):
    """{(api, n): (x, y)} of the median markers, per panel in document order."""
    panels, current = [], None
    for element in root.iter():
        if element.tag == f"{SVG}text" and (element.text or "").startswith("ktimer / hrtimer"):
            break       # the ratio panel
        if element.tag == f"{SVG}text" and element.text in ("start_stop", "modify"):
            current = {}
            panels.append((element.text, current))
        if element.tag == f"{SVG}circle":
            current[(element.get("data-api"), int(element.get("data-n")))] = (float(element.get("cx")),
                                                                               float(element.get("cy")))
    return dict(panels)


class ScaleTest(unittest.TestCase):
    def test_log_positions(self):
        span = (1, 6)       # n=0 at decade 1, then 100 .. 1e6
        x = {n: bench_svg.x_position(n, span, 100, 500) for n in (0, 10, 100, 10000, 1000000)}
        self.assertEqual(x[0], 100)
        self.assertEqual(x[10], x[0])           # 0 sits where n=10 would
        self.assertEqual(x[1000000], 600)
        self.assertAlmostEqual(x[10000] - x[100], x[1000000] - x[10000])    # two decades, same distance
        self.assertAlmostEqual(x[100] - x[0], (x[10000] - x[100]) / 2)      # one decade
        self.assertAlmostEqual(bench_svg.x_position(1000, span, 100, 500), 300)

    def test_decades(self):
        self.assertEqual(bench_svg.decades([0, 100, 10000, 1000000]), (1, 6))
        self.assertEqual(bench_svg.decades([100, 10000]), (2, 4))
        self.assertEqual(bench_svg.decades([150, 7000]), (2, 4))
        self.assertEqual(bench_svg.decades([0]), (-1, 1))
        self.assertEqual(bench_svg.decades([100]), (2, 3))

    def test_y_axis(self):
        self.assertEqual(bench_svg.y_position(0, 100, 300, 5000), 400)
        self.assertEqual(bench_svg.y_position(5000, 100, 300, 5000), 100)
        self.assertEqual([bench_svg.nice_max(v) for v in (4100, 5000, 1300, 0.5, 0, 10)], [5000, 5000, 2000, 1, 1, 10])

    def test_labels(self):
        self.assertEqual([bench_svg.label_n(n) for n in (0, 10, 100, 1000, 1000000)], ["0", "10", "100", "1e3", "1e6"])


class DocumentTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.text = render()
        cls.root = ET.fromstring(cls.text)

    def test_valid_svg_with_the_note(self):
        self.assertEqual(self.root.tag, f"{SVG}svg")
        texts = [element.text for element in self.root.iter(f"{SVG}text")]
        self.assertIn(TCG_NOTE, texts)
        self.assertTrue(any("n=0 is drawn one decade left" in (t or "") for t in texts))
        self.assertIn("start_stop", texts)
        self.assertIn("modify", texts)
        self.assertFalse(any("INCOMPLETE" in (t or "") for t in texts))

    def test_markers_sit_on_the_log_scale(self):
        panels = markers(self.root)
        self.assertEqual(set(panels), {"start_stop", "modify"})
        start_stop = panels["start_stop"]
        self.assertEqual(len(start_stop), 11)           # 4 n x 3 APIs, timer_list n=1e6 skipped
        self.assertNotIn(("timer_list", 1000000), start_stop)
        x = {n: start_stop[("ktimer", n)][0] for n in (0, 100, 10000, 1000000)}
        self.assertAlmostEqual(x[10000] - x[100], x[1000000] - x[10000], places=0)
        self.assertAlmostEqual(x[100] - x[0], (x[10000] - x[100]) / 2, places=0)
        # same n, another API: a few pixels aside, never a decade
        self.assertLess(abs(start_stop[("hrtimer", 100)][0] - x[100]), 15)

    def test_higher_cost_is_drawn_higher(self):
        start_stop = markers(self.root)["start_stop"]
        y = {api: start_stop[(api, 1000000 if api != "timer_list" else 10000)][1]
             for api in ("ktimer", "hrtimer", "timer_list")}
        self.assertLess(y["hrtimer"], y["ktimer"])          # 1850 ns above 1720 ns
        self.assertLess(y["ktimer"], y["timer_list"])
        self.assertLess(start_stop[("ktimer", 1000000)][1], start_stop[("ktimer", 0)][1])

    def test_skips_are_crossed_and_listed(self):
        crosses = [e for e in self.root.iter(f"{SVG}path") if e.get("data-skip")]
        self.assertEqual([e.get("data-skip") for e in crosses], ["timer_list", "timer_list"])
        self.assertIn("timer_list n=1e6: skipped (nomem)", self.text)

    def test_a_partial_run_says_so(self):
        root = ET.fromstring(render("bench-i386-crashed.log"))
        texts = [element.text or "" for element in root.iter(f"{SVG}text")]
        self.assertTrue(any(t.startswith("INCOMPLETE") for t in texts))
        self.assertEqual(len(markers(root)["modify"]), 4)

    def test_the_first_real_run(self):
        panels = markers(ET.fromstring(render("real-i386-bench-highres.log")))
        self.assertEqual((len(panels["start_stop"]), len(panels["modify"])), (12, 12))

    def test_the_ratio_panel_shows_each_boots_range(self):
        from bench.boots import BootSet
        lines = data_lines("bench-i386-highres.log")
        slower = [line.replace("api=ktimer n=0 median_ns=812", "api=ktimer n=0 median_ns=990") for line in lines]
        root = ET.fromstring(bench_svg.render("um", BootSet([bench_parse.parse(lines), bench_parse.parse(slower),
                                                              bench_parse.parse(lines)])))
        ratios = {(e.get("data-workload"), int(e.get("data-n"))): e for e in root.iter(f"{SVG}circle")
                  if e.get("data-workload")}
        self.assertEqual(len(ratios), 8)         # 2 workloads x 4 n
        # median of 812/900, 990/900 and 812/900; the title gives the range of the three boots
        self.assertEqual(ratios[("start_stop", 0)].get("data-ratio"), f"{812 / 900:.4f}")
        self.assertIn(f"({812 / 900:.3f}-{990 / 900:.3f}, 3 boots)", ratios[("start_stop", 0)].find(f"{SVG}title").text)
        texts = [element.text for element in root.iter(f"{SVG}text")]
        self.assertTrue(any(t and t.startswith("native:") for t in texts))
        self.assertTrue(any("(each the median over 3 boots)" in (t or "") for t in texts))

    def test_the_ratio_panel_draws_the_equal_size_ratio_dashed(self):
        lines = []
        for line in data_lines("bench-i386-highres.log"):      # each modify hrtimer line, padded beside it
            lines.append(line)
            if "workload=modify api=hrtimer " in line:
                lines.append(line.replace("api=hrtimer ", "api=hrtimer_padded ").replace("median_ns=", "median_ns=1"))
        root = ET.fromstring(bench_svg.render("um", bench_parse.parse(lines)))
        circles = [e for e in root.iter(f"{SVG}circle") if e.get("data-workload")]
        others = {(e.get("data-workload"), e.get("data-other")) for e in circles}
        self.assertEqual(others, {("start_stop", "hrtimer"), ("modify", "hrtimer"), ("modify", "hrtimer_padded")})
        dashed = [e for e in root.iter(f"{SVG}path") if e.get("stroke-dasharray") == "5,3"]
        self.assertEqual(len(dashed), 1)        # the modify / hrtimer_padded line (its legend is a <line>)
        texts = [element.text for element in root.iter(f"{SVG}text")]
        self.assertIn("2^13.3", texts)          # n=1e4 on the log2 scale
        self.assertIn("modify / hrtimer_padded", texts)

    def test_a_panel_without_figures(self):
        run = bench_parse.parse(["ktimer_bench: begin version=1 engine=highres hz=250",
                                 "ktimer_bench: result workload=start_stop api=ktimer n=0 median_ns=5"])
        root = ET.fromstring(bench_svg.render("arm", run))
        self.assertIn("no figures", [element.text for element in root.iter(f"{SVG}text")])

    def test_names_are_escaped(self):
        run = bench_parse.parse(["ktimer_bench: begin version=1 engine=highres hz=250",
                                 "ktimer_bench: result workload=modify api=<b>&x n=100 median_ns=5",
                                 "ktimer_bench: result workload=modify api=<b>&x n=1000 median_ns=6"])
        ET.fromstring(bench_svg.render("i386", run))     # parses: < and & are escaped


@unittest.skipUnless(shutil.which("chromium"), "chromium is not installed")
class RenderTest(TempDirTestCase):
    def test_chromium_renders_it(self):
        svg = self.tmp / "bench.svg"
        svg.write_text(render())
        png = self.tmp / "bench.png"
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={png}",
                        "--window-size=1000,560", svg.as_uri()], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=120, check=False)
        self.assertTrue(png.is_file())
        self.assertGreater(png.stat().st_size, 10000)


if __name__ == "__main__":
    unittest.main()
