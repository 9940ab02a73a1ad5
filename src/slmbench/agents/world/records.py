"""The rows of the world: one pydantic model per kind of record.

Dates are ``datetime.date``; times of day are ``"HH:MM"`` strings on a
24-hour clock. Every record dumps to JSON with ``model_dump(mode="json",
by_alias=True)`` (an email's sender is serialised as ``"from"``).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

HHMM = Annotated[str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")]
Channel = Literal["slack", "teams", "email"]


class Fact(BaseModel):
    """One entry of the fact table behind ``web_search`` and ``fact_lookup``."""

    key: str
    title: str
    text: str


class Event(BaseModel):
    """A calendar event; ``attendees`` are e-mail addresses."""

    id: str
    title: str
    date: dt.date
    start: HHMM
    end: HHMM
    attendees: list[str]
    location: str = ""


class Employee(BaseModel):
    id: str
    name: str
    email: str
    department: str
    title: str
    salary: int  # yearly, US dollars
    start_date: dt.date
    manager: str | None  # the manager's employee id; None for the CEO


class Product(BaseModel):
    id: str
    name: str
    category: str
    price: float  # US dollars per unit
    stock: int  # units on hand


class Sale(BaseModel):
    id: str
    product_id: str
    employee_id: str
    date: dt.date
    quantity: int
    amount: float  # quantity x the product's price, US dollars


class Email(BaseModel):
    """A message in the user's inbox."""

    model_config = ConfigDict(populate_by_name=True)

    id: str
    sender: str = Field(alias="from")
    to: str
    subject: str
    body: str
    date: dt.date
    read: bool = False


class SentEmail(BaseModel):
    """A message the agent sent, in the order sent."""

    id: str
    to: list[str]
    cc: list[str] = Field(default_factory=list)
    subject: str
    body: str
    date: dt.date


class Notification(BaseModel):
    """A message the agent posted through ``notify``, in the order posted."""

    id: str
    channel: Channel
    recipient: str
    message: str
