"""The launched-notebook check: it finds a process's whole tree and weighs it."""

import subprocess
import sys
import time

import pytest

from tools import launched

# A child that starts a grandchild holding 200 MB, then both wait to be killed.
GRANDPARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c",
    "import time; block = bytearray(200 * 2**20); block[::4096] = b'x' * len(block[::4096]); "
    "print('ready', flush=True); time.sleep(60)"], stdout=sys.stdout)
time.sleep(60)
"""


@pytest.fixture
def family():
    parent = subprocess.Popen([sys.executable, "-c", GRANDPARENT], stdout=subprocess.PIPE, text=True)
    assert parent.stdout.readline().strip() == "ready"
    yield parent
    for pid in launched.tree(parent.pid)[1:]:
        subprocess.run(["kill", str(pid)], check=False)
    parent.kill()
    parent.wait()


def test_a_process_tree_holds_the_grandchildren_and_their_memory(family):
    members = launched.tree(family.pid)
    assert members[0] == family.pid and len(members) == 2
    assert launched.tree_bytes(family.pid) > 200 * 2**20
    assert launched.tree_bytes(family.pid) >= launched.process_bytes(members[1]) > 200 * 2**20


def test_the_sampler_keeps_the_largest_sample_of_the_tree(family):
    with launched.PeakSampler(family.pid, every=0.05) as sampler:
        time.sleep(0.3)
    assert sampler.samples >= 2 and sampler.peak > 200 * 2**20


def test_a_process_that_is_gone_weighs_nothing():
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    assert launched.process_bytes(int(done.stdout)) == 0


@pytest.mark.parametrize("argv", [["--limit-gb", "0"], ["--notebooks", " , "]])
def test_a_limit_that_is_not_positive_or_no_notebook_is_refused(argv):
    with pytest.raises(SystemExit):
        launched.parse(argv)


def test_the_sampler_needs_a_positive_interval():
    with pytest.raises(ValueError, match="positive"):
        launched.PeakSampler(1, every=0)


def test_the_notebooks_it_launches_are_chapters_and_it_installs_what_binder_installs():
    from tools import notebooks

    chapters = {path.stem for path in notebooks.notebook_chapters()}
    assert set(launched.NOTEBOOKS) <= chapters
    assert launched.REQUIREMENTS.is_file()
