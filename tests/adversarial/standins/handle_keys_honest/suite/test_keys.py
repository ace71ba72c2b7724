from solution import keyed, members


def test_dict_keyed_by_candidate_objects():
    d = keyed()
    assert sorted(k.n for k in d) == [1, 2] and sorted(d.values()) == ["a", "b"]


def test_set_of_candidate_objects():
    s = members()
    assert len(s) == 1 and [m.n for m in s] == [3]
