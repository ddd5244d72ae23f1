"""`python -m bench ui_without VARIANT` takes each workaround out where the code uses it: a
variant whose target moved away would measure the code with nothing taken out."""

from __future__ import annotations

from types import ModuleType

import pytest

from bench import ui_without


@pytest.mark.parametrize("variant", ui_without.VARIANTS)
def test_every_variant_takes_out_a_name_its_module_still_uses(
    variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[tuple[str, str]] = []

    def record(module: ModuleType, name: str, value: object) -> None:
        assert hasattr(module, name), f"{module.__name__}.{name} is gone"
        taken.append((module.__name__, name))

    monkeypatch.setattr(ui_without, "_replace", record)
    ui_without._take_out(variant)
    assert bool(taken) is (variant != "none")


def test_a_stale_target_is_an_error_not_a_silent_no_op() -> None:
    with pytest.raises(AttributeError, match="stale"):
        ui_without._replace(ModuleType("moved"), "collect_young", None)
