"""The HTML report opened in headless Chromium: no console errors, not blank, tables, filters.

Chromium is a system package (`make test` installs it: Debian `chromium`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
from chromium import chromium
from synthetic_run import MODELS, SCRIPT_TEXT
from typer.testing import CliRunner

from slmbench.agents.configurations import configurations
from slmbench.agents.summary_file import read_summary
from slmbench.report import ReportFiles
from slmbench.report.html import ci_cell

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]
JS_ERRORS = ("Uncaught", "CONSOLE")



def _run(page: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    profile = tmp / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *extra,
                           page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=180, check=True)


def _js_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if any(k in line for k in JS_ERRORS)]


def test_console_error_detection_catches_a_broken_page(tmp_path: Path) -> None:
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><body><p>x</p>"
                    "<script>undefinedFunction();</script></body></html>")
    res = _run(page, tmp_path, "--dump-dom")
    assert _js_errors(res.stderr), res.stderr[-2000:]


def test_report_renders_without_errors_and_is_not_blank(full_report: ReportFiles,
                                                        tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    res = _run(full_report.html, tmp_path, f"--screenshot={shot}", "--window-size=1280,1600")
    assert not _js_errors(res.stderr), _js_errors(res.stderr)
    img = mpimg.imread(shot)[..., :3]
    assert img.shape[:2] == (1600, 1280)
    non_white = np.mean(img.min(axis=2) < 0.9)
    assert non_white > 0.05  # text, tables and figures, not an empty page
    assert np.ptp(img) > 0.5


def test_dom_has_headline_table_with_every_model(full_report: ReportFiles,
                                                 tmp_path: Path) -> None:
    res = _run(full_report.html, tmp_path, "--dump-dom")
    assert not _js_errors(res.stderr), _js_errors(res.stderr)
    dom = res.stdout
    headline = dom.split('id="headline"')[1].split("</table>")[0]
    s = read_summary(full_report.summary)
    for a in s.accuracy:
        assert f'data-model="{a.model}"' in headline
        assert str(ci_cell(a.accuracy)) in headline  # the estimate over its interval
    assert dom.count("data:image/png;base64,") == 17
    assert "2556 in the run" in dom  # the trial browser rendered from the embedded JSON


def test_report_is_self_contained_and_escapes_model_text(full_report: ReportFiles) -> None:
    html = full_report.html.read_text()
    assert SCRIPT_TEXT not in html  # a model's "<script>" never reaches the page as markup
    for ref in ('src="http', "src='http", 'href="http', "//cdn", "@import", "url("):
        assert ref not in html


def test_filters_and_transcript(full_report: ReportFiles, tmp_path: Path) -> None:
    model = "ollama:alpha-0.5b"
    driver = ("<script>"
              f"var m = document.getElementById('f-model'); m.value = '{model}';"
              "m.dispatchEvent(new Event('change'));"
              "var o = document.getElementById('f-outcome'); o.value = 'format_failure';"
              "o.dispatchEvent(new Event('change'));"
              "document.querySelector('#trials tbody tr.trial').click();"
              "</script></body>")
    page = tmp_path / "driven.html"
    page.write_text(full_report.html.read_text().replace("</body>", driver))
    res = _run(page, tmp_path, "--dump-dom")
    assert not _js_errors(res.stderr), _js_errors(res.stderr)
    body = res.stdout.split('id="trials"')[1].split("</table>")[0]
    rows = body.split('<tr class="trial">')[1:]
    assert rows
    for row in rows:
        assert f"<td>{model}</td>" in row
        assert '<span class="outcome format_failure">' in row
    # the opened transcript shows the model's text as text, escaped, not as an element
    assert "I think &lt;script&gt;alert(1)&lt;/script&gt; maybe" in body
    assert "<script>alert(1)" not in res.stdout
    # and the stage the trial reached (agents/funnel.py): its first reply was no action
    assert "stage reached: none (the first reply was no action) · acts ✗" in body


def test_cli_report_writes_everything(tmp_path: Path) -> None:
    from synthetic_run import make_run, make_trials

    from slmbench.cli.main import app

    one = {m: MODELS[m] for m in list(MODELS)[:1]}
    run = make_run(tmp_path / "run", make_trials(one, temperatures=(0.3,), repeats=1))
    res = CliRunner().invoke(app, ["report", str(run), "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    html = tmp_path / "out" / "report.html"
    assert str(html) in res.stdout and html.is_file()
    assert len(list((tmp_path / "out" / "figures").glob("*.pdf"))) == 17
    assert len(list((tmp_path / "out" / "tables").glob("*.tex"))) == 4
    assert (run / "analysis_summary.json").is_file()


_MEASURE = """<script>window.addEventListener("load", function () {
  var probe = document.createElement("output");
  probe.id = "measured";
  probe.textContent = document.documentElement.scrollWidth + "/" + window.innerWidth;
  document.body.appendChild(probe);
});</script></body>"""


def test_a_report_of_many_models_with_long_names_never_scrolls_sideways(tmp_path: Path) -> None:
    """Measured in Chromium at 1,400 px: the page is no wider than the window. Model names as
    long as a study's (``...?n_ctx=8192 (all tools)``) and long answers wrap; a table still too
    wide scrolls in its own box."""
    from synthetic_run import make_trials

    from slmbench.agents.analysis import analyze
    from slmbench.report.html import render_html

    models = {f"llamacpp:qwen2.5-coder-{n}b?n_ctx=8192": (n, 0.2 + 0.1 * i)
              for i, n in enumerate((0.5, 1.5, 3, 7))}
    models |= {f"ollama:llama3.{i}:{i}b": (float(i), 0.3) for i in (1, 2)}
    trials = make_trials(models, temperatures=(0.7,), repeats=2)
    trials += [t.model_copy(update={"toolset": "all"})
               for t in make_trials({next(iter(models)): (0.5, 0.2)}, temperatures=(0.7,),
                                    repeats=2)]
    said = {"final_answer": "The answer, as the tool said, is " * 3,
            "error": "the reply named no tool and gave no final answer " * 3, "score": None}
    trials = configurations([t.model_copy(update=said) for t in trials])
    page = render_html(analyze(trials, params={m: p for m, (p, _) in models.items()}), trials, {})
    assert "(all tools)" in page
    html = tmp_path / "report.html"
    html.write_text(page.replace("</body>", _MEASURE), encoding="utf-8")
    dom = _run(html, tmp_path, "--dump-dom", "--window-size=1400,900").stdout
    wide, window = map(int, dom.split('<output id="measured">')[1].split("<")[0].split("/"))
    assert window == 1400 and wide <= window
