"""The notebook kernels nbval starts (tests/conftest.py): sockets of their own, and a kernel that
dies while starting is started again, then reported with what it printed."""

import json
import sys

import pytest

from tests import conftest


def test_nbval_starts_every_notebook_kernel_through_start_kernel_on_own_sockets():
    import nbval.kernel

    assert nbval.kernel.start_new_kernel is conftest.start_kernel_on_own_sockets


def test_two_kernels_started_side_by_side_share_no_socket():
    from nbval.kernel import CURRENT_ENV_KERNEL_NAME

    started = [conftest.start_kernel_on_own_sockets(kernel_name=CURRENT_ENV_KERNEL_NAME) for _ in range(2)]
    try:
        managers = [km for km, _ in started]
        assert [km.transport for km in managers] == ["ipc", "ipc"]
        assert managers[0].ip != managers[1].ip
        for km, kc in started:
            assert km.is_alive()
            assert kc.execute_interactive("x = 1 + 1", timeout=30)["content"]["status"] == "ok"
    finally:
        for km, kc in started:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


def test_a_kernel_that_dies_starting_is_tried_again_and_then_reported_with_what_it_printed(
        tmp_path, monkeypatch):
    spec = tmp_path / "kernels" / "dies-starting"
    spec.mkdir(parents=True)
    script = "import sys; print('no kernel today', file=sys.stderr); sys.exit(3)"
    (spec / "kernel.json").write_text(json.dumps(
        {"argv": [sys.executable, "-c", script, "{connection_file}"], "display_name": "dies", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    with pytest.raises(RuntimeError) as error:
        conftest.start_kernel_on_own_sockets(kernel_name="dies-starting", startup_timeout=30)
    message = str(error.value)
    assert f"died {conftest.KERNEL_STARTS} times" in message
    assert message.count("no kernel today") == conftest.KERNEL_STARTS
