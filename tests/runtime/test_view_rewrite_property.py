"""Whatever a listener does to the messages, the logged view/rewrite makes the projection equal
to what it sent (hypothesis over edits of views that already hold replaced spans)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from starharness.runtime.llm.types import Message, UserMessage
from starharness.runtime.loop.view_log import view_rewrite
from starharness.runtime.session import VIEW_REWRITE, Projection, Session, replace_op
from starharness.runtime.session import event_types as ev


@st.composite
def _session(draw: st.DrawFn) -> Session:
    session = Session("p")
    for index in range(draw(st.integers(0, 8))):
        session.append(ev.USER_MESSAGE, {"content": f"m{index}"})
    # Some spans replaced by one or several messages (keys shared inside a replacement).
    for round_ in range(draw(st.integers(0, 2))):
        keys = list(session.view_keys())
        if not keys:
            break
        low = draw(st.integers(0, len(keys) - 1))
        high = draw(st.integers(low, len(keys) - 1))
        count = draw(st.integers(1, 3))
        session.append(
            "view/rewrite",
            {
                "surface": replace_op(keys[low], keys[high]),
                "messages": [{"role": "user", "content": f"r{round_}.{i}"} for i in range(count)],
            },
        )
    return session


_NEW = st.builds(lambda n: UserMessage(f"new{n}", source="plugin"), st.integers(0, 5))


@st.composite
def _edited(draw: st.DrawFn, before: list[Message]) -> list[Message]:
    after = list(before)
    for _ in range(draw(st.integers(0, 4))):
        action = draw(st.sampled_from(("insert", "delete", "replace")))
        if action == "insert" or not after:
            after.insert(draw(st.integers(0, len(after))), draw(_NEW))
        elif action == "delete":
            del after[draw(st.integers(0, len(after) - 1))]
        else:
            after[draw(st.integers(0, len(after) - 1))] = draw(_NEW)
    return after


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_logged_rewrite_rebuilds_exactly_what_was_sent(data: st.DataObject) -> None:
    session = data.draw(_session())
    before = list(session.messages())
    after = data.draw(_edited(before))
    rewrite = view_rewrite(session, after, by="agent/pre-step", turn=1, step=1)
    if rewrite is not None:
        session.log(VIEW_REWRITE, rewrite)
    assert (rewrite is not None) == (after != before)
    assert list(session.messages()) == after
    # A fresh projection of the whole log agrees with the incremental one.
    assert Projection().feed(session.events) == after
