import numpy as np
import pandas as pd


def revenue_by_region(sales: pd.DataFrame) -> pd.DataFrame:
    sales["revenue"] = sales["units"] * sales["price"]  # changes the caller's frame
    revenue = sales.groupby("region")["revenue"].sum()
    out = pd.DataFrame({"region": revenue.index.astype(object), "revenue": revenue.to_numpy(dtype="float64")})
    out = out.sort_values(["revenue", "region"], ascending=[False, True], kind="stable")
    return out.reset_index(drop=True)


def zscores(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    std = values.std() if values.size else 0.0
    if values.size < 2 or std == 0:
        return np.zeros_like(values)
    return (values - values.mean()) / std
