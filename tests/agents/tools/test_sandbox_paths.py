"""The sandbox shows the program nothing of the host, and an odd scratch folder breaks nothing."""

from __future__ import annotations

import pytest

from slmbench.agents.tools.sandbox import Sandbox

pytestmark = pytest.mark.slow


def test_no_host_path_is_visible_on_any_command_line_inside() -> None:
    result = Sandbox().run_python(
        "import os\n"
        "for pid in os.listdir('/proc'):\n"
        "    if pid.isdigit():\n"
        "        print(open(f'/proc/{pid}/cmdline', 'rb').read().replace(b'\\0', b' '))\n",
        files={"notes.txt": "hello"})
    assert result.exit_code == 0, result.stderr
    assert "python3" in result.stdout  # the processes were listed
    assert "slmbench-sbx" not in result.stdout and "/tmp/" not in result.stdout


def test_a_file_and_a_folder_of_the_same_name_do_not_break_the_call() -> None:
    files = {"a": "a file", "a/b": "inside a folder a", "c/d.txt": "fine", "../x": "escapes"}
    result = Sandbox().run_python(
        "import os\nprint(sorted(os.listdir('.')), open('a').read(), open('c/d.txt').read())",
        files=files)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "['a', 'c'] a file fine"
