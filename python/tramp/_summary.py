"""A trace's summary as HTML, for Jupyter: the numbers of ``stats()``
in human units beside the exact counts."""

from __future__ import annotations

import html as _html

from ._errors import TraceError


def size(n: float) -> str:
    """Bytes in binary units (``1.5 MiB``)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n} B"


def html(trace) -> str:
    try:
        s = trace.stats(strict=False)
    except TraceError as e:
        return f"<p><b>tramp</b>: {_html.escape(trace.path)}: {_html.escape(e.message)}</p>"
    rows = []
    if "total_allocs" in s:
        rows = [
            ("allocations", f"{s['total_allocs']:,}"),
            ("frees", f"{s['total_frees']:,}"),
            ("bytes allocated", f"{size(s['bytes_allocated'])} ({s['bytes_allocated']:,} B)"),
            ("peak heap", f"{size(s['max_live_bytes'])} in {s['max_live_objects']:,} objects"),
            ("live at the end", f"{size(s['live_bytes_at_end'])} in "
                                f"{s['live_objects_at_end']:,} objects"),
            ("temporary allocations", f"{s['temporary_allocations']:,}"),
        ]
        for p in s.get("processes") or []:
            rows.append((f"process {p.get('pid')}", " ".join(p.get("command") or [])))
    else:
        rows = [(k, f"{v:,}" if isinstance(v, int) else str(v))
                for k, v in s.items() if not isinstance(v, (dict, list))]
    if not s.get("complete", True):
        rows.append(("damage", str(s.get("damage"))))
    body = "".join(f"<tr><th style='text-align:left'>{_html.escape(k)}</th>"
                   f"<td>{_html.escape(v)}</td></tr>" for k, v in rows)
    return (f"<div><b>tramp trace</b> <code>{_html.escape(trace.path)}</code>"
            f"<table>{body}</table></div>")
