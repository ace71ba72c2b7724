from solution import log, reader


def test_close_runs_the_finally_block():
    g = reader(["a", "b", "c"])
    assert next(g) == "a"
    g.close()
    assert log() == ["open", "closed"]
