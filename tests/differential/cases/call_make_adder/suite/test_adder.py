from solution import compose_all, make_adder


def test_closure():
    add3 = make_adder(3)
    assert add3(4) == 7
    assert callable(add3)


def test_candidate_functions_compose():
    f = compose_all(make_adder(1), make_adder(10))
    assert f(0) == 11
