#!/usr/bin/env python3
"""Bring your own RTL (CTest cosim.byo.*, label cosim): a user's CRC-32 block that lives outside the
source tree (written below into a temporary folder, with its own port names and an active-high
reset) is co-simulated by `fabricsim cosim --rtl ... --bind crc32 --ports ...`.

  byo_test.py FABRICSIM CACHE_DIR

  - the correct block: exit 0, verdict "matched", coverage with no bin missed, the cache built,
    and a second run reuses it;
  - a mutant (a short last beat takes one byte too many): exit 1, a report naming the first
    mismatching cycle, the differing output (expected vs got) and every input of that cycle and
    the cycles before it, mismatch.fst and a mismatch.gtkw whose marker is at that cycle;
  - bad port maps (no such port, wrong width, a key that is no model signal, a missing input):
    exit 2 with a message naming the map file and the key.
CACHE_DIR is kept between runs (the Verilator builds take tens of seconds each).
"""
import os
import re
import subprocess
import sys
import tempfile

failures = []

BLOCK = """// A user's CRC-32 (IEEE 802.3) datapath, 8 bytes per beat: a design that lives outside FabricSim.
module my_crc (
    input  logic        clock,
    input  logic        reset,
    input  logic        valid,
    input  logic        sof,
    input  logic        eof,
    input  logic [63:0] data,
    input  logic [ 3:0] nbytes,
    output logic        crc_valid,
    output logic [31:0] crc
);
  logic [31:0] r, c;
  always_comb begin
    c = sof ? 32'hFFFFFFFF : r;
    for (int b = 0; b < 8; b++)
      if (!eof || b < int'(nbytes)) begin
        c = c ^ {24'd0, data[8*b+:8]};
        for (int k = 0; k < 8; k++) c = c[0] ? (c >> 1) ^ 32'hEDB88320 : c >> 1;
      end
  end
  always_ff @(posedge clock)
    if (reset) begin
      r <= '1;
      crc_valid <= 1'b0;
      crc <= '0;
    end else begin
      crc_valid <= valid && eof;
      if (valid) begin
        r <= eof ? '1 : c;
        if (eof) crc <= ~c;
      end
    end
endmodule
"""
MUTATION = ("b < int'(nbytes)", "b <= int'(nbytes)")

PORTS = """# model signal: my port
clk: clock
rst: reset
in_valid: valid
in_sof: sof
in_eof: eof
in_data: data
in_nbytes: nbytes
fcs_valid: crc_valid
fcs: crc
"""
INPUTS = ["in_valid", "in_sof", "in_eof", "in_nbytes", "in_data"]


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def cosim(fabricsim, cache, sv, ports, out, cycles="50000"):
    cmd = [fabricsim, "cosim", "--rtl", sv, "--top", "my_crc", "--bind", "crc32", "--ports",
           ports, "--cycles", cycles, "--seed", "5", "--out", out, "--cache", cache]
    p = subprocess.run(cmd, capture_output=True, text=True)
    print(p.stdout[-2500:], p.stderr[-1500:])
    return p.returncode, p.stdout, p.stderr


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def test_good(fabricsim, cache, tmp):
    sv = write(os.path.join(tmp, "my_crc.sv"), BLOCK)
    ports = write(os.path.join(tmp, "ports.yaml"), PORTS)
    rc, out, _ = cosim(fabricsim, cache, sv, ports, os.path.join(tmp, "good"))
    check(rc == 0, f"correct block: exit 0 (got {rc})")
    check(re.search(r"^co-simulation matched 50000 cycles \((\d+) transactions\)$", out, re.M)
          is not None, "correct block: matched verdict")
    check("bins never hit: none" in out, "correct block: every coverage bin hit")
    check("not compared (no port in the map): crc_state" in out,
          "the unmapped optional output is named as not compared")
    m = re.search(r"^RTL cache: (\S+)", out, re.M)
    check(m is not None and m.group(1).startswith(os.path.abspath(cache)), "cache folder named")
    rc, out, _ = cosim(fabricsim, cache, sv, ports, os.path.join(tmp, "good2"), "2000")
    check(rc == 0 and "(reused:" in out, "second run with the same sources reuses the build")
    return ports


