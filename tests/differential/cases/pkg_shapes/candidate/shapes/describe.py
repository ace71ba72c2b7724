def describe(shape):
    return f"{type(shape).__name__} with area {shape.area()}"
