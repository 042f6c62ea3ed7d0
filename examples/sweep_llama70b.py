#!/usr/bin/env python3
"""Sweep Llama 3.1 70B's layouts on 64 DGX H100 nodes; save a CSV and a figure.

    PYTHONPATH=build/python python3 examples/sweep_llama70b.py --out sweep/

Every layout of TP x PP x micro-batch at a global batch of 512 sequences is modelled (on a thread
pool: the model runs without the GIL); layouts the model refuses (TP x PP not dividing the GPUs,
a PP that does not divide the layers) are listed with the reason. The CSV holds one row per layout
with its step time, the band the validation supports, MFU and memory; the figure plots tokens/s
per layout, with the band as error bars and the layouts that do not fit in memory hollow.
"""

import argparse
import concurrent.futures
import itertools
import pathlib

import gpufabric as gf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".", help="directory for sweep.csv and sweep.png")
    parser.add_argument("--cluster", default="dgx-h100", help="a preset or a cluster file (gpufabric import ...)")
    parser.add_argument("--nodes", type=int, default=64)
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    cluster = gf.cluster(args.cluster, nodes=args.nodes)
    layouts = list(itertools.product([2, 4, 8], [1, 2, 4, 8], [1, 2]))

    def run(layout):
        tp, pp, mb = layout
        try:
            t = gf.train(cluster, model="llama3.1-70b", tp=tp, pp=pp, micro_batch=mb, global_batch=512,
                         sequence_parallel=True, distributed_optimizer=True, recompute="selective")
            return t.row, None
        except gf.InputError as e:
            return None, f"TP {tp} PP {pp} micro-batch {mb}: {e.problem}"

    with concurrent.futures.ThreadPoolExecutor() as pool:
        results = list(pool.map(run, layouts))
    rows = [r for r, _ in results if r is not None]
    refused = [why for _, why in results if why is not None]

    import pandas  # noqa: E402 (only the example needs it)

    df = pandas.DataFrame(rows).sort_values("tokens_per_s", ascending=False)
    df.to_csv(out / "sweep.csv", index=False)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df["label"] = df.apply(lambda r: f"TP{r.tp} PP{r.pp} mb{r.micro_batch}", axis=1)
    # The band is of the step time; tokens/s moves the other way.
    tokens = df["tokens_per_s"] / cluster.gpus
    low = tokens * df["step_time_s"] / df["step_time_band_s_high"]
    high = tokens * df["step_time_s"] / df["step_time_band_s_low"]
    fig, ax = plt.subplots(figsize=(10, 5))
    x = range(len(df))
    fits = df["fits"].to_numpy()
    ax.errorbar(x, tokens, yerr=[tokens - low, high - tokens], fmt="none", ecolor="grey", capsize=2)
    memory = f"{df['gpu_memory_GiB'].iloc[0]:.1f} GiB"
    ax.scatter([i for i in x if fits[i]], tokens[fits], label=f"fits in {memory}", color="tab:blue")
    ax.scatter([i for i in x if not fits[i]], tokens[~fits], label="does not fit (hypothetical)",
               facecolors="none", edgecolors="tab:red")
    ax.set_xticks(list(x), df["label"], rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("tokens/s per GPU")
    ax.set_title(f"Llama 3.1 70B on {cluster.nodes} x {cluster.name} (global batch 512); bars: validation band")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "sweep.png", dpi=120)

    best = df[df["fits"]].iloc[0]
    print(f"{len(df)} layouts modelled, {len(refused)} refused, {int(df['fits'].sum())} fit in memory")
    print(f"best that fits: TP {best.tp} PP {best.pp} micro-batch {best.micro_batch}: "
          f"{best.step_time_s:.2f} s per step ({best.step_time_band_s_low:.2f} .. {best.step_time_band_s_high:.2f}), "
          f"MFU {best.mfu:.1%}")
    for why in refused:
        print("refused:", why)
    print(f"wrote {out / 'sweep.csv'} and {out / 'sweep.png'}")


if __name__ == "__main__":
    main()
