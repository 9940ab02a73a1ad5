"""A deterministic model driven by a script, for fast logic tests.

A script is a JSON or YAML file (or a Python object passed directly):

.. code-block:: yaml

    replies:            # used in order, one per generate call; then `default`
      - '{"name": "web_search", "arguments": {"query": "capital of France"}}'
      - 'Final Answer: Paris'
    rules:              # checked first: regex on the last message -> reply
      - match: "(?i)delete all"
        reply: "I can't help with that."
    default: "Final Answer: I don't know"
    logprobs:           # optional: candidate -> log-prob, for ``score``
      "yes": -0.1
      "no": -2.3

Built-in scripts: ``scripted:echo`` (repeats the last message) and
``scripted:silent`` (always the empty string). Options: ``delay`` (seconds
per call, to make runs long enough to interrupt in tests) and ``chat_format`` (a
built-in template, ``plain``, or a Jinja2 template file, as for ``llamacpp:``): the
model then renders each conversation through that template, shows the text as its
``render_prompt`` (what ``slmbench agree`` compares first) and matches its rules against
the whole rendered prompt instead of the last message. A script written for one template
then fails under another, as a real model fed a wrong template does: what the tests of
backend agreement need.

With no ``logprobs`` the model does not support ``score`` and says so.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from jinja2 import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from slmbench.core.errors import ConfigError, LogprobsUnsupportedError, ModelNotFoundError
from slmbench.core.yamlfile import load_yaml
from slmbench.models.base import BUILTIN_TEMPLATES, TEMPLATE_DIR, Backend, Request
from slmbench.models.records import CandidateScore, Completion, FinishReason, Message
from slmbench.models.spec import ModelSpec

Responder = Callable[[list[Message]], str]


class ScriptRule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    match: str
    reply: str


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    replies: list[str] = Field(default_factory=list)
    rules: list[ScriptRule] = Field(default_factory=list)
    default: str = ""
    logprobs: dict[str, float] | None = None


OPTIONS = ("delay", "chat_format")

_BUILTIN: dict[str, Responder] = {
    "echo": lambda msgs: msgs[-1].content if msgs else "",
    "silent": lambda msgs: "",
}


def _approx_tokens(text: str) -> int:
    return max(1, len(text.split())) if text else 0


class ScriptedModel(Backend):
    """Replies from a script or a Python callable; same input, same output. A backend like
    the others: :class:`~slmbench.models.base.Backend` checks each call, and ``stop_at`` is
    applied before the token cap (a token is a space-separated word here)."""

    def __init__(
        self,
        script: Script | Responder | Sequence[str],
        *,
        spec: str = "scripted:inline",
        delay_s: float = 0.0,
    ) -> None:
        super().__init__(spec)
        self.delay_s = delay_s
        self._lock = threading.Lock()
        self._calls = 0
        if callable(script):
            self._responder: Responder | None = script
            self._script = Script()
        else:
            self._responder = None
            self._script = script if isinstance(script, Script) else Script(replies=list(script))
        self._rules = [(re.compile(r.match), r.reply) for r in self._script.rules]
        self.supports_logprobs = self._script.logprobs is not None

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> ScriptedModel:
        spec.check_options(OPTIONS)
        model = cls._load(spec, spec.seconds_option("delay", 0.0, allow_zero=True))
        chat_format = spec.option("chat_format")
        return (model if chat_format is None else
                TemplatedScriptedModel(model, _template(chat_format), spec=spec.raw))

    @classmethod
    def _load(cls, spec: ModelSpec, delay: float) -> ScriptedModel:
        """The built-in or file script ``spec`` names."""
        if spec.target in _BUILTIN:
            return cls(_BUILTIN[spec.target], spec=spec.raw, delay_s=delay)
        path = Path(spec.target).expanduser()
        if not path.is_file():
            raise ModelNotFoundError(
                f"script file {path} does not exist",
                "give a JSON/YAML script path, or use scripted:echo",
            )
        hint = "see slmbench.models.scripted for the format"
        try:
            data = (json.loads(path.read_text(encoding="utf-8")) if path.suffix == ".json"
                    else load_yaml(path, hint=hint))
            script = Script.model_validate(data)
        except (ValueError, ValidationError) as exc:
            raise ConfigError(f"script {path} is malformed: {exc}".splitlines()[0],
                              hint) from exc
        return cls(script, spec=spec.raw, delay_s=delay)

    @classmethod
    def preflight(cls, spec: ModelSpec, wait_ready_s: float | None = None, *,
                  on_wait: Callable[[str], None] | None = None) -> None:
        """Raise what loading would: a bad option, a missing or malformed script (cheap)."""
        cls.from_spec(spec)

    @property
    def calls(self) -> int:
        """How many times ``generate`` has been called."""
        return self._calls

    def _reply(self, msgs: list[Message]) -> str:
        if self._responder is not None:
            return self._responder(msgs)
        return self._scripted(msgs[-1].content if msgs else "")

    def _scripted(self, text: str) -> str:
        """The first rule matching ``text``, else the next of ``replies``, else ``default``."""
        for pattern, reply in self._rules:
            if pattern.search(text):
                return reply
        idx = self._calls - 1
        if idx < len(self._script.replies):
            return self._script.replies[idx]
        return self._script.default

    def _generate(self, request: Request) -> Completion:
        msgs = request.messages
        start = time.perf_counter()
        with self._lock:
            self._calls += 1
            text = self._reply(msgs)
        if self.delay_s:
            time.sleep(self.delay_s)
        finish: FinishReason = "stop"
        for s in request.stop:
            if s in text:
                text = text[: text.index(s)]
        end = request.stop_at(text) if request.stop_at is not None else None
        if end is not None:
            text = text[:end]
        words = text.split(" ")
        if len(words) > request.max_tokens:
            text, finish = " ".join(words[:request.max_tokens]), "length"
        prompt_tokens = sum(_approx_tokens(m.content) for m in msgs)
        return Completion(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=_approx_tokens(text),
            latency_s=time.perf_counter() - start,
            finish_reason=finish,
            model=self.spec,
        )

    def score(
        self,
        messages: Sequence[Message | dict[str, Any]],
        candidates: Sequence[str],
    ) -> list[CandidateScore]:
        table = self._script.logprobs
        if table is None:
            raise LogprobsUnsupportedError(
                f"{self.spec} has no log-probabilities in its script",
                "add a `logprobs:` table to the script, or use a model that scores",
            )
        out = []
        for cand in candidates:
            if cand not in table and "*" not in table:
                raise ConfigError(f"{self.spec}: no log-prob for candidate {cand!r} in its script",
                                  "add it (or a '*' fallback) to the script's logprobs table")
            lp = table.get(cand, table.get("*", 0.0))
            out.append(CandidateScore(candidate=cand, logprob=lp, first_token_logprob=lp,
                                      n_tokens=1))
        return out



def _template(chat_format: str) -> str:
    """The Jinja2 source ``chat_format`` names: a built-in template or a file."""
    if chat_format in BUILTIN_TEMPLATES:
        return (TEMPLATE_DIR / f"{chat_format}.jinja").read_text(encoding="utf-8")
    path = Path(chat_format).expanduser()
    if not path.is_file():
        raise ConfigError(f"scripted: chat_format {chat_format!r} is neither a built-in "
                          f"template ({', '.join(BUILTIN_TEMPLATES)}) nor a template file",
                          "name a built-in template or give a Jinja2 template file")
    return path.read_text(encoding="utf-8")


class TemplatedScriptedModel(ScriptedModel):
    """A scripted model behind a chat template (``?chat_format=``): its rules read the whole
    prompt the template renders, so the same script answers otherwise under another
    template; it shows that prompt as ``render_prompt``, as the real runtimes do."""

    def __init__(self, inner: ScriptedModel, template: str, *, spec: str) -> None:
        super().__init__(inner._script, spec=spec, delay_s=inner.delay_s)
        self._responder = inner._responder
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        try:
            self._template = env.from_string(template)
        except TemplateError as exc:
            raise ConfigError(f"{spec}: its chat template does not parse: {exc}",
                              "check the Jinja2 template file") from exc

    def render_prompt(self, messages: Sequence[Message]) -> str:
        """The template applied to ``messages``, with the generation prompt opened."""
        return self._template.render(
            messages=[{"role": m.role, "content": m.content} for m in messages],
            add_generation_prompt=True, bos_token="", eos_token="")

    def _reply(self, msgs: list[Message]) -> str:
        if self._responder is not None:
            return self._responder([Message(role="user", content=self.render_prompt(msgs))])
        return self._scripted(self.render_prompt(msgs))
