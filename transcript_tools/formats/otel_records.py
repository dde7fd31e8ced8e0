"""OTLP JSON, flattened: every span, span event and log record of an export, with its
attributes decoded, for the OpenTelemetry reader (formats/otel.py).

The layout is OTLP's JSON encoding (opentelemetry-proto ``collector/trace/v1`` and
``collector/logs/v1``, as the collector's file exporter and the agents' file exporters
write it): ``{"resourceSpans": [{"resource": {"attributes": [...]}, "scopeSpans":
[{"spans": [...]}]}]}`` and ``{"resourceLogs": [... "scopeLogs": [{"logRecords": [...]}]]}``,
one export request per line or per file. An attribute is ``{"key", "value": {<type>Value}}``;
64-bit integers (``intValue``, ``timeUnixNano``) are JSON strings in that encoding.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .source import Record

SPAN = "span"
EVENT = "event"  # an event inside a span
LOG = "log"


@dataclass(slots=True)
class Signal:
    """One span, span event or log record."""

    kind: str
    name: str
    time: int  # start / event / observed time, nanoseconds since the epoch
    attrs: dict[str, Any]  # the resource's attributes, overlaid by the signal's own
    trace_id: str
    span_id: str
    record: Record  # the line (or file) it came from


def value(raw: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value."""
    if not isinstance(raw, dict):
        return None
    if "stringValue" in raw:
        return raw["stringValue"]
    if "intValue" in raw:
        try:
            return int(raw["intValue"])
        except (TypeError, ValueError):
            return None
    if "doubleValue" in raw:
        return raw["doubleValue"]
    if "boolValue" in raw:
        return raw["boolValue"]
    if "arrayValue" in raw:
        return [value(v) for v in (raw["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in raw:
        return attributes((raw["kvlistValue"] or {}).get("values"))
    return None


def attributes(raw: Any) -> dict[str, Any]:
    return (
        {str(a.get("key")): value(a.get("value")) for a in raw if isinstance(a, dict)}
        if isinstance(raw, list)
        else {}
    )


def _nanos(raw: Any) -> int:
    try:
        return int(raw)
    except (TypeError, ValueError):
        return 0


def is_export(obj: dict[str, Any]) -> bool:
    return isinstance(obj.get("resourceSpans"), list) or isinstance(obj.get("resourceLogs"), list)


def signals(record: Record) -> Iterator[Signal]:
    """Every span, span event and log record of one export request."""
    obj = record.obj
    for resource in obj.get("resourceSpans") or []:
        base = attributes((resource.get("resource") or {}).get("attributes"))
        for scope in resource.get("scopeSpans") or []:
            for span in scope.get("spans") or []:
                attrs = {**base, **attributes(span.get("attributes"))}
                trace, sid = str(span.get("traceId") or ""), str(span.get("spanId") or "")
                start = _nanos(span.get("startTimeUnixNano"))
                yield Signal(SPAN, str(span.get("name") or ""), start, attrs, trace, sid, record)
                for event in span.get("events") or []:
                    own = {**attrs, **attributes(event.get("attributes"))}
                    at = _nanos(event.get("timeUnixNano")) or start
                    yield Signal(EVENT, str(event.get("name") or ""), at, own, trace, sid, record)
    for resource in obj.get("resourceLogs") or []:
        base = attributes((resource.get("resource") or {}).get("attributes"))
        for scope in resource.get("scopeLogs") or []:
            for log in scope.get("logRecords") or []:
                attrs = {**base, **attributes(log.get("attributes"))}
                body = value(log.get("body"))
                name = str(attrs.get("event.name") or body or "")
                if "." not in name and isinstance(body, str) and "." in body:
                    name = body  # the agents log "claude_code.api_request" as the body
                at = _nanos(log.get("timeUnixNano")) or _nanos(log.get("observedTimeUnixNano"))
                trace, sid = str(log.get("traceId") or ""), str(log.get("spanId") or "")
                yield Signal(LOG, name, at, attrs, trace, sid, record)
