from .area import square_area
from .describe import describe


class Square:
    def __init__(self, side):
        self.side = side

    def area(self):
        return square_area(self.side)


__all__ = ["Square", "describe"]
