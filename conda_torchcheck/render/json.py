from __future__ import annotations

import json

from conda_torchcheck.report import Report


def render_json(report: Report, *, lang: str | None = None) -> str:
    return json.dumps(report.to_dict(lang), indent=2, ensure_ascii=False)
