import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Point:
    x: float
    y: float

    def dist(self):
        return math.hypot(self.x, self.y)


@dataclass
class Inventory:
    owner: str
    items: list = field(default_factory=list)

    def add(self, item):
        self.items.append(item)
