"""room_notes: a check that fails because a pod went where it must not fit says the node's arithmetic.

The short form joins the check's message; the full table (harness.monitor.room_text)
is attached to the scenario's Allure result, under "room on node <node> (<when>)".
The arithmetic is the contract monitor's own (ContractMonitor.room_now, a fresh
read judged by harness.monitor.invariants.node_room), so a check and the monitor
never count a node two ways.

    assert b_node == other, f"B landed on {b_node}, ...: it should be on {other}" + room_note(run, b_node, when="B was bound")
    # "... it should be on n2; room on n1: cpu 5800m > 4800m allocatable: residual ns/a:source 3600m (...) + ..."
"""

from __future__ import annotations

import logging
from typing import Any

import allure

from harness.monitor.room import NodeRoom
from harness.monitor.room_text import room_table, short_arithmetic

log = logging.getLogger("rescon.checks")


def attachment_name(node: str, when: str) -> str:
    """attachment_name("n1", "node-overcommitted at 4.2s") == "room on node n1 (node-overcommitted at 4.2s)"."""
    return f"room on node {node} ({when})"


def attach_room(room: NodeRoom, when: str) -> None:
    """attach_room() adds the node's full arithmetic to the scenario's Allure result; `when` says at which moment it was judged."""
    allure.attach(f"{when}: {room_table(room)}", attachment_name(room.node, when), allure.attachment_type.TEXT)


def note_of(room: NodeRoom | None) -> str:
    """note_of() is what a check's message gains: "; room on n1: <the short arithmetic>", or "" with no arithmetic to give."""
    return f"; room on {room.node}: {short_arithmetic(room)}" if room is not None else ""


def room_note(run: Any, node: str | None, *, when: str) -> str:
    """room_note() reads the node's arithmetic now, attaches it in full and returns its short form for the message.

    It never raises: a failed read, a run without a monitor (unit tests) or a
    node outside the pool gives "", and the check's own failure stands.
    """
    monitor = getattr(run, "monitor", None)
    if monitor is None or not node:
        return ""
    try:
        room = monitor.room_now(node)
    except Exception as err:  # noqa: BLE001 - the note explains a failure; it must not replace it
        log.warning("could not read the room on %s for a failure's message: %s", node, err)
        return ""
    if room is not None:
        attach_room(room, when)
    return note_of(room)
