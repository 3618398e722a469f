"""The text every tool prints or writes: Markdown numbers and sections, the phase timings."""
from __future__ import annotations

__all__ = ['bullets', 'fmt', 'print_timings']


def fmt(value, digits: int = 4) -> str:
    """Return a number of a Markdown table: ``digits`` significant digits, None as a dash."""
    if value is None:
        return '–'
    if isinstance(value, float):
        return f'{value:.{digits}g}'
    return str(value)


def bullets(title: str, items) -> list[str]:
    """Return the lines of a Markdown section: a ``## title`` heading, then one ``- item`` each."""
    return [f'## {title}', '', *(f'- {item}' for item in items)]


def print_timings(timings: dict[str, float]) -> None:
    """Print the seconds spent per phase (``--timings`` of rnea_bag and rnea_identify)."""
    for phase, seconds in timings.items():
        print(f'  {phase:<16} {seconds:8.2f} s')
