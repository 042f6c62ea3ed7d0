"""The module's numbers are the CLI's for the same request: to_dict() equals `--format json`."""

import gpufabric as gf


def test_collective_sweep_equals_cli(cli):
    c = gf.cluster("dgx-h100", nodes=4, fabric="fat-tree")
    r = gf.collective(c, "all_reduce", minbytes="64K", maxbytes="1G", stepfactor=4)
    expected = cli("collective", "all_reduce", "--preset", "dgx-h100", "--nodes", "4", "--fabric", "fat-tree",
                   "-b", "64K", "-e", "1G", "-f", "4")
    assert r.to_dict() == expected
    assert len(r.rows) == len(expected["rows"]) == 8


def test_collective_sizes_are_each_the_cli_row(cli):
    sizes = [1 << 16, 1 << 20, 1 << 28]
    r = gf.collective("dgx-a100", "all_gather", sizes=sizes, env={"NCCL_ALGO": "Ring"})
    for size, row in zip(sizes, r.rows):
        one = cli("collective", "all_gather", "--preset", "dgx-a100", "-b", str(size), "-e", str(size),
                  "--env", "NCCL_ALGO=Ring")
        assert row["busbw_GBps"] == one["rows"][0]["busbw_GBps"]
        assert row["time_us"] == one["rows"][0]["time_us"]
        assert row["algorithm"] == "Ring"
    assert r.avg_busbw_GBps == sum(x["busbw_GBps"] for x in r.rows) / 3


def test_train_equals_cli(cli):
    c = gf.cluster("dgx-h100", nodes=4)
    t = gf.train(c, model="llama3.1-8b", tp=2, sequence_parallel=True, recompute="selective",
                 distributed_optimizer=True, global_batch=256, scale=[1, 2, 4])
    expected = cli("train", "--preset", "dgx-h100", "--nodes", "4", "--model", "llama3.1-8b", "--tp", "2",
                   "--sequence-parallel", "--recompute", "selective", "--distributed-optimizer", "--global-batch",
                   "256", "--scale", "1,2,4")
    assert t.to_dict() == expected
    assert t.step_time_s == expected["step_time_s"]
    assert t.step_time_band_s.low < t.step_time_s < t.step_time_band_s.high
    assert [p["nodes"] for p in t.rows] == [1, 2, 4]
    assert t.row["tp"] == 2 and t.row["dp"] == 16 and t.row["gpus"] == 32


def test_serve_equals_cli(cli):
    s = gf.serve("dgx-h100", model="llama3.1-70b", tp=8, precision="fp8", kv_dtype="fp8", isl=1024, osl=256,
                 concurrency=32, requests=300)
    expected = cli("serve", "--preset", "dgx-h100", "--model", "llama3.1-70b", "--tp", "8", "--precision", "fp8",
                   "--kv-dtype", "fp8", "--isl", "1024", "--osl", "256", "--concurrency", "32", "--requests", "300")
    assert s.to_dict() == expected
    assert s.ttft_ms.p90 == expected["ttft_ms"]["p90"]


def test_plan_equals_cli(cli):
    p = gf.plan(threads=2)
    expected = cli("plan", "--quiet", "--threads", "2")
    assert p.to_dict() == expected
    assert len(p.rows) == len(expected["candidates"]) > 0
    assert p.recommendation.candidate == expected["recommendation"]["candidate"]


def test_presets_and_catalog_equal_cli(cli):
    assert gf.presets().to_dict()["rows"] == cli("presets")
    assert gf.catalog().to_dict() == cli("catalog")
    assert "dgx-h100" in [p["name"] for p in gf.presets().rows]
