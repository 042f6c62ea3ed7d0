"""gpufabric for Python: model, measure and plan GPU servers and clusters.

    import gpufabric as gf
    c = gf.cluster("dgx-h100", nodes=32, fabric="fat-tree")
    r = gf.collective(c, "all_reduce", sizes=[1 << 20, 1 << 30])
    r.avg_busbw_GBps, r.rows            # rows go straight into pandas.DataFrame(r.rows)
    t = gf.train(c, model="llama3.1-70b", tp=8, pp=4, global_batch=512)
    t.step_time_s, t.mfu, t.step_time_band_s.low

Every call runs the same model as the ``gpufabric`` command with the same arguments, so the
numbers are the CLI's (``to_dict()`` holds the keys of the CLI's ``--format json``). Keyword
arguments are the CLI's options with ``_`` for ``-`` (``global_batch=512`` is
``--global-batch 512``); ``True`` gives a flag, a list is joined with commas, and a dict becomes
one ``--env NAME=VALUE`` per item. Bad input raises :class:`InputError` with the file, line and
field. The model runs without the GIL, so a ``ThreadPoolExecutor`` sweeps on every core.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Iterable, Mapping, Sequence

from . import _gpufabric
from .errors import InputError
from .results import (
    CatalogResult,
    CollectiveResult,
    PipelineResult,
    PlanResult,
    Result,
    ScheduleResult,
    ServeResult,
    TableResult,
    TopologyResult,
    TrainResult,
)

__version__ = _gpufabric.__version__
__all__ = [
    "Cluster",
    "GpufabricWarning",
    "InputError",
    "Result",
    "catalog",
    "cluster",
    "collective",
    "command",
    "import_cluster",
    "import_file",
    "pipeline",
    "plan",
    "presets",
    "schedule",
    "serve",
    "topology",
    "train",
]

# Options whose CLI spelling is not the keyword with '-' for '_'.
_SPELLING = {"cuda_graph": "--cuda_graph", "redop": "--op"}
_CLUSTER_KEYS = (
    "nodes",
    "network",
    "gpu",
    "nic",
    "nics_per_node",
    "fabric",
    "tiers",
    "oversubscription",
    "gpudirect",
    "p2p",
    "catalog",
    "calibration",
)


def _flag(name: str) -> str:
    return _SPELLING.get(name, "--" + name.replace("_", "-"))


def _keyword(field: str) -> str:
    """The keyword argument a CLI option's name stands for ('--global-batch' -> 'global_batch')."""
    for key, spelled in _SPELLING.items():
        if field == spelled:
            return key
    return field[2:].replace("-", "_") if field.startswith("--") else field


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _arguments(options: Mapping[str, Any]) -> list[str]:
    """CLI arguments for keyword options: None is left out, True is a flag, False leaves it out."""
    args: list[str] = []
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = _flag(name)
        if value is True:
            args.append(flag)
        elif isinstance(value, Mapping):
            for k, v in value.items():
                args += [flag, f"{k}={_text(v)}"]
        elif isinstance(value, (list, tuple)):
            args += [flag, ",".join(_text(v) for v in value)]
        else:
            args += [flag, _text(value)]
    return args


def command(*args: str) -> str:
    """Runs one ``gpufabric`` command line (the words after ``gpufabric``) and returns its output.

    >>> print(gf.command("collective", "all_reduce", "--preset", "dgx-h100", "-b", "1M", "-e", "1M"))
    """
    try:
        out, err = _gpufabric.execute([str(a) for a in args])
    except InputError as e:
        if not e.field.startswith("--"):
            raise
        # The CLI names its option ('--global-batch'); a Python caller wrote a keyword.
        keyword = _keyword(e.field)
        message = str(e).replace(f"field '{e.field}'", f"argument '{keyword}'", 1)
        raise InputError(
            message, file=e.file, line=e.line, column=e.column, field=keyword, problem=e.problem, valid=e.valid
        ) from None
    for line in err.splitlines():
        if line.strip():
            warnings.warn(line.removeprefix("gpufabric: warning: "), GpufabricWarning, stacklevel=3)
    return out


class GpufabricWarning(UserWarning):
    """What the CLI prints as a warning on stderr (e.g. an importer's default it had to choose)."""


def _json(*args: str) -> Any:
    return json.loads(command(*args, "--format", "json"))


