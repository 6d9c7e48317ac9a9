"""The stdio wire of `nxs mcp serve`: every request that carries an id gets an answer.

The SDK's stdio transport drops a line it cannot validate, and the host waits for its timeout.
Here each line is checked first and answered as JSON-RPC 2.0 says: ``-32700`` for text that is
not UTF-8 or JSON (with the id, when one can be read at the top level), ``-32600`` for each
member of a batch (MCP has none) or an invalid request; the rest goes to the SDK. An answer
that cannot be encoded (a lone surrogate echoed back) leaves as a ``-32603`` error for its id.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

import orjson

log = logging.getLogger("nxs.mcp")

PARSE_ERROR, INVALID_REQUEST, INTERNAL_ERROR = -32700, -32600, -32603
_DECODER = json.JSONDecoder()
_PLAIN = re.compile(r'[^"{}\[\],]+')  # runs the id scanner skips at once
_SPACE = re.compile(r"\s*")


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def scan_id(text: str) -> Any:
    """The top-level ``"id"`` of a JSON object that does not parse as a whole, or None."""
    depth, i, key_next = 0, 0, False
    while i < len(text):
        c = text[i]
        if c == '"':
            try:
                value, end = _DECODER.raw_decode(text, i)
            except ValueError:
                return None
            if depth == 1 and key_next and value == "id":
                j = _SPACE.match(text, end).end()  # type: ignore[union-attr]
                if text[j : j + 1] != ":":
                    return None
                j = _SPACE.match(text, j + 1).end()  # type: ignore[union-attr]
                if text[j : j + 1] in ("{", "["):
                    return None
                try:
                    found, _ = _DECODER.raw_decode(text, j)
                except ValueError:
                    return None
                return found if _valid_id(found) else None
            key_next, i = False, end
            continue
        if c in "{[":
            depth += 1
            key_next = c == "{" and depth == 1
        elif c in "}]":
            depth -= 1
        elif c == ",":
            key_next = depth == 1
        else:
            i = _PLAIN.match(text, i).end()  # type: ignore[union-attr]
            continue
        i += 1
    return None


def error(rid: Any, code: int, message: str) -> dict[str, Any]:
    """One JSON-RPC error response (``id`` null unless it is a valid request id)."""
    rid = rid if _valid_id(rid) else None
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def _invalid(obj: Any) -> dict[str, Any] | None:
    """The Invalid Request answer for a parsed message, or None when it is well formed."""
    if not isinstance(obj, dict):
        return error(None, INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
    rid = obj.get("id")
    if obj.get("jsonrpc") != "2.0":
        return error(rid, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
    if "method" not in obj:
        if ("result" in obj or "error" in obj) and "id" in obj:
            return None  # a response to one of ours
        return error(rid, INVALID_REQUEST, 'Invalid Request: no "method"')
    if not isinstance(obj["method"], str):
        return error(rid, INVALID_REQUEST, 'Invalid Request: "method" must be a string')
    if obj.get("params") is not None and not isinstance(obj["params"], dict):
        return error(rid, INVALID_REQUEST, 'Invalid Request: "params" must be an object')
    if "id" in obj and not _valid_id(rid):
        return error(None, INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer')
    return None


def read_line(raw: bytes) -> tuple[Any, Any]:
    """One line of the wire: (the message for the SDK, None) or (None, the answer to send)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        rid = scan_id(raw.decode("utf-8", errors="replace"))
        return None, error(rid, PARSE_ERROR, f"Parse error: the line is not UTF-8 ({exc.reason})")
    try:
        obj = json.loads(text)
    except RecursionError:
        return None, error(scan_id(text), PARSE_ERROR, "Parse error: JSON nested too deeply")
    except ValueError as exc:
        return None, error(scan_id(text), PARSE_ERROR, f"Parse error: {exc}")
    if isinstance(obj, list):
        if not obj:
            return None, error(None, INVALID_REQUEST, "Invalid Request: an empty batch")
        why = "Invalid Request: batches are not supported; send each message on its own line"
        answers = [
            error(m.get("id") if isinstance(m, dict) else None, INVALID_REQUEST, why)
            for m in obj
            if not (isinstance(m, dict) and "id" not in m and _invalid(m) is None)
        ]
        return None, answers or None
    if (bad := _invalid(obj)) is not None:
        return None, bad
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(obj)), None
    except Exception as exc:  # noqa: BLE001 - pydantic's verdict, reported to the sender
        return None, error(obj.get("id"), INVALID_REQUEST, f"Invalid Request: {exc}"[:500])


def _dumps(obj: Any) -> bytes:
    """Compact JSON; an id beyond 64 bits (which orjson refuses) goes through the json module."""
    try:
        return orjson.dumps(obj)
    except TypeError:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def encode(item: Any) -> bytes | None:
    """The bytes of an outgoing message; an encoding failure becomes an error for its id."""
    if isinstance(item, dict | list):
        return _dumps(item)
    message = item.message
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode()
    except Exception as exc:  # noqa: BLE001 - text a JSON encoder refuses (a lone surrogate)
        rid = getattr(message, "id", None)
        log.warning("cannot encode an outgoing message: %s", exc)
        if getattr(message, "method", None) is not None or rid is None:
            return None  # our own request or notification: nobody waits for it
        why = "Internal error: the answer held text that cannot be sent as JSON"
        return _dumps(error(rid, INTERNAL_ERROR, why))


def _key(rid: Any) -> tuple[bool, Any]:
    return isinstance(rid, str), rid


@asynccontextmanager
async def stdio_wire(wire_in: BinaryIO, wire_out: BinaryIO) -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) streams `Server.run` takes, over a binary stdin and stdout; the read
    side stays open after stdin ends until every request handed over is answered (the SDK would
    cancel them)."""
    import anyio
    from mcp.shared._context_streams import create_context_streams

    to_server, from_wire = create_context_streams[Any](0)
    to_wire, from_server = create_context_streams[Any](0)
    answers = to_wire.clone()
    source = anyio.wrap_file(wire_in)
    sink = anyio.wrap_file(wire_out)
    pending: Counter[tuple[bool, Any]] = Counter()
    settled = anyio.Event()

    def settle(rid: Any) -> None:
        nonlocal settled
        if pending[_key(rid)] > 0:
            pending[_key(rid)] -= 1
            settled.set()
            settled = anyio.Event()

    async def reader() -> None:
        async with to_server, answers:
            async for raw in source:
                if not raw.strip():
                    continue
                message, answer = read_line(raw)
                if message is not None:
                    inner = message.message
                    if getattr(inner, "method", None) == "notifications/cancelled":
                        settle((inner.params or {}).get("requestId"))
                    elif getattr(inner, "method", None) and getattr(inner, "id", None) is not None:
                        pending[_key(inner.id)] += 1
                    await to_server.send(message)
                elif answer is not None:
                    await answers.send(answer)
            while +pending:
                await settled.wait()

    async def writer() -> None:
        gone = False
        async with from_server:
            async for item in from_server:
                message = getattr(item, "message", None)
                data = encode(item)
                if data is not None and not gone:
                    try:
                        await sink.write(data + b"\n")
                        await sink.flush()
                    except (OSError, ValueError):  # the client closed its end
                        gone = True
                        log.warning(
                            "the client went away; calls under way finish, their answers dropped"
                        )
                if message is not None and getattr(message, "method", None) is None:
                    settle(getattr(message, "id", None))

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield from_wire, to_wire
        finally:
            to_wire.close()  # the server is done: the writer ends once the reader's are sent
            from_wire.close()


__all__ = ["encode", "error", "read_line", "scan_id", "stdio_wire"]
