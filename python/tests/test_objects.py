"""Results as objects, rows for pandas, errors that say where, and sweeps on threads."""

import concurrent.futures
import pickle

import pytest

import gpufabric as gf


def test_cluster_attributes():
    c = gf.cluster("dgx-h100", nodes=32, fabric="fat-tree")
    assert (c.name, c.nodes, c.gpus, c.gpus_per_node, c.gpu, c.fabric) == ("dgx-h100", 32, 256, 8, "h100-sxm5",
                                                                         "fat-tree")
    assert c.topology.summary.nodes == 32
    assert "32 nodes" in repr(c)


def test_attributes_mirror_the_json_keys():
    t = gf.train("dgx-h100", model="llama3.1-8b", tp=2, global_batch=128)
    d = t.to_dict()
    assert t.mfu == d["mfu"]
    assert t.memory.total_GiB == d["memory"]["total_GiB"]
    assert t["breakdown"]["compute"] == d["breakdown"]["compute"]
    assert "step_time_s" in dir(t)
    with pytest.raises(AttributeError, match="no 'step_time'"):
        t.step_time  # noqa: B018
    d["mfu"] = 2.0  # a copy: the result does not change
    assert t.mfu != 2.0


def test_rows_make_a_dataframe():
    pandas = pytest.importorskip("pandas")
    r = gf.collective("dgx-h100", sizes=[1 << 20, 1 << 24, 1 << 30])
    df = pandas.DataFrame(r.rows)
    assert list(df["size_bytes"]) == [1 << 20, 1 << 24, 1 << 30]
    assert {"busbw_GBps", "time_us", "time_band_us_low", "time_band_us_high", "algorithm"} <= set(df.columns)
    assert (df["time_band_us_low"] <= df["time_us"]).all()
    assert r.to_dataframe().shape == df.shape


def test_bad_keyword_names_the_argument():
    with pytest.raises(gf.InputError) as e:
        gf.train("dgx-h100", model="llama3.1-8b", global_bacth=64)
    assert e.value.field == "global_bacth"
    assert "global_batch" in str(e.value) or "global-batch" in str(e.value)


def test_bad_value_names_the_argument_and_what_is_valid():
    with pytest.raises(gf.InputError) as e:
        gf.train("dgx-h100", model="llama3.1-8b", tp=3)
    assert e.value.field == "tp"
    assert str(e.value).startswith("argument 'tp'")
    assert e.value.valid


def test_bad_cluster_file_names_file_line_and_field(tmp_path):
    f = tmp_path / "cluster.yaml"
    f.write_text("name: mine\nnodes: 2\nnode:\n  gpus: 8\n  gpu: h100-sxm5\n  gpu_fabirc: nvswitch\n")
    with pytest.raises(gf.InputError) as e:
        gf.cluster(str(f))
    assert e.value.file == str(f)
    assert e.value.line == 6
    assert "gpu_fabirc" in e.value.field or "gpu_fabirc" in str(e.value)


def test_unknown_preset_suggests():
    with pytest.raises(gf.InputError, match="did you mean 'dgx-h100'"):
        gf.cluster("dgx-h1000")


def test_input_error_pickles():
    try:
        gf.cluster("dgx-h100", nodes=0)
    except gf.InputError as e:
        back = pickle.loads(pickle.dumps(e))
        assert (str(back), back.field, back.valid) == (str(e), e.field, e.valid)
    else:
        pytest.fail("nodes=0 was accepted")


def test_threaded_sweep_gives_the_sequential_numbers():
    c = gf.cluster("dgx-h100", nodes=2)
    layouts = [(tp, mb) for tp in (1, 2, 4, 8) for mb in (1, 2)]

    def step(layout):
        tp, mb = layout
        return gf.train(c, model="llama3.1-8b", tp=tp, micro_batch=mb, global_batch=64).step_time_s

    sequential = [step(x) for x in layouts]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        threaded = list(pool.map(step, layouts))
    assert threaded == sequential


def test_stub_names_every_public_function(root):
    import ast

    stub = ast.parse((root / "python" / "gpufabric" / "__init__.pyi").read_text())
    named = {n.name for n in stub.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    named |= {a.asname or a.name for n in stub.body if isinstance(n, ast.ImportFrom) for a in n.names}
    assert set(gf.__all__) <= named
    for name in gf.__all__:
        assert getattr(gf, name).__doc__, f"{name} has no docstring"


def test_import_cluster_from_an_nccl_topology_dump(root, tmp_path):
    out = tmp_path / "mine.yaml"
    with pytest.warns(gf.GpufabricWarning):
        c = gf.import_cluster(root / "tests" / "data" / "import" / "azure-ndv4-topo.xml", out, gpu="a100-sxm4-80gb",
                              nodes=2, network="ib-hdr")
    assert out.exists()
    assert (c.nodes, c.gpus_per_node, c.gpu, c.network) == (2, 8, "a100-sxm4-80gb", "ib-hdr")
    r = gf.collective(c, "all_reduce", sizes=[1 << 30])
    assert r.comm.ranks == 16 and r.rows[0]["busbw_GBps"] > 0


def test_import_trace_then_schedule(root, tmp_path):
    trace = tmp_path / "trace.csv"
    summary = gf.import_file("sacct", root / "tests" / "data" / "import" / "jobs" / "sacct_fox_uio.txt", trace)
    assert "16 GPU jobs" in summary
    s = gf.schedule("dgx-a100", nodes=4, trace=trace, policy="first-fit")
    assert s.to_dict()


def test_import_error_names_the_line(root, tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text('<system version="1">\n  <cpu numaid="0">\n    <pci busid="0000:01:00.0"\n</system>\n')
    with pytest.raises(gf.InputError) as e:
        gf.import_cluster(bad, tmp_path / "x.yaml")
    assert e.value.file == str(bad) and e.value.line > 0
    assert not (tmp_path / "x.yaml").exists()
