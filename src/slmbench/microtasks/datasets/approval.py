"""Command-approval dataset: real shell commands, labelled by the written approval policy.

Commands come from three pinned packages (see NOTES.md):

* ``icalfa`` nl2bash files: request -> bash, both gold variants. InterCode runs them in a
  container whose working folders are ``/testbed``, ``/workspace`` and ``/system``; we map
  those roots to ``.`` (the project directory) and keep the original in the provenance id.
* ``cheat`` cheatsheets: every non-comment line whose first word is a known program.
* ``inspect-evals`` ipi_coding_agent samples: the command lines an injected instruction
  asks the agent to run (lines matching the sample's ``payload_indicator``), plus each
  sample's verification command.

Labels come from :func:`slmbench.microtasks.datasets.policy.label_command`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator

from slmbench.core.sources import SourceArchive
from slmbench.microtasks.datasets.policy import (
    PROJECT_WRITERS,
    READ_ONLY,
    _program,
    _segments,
    label_command,
)
from slmbench.microtasks.datasets.records import ApprovalItem, Provenance, split_of

NL2BASH_FILES = tuple(f"icalfa/assets/datasets/nl2bash_fs_{i}.json" for i in range(1, 6))
CHEAT_DIR = "cheat/cheatsheets/"
IPI_SAMPLES = "inspect_evals/ipi_coding_agent/dataset/samples.json"
SANDBOX_ROOT = re.compile(r"/(testbed|workspace|system)(?=/|\s|$|['\"])")
MAX_COMMAND_CHARS = 300
COMMAND_START = re.compile(r"^(?:[-*]\s+|\$\s+|(?:run|setup|debug)[^:`]*:\s*)", re.IGNORECASE)


def _to_project(command: str) -> str:
    """Map InterCode's container roots to the project directory: /testbed/a -> ./a."""
    out = SANDBOX_ROOT.sub(lambda m: ".", command)
    return out.replace("./ ", ". ").replace(".//", "./")


def nl2bash_commands(src: SourceArchive) -> Iterator[tuple[str, Provenance]]:
    for path in NL2BASH_FILES:
        for n, rec in enumerate(json.loads(src.read_text(path))):
            for key in ("gold", "gold2"):
                cmd = (rec.get(key) or "").strip()
                if cmd:
                    yield _to_project(cmd), Provenance.of(src, path, f"{n}.{key}")


def _known_program(command: str, extra: frozenset[str]) -> bool:
    segs = _segments(command)
    if not segs:
        return False
    prog, _ = _program(segs[0])
    if prog == "sudo" and len(segs[0]) > 1:
        prog, _ = _program(segs[0][1:])
    return prog in READ_ONLY or prog in PROJECT_WRITERS or prog in extra


def cheat_commands(src: SourceArchive) -> Iterator[tuple[str, Provenance]]:
    sheets = sorted(m for m in src.members() if m.startswith(CHEAT_DIR) and "/" not in
                    m[len(CHEAT_DIR):])
    names = frozenset(m[len(CHEAT_DIR):] for m in sheets)
    for path in sheets:
        for n, line in enumerate(src.read_text(path).splitlines(), start=1):
            cmd = line.strip()
            if (not cmd or cmd.startswith("#") or len(cmd) > MAX_COMMAND_CHARS
                    or cmd.endswith("\\")  # continued on the next line: not a whole command
                    or "..." in cmd or not _known_program(cmd, names)):
                continue
            yield cmd, Provenance.of(src, path, f"line {n}")


def _ipi_command(line: str) -> str | None:
    text = line.strip().lstrip("#").strip().removesuffix("-->").strip()
    spans = re.findall(r"`([^`]+)`", text)
    if spans:
        text = spans[0]
    text = COMMAND_START.sub("", text).strip()
    return text if text and _known_program(text, frozenset()) else None


def ipi_commands(src: SourceArchive) -> Iterator[tuple[str, Provenance]]:
    for sample in json.loads(src.read_text(IPI_SAMPLES)):
        sid = sample["id"]
        yield _to_project(sample["verification_command"]), Provenance.of(src, IPI_SAMPLES,
                                                                 f"{sid}:verification")
        pattern = sample.get("payload_indicator") or ""
        if not pattern:
            continue
        texts = [("issue_text", sample["issue_text"]), *sample["repo_files"].items()]
        for where, text in texts:
            lines = text.splitlines()
            for i, line in enumerate(lines):
                near = " ".join(lines[max(0, i - 2): i + 1])
                cmd = _ipi_command(line)
                if cmd and (re.search(pattern, line) or re.search(pattern, near)):
                    yield _to_project(cmd), Provenance.of(src, IPI_SAMPLES,
                                                          f"{sid}:{where}:{i + 1}")


def build_approval(nl2bash: SourceArchive, cheat: SourceArchive,
                   ipi: SourceArchive) -> list[ApprovalItem]:
    """All distinct commands from the three sources, labelled by the policy."""
    seen: dict[str, ApprovalItem] = {}
    streams = (("nl2bash", nl2bash_commands(nl2bash)), ("cheat", cheat_commands(cheat)),
               ("ipi", ipi_commands(ipi)))
    for origin, stream in streams:
        for cmd, prov in stream:
            if cmd in seen:
                old = seen[cmd]
                seen[cmd] = old.model_copy(update={"provenance": (*old.provenance, prov)})
                continue
            label, rule = label_command(cmd)
            digest = hashlib.sha256(cmd.encode()).hexdigest()[:10]
            item_id = f"approval-{origin}-{digest}"  # content-addressed: stable across builds
            seen[cmd] = ApprovalItem(id=item_id, split=split_of(item_id), provenance=(prov,),
                                     command=cmd, label=label, rule=rule, origin=origin)
    return list(seen.values())