class Cluster:
    """A cluster: a preset or a cluster YAML file, with overrides (nodes, network, fabric, ...).

    Made by :func:`cluster`, which checks it at once, so a typo fails where it is written. The
    attributes come from ``gpufabric topo``: ``name``, ``nodes``, ``gpus``, ``gpus_per_node``,
    ``gpu``, ``network``, ``fabric``; ``topology`` holds the whole of it.
    """

    def __init__(self, source: str | os.PathLike, **overrides: Any):
        source = os.fspath(source)
        unknown = [k for k in overrides if k not in _CLUSTER_KEYS]
        if unknown:
            raise InputError(
                f"cluster(): unknown argument '{unknown[0]}' (valid: {', '.join(_CLUSTER_KEYS)})",
                field=unknown[0],
                problem="unknown argument",
                valid=", ".join(_CLUSTER_KEYS),
            )
        self.source = source
        self.overrides = {k: v for k, v in overrides.items() if v is not None}
        kind = "--cluster" if os.path.exists(source) or source.endswith((".yaml", ".yml")) else "--preset"
        self.arguments: list[str] = [kind, source] + _arguments(self.overrides)
        self.topology = TopologyResult(_json("topo", *self.arguments))
        info = self.topology.to_dict()["cluster"]
        self.name: str = info["name"]
        self.nodes: int = info["nodes"]
        self.gpus: int = info["gpus"]
        self.gpus_per_node: int = info["gpus_per_node"]
        self.gpu: str = info["gpu"]
        self.network: str = info["network"]
        self.fabric: str = info["fabric"]

    def __repr__(self) -> str:
        return (
            f"Cluster({self.name!r}: {self.nodes} node{'s' if self.nodes != 1 else ''} x {self.gpus_per_node} "
            f"{self.gpu}, {self.network}, {self.fabric})"
        )


def cluster(source: str | os.PathLike, **overrides: Any) -> Cluster:
    """A preset name (see :func:`presets`) or a cluster YAML file, with overrides.

    ``gf.cluster("dgx-h100", nodes=32, fabric="fat-tree", oversubscription=2)``. Overrides:
    nodes, network, gpu, nic, nics_per_node, fabric, tiers, oversubscription, gpudirect (bool),
    p2p (bool), catalog (a directory of extra catalog files), calibration (an overlay file).
    """
    return Cluster(source, **overrides)


def _cluster_arguments(c: Cluster | str | os.PathLike) -> list[str]:
    return (c if isinstance(c, Cluster) else Cluster(c)).arguments


def presets() -> TableResult:
    """The built-in cluster presets (rows: name, gpus_per_node, gpu, gpu_fabric, network, ...)."""
    return TableResult(_json("presets"))


def catalog(directory: str | os.PathLike | None = None) -> CatalogResult:
    """The hardware catalog, each entry with its source; ``directory`` adds catalog files."""
    extra = ["--catalog", os.fspath(directory)] if directory is not None else []
    return CatalogResult(_json("catalog", *extra))


def topology(c: Cluster | str) -> TopologyResult:
    """What ``gpufabric topo`` shows: the summary, GPU pairs' paths and the NCCL transports."""
    return (c if isinstance(c, Cluster) else Cluster(c)).topology


def collective(
    c: Cluster | str,
    op: str = "all_reduce",
    sizes: Iterable[int] | None = None,
    *,
    minbytes: int | str = "32M",
    maxbytes: int | str | None = None,
    stepfactor: int | None = None,
    stepbytes: int | str | None = None,
    datatype: str = "float",
    redop: str = "sum",
    root: int = 0,
    gpus: int | None = None,
    algo: str | None = None,
    proto: str | None = None,
    ngpus: int = 1,
    cuda_graph: int = 0,
    engine: str = "auto",
    env: Mapping[str, Any] | None = None,
) -> CollectiveResult:
    """An NCCL collective as nccl-tests would measure it, predicted.

    ``sizes`` lists bytes per rank buffer, each its own run; otherwise ``minbytes`` to
    ``maxbytes`` by ``stepfactor`` (nccl-tests' -b, -e, -f). ``env`` is the run's NCCL
    environment, e.g. ``{"NCCL_ALGO": "Ring"}``. Rows: size_bytes, time_us, algbw_GBps,
    busbw_GBps, algorithm, protocol and the time band.
    """
    base = ["collective", op, *_cluster_arguments(c)]
    options = dict(
        datatype=datatype,
        redop=redop,
        root=root,
        gpus=gpus,
        algo=algo,
        proto=proto,
        ngpus=ngpus,
        cuda_graph=cuda_graph,
        engine=engine,
        env=env,
    )
    if sizes is None:
        sweep = dict(minbytes=minbytes, maxbytes=maxbytes if maxbytes is not None else minbytes)
        sweep.update(stepfactor=stepfactor, stepbytes=stepbytes)
        return CollectiveResult(_json(*base, *_arguments({**sweep, **options})))
    runs = [_json(*base, *_arguments({"minbytes": s, "maxbytes": s, **options})) for s in sizes]
    if not runs:
        raise InputError("collective(): sizes is empty", field="sizes", problem="empty", valid="one size or more")
    merged = runs[0]
    merged["rows"] = [row for run in runs for row in run["rows"]]
    # As one sweep over these sizes would give them: the average over every row, and each
    # warning once.
    merged["avg_busbw_GBps"] = sum(r["busbw_GBps"] for r in merged["rows"]) / len(merged["rows"])
    for key in ("warnings", "notes"):
        if key in merged:
            merged[key] = list(dict.fromkeys(w for run in runs for w in run.get(key, [])))
    return CollectiveResult(merged)


