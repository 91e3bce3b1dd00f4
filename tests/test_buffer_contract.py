"""One contract, every policy: properties that must hold after every add."""

from __future__ import annotations

import pytest

from memorykit.buffers import FIFOBuffer
from memorykit.buffers.base import MessageBuffer
from memorykit.clock import StepClock
from memorykit.classroom.contracts import run_contracts
from memorykit.classroom.contracts.buffers import buffer_contracts
from memorykit.messages import Message
from memorykit.trace import Trace

from buffer_policies import POLICIES
from wire import check_openai_types

# The contract lives in the package (memorykit.classroom.contracts.buffers) so that lesson 02's
# build-it-yourself exercise runs exactly these checks over a student's victim choice.
CONTRACTS = buffer_contracts(check_request=check_openai_types)


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name[:40])
@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_every_policy_keeps_the_buffer_contract(policy, contract):
    contract(POLICIES[policy])


def test_a_broken_victim_choice_fails_the_contract_with_a_reason():
    """The contract can fail: a policy that evicts the message just added, or a pinned one."""

    class EvictsFirst(MessageBuffer):
        def _choose_victim(self, now):
            for message in self:
                return (message.id, "first", "whatever comes first", None)
            return None

    verdict = run_contracts(lambda budget, clock: EvictsFirst(max_tokens=budget, clock=clock),
                            CONTRACTS, exercise="broken")
    assert not verdict.passed
    assert any("larger than the budget is kept" in d and "must still be kept" in d
               for d in verdict.details)
    assert any("smallest failing input: stream(" in d for d in verdict.details)


def test_trace_is_injected_and_validated():
    trace = Trace(max_events=2)
    buffer = FIFOBuffer(max_tokens=30, trace=trace)
    for i in range(6):
        buffer.add(Message(f"m{i}", "user", "x", 10, 14))
    assert buffer.trace is trace and len(trace) == 2 and trace.counts == {"eviction": 5}
    assert trace.dropped == 3 and buffer.stats()["evictions"] == 5
    assert [e.message_ids for e in trace] == [("m3",), ("m4",)]
    with pytest.raises(ValueError, match="max_events must be >= 1, got 0"):
        Trace(max_events=0)
    with pytest.raises(TypeError, match="max_events must be an integer, got True"):
        Trace(max_events=True)
    with pytest.raises(TypeError, match="max_events must be an integer, got '5'"):
        Trace(max_events="5")
    with pytest.raises(TypeError, match="trace must be a Trace, got \\[\\]"):
        FIFOBuffer(max_tokens=30, trace=[])


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_every_policy_forwards_the_base_keywords(policy):
    # The options a long-running agent needs (a bounded trace, its clock, its chat format,
    # unpinned system messages) reach MessageBuffer through every policy's constructor.
    from memorykit.buffers.registry import POLICIES as REGISTRY
    from memorykit.tokens import ChatFormat
    from memorykit.trace import Trace

    trace, clock, fmt = Trace(max_events=5), StepClock(), ChatFormat(tokens_per_message=4)
    buffer = REGISTRY[policy].build(200, trace=trace, clock=clock, chat_format=fmt,
                                    pin_system=False)
    assert buffer.trace is trace and buffer.clock is clock
    assert buffer.chat_format == fmt and buffer.pin_system is False
