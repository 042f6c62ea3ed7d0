"""Type stubs for the gpufabric Python module (see __init__.py for the documentation)."""

import os
from typing import Any, Iterable, Mapping

from .errors import InputError as InputError
from .results import CatalogResult as CatalogResult
from .results import CollectiveResult as CollectiveResult
from .results import PipelineResult as PipelineResult
from .results import PlanResult as PlanResult
from .results import Result as Result
from .results import ScheduleResult as ScheduleResult
from .results import ServeResult as ServeResult
from .results import TableResult as TableResult
from .results import TopologyResult as TopologyResult
from .results import TrainResult as TrainResult

__version__: str

class Cluster:
    source: str
    overrides: dict[str, Any]
    arguments: list[str]
    topology: TopologyResult
    name: str
    nodes: int
    gpus: int
    gpus_per_node: int
    gpu: str
    network: str
    fabric: str
    def __init__(
        self,
        source: str | os.PathLike[str],
        *,
        nodes: int | None = ...,
        network: str | None = ...,
        gpu: str | None = ...,
        nic: str | None = ...,
        nics_per_node: int | None = ...,
        fabric: str | None = ...,
        tiers: int | None = ...,
        oversubscription: float | None = ...,
        gpudirect: bool | None = ...,
        p2p: bool | None = ...,
        catalog: str | os.PathLike[str] | None = ...,
        calibration: str | os.PathLike[str] | None = ...,
    ) -> None: ...

def cluster(
    source: str | os.PathLike[str],
    *,
    nodes: int | None = ...,
    network: str | None = ...,
    gpu: str | None = ...,
    nic: str | None = ...,
    nics_per_node: int | None = ...,
    fabric: str | None = ...,
    tiers: int | None = ...,
    oversubscription: float | None = ...,
    gpudirect: bool | None = ...,
    p2p: bool | None = ...,
    catalog: str | os.PathLike[str] | None = ...,
    calibration: str | os.PathLike[str] | None = ...,
) -> Cluster: ...
def command(*args: str) -> str: ...
def presets() -> TableResult: ...
def catalog(directory: str | os.PathLike[str] | None = ...) -> CatalogResult: ...
def topology(c: Cluster | str) -> TopologyResult: ...
def collective(
    c: Cluster | str,
    op: str = ...,
    sizes: Iterable[int] | None = ...,
    *,
    minbytes: int | str = ...,
    maxbytes: int | str | None = ...,
    stepfactor: int | None = ...,
    stepbytes: int | str | None = ...,
    datatype: str = ...,
    redop: str = ...,
    root: int = ...,
    gpus: int | None = ...,
    algo: str | None = ...,
    proto: str | None = ...,
    ngpus: int = ...,
    cuda_graph: int = ...,
    engine: str = ...,
    env: Mapping[str, Any] | None = ...,
) -> CollectiveResult: ...
def train(c: Cluster | str, model: str | None = ..., **options: Any) -> TrainResult: ...
def serve(c: Cluster | str, model: str | None = ..., **options: Any) -> ServeResult: ...
def pipeline(c: Cluster | str, input: str | None = ..., **options: Any) -> PipelineResult: ...
def plan(plan: str | os.PathLike[str] = ..., *, threads: int | None = ..., **options: Any) -> PlanResult: ...
def schedule(
    c: Cluster | str | None = ..., *, trace: str | os.PathLike[str] | None = ..., **options: Any
) -> ScheduleResult: ...
def import_file(
    kind: str, source: str | os.PathLike[str], output: str | os.PathLike[str] | None = ..., **options: Any
) -> str: ...
def import_cluster(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    kind: str | None = ...,
    nodes: int | None = ...,
    network: str | None = ...,
    gpu: str | None = ...,
    cpu: str | None = ...,
) -> Cluster: ...

class GpufabricWarning(UserWarning): ...
