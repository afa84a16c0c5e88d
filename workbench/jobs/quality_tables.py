"""The topics the ``quality:`` step has handled (table ``quality_topics``, migration 0005).

One row per Kafka source (the configured cluster's name, or its bootstrap servers) and
topic, written when the step made the topic's quality job or found a job of that name
already: a topic is handled once, so a job a user removed is not made again.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from workbench.jobs.db import Base, UtcDateTime, now


class QualityTopic(Base):
    __tablename__ = "quality_topics"
    source: Mapped[str] = mapped_column(String(500), primary_key=True)
    topic: Mapped[str] = mapped_column(String(300), primary_key=True)
    job: Mapped[str] = mapped_column(String(200))
    handled_at: Mapped[datetime] = mapped_column(UtcDateTime, default=now)
