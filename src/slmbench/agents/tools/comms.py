"""``email`` (send / list / search / read over the inbox) and ``notify`` (slack / teams / email)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from slmbench.agents.tools.base import ToolError
from slmbench.agents.tools.common import StrictParams, WorldTool, as_list, jsonable
from slmbench.agents.world import Channel, Notification, SentEmail, World


def _recipients(world: World, people: list[str]) -> list[str]:
    out = []
    for p in people:
        addr = world.address(p)
        if "@" not in addr or addr.startswith("@") or addr.endswith("@"):
            raise ToolError(f"unknown recipient {p!r}; give an address or a colleague's name")
        out.append(addr)
    return out


def _summary(mail: Any) -> dict[str, Any]:
    d = jsonable(mail)
    return {k: d[k] for k in ("id", "from", "subject", "date", "read")}


class EmailTool(WorldTool, name="email"):
    """Your e-mail. action=send (to, subject, body, optional cc), list (inbox summaries;
    unread_only), search (query in sender, subject or body), read (email_id; marks it read)."""

    class Params(StrictParams):
        action: Literal["send", "list", "search", "read"]
        to: list[str] | None = Field(default=None, description="send: addresses or names")
        cc: list[str] | None = None
        subject: str | None = None
        body: str | None = None
        query: str | None = Field(default=None, description="search: words to look for")
        email_id: str | None = Field(default=None, description="read: the message id")
        unread_only: bool = False

        _to = field_validator("to", "cc", mode="before")(as_list)

    def run(self, world: World, params: Params) -> dict[str, Any]:
        p = params
        if p.action == "send":
            if not p.to:
                raise ToolError("send needs at least one recipient in to")
            if not (p.subject or p.body):
                raise ToolError("send needs a subject or a body")
            mail = SentEmail(id=f"SE{len(world.sent) + 1}", to=_recipients(world, p.to),
                             cc=_recipients(world, p.cc or []), subject=p.subject or "",
                             body=p.body or "", date=world.today)
            world.sent.append(mail)
            return {"sent": jsonable(mail)}
        if p.action == "list":
            mails = [m for m in world.inbox if not (p.unread_only and m.read)]
            return {"count": len(mails), "emails": [_summary(m) for m in mails]}
        if p.action == "search":
            if not p.query:
                raise ToolError("search needs query")
            words = p.query.lower().split()
            hits = [m for m in world.inbox
                    if all(w in f"{m.sender} {m.subject} {m.body}".lower() for w in words)]
            return {"query": p.query, "count": len(hits),
                    "emails": [_summary(m) for m in hits]}
        if not p.email_id:
            raise ToolError("read needs email_id; use action=list to see ids")
        mail = world.email(p.email_id)
        if mail is None:
            raise ToolError(f"no e-mail with id {p.email_id!r}; use action=list to see ids")
        mail.read = True
        return jsonable(mail)


class Notify(WorldTool, name="notify"):
    """Send a short notification on slack, teams or email to a recipient (a person, an e-mail
    address or a channel such as #ops)."""

    class Params(StrictParams):
        channel: Channel
        recipient: str = Field(min_length=1)
        message: str = Field(min_length=1, max_length=4000)

    def run(self, world: World, params: Params) -> dict[str, Any]:
        recipient = params.recipient.strip()
        if params.channel == "email":
            recipient = _recipients(world, [recipient])[0]
        note = Notification(id=f"N{len(world.notifications) + 1}", channel=params.channel,
                            recipient=recipient, message=params.message)
        world.notifications.append(note)
        return {"delivered": True, "notification": jsonable(note)}
