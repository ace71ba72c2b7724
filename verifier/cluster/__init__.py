"""Scale-out on Ray (the `ray` extra): a sandbox backend whose jobs run on the nodes of a Ray
cluster, one warm pool per node on that node's own Docker engine. See docs/scale.md."""

from verifier.cluster.backend import ClusterStats, RayBackend, import_ray, ray_verifier
from verifier.cluster.node import NodeInfo, NodeRefused

__all__ = ["ClusterStats", "NodeInfo", "NodeRefused", "RayBackend", "import_ray", "ray_verifier"]
