from solution import averager


def test_running_average():
    avg = averager()
    assert next(avg) is None
    assert avg.send(10) == 10.0
    assert avg.send(20) == 15.0
    assert avg.send(0) == 10.0