def test_mutant(fabricsim, cache, tmp, ports):
    assert MUTATION[0] in BLOCK
    sv = write(os.path.join(tmp, "my_crc_mutant.sv"), BLOCK.replace(*MUTATION))
    out_dir = os.path.join(tmp, "bad")
    rc, out, _ = cosim(fabricsim, cache, sv, ports, out_dir)
    check(rc == 1, f"mutant: exit 1 (got {rc})")
    v = re.search(r"^co-simulation FAILED: (\d+) mismatches in \d+ cycles \(first at cycle (\d+)\)$",
                  out, re.M)
    check(v is not None, "mutant: FAILED verdict")
    if not v:
        return
    first = int(v.group(2))
    with open(os.path.join(out_dir, "report.txt")) as f:
        report = f.read()
    check(f"first mismatch at cycle {first} (seed 5)" in report, "report names the cycle and seed")
    check(re.search(r"^  fcs\s+expected 0x[0-9a-f]+ got 0x[0-9a-f]+$", report, re.M) is not None,
          "report gives the differing output, expected vs got")
    head = re.search(r"^  cycle((?:\s+\d+)+)$", report, re.M)
    cycles = [int(c) for c in head.group(1).split()] if head else []
    check(cycles and cycles[-1] == first and len(cycles) >= min(first, 4),
          f"inputs of the mismatch's cycle and the ones before ({cycles})")
    for name in INPUTS:
        row = re.search(rf"^  {name}((?:\s+0x[0-9a-f]+)+)$", report, re.M)
        check(row is not None and len(row.group(1).split()) == len(cycles),
              f"report has input {name} in every cycle")
    fst = os.path.join(out_dir, "mismatch.fst")
    check(os.path.exists(fst) and os.path.getsize(fst) > 100, "mismatch.fst written")
    gtkw = os.path.join(out_dir, "mismatch.gtkw")
    with open(gtkw) as f:
        g = f.read()
    check(f"{first * 1000 + 500} {first * 1000 + 500}" in g and os.path.abspath(fst) in g,
          "mismatch.gtkw opens the FST with the marker at the first mismatch")
    check("top.exp_fcs[31:0]" in g and "top.fcs[31:0]" in g, "gtkw shows fcs beside exp_fcs")
    check(f"gtkwave {fst} {gtkw}" in out, "the command that opens the window is printed")
    # The printed command, for real: GTKWave (headless, under Xvfb) loads the window and the save
    # file, and its marker and traces are what the save file says.
    probe = os.path.join(tmp, "probe.tcl")
    with open(probe, "w") as f:
        f.write('puts "PROBE marker [gtkwave::getMarker] traces '
                '[llength [gtkwave::getDisplayedSignals]]"\ngtkwave::/File/Quit\n')
    g = subprocess.run(["xvfb-run", "-a", "gtkwave", "-S", probe, fst, gtkw],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r"PROBE marker (\d+) traces (\d+)", g.stdout + g.stderr)
    check(m is not None and int(m.group(1)) == first * 1000 + 500 and int(m.group(2)) > 0,
          f"gtkwave opens the window at the mismatch ({m.group(0) if m else g.stderr[-300:]})")


def test_bad_maps(fabricsim, cache, tmp):
    cases = [
        ("noport", PORTS.replace("fcs: crc", "fcs: crc_out"), "key 'fcs'", "no port 'crc_out'"),
        ("width", PORTS.replace("fcs_valid: crc_valid", "fcs_valid: crc").replace(
            "\nfcs: crc\n", "\nfcs: crc_valid\n"), "key 'fcs_valid'", "bit(s) wide"),
        ("unknown", PORTS + "fcs_ready: crc_valid\n", "key 'fcs_ready'", "not a signal of block"),
        ("missing", PORTS.replace("in_nbytes: nbytes\n", ""), "missing key 'in_nbytes'", ""),
    ]
    sv = write(os.path.join(tmp, "my_crc.sv"), BLOCK)
    for name, text, key, what in cases:
        ports = write(os.path.join(tmp, f"ports_{name}.yaml"), text)
        rc, out, err = cosim(fabricsim, cache, sv, ports, os.path.join(tmp, name), "100")
        check(rc == 2 and ports in err and key in err and what in err,
              f"bad map ({name}): exit 2 naming the file and {key} ({rc}: {err.strip()})")
    rc, _, err = cosim(fabricsim, cache, os.path.join(tmp, "nosuch.sv"),
                       os.path.join(tmp, "ports.yaml"), os.path.join(tmp, "x"), "100")
    check(rc == 2 and "nosuch.sv" in err, f"missing --rtl file: exit 2 naming it ({rc})")


def main():
    fabricsim, cache = sys.argv[1], sys.argv[2]
    os.makedirs(cache, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:  # outside the source tree
        ports = test_good(fabricsim, cache, tmp)
        test_mutant(fabricsim, cache, tmp, ports)
        test_bad_maps(fabricsim, cache, tmp)
    print(f"{'FAILED' if failures else 'PASSED'}: {len(failures)} failed checks")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
