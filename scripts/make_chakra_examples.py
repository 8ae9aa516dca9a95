#!/usr/bin/env python3
"""Writes the example Chakra execution traces of traces/chakra/ (one .et file per rank) from our
schema, models/workload/chakra_et.proto, compiled with Debian's protoc into a temporary folder and
used through python3-protobuf:

  allreduce.{rank}.et  8 ranks, one ALL_REDUCE of 8 MiB each (the built-in allreduce_ring's twin)
  alltoall.{rank}.et   8 ranks, one ALL_TO_ALL of a 4 MiB send buffer each
  dp_step.{rank}.et    8 ranks, a two-layer data-parallel training step: forward (200 us),
                       backward of layer 2 (150 us), then layer 2's gradient all-reduce (16 MiB)
                       overlapping the backward of layer 1 (100 us), then layer 1's all-reduce
                       (8 MiB) once both are done (one NCCL stream: calls in order)

  scripts/make_chakra_examples.py [--out DIR]   (default: traces/chakra)
  scripts/make_chakra_examples.py --check       (exit 1 if the committed files differ)

Each file: a varint length, a GlobalMetadata, then a varint length and a Node per node, as
Chakra's own writer (protolib.encodeMessage) lays them out. The step's sizes and times are
what testbenches/validation/validate_workload.py's case chakra checks the replay against.

Needs Debian's protobuf-compiler (protoc) and python3-protobuf. Exit status: 0 ok (--check: the
files are the same), 1 --check found a difference or the files cannot be written, 2 bad arguments
or a missing tool or Python module (the message names the Debian package)."""
import argparse
import filecmp
import importlib
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROTO = os.path.join(ROOT, "models", "workload", "chakra_et.proto")
MIB = 1 << 20
RANKS = 8

# The data-parallel step (validate_workload.py reads these).
DP = {"fwd_us": 200, "bwd2_us": 150, "bwd1_us": 100, "grad2_bytes": 16 * MIB,
      "grad1_bytes": 8 * MIB}


class Missing(Exception):
    """A tool or module this script needs is not there: exit 2 with this one-line message."""


def load_schema(tmp):
    """The schema's Python classes: compiled by protoc into tmp, imported with python3-protobuf."""
    try:
        importlib.import_module("google.protobuf")
    except ImportError as e:
        raise Missing(f"the Python module google.protobuf is missing for {sys.executable} ({e}): "
                      "on Debian, apt install python3-protobuf") from None
    if shutil.which("protoc") is None:
        raise Missing("protoc is not on PATH: on Debian, apt install protobuf-compiler")
    p = subprocess.run(["protoc", f"--proto_path={os.path.dirname(PROTO)}", f"--python_out={tmp}",
                        PROTO], capture_output=True, text=True)
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        raise Missing(f"protoc could not compile {PROTO}: {tail}")
    sys.path.insert(0, tmp)
    try:
        return importlib.import_module("chakra_et_pb2")
    except Exception as e:  # e.g. protoc's output newer than the python3-protobuf runtime
        why = (str(e).splitlines() or [type(e).__name__])[0]
        raise Missing(f"protoc's Python code does not load with this protobuf module ({why}): "
                      "install protoc and python3-protobuf of one version (Debian's)") from None


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def write(path, pb, nodes):
    meta = pb.GlobalMetadata(version="0.0.4")
    with open(path, "wb") as f:
        for m in [meta] + nodes:
            data = m.SerializeToString(deterministic=True)
            f.write(varint(len(data)) + data)


def node(pb, id_, name, type_, deps=(), ctrl=(), dur=0, **attrs):
    n = pb.Node(id=id_, name=name, type=type_, duration_micros=dur)
    n.data_deps.extend(deps)
    n.ctrl_deps.extend(ctrl)
    # is_cpu_op false: a GPU kernel, as Chakra's converter marks them.
    n.attr.append(pb.AttributeProto(name="is_cpu_op", bool_val=False))
    for k, v in attrs.items():
        n.attr.append(pb.AttributeProto(name=k, int64_val=v))
    return n


def coll(pb, id_, name, comm_type, size, deps=(), ctrl=()):
    return node(pb, id_, name, pb.COMM_COLL_NODE, deps, ctrl, comm_type=comm_type, comm_size=size)


def make(out, pb):
    os.makedirs(out, exist_ok=True)
    for r in range(RANKS):
        write(os.path.join(out, f"allreduce.{r}.et"), pb,
              [coll(pb, 0, "allreduce_8MiB", pb.ALL_REDUCE, 8 * MIB)])
        write(os.path.join(out, f"alltoall.{r}.et"), pb,
              [coll(pb, 0, "alltoall_4MiB", pb.ALL_TO_ALL, 4 * MIB)])
        write(os.path.join(out, f"dp_step.{r}.et"), pb, [
            node(pb, 1, "fwd", pb.COMP_NODE, dur=DP["fwd_us"]),
            node(pb, 2, "bwd_layer2", pb.COMP_NODE, deps=[1], dur=DP["bwd2_us"]),
            coll(pb, 3, "allreduce_grad_layer2", pb.ALL_REDUCE, DP["grad2_bytes"], deps=[2]),
            node(pb, 4, "bwd_layer1", pb.COMP_NODE, deps=[2], dur=DP["bwd1_us"]),
            coll(pb, 5, "allreduce_grad_layer1", pb.ALL_REDUCE, DP["grad1_bytes"], deps=[4],
                 ctrl=[3]),
        ])


def main(argv=None):
    ap = argparse.ArgumentParser(prog="make_chakra_examples.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "traces", "chakra"), metavar="DIR",
                    help="where the .et files go (default: traces/chakra in the repository)")
    ap.add_argument("--check", action="store_true",
                    help="compare with the files in --out instead of writing them (default: "
                         "write them)")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            pb = load_schema(tmp)
        except Missing as e:
            print(f"make_chakra_examples.py: error: {e}", file=sys.stderr)
            return 2
        if not a.check:
            try:
                make(a.out, pb)
            except OSError as e:
                print(f"make_chakra_examples.py: error: cannot write {e.filename or a.out}: "
                      f"{e.strerror}", file=sys.stderr)
                return 1
            return 0
        fresh = os.path.join(tmp, "out")
        make(fresh, pb)
        names = sorted(os.listdir(fresh))
        _, bad, missing = filecmp.cmpfiles(fresh, a.out, names, shallow=False)
        for f in bad + missing:
            print(f"{os.path.join(a.out, f)}: differs from the script's output", file=sys.stderr)
        return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
