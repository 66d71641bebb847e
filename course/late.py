"""The course's late policy, as nbgrader's late-submission plugin.

``minigrad-course release --late-penalty PERCENT`` (or ``--cutoff``) names
:class:`LatePolicy` in the course's ``nbgrader_config.py``; nbgrader's
``AssignLatePenalties`` (part of ``autograde``) calls it for each notebook handed in after
its due date. Imported by nbgrader only (it needs nbgrader).
"""

from __future__ import annotations

import math

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Dict, List

DAY = 24 * 3600


def penalty(score: float, seconds_late: float, percent_per_day: float) -> float:
    """The points taken from ``score`` for ``seconds_late``: ``percent_per_day`` of it for
    each started day (one second late is one day), at most the whole score."""
    days = math.ceil(seconds_late / DAY) if seconds_late > 0 else 0
    return min(score, score * percent_per_day / 100 * days)


class LatePolicy(LateSubmissionPlugin):
    """nbgrader's late-submission plugin, per assignment: ``percent_per_day`` takes that
    percentage of the notebook's score for each started day late; ``cutoff`` takes it all
    (nbgrader's ``zero``). ``AssignLatePenalties`` makes the plugin with itself as parent,
    after setting the assignment it is scoring: that is how the plugin knows which."""

    percent_per_day = Dict(help="{assignment: percent of the score per started day late}"
                           ).tag(config=True)
    cutoff = List(help="assignments where nothing late counts").tag(config=True)

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        assignment = getattr(self.parent, "assignment_id", None)
        if assignment in self.cutoff:
            return score
        percent = self.percent_per_day.get(assignment)
        return None if percent is None else penalty(score, total_seconds_late, percent)
