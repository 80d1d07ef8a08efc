from src.util import average


def test_average():
    assert average([2, 4]) == 3
