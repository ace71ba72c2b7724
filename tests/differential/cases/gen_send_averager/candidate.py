def averager():
    total, count, average = 0.0, 0, None
    while True:
        value = yield average
        total += value
        count += 1
        average = total / count
