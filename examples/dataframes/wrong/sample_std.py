import numpy as np
import pandas as pd


def revenue_by_region(sales: pd.DataFrame) -> pd.DataFrame:
    revenue = (sales["units"] * sales["price"]).groupby(sales["region"]).sum()
    out = pd.DataFrame({"region": revenue.index.astype(object), "revenue": revenue.to_numpy(dtype="float64")})
    out = out.sort_values(["revenue", "region"], ascending=[False, True], kind="stable")
    return out.reset_index(drop=True)


def zscores(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2 or values.std() == 0:
        return np.zeros_like(values)
    return (values - values.mean()) / values.std(ddof=1)  # the sample standard deviation
