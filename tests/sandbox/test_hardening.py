from __future__ import annotations

from verifier.limits import Limits, MiB
from verifier.sandbox.backend import SandboxJob
from verifier.sandbox.hardening import container_kwargs


def test_every_limit_is_in_the_container_arguments() -> None:
    limits = Limits(memory_bytes=256 * MiB, cpus=0.5, pids=64, scratch_bytes=8 * MiB, open_files=100)
    kw = container_kwargs(SandboxJob(image="i", command=["true"], limits=limits), {"l": "1"})
    hc = kw["host_config"]
    assert hc["network_mode"] == "none" and kw["network_disabled"] is True
    assert hc["mem_limit"] == hc["memswap_limit"] == 256 * MiB
    assert hc["nano_cpus"] == 500_000_000
    assert hc["pids_limit"] == 64
    assert hc["read_only"] is True
    assert hc["cap_drop"] == ["ALL"] and hc["cap_add"] == []
    assert hc["security_opt"] == ["no-new-privileges"]
    assert "size=8388608" in hc["tmpfs"]["/tmp"]
    assert {u["Name"]: u["Hard"] for u in hc["ulimits"]}["nofile"] == 100
    assert kw["user"] != "0:0" and not kw["user"].startswith("0:")
    assert set(kw["environment"]) == {"PATH", "HOME", "LANG"}
    assert kw["use_config_proxy"] is False


def test_launcher_mode_keeps_only_setuid_setgid_and_kill() -> None:
    kw = container_kwargs(SandboxJob(image="i", command=["x"], limits=Limits(), mode="launcher"), {})
    assert kw["host_config"]["cap_add"] == ["SETUID", "SETGID", "KILL"]
    assert "uid=2000" in kw["host_config"]["tmpfs"]["/run/trusted"]
