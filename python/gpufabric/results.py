"""Results as objects: attributes for the JSON keys, ``to_dict()`` and flat ``rows`` for pandas."""

from __future__ import annotations

import copy
from typing import Any, Iterator


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return Result(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def flatten(record: dict, prefix: str = "") -> dict:
    """One level of columns from nested objects: {"band": {"low": 1}} -> {"band_low": 1}.

    Lists stay as they are (a cell holding a list), so the columns are the same on every row.
    """
    out: dict = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "_"))
        else:
            out[name] = value
    return out


class Result:
    """A gpufabric result. Attributes are the keys of the CLI's ``--format json``.

    ``r.step_time_s``, ``r.memory.total_GiB``; ``r["key"]`` also works, for keys that are not
    identifiers. ``to_dict()`` returns the JSON as plain Python objects (a copy), with the CLI's
    keys; ``rows`` is a list of flat dicts that ``pandas.DataFrame(r.rows)`` takes directly.
    """

    __slots__ = ("_data",)

    def __init__(self, data: dict):
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name: str) -> Any:
        data = object.__getattribute__(self, "_data")
        if name in data:
            return _wrap(data[name])
        raise AttributeError(f"{type(self).__name__} has no '{name}' (keys: {', '.join(sorted(data))})")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("results are read-only; use to_dict() for a copy to change")

    def __getitem__(self, key: str) -> Any:
        return _wrap(self._data[key])

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {k for k in self._data if k.isidentifier()})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Result) and self._data == other._data

    def __repr__(self) -> str:
        shown = {k: v for k, v in self._data.items() if not isinstance(v, (dict, list))}
        text = ", ".join(f"{k}={v!r}" for k, v in list(shown.items())[:8])
        return f"{type(self).__name__}({text}{', ...' if len(self._data) > 8 else ''})"

    def keys(self) -> list[str]:
        return list(self._data)

    def to_dict(self) -> dict:
        return copy.deepcopy(self._data)

    @property
    def rows(self) -> list[dict]:
        return [flatten(self._data)]

    def to_dataframe(self):
        """``pandas.DataFrame(self.rows)`` (pandas is imported only here)."""
        import pandas

        return pandas.DataFrame(self.rows)


class TableResult(Result):
    """A list of records (``presets()``): ``rows`` are the records, flattened."""

    def __init__(self, data: list):
        super().__init__({"rows": data})

    @property
    def rows(self) -> list[dict]:
        return [flatten(r) for r in self._data["rows"]]

    def __len__(self) -> int:
        return len(self._data["rows"])

    def __iter__(self):  # type: ignore[override]
        return iter(_wrap(self._data["rows"]))


class TopologyResult(Result):
    """``gpufabric topo``: ``summary``, ``cluster``, GPU ``pairs``; rows are the pairs."""

    @property
    def rows(self) -> list[dict]:
        return [flatten(p) for p in self._data.get("pairs", [])]


class CatalogResult(Result):
    """The catalog: one attribute per section (``gpus``, ``networks``, ...); rows carry ``section``."""

    @property
    def rows(self) -> list[dict]:
        out = []
        for section, entries in self._data.items():
            if isinstance(entries, list):
                out += [{"section": section, **flatten(e)} for e in entries if isinstance(e, dict)]
        return out


class CollectiveResult(Result):
    """A collective over sizes, as nccl-tests prints it: one row per size."""

    @property
    def rows(self) -> list[dict]:
        return [{"op": self._data.get("op"), **flatten(r)} for r in self._data["rows"]]

    @property
    def avg_busbw_GBps(self) -> float:  # noqa: N802 (the CLI's key)
        """nccl-tests' "Avg bus bandwidth": the mean bus bandwidth over the sizes."""
        return self._data["avg_busbw_GBps"]


class TrainResult(Result):
    """A training step. ``row`` is the headline run as one flat record (layout and figures);
    ``rows`` are the scaling points when ``scale=`` was given, else ``[row]``."""

    _HEADLINE = (
        "model",
        "step_time_s",
        "tokens_per_s",
        "samples_per_s",
        "tflops_per_gpu",
        "mfu",
        "hfu",
        "global_batch",
        "memory_per_gpu_GiB",
        "gpu_memory_GiB",
        "fits",
        "hypothetical",
        "bottleneck",
    )

    @property
    def row(self) -> dict:
        d = self._data
        out = {k: d[k] for k in self._HEADLINE if k in d}
        out.update(flatten(d.get("layout", {})))
        out.update(flatten({"step_time_band_s": d.get("step_time_band_s", {})}))
        out.update(flatten({"breakdown": d.get("breakdown", {})}))
        return out

    @property
    def rows(self) -> list[dict]:
        if "scaling" in self._data:
            return [{"model": self._data.get("model"), **flatten(p)} for p in self._data["scaling"]]
        return [self.row]


class ServeResult(Result):
    """A serving run: rows are the curve's points for a sweep, else the one run, flattened."""

    @property
    def rows(self) -> list[dict]:
        for key in ("curve", "sweep", "points"):
            if isinstance(self._data.get(key), list):
                return [flatten(p) for p in self._data[key]]
        return [flatten({k: v for k, v in self._data.items() if not isinstance(v, list)})]


class PipelineResult(Result):
    """A node's input pipeline: rows are its stages where the JSON lists them."""

    @property
    def rows(self) -> list[dict]:
        if isinstance(self._data.get("stages"), list):
            return [flatten(s) for s in self._data["stages"]]
        return super().rows


class PlanResult(Result):
    """The planner's answer: ``recommendation`` and ranked ``candidates`` (the rows)."""

    @property
    def rows(self) -> list[dict]:
        return [flatten(c) for c in self._data.get("candidates", [])]


class ScheduleResult(Result):
    """A scheduling replay: rows are the policies' results where the JSON lists them."""

    @property
    def rows(self) -> list[dict]:
        for key in ("policies", "results", "rows"):
            if isinstance(self._data.get(key), list):
                return [flatten(p) for p in self._data[key]]
        if isinstance(self._data, dict):
            return super().rows
        return []
