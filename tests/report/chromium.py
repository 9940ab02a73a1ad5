"""Headless Chromium for the report tests: its path, or a failure saying how to install it."""

from __future__ import annotations

import shutil

import pytest


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail("chromium is not installed: run `make system-deps` "
                    "(or apt-get install -y chromium)")
    return exe
