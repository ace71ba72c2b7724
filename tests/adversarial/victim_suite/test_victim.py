"""The victim's suite: the sandbox it runs in holds nothing of an earlier candidate."""

from solution import allocate, descriptors, leftovers, settings, spin


def test_no_files_ipc_processes_or_listeners_are_left():
    assert leftovers() == {
        "/tmp": [],
        "/dev/shm": [],
        "/dev/mqueue": [],
        "shm": [],
        "msg": [],
        "sem": [],
        "processes": [],
        "zombies": [],
        "tcp": [],
    }


def test_it_holds_only_its_channel_to_the_tests():
    assert descriptors() == ["socket"]


def test_limits_and_scheduling_are_as_fresh():
    s = settings()
    assert s["nice"] == 0 and s["sched"] == 0
    assert s["RLIMIT_AS"] == [-1, -1] and s["RLIMIT_CPU"] == [-1, -1]


def test_memory_is_all_there():
    assert allocate(300) == 300


def test_cpu_is_all_there():
    assert spin(3_000_000) == 4_499_998_500_000
