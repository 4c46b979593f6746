from __future__ import annotations

from sliceportal.schemas.choices import QueueScheme, Role, SliceState, SwitchKind


def test_choices_have_labels() -> None:
    assert SwitchKind.BMV2.label == "BMv2 simple_switch_grpc"
    assert QueueScheme.TAIL_DROP.label == "Tail drop"
    assert SliceState.PENDING.label == "Pending deployment"
    assert all(member.label for choice in (Role, SliceState) for member in choice)


def test_roles_are_ordered() -> None:
    assert Role.VIEWER.rank < Role.OPERATOR.rank < Role.ADMIN.rank
