"""The HTML side of `make report`: one static page, and the stored console logs with line anchors.

write(report, path) writes the page (inline CSS, no script, no network):
the arch x configuration matrix of the latest runs, the regressions, one section
per run with its comparisons and its failing tests, and each arch's history.
Failing and changed tests link to <log>.html#L<line>: a copy of the stored
console log (store/<run>/console.log) as HTML with one anchor per line, written
next to it, the test's line highlighted.
"""

import html
import os
import re
from pathlib import Path

from results import regress
from common import format_duration, rel

CONTROL_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1bc|[\x00-\x08\x0b-\x1f\x7f]")
HISTORY_ROWS = 60
HISTORY_COLUMNS = ("started (UTC)", "configuration", "verdict", "build", "pass", "fail", "skip", "error", "miss",
                   "time", "series", "kernel", "log")
GOOD, BAD, SKIPPED, MISSING = "ok", "bad", "skip", "miss"

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em 2em; color: #1d1d1d; }
h1 { font-size: 1.5em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; } h3 { margin-bottom: .3em; }
table { border-collapse: collapse; margin: .4em 0 1.2em; }
th, td { border: 1px solid #c8c8c8; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #eef0f3; }
td.ok { background: #dcf3dc; } td.bad { background: #f9d2d2; } td.skip { background: #ececec; }
td.miss { background: #fde7c6; } td.none { color: #888; }
.badge { display: inline-block; padding: 0 .45em; border-radius: 3px; font-weight: 600; }
.badge.ok { background: #2e7d32; color: #fff; } .badge.bad { background: #c62828; color: #fff; }
.badge.skip { background: #777; color: #fff; } .badge.miss { background: #ef6c00; color: #fff; }
.regression { color: #b71c1c; font-weight: 600; } .fix { color: #1b5e20; }
.strip a { display: inline-block; width: 11px; height: 15px; margin-right: 2px; vertical-align: middle; }
.strip a.ok { background: #43a047; } .strip a.bad { background: #e53935; }
.strip a.skip { background: #9e9e9e; } .strip a.miss { background: #fb8c00; }
code, pre { font-family: ui-monospace, monospace; font-size: 12.5px; }
pre.excerpt { background: #f6f6f6; padding: .4em; margin: .2em 0; white-space: pre-wrap; }
ul { margin: .2em 0 .8em; } .muted { color: #666; }
"""

LOG_CSS = """
body { margin: 0; font: 12.5px/1.35 ui-monospace, monospace; }
header { padding: .5em 1em; background: #eef0f3; font-family: system-ui, sans-serif; }
pre { margin: 0; } .l { display: block; white-space: pre-wrap; padding-left: 6em; text-indent: -6em; }
.l:target { background: #fff59d; } .l.mark { background: #fbdada; }
a.n { display: inline-block; width: 5em; padding-right: 1em; text-align: right; text-indent: 0; color: #999;
      text-decoration: none; }
"""


def esc(text):
    return html.escape(str(text if text is not None else ""), quote=True)


def css_class(status):
    return {"PASS": GOOD, "SKIP": SKIPPED, "MISS": MISSING}.get(status, BAD)


def badge(status):
    return f'<span class="badge {css_class(status)}">{esc(status)}</span>'


def log_link(href, line, without_line=None):
    """' <a>log line N</a>' to a line of a stored log; without a line, a link named without_line, if given."""
    if href and line:
        return f' <a href="{esc(href)}">log line {line}</a>'
    return f' <a href="{esc(href)}">{without_line}</a>' if href and without_line else ""


def anchor(label):
    return "run-" + re.sub(r"[^A-Za-z0-9_-]", "_", label)


class Links:
    """Relative links from the page to the stored logs, and the log pages to write."""

    def __init__(self, report, page):
        self.base = report.db.parent
        self.page_dir = page.parent
        self.marks = {}     # log_url -> set of marked lines

    def raw(self, log_url):
        return os.path.relpath(self.base / log_url, self.page_dir) if log_url else None

    def line(self, log_url, line):
        """Link to a line of a stored log (its HTML copy), remembering to write that copy."""
        if not log_url:
            return None
        self.marks.setdefault(log_url, set())
        if line:
            self.marks[log_url].add(line)
        return self.raw(log_url) + ".html" + (f"#L{line}" if line else "")

    def write_logs(self):
        for log_url, marks in self.marks.items():
            if (self.base / log_url).is_file():
                write_log_page(self.base / log_url, marks)


def write_log_page(source, marks):
    """<log>.html next to the stored log: one anchor per line, the marked lines highlighted."""
    lines = source.read_text(errors="replace").splitlines()
    body = "".join(   # block spans: one per line, no newline between them (a <pre> would double it)
        f'<span class="l{" mark" if number in marks else ""}" id="L{number}"><a class="n" href="#L{number}">'
        f'{number}</a>{esc(CONTROL_RE.sub("", text))}</span>' for number, text in enumerate(lines, 1))
    Path(f"{source}.html").write_text(
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(source.name)}</title>'
        f"<style>{LOG_CSS}</style></head><body><header>{esc(rel(source))}: {len(lines)} lines; "
        f'<a href="{esc(source.name)}">plain text</a> (re-parse with '
        f"<code>tools/testing/kunit/kunit.py parse {esc(source.name)}</code>)</header>"
        f"<pre>{body}</pre></body></html>\n")


# ---- page parts --------------------------------------------------------------------------

def comparison_cell(comparison, reference, absent):
    if not reference:
        return f'<span class="muted">{esc(absent)}</span>'
    parts = [f'<span class="{kind}">{esc(text)}</span>' for kind, text in comparison.described()]
    return ", ".join(parts) or '<span class="muted">no changes</span>'


def matrix(report):
    arches = sorted({run.arch for run in report.runs})
    configs = list(dict.fromkeys(run.config for run in report.runs))
    cells = {(run.arch, run.config): run for run in report.runs}
    out = ["<table><tr><th>arch \\ configuration</th>" + "".join(f"<th>{esc(c)}</th>" for c in configs) + "</tr>"]
    for arch in arches:
        out.append(f'<tr><th><a href="#history-{esc(arch)}">{esc(arch)}</a></th>')
        for config in configs:
            run = cells.get((arch, config))
            if run is None or run.latest is None:
                out.append(f'<td class="none">{"-" if run is None else "no run recorded"}</td>')
                continue
            latest = run.latest
            bad = len(run.failing())
            status = latest["run_status"] if not run.regressions else "FAIL"
            out.append(
                f'<td class="{css_class(status)}"><a href="#{anchor(run.label)}">{badge(latest["run_status"])}</a> '
                f'{len(run.tests)} tests, {bad} not passed<br><span class="muted">{esc(latest["start_time"][:16])}'
                f"</span><br>vs previous: {comparison_cell(run.vs_previous, run.previous, 'first run')}"
                f"<br>vs baseline: {comparison_cell(run.vs_baseline, run.baseline, 'not in it')}</td>")
        out.append("</tr>")
    out.append("</table>")
    return "\n".join(out)


def change_item(run, change, links, prefix=""):
    log_url, line = run.where(change.path, change.implied)
    href = links.line(log_url, line) if change.kind != "removed" else None
    what = {"new": f"new, {esc(change.new)}", "removed": f"removed, was {esc(change.old)}"}.get(
        change.kind, f"{esc(change.old)} &rarr; {esc(change.new)}")
    if change.count > 1:
        what += f" ({change.count} tests)"
    if change.implied:
        what += " (never ran: the run stopped before it)"
    what += log_link(href, line, "log")
    return f'<li class="{change.kind}">{prefix}<code>{esc(change.path)}</code>: {what}</li>'


def comparison_block(run, name, comparison, links):
    old = comparison.old
    head = (f"<h4>vs {esc(name)}: {esc((old.start_time or '')[:16])} {badge(old.run_status)}"
            f' <span class="muted">{esc(old.build_id or "")}</span></h4>')
    if comparison.build:
        (cls, text), = comparison.described()
        return head + f'<p class="{cls}">{esc(text)}: no tests to compare</p>'
    out = [head]
    if comparison.run:
        out.append(f'<p class="regression">the run\'s verdict went {esc(comparison.run)} with no test '
                   "regressing: see its problems and kernel log findings below</p>")
    if not comparison.changes:
        out.append('<p class="muted">no test changed</p>')
    for kind in regress.CLASSES:
        listed = comparison.of(kind)
        if listed:
            out.append(f"<p>{regress.counted(len(listed), kind)}:</p><ul>")
            if kind == "regression":
                out += regression_items(run, [(change, [name]) for change in listed], links, False)
            else:
                out += [change_item(run, change, links) for change in listed]
            out.append("</ul>")
    return "\n".join(out)


def regression_items(run, merged, links, labelled):
    """<li>s for [(change, comparison names)]: each regression, except the tests a crash left unrun, which
    are one item per suite (the list folded away). labelled: start each with the run and the references."""
    explicit, never_ran = regress.grouped(merged)

    def prefix(names):
        return f"{esc(run.label)} [vs {esc(', '.join(names))}]: " if labelled else ""
    items = [change_item(run, change, links, prefix(names)) for change, names in explicit]
    for (suite, names), changes in never_ran.items():
        log_url, line = run.where(changes[0].path, True)
        href = links.line(log_url, line)
        items.append(f'<li class="regression">{prefix(names)}<code>{esc(suite)}</code>: {len(changes)} test(s) '
                     f"PASS &rarr; MISS, never ran: the run stopped before them{log_link(href, line)}"
                     "<details><summary>which"
                     "</summary><ul>" + "".join(f"<li><code>{esc(c.path)}</code></li>" for c in changes)
                     + "</ul></details></li>")
    return items


def build_note(latest):
    if latest.get("duration"):
        return f" in {format_duration(latest['duration'])}"
    return " (booted an earlier build)" if latest["status"] == "PASS" else " (no kernel: no tests ran)"


def run_section(run, links):
    latest = run.latest
    out = [f'<h3 id="{anchor(run.label)}">{esc(run.label)}</h3>']
    if latest is None:
        return out[0] + '<p class="muted">no run recorded (only a baseline entry)</p>'
    misc = latest.get("misc") or {}
    env = latest.get("environment") or {}
    rows = [("started (UTC)", latest["start_time"]), ("verdict", badge(latest["run_status"])),
            ("build", badge(latest["status"]) + build_note(latest)),
            ("run time", format_duration(latest.get("run_duration"))), ("kernel", latest.get("kernel_version")),
            ("compiler", latest.get("compiler")), ("Debian package", latest.get("package_version")),
            ("series hash", (latest.get("patchset_hash") or "")[:16]),
            ("tree head", (latest.get("git_commit_hash") or "")[:12]), ("environment", env.get("comment")),
            ("build id", latest["id"])]
    cells = [f"<tr><th>{esc(key)}</th><td>{value if key in ('verdict', 'build') else esc(value)}</td></tr>"
             for key, value in rows]
    logs = []
    if latest.get("console_url"):
        logs.append(f'<a href="{esc(links.line(latest["console_url"], None))}">console</a> '
                    f'(<a href="{esc(links.raw(latest["console_url"]))}">plain</a>)')
    if latest.get("log_url"):
        logs.append(f'<a href="{esc(links.raw(latest["log_url"]))}">build log</a>')
    cells.append(f"<tr><th>logs</th><td>{' &middot; '.join(logs) or '-'}</td></tr>")
    out.append("<table>" + "".join(cells) + "</table>")
    problems = misc.get("problems") or []
    if problems:
        out.append("<p>problems:</p><ul>" + "".join(f"<li>{esc(p)}</li>" for p in problems) + "</ul>")
    for name, comparison in run.comparisons():
        out.append(comparison_block(run, name, comparison, links))
    failing = run.failing()
    if failing:
        out.append(f"<h4>not passed in this run ({len(failing)})</h4><ul>")
        for test in failing:
            href = links.line(test.get("log_url"), test.get("log_line"))
            link = log_link(href, test.get("log_line"))
            excerpt = f'<details><summary>excerpt</summary><pre class="excerpt">{esc(test["log_excerpt"])}</pre>' \
                      f"</details>" if test.get("log_excerpt") else ""
            out.append(f'<li>{badge(test["status"])} <code>{esc(test["path"])}</code>{link}{excerpt}</li>')
        out.append("</ul>")
    return "\n".join(out)


def history(report, links):
    out = []
    for arch, runs in sorted(report.history.items()):
        out.append(f'<h3 id="history-{esc(arch)}">{esc(arch)}</h3>')
        by_config = {}
        for row in reversed(runs):
            by_config.setdefault(row["config_name"], []).append(row)
        out.append("<table><tr><th>configuration</th><th>runs, oldest to newest</th></tr>")
        for config, rows in by_config.items():
            marks = "".join(
                f'<a class="{css_class(row["run_status"])}" href="{esc(links.raw(row.get("console_url")) or "#")}" '
                f'title="{esc(row["start_time"])} {esc(row["run_status"])}"></a>' for row in rows)
            out.append(f'<tr><td>{esc(config)}</td><td class="strip">{marks}</td></tr>')
        out.append("</table>")
        out.append("<table><tr>" + "".join(f"<th>{name}</th>" for name in HISTORY_COLUMNS) + "</tr>")
        for row in runs[:HISTORY_ROWS]:
            counts = (row.get("misc") or {}).get("counts") or {}
            log = links.raw(row.get("console_url"))
            log_cell = f'<a href="{esc(log)}">console</a>' if log else "-"
            out.append(
                f"<tr><td>{esc(row['start_time'][:19])}</td><td>{esc(row['config_name'])}</td>"
                f'<td class="{css_class(row["run_status"])}">{esc(row["run_status"])}</td>'
                f'<td class="{css_class(row["status"])}">{esc(row["status"])}</td>'
                + "".join(f"<td>{esc(counts.get(status, '-'))}</td>" for status in ("PASS", "FAIL", "SKIP", "ERROR",
                                                                                     "MISS"))
                + f"<td>{esc(format_duration(row.get('run_duration')))}</td>"
                f"<td><code>{esc((row.get('patchset_hash') or '')[:8])}</code></td>"
                f"<td>{esc(row.get('kernel_version') or '')}</td>"
                f"<td>{log_cell}</td></tr>")
        if len(runs) > HISTORY_ROWS:
            out.append(f'<tr><td colspan="{len(HISTORY_COLUMNS)}" class="muted">{len(runs) - HISTORY_ROWS} older run(s) not shown; '
                       "query the database for them (docs/results.md)</td></tr>")
        out.append("</table>")
    return "\n".join(out)


def render(report, page):
    links = Links(report, page)
    totals = report.totals()
    body = [f"<h1>ktimers results</h1><p>generated {esc(report.generated)} from <code>{esc(rel(report.db))}</code>, "
            f"baseline <code>{esc(rel(report.baseline_path))}</code>: "
            f'<span class="{"regression" if totals["regression"] else "fix"}">{totals["regression"]} regression(s)'
            f"</span>, {totals['fix']} fix(es), {totals['new']} new, {totals['removed']} removed, "
            f"{totals['changed']} changed.</p>",
            "<h2>Latest run per arch and configuration</h2>", matrix(report)]
    if totals["regression"]:
        body.append("<h2>Regressions</h2><ul>")
        for run in report.runs:
            for what, names in run.run_level():
                body.append(f'<li class="regression">{esc(run.label)}: {esc(what)} [vs {esc(", ".join(names))}] '
                            f'(<a href="#{anchor(run.label)}">details</a>)</li>')
            body += regression_items(run, run.merged("regression"), links, True)
        body.append("</ul>")
    body.append("<h2>Runs</h2>")
    body += [run_section(run, links) for run in report.runs]
    body.append("<h2>History</h2>")
    body.append(history(report, links))
    page_text = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>ktimers results</title>'
                 f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
    return page_text, links


def write(report, page):
    page = Path(page)
    page.parent.mkdir(parents=True, exist_ok=True)
    text, links = render(report, page)
    links.write_logs()
    page.write_text(text)
    return page
