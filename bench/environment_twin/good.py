import statistics


def revenue_by_region(sales):
    totals = {}
    for row in sales:
        totals[row["region"]] = totals.get(row["region"], 0.0) + row["units"] * row["price"]
    return sorted(({"region": r, "revenue": v} for r, v in totals.items()), key=lambda d: (-d["revenue"], d["region"]))


def zscores(values):
    std = statistics.pstdev(values) if values else 0.0
    if len(values) < 2 or std == 0:
        return [0.0] * len(values)
    mean = statistics.fmean(values)
    return [(v - mean) / std for v in values]
