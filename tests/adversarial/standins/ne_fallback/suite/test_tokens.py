from solution import token


def test_two_tokens_differ():
    assert token() != token()