def train(c: Cluster | str, model: str | None = None, **options: Any) -> TrainResult:
    """One training step: time, throughput, MFU, where the time goes, memory, scaling.

    Options are ``gpufabric train``'s: tp, pp, dp, cp, ep, vpp, micro_batch, global_batch,
    precision, recompute, sequence_parallel=True, distributed_optimizer=True, zero, fsdp,
    scale=[1, 2, 4], model_file, ... (``gpufabric train --help``).
    """
    return TrainResult(_json("train", *_cluster_arguments(c), *_arguments({"model": model, **options})))


def serve(c: Cluster | str, model: str | None = None, **options: Any) -> ServeResult:
    """LLM serving: throughput, TTFT/TPOT percentiles and the bound.

    Options are ``gpufabric serve``'s: tp, pp, precision, kv_dtype, isl, osl, concurrency,
    rate, requests, seed, slo_ttft, ... (``gpufabric serve --help``).
    """
    return ServeResult(_json("serve", *_cluster_arguments(c), *_arguments({"model": model, **options})))


def pipeline(c: Cluster | str, input: str | None = None, **options: Any) -> PipelineResult:  # noqa: A002
    """A node's input pipeline (storage, CPU decode, H2D, GPU) and its bottleneck."""
    return PipelineResult(_json("pipeline", *_cluster_arguments(c), *_arguments({"input": input, **options})))


def plan(plan: str | os.PathLike = "pretrain-70b", *, threads: int | None = None, **options: Any) -> PlanResult:
    """The planner: search designs and layouts for a plan file's workloads and limits.

    ``plan`` is a plan YAML file (docs/plan-format.md) or a built-in plan's name. Rows: the
    candidates, ranked, with their design, layout, time, cost and band.
    """
    args = ["plan", os.fspath(plan), "--quiet", *_arguments({"threads": threads, **options})]
    return PlanResult(_json(*args))


def schedule(c: Cluster | str | None = None, *, trace: str | os.PathLike | None = None, **options: Any) -> ScheduleResult:
    """Place a job trace on a shared cluster under placement policies.

    ``gf.schedule("dgx-h100", nodes=24, trace="jobs.csv", compare=True)``; options are
    ``gpufabric schedule``'s (policy, compare, fill, nodes_file, ...).
    """
    cluster_args: list[str] = []
    overrides = {k: options.pop(k) for k in list(options) if k in _CLUSTER_KEYS}
    if isinstance(c, Cluster) and overrides:
        name = next(iter(overrides))
        raise InputError(
            f"schedule(): '{name}' belongs to the cluster; give it to gf.cluster(...)",
            field=name,
            problem="a cluster override beside a Cluster",
            valid="gf.cluster(preset, " + name + "=...)",
        )
    if c is not None:
        cluster_args = (c if isinstance(c, Cluster) else Cluster(c, **overrides)).arguments
    trace_arg = {"trace": os.fspath(trace)} if trace is not None else {}
    return ScheduleResult(_json("schedule", *cluster_args, "--quiet", *_arguments({**trace_arg, **options})))


def import_file(kind: str, source: str | os.PathLike, output: str | os.PathLike | None = None, **options: Any) -> str:
    """``gpufabric import KIND FILE``: a file you already have as a gpufabric input.

    KIND: ``nccl-topo`` (NCCL_TOPO_DUMP_FILE XML, cloud images' topology files) and ``topo-m``
    (``nvidia-smi topo -m`` text) give a cluster file; ``sacct``, ``k8s-pods`` give a job trace and
    ``k8s-nodes`` a node list for :func:`schedule`. With ``output`` the result is written there
    (whole, or not at all) and the summary is returned; without it, the result is returned.
    Defaults the file does not settle are given as :class:`GpufabricWarning`.
    """
    out = {"output": os.fspath(output)} if output is not None else {}
    return command("import", kind, os.fspath(source), *_arguments({**out, **options}))


def import_cluster(
    source: str | os.PathLike,
    output: str | os.PathLike,
    *,
    kind: str | None = None,
    nodes: int | None = None,
    network: str | None = None,
    gpu: str | None = None,
    cpu: str | None = None,
) -> Cluster:
    """The cluster of your own machine, from its NCCL topology dump or ``nvidia-smi topo -m``.

    ``gf.import_cluster("topo.xml", "mine.yaml", nodes=16, network="ib-ndr")`` writes the
    cluster file ``output`` and returns it as a :class:`Cluster`. ``kind`` is ``nccl-topo`` for
    XML (the default for a ``.xml`` file) or ``topo-m``; ``gpu``, ``cpu`` and ``network`` settle
    what the file does not say (each default chosen instead is a :class:`GpufabricWarning`).
    """
    source = os.fspath(source)
    if kind is None:
        kind = "nccl-topo" if source.lower().endswith(".xml") else "topo-m"
    import_file(kind, source, output, nodes=nodes, network=network, gpu=gpu, cpu=cpu)
    return Cluster(output)
