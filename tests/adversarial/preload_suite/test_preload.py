"""Run against tests/adversarial/preload_patcher.py, one candidate process per test (the default):
what one candidate process does to the preloaded numpy must not reach the next one."""

from solution import draw, numpy_patched, patch_numpy, preloaded_at_import

DRAWS = []


def test_a_the_packages_were_there_before_the_candidate_ran():
    assert preloaded_at_import() == ["numpy", "pandas"]
    assert not numpy_patched()  # also in the next job of a reused sandbox


def test_b_a_candidate_patches_numpy():
    patch_numpy()
    assert numpy_patched()


def test_c_the_next_candidate_process_has_numpy_as_it_was():
    assert not numpy_patched()


def test_d_one_draw():
    DRAWS.append(draw())


def test_e_another_process_draws_another_number():
    DRAWS.append(draw())
    assert len(DRAWS) == 2 and DRAWS[0] != DRAWS[1]
