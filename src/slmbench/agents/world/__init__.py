"""The seeded synthetic world every trial's tools act on.

``World.create(seed=0)`` builds a fresh, deterministic world (same seed, same
world) for the fictional company *Brightline Labs*. The agent acts for Alex
Morgan (``alex.morgan@brightline.example``, Operations Manager); "today" is
Monday 2025-03-10 and the calendar covers that working week (Mon 10 to Fri
14 March, office hours 09:00-17:00). The real clock is never read.

Contents (full listing: ``docs/world.md`` or ``describe()``):

- ``facts``: 40 facts (key, title, text) on cities, landmarks, science, companies
  and the company itself, for ``web_search`` and ``fact_lookup``;
- ``events``: 11 calendar events (id, title, date, start, end, attendees, location);
- ``employees`` (14), ``products`` (10), ``sales`` (40, drawn from the seed; amount =
  quantity x price) for ``query_table``;
- ``inbox``: 9 e-mails (id, from, to, subject, body, date, read), one of them phishing,
  one confidential;
- ``files``: the scratch folder (``sales_q1.csv``, ``regional_revenue.csv``, ``notes.txt``);
- ``sent`` and ``notifications``: empty logs the tools append to.

Seed 0 is the curated world above; today's tasks are written against it. Every other seed
draws a whole world of the same shape (:mod:`slmbench.agents.world.generate`): new people,
prices and stock, calendar, inbox dates, regional figures and invented facts. Its named
values (``World.slots``) are what task families instantiate from.
"""

from slmbench.agents.world.core import World
from slmbench.agents.world.describe import describe
from slmbench.agents.world.records import (
    HHMM,
    Channel,
    Email,
    Employee,
    Event,
    Fact,
    Notification,
    Product,
    Sale,
    SentEmail,
)

__all__ = ["HHMM", "Channel", "Email", "Employee", "Event", "Fact", "Notification", "Product",
           "Sale", "SentEmail", "World", "describe"]
