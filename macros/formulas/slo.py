"""Service-level objectives: error budgets and burn rates.

An SLO is a target share of good events (or good minutes) over a compliance window, e.g. 0.999 over
30 days. The error budget is the complement, ``1 - slo``; a burn rate is how fast the budget is being
spent relative to spending exactly all of it by the end of the window (burn rate 1). Units: the SLO
as a fraction in (0, 1), windows in days or hours, budgets in minutes.
"""

from __future__ import annotations

from . import _checks as chk

__all__ = [
    "error_budget_fraction",
    "error_budget_minutes",
    "burn_rate_threshold",
    "burn_rate_error_ratio",
    "budget_spent",
    "time_to_exhaustion_hours",
]


def _slo(slo: float) -> float:
    chk.fraction("slo", slo, allow_one=False)
    return slo


def error_budget_fraction(slo: float) -> float:
    """Allowed share of bad events: ``1 - slo`` (0.001 for a 99.9% SLO)."""
    return 1.0 - _slo(slo)


def error_budget_minutes(slo: float, window_days: float = 30) -> float:
    """Minutes of total unavailability the budget allows over the window: ``(1 - slo) x days x 1440``.

    Exact for a time-based SLI (share of good minutes); for a request-based SLI it is the same budget
    expressed as minutes of a full outage at constant traffic.
    """
    chk.positive("window_days", window_days)
    return error_budget_fraction(slo) * window_days * 24 * 60


def burn_rate_threshold(budget_share: float, alert_window_hours: float, window_days: float = 30) -> float:
    """Burn rate at which ``budget_share`` of the budget is spent in ``alert_window_hours``.

    ``burn = budget_share x window_hours / alert_window_hours``: spending 2% of a 30-day budget in
    one hour is a burn rate of 0.02 x 720 / 1 = 14.4 (Google SRE workbook, "Alerting on SLOs").
    """
    chk.fraction("budget_share", budget_share)
    chk.positive("alert_window_hours", alert_window_hours)
    chk.positive("window_days", window_days)
    if alert_window_hours > window_days * 24:
        raise ValueError(f"alert_window_hours ({alert_window_hours}) must not exceed the SLO window "
                         f"({window_days} days)")
    return budget_share * window_days * 24 / alert_window_hours


def burn_rate_error_ratio(burn_rate: float, slo: float) -> float:
    """Error ratio that an alert at ``burn_rate`` compares against: ``burn_rate x (1 - slo)``.

    Above 1 the alert can never fire (the error ratio cannot exceed 1): the burn rate is too high
    for so loose an SLO.
    """
    chk.positive("burn_rate", burn_rate)
    return burn_rate * error_budget_fraction(slo)


def budget_spent(error_ratio: float, slo: float, hours: float, window_days: float = 30) -> float:
    """Share of the window's budget spent by ``hours`` at a constant ``error_ratio``.

    ``error_ratio / (1 - slo) x hours / window_hours`` (may exceed 1: the budget is overspent).
    """
    chk.fraction("error_ratio", error_ratio, allow_zero=True)
    chk.non_negative("hours", hours)
    chk.positive("window_days", window_days)
    return error_ratio / error_budget_fraction(slo) * hours / (window_days * 24)


def time_to_exhaustion_hours(burn_rate: float, window_days: float = 30, budget_left: float = 1.0) -> float:
    """Hours until ``budget_left`` (share of the full budget) is gone at a constant ``burn_rate``.

    ``budget_left x window_hours / burn_rate``: at burn rate 14.4 a full 30-day budget lasts 50 hours.
    """
    chk.positive("burn_rate", burn_rate)
    chk.positive("window_days", window_days)
    chk.fraction("budget_left", budget_left, allow_zero=True)
    return budget_left * window_days * 24 / burn_rate


#: The multi-window, multi-burn-rate policy the Google SRE workbook recommends as a starting point
#: ("Alerting on SLOs", table of recommended parameters for a 99.9% SLO over 30 days):
#: (severity, share of the budget spent, long window in hours, short window in hours).
#: The short window is 1/12 of the long one, so the alert resets soon after the burn stops.
MWMB_POLICY: tuple[tuple[str, float, float, float], ...] = (
    ("page", 0.02, 1.0, 5 / 60),
    ("page", 0.05, 6.0, 0.5),
    ("ticket", 0.10, 72.0, 6.0),
)

__all__ += ["MWMB_POLICY"]
