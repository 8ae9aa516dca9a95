#!/usr/bin/env python3
"""A fabricsim run as a Chrome/Perfetto trace (JSON traceEvents): open it in ui.perfetto.dev.

  timeline.py OUT_DIR                         writes OUT_DIR/timeline.json
  timeline.py OUT_DIR --out FILE.json --window 5us:20us --interval 100ns --max-events 200000

Built from the result files of a `fabricsim run --out` directory (summary.json, occupancy.csv and
ports.csv required, links.csv used when present); nothing is rerun. It holds:

- counter tracks: the total shared-buffer occupancy (process "fabric") and, per switch (one
  process each), the buffer held for each egress port, in bytes (its queue depth: occupancy.csv's
  columns, sampled every stats.occupancy_interval). A value is written when it changes, plus the
  last sample in range, so a quiet port costs two events.
- spans ("X"): the run's phases on "fabric": warm-up, measurement window, drain.
- flow control and drops where they happened (from flow_events.csv, when the run wrote it:
  stats.flow_events > 0, the default), on a thread per port of each switch ("portN flow control")
  and per host (process "hosts"): spans for a priority group's XOFF to XON at the port that
  receives ("XOFF prio P"), a priority paused at the port that transmits ("paused prio P") and a
  virtual lane out of credits ("credit stall VL V"), instants for each packet dropped at admission
  ("drop tc T"); a lane failure (link.phy.lane_failure) is an instant on "fabric".
- instants ("i"), at the end of the run, one per switch port (or link direction) that had any:
  drops, frames lost on the link, pause and credit-stall time, each a whole-run or window total.
- workload runs (traffic.pattern workload, from ranks.csv): per rank (process "rank R") its
  compute on thread "compute" and its part of each collective call on thread "collectives".
- NIC runs (from fct.csv): per host's NIC (process "nic H") a thread per connection ("to host D
  qp Q") with a span per message from its post to its send completion, named by its id, bytes
  and verb (a failed or unfinished message ends where the run did).
Ranks and messages take at most a quarter of --max-events each: past that the earliest are kept
and otherData says how many were left out.

Bounded: --window keeps the samples in [START, END] (times with a unit: ns, us, ms, s), --interval
keeps at most one sample per interval, --ports K only each switch's K busiest ports (mean
occupancy in range), and --max-events N (default 500000, about 50 MB) thins the samples evenly
(every k-th) until the trace fits; the file's otherData says so ("capped") and the "fabric" track
carries an instant naming the stride. Flow events take at most half of --max-events: past that the
earliest are kept and otherData says how many were left out (as it says how many the run itself
did not record: summary.json flow_events.not_recorded).

Exit status: 0 ok, 2 bad input (a missing or malformed file or option: the message names it).
"""
import argparse
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_results import InputError, read_csv, read_summary  # noqa: E402  (shared readers)

UNITS_NS = {"ps": 1e-3, "ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
FABRIC_PID = 1


def parse_time_ns(text, what):
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*(ps|ns|us|ms|s)\s*", text)
    if not m:
        raise InputError(f"{what} '{text}': expected a time with a unit, e.g. 250ns, 5us, 1.5ms")
    return float(m.group(1)) * UNITS_NS[m.group(2)]


def parse_window(text):
    if ":" not in text:
        raise InputError(f"--window '{text}': expected START:END, e.g. 5us:20us (either may be "
                         "empty: 5us: or :20us)")
    a, b = text.split(":", 1)
    start = parse_time_ns(a, "--window start") if a.strip() else 0.0
    end = parse_time_ns(b, "--window end") if b.strip() else math.inf
    if end <= start:
        raise InputError(f"--window '{text}': the end ({end:g} ns) is not after the start "
                         f"({start:g} ns)")
    return start, end


def load(out_dir):
    if not os.path.isdir(out_dir):
        raise InputError(f"{out_dir}: no such directory")
    paths = {}
    for n in ("summary.json", "occupancy.csv", "ports.csv"):
        paths[n] = os.path.join(out_dir, n)
        if not os.path.isfile(paths[n]):
            raise InputError(f"{paths[n]}: missing (is {out_dir} a fabricsim run directory?)")
    s = read_summary(paths["summary.json"], ("window.start_ns", "window.end_ns"))
    header, rows = read_csv(paths["occupancy.csv"], ["time_ns", "total_bytes"])
    one = (s.get("switches") or [{"name": "switch0"}])[0]["name"]
    cols = []  # (column index, switch, port label)
    for i, h in enumerate(header[2:], start=2):
        if h.endswith("_bytes"):
            sw, _, port = h[:-len("_bytes")].rpartition(".")
            cols.append((i, sw or one, port))
    pheader, prow = read_csv(paths["ports.csv"], ["switch", "port"], text=("switch", "peer"),
                             whole=("port",))
    ports = [dict(zip(pheader, r)) for r in prow]
    links = []
    lpath = os.path.join(out_dir, "links.csv")
    if os.path.isfile(lpath):
        lh, lr = read_csv(lpath, ["from", "to"], text=("from", "to"),
                          whole=("from_port", "to_port"))
        links = [dict(zip(lh, r)) for r in lr]
    flow = None  # None: the run wrote no flow_events.csv
    fpath = os.path.join(out_dir, "flow_events.csv")
    if os.path.isfile(fpath):
        fh, fr = read_csv(fpath, ["kind", "device", "port", "class", "start_ns", "end_ns"],
                          text=("kind", "device"), whole=("port", "class"))
        flow = [dict(zip(fh, r)) for r in fr]
        for n, e in enumerate(flow, start=2):
            if e["kind"] not in FLOW_KINDS:
                raise InputError(f"{fpath}:{n}: unknown kind '{e['kind']}' (expected one of "
                                 f"{', '.join(FLOW_KINDS)})")
            if not e["end_ns"] >= e["start_ns"]:
                raise InputError(f"{fpath}:{n}: end_ns {e['end_ns']} before start_ns "
                                 f"{e['start_ns']}")
    return s, header, rows, cols, ports, links, flow


# flow_events.csv kinds: what a span (or instant) is called on its port's track.
FLOW_KINDS = {"xoff": "XOFF prio {}", "paused": "paused prio {}",
              "credit_stall": "credit stall VL {}", "drop": "drop tc {}"}


def flow_events(flow, pid_of, start, end, budget):
    """Spans and instants of flow_events.csv in [start, end] (spans clipped to it), at most
    `budget` of them (the earliest); returns (events, metadata events, left out)."""
    out, meta, tids = [], [], {}
    hosts_pid = max(pid_of.values(), default=FABRIC_PID) + 1
    left = 0
    for e in flow:
        a, b = max(e["start_ns"], start), min(e["end_ns"], end)
        instant = e["kind"] == "drop"
        if (instant and not start <= e["start_ns"] <= end) or (not instant and b <= a):
            continue
        if len(out) >= budget:
            left += 1
            continue
        dev, port = e["device"], int(e["port"])
        if dev in pid_of:
            pid, tid, tname = pid_of[dev], 100 + port, f"port{port} flow control"
        else:  # a host
            m = re.fullmatch(r"host(\d+)", dev)
            pid, tid, tname = hosts_pid, 1 + (int(m.group(1)) if m else len(tids)), dev
        if (pid, tid) not in tids:
            tids[(pid, tid)] = tname
        name = FLOW_KINDS[e["kind"]].format(int(e["class"]))
        ev = {"name": name, "pid": pid, "tid": tid, "cat": e["kind"], "ts": a / 1e3,
              "args": {"device": dev, "port": port, "class": int(e["class"]),
                       "start_ns": e["start_ns"], "end_ns": e["end_ns"]}}
        if instant:
            ev.update({"ph": "i", "s": "t"})
        else:
            ev.update({"ph": "X", "dur": (b - a) / 1e3})
        out.append(ev)
    if any(pid == hosts_pid for pid, _ in tids):
        meta += [{"name": "process_name", "ph": "M", "pid": hosts_pid, "tid": 0,
                  "args": {"name": "hosts"}},
                 {"name": "process_sort_index", "ph": "M", "pid": hosts_pid, "tid": 0,
                  "args": {"sort_index": hosts_pid}}]
    for (pid, tid), tname in sorted(tids.items()):
        meta.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                     "args": {"name": tname}})
    return out, meta, left


def select_rows(rows, start, end, interval):
    """Indices of the samples in [start, end], at most one per `interval` ns."""
    keep, last = [], -math.inf
    for i, r in enumerate(rows):
        t = r[0]
        if t < start or t > end:
            continue
        if interval and t - last < interval:
            continue
        keep.append(i)
        last = t
    return keep


def counter_events(rows, idx, col, pid, name, key):
    """One "C" event per change of the value (and the last sample), ts in microseconds."""
    out, prev = [], None
    for n, i in enumerate(idx):
        v = rows[i][col]
        if math.isnan(v):
            continue
        if v != prev or n == len(idx) - 1:
            out.append({"name": name, "ph": "C", "ts": rows[i][0] / 1e3, "pid": pid, "tid": 0,
                        "args": {key: v}})
            prev = v
    return out


def activity_events(out_dir, start, end, budget, sim_end, first_pid):
    """Ranks' compute and collective spans (ranks.csv) and NICs' message spans (fct.csv) in
    [start, end], at most `budget` of each (the earliest); returns (events, meta, left out)."""
    events, meta, left = [], [], {"rank_spans": 0, "messages": 0}
    pids = {}

    def pid(name):
        if name not in pids:
            pids[name] = first_pid + len(pids)
            meta.extend([{"name": "process_name", "ph": "M", "pid": pids[name], "tid": 0,
                          "args": {"name": name}},
                         {"name": "process_sort_index", "ph": "M", "pid": pids[name], "tid": 0,
                          "args": {"sort_index": pids[name]}}])
        return pids[name]

    threads = set()

    def thread(p, tid, name):
        if (p, tid) not in threads:
            threads.add((p, tid))
            meta.append({"name": "thread_name", "ph": "M", "pid": p, "tid": tid,
                         "args": {"name": name}})

    def span(p, tid, name, a, b, cat, args):
        a, b = max(a, start), min(b, end)
        if b < a:
            return False
        events.append({"name": name, "ph": "X", "ts": a / 1e3, "dur": (b - a) / 1e3, "pid": p,
                       "tid": tid, "cat": cat, "args": args})
        return True

    rpath = os.path.join(out_dir, "ranks.csv")
    if os.path.isfile(rpath):
        h, rows = read_csv(rpath, ["rank", "kind", "name", "start_ns", "end_ns"],
                           text=("kind", "name"), whole=("rank",))
        n = 0
        for r in (dict(zip(h, x)) for x in rows):
            if n >= budget:
                left["rank_spans"] += 1
                continue
            p = pid(f"rank {int(r['rank'])}")
            tid = 1 if r["kind"] == "compute" else 2
            thread(p, tid, "compute" if tid == 1 else "collectives")
            n += span(p, tid, r["name"], r["start_ns"], r["end_ns"], r["kind"], {})
    fpath = os.path.join(out_dir, "fct.csv")
    if os.path.isfile(fpath):
        h, rows = read_csv(fpath, ["id", "src", "dst", "bytes", "qp", "verb", "state",
                                   "start_ns", "completion_ns", "slowdown"],
                           text=("verb", "state", "first_byte_out_ns", "last_byte_delivered_ns",
                                 "fct_ns", "ideal_fct_ns", "slowdown"),
                           whole=("id", "src", "dst", "bytes", "qp"))
        msgs = sorted((dict(zip(h, x)) for x in rows), key=lambda m: m["start_ns"])
        n = 0
        for m in msgs:
            if n >= budget:
                left["messages"] += 1
                continue
            p = pid(f"nic {int(m['src'])}")
            dst, qp = int(m["dst"]), int(m["qp"])
            tid = 1 + dst * 256 + qp
            thread(p, tid, f"to host {dst} qp {qp}")
            done = sim_end if math.isnan(m["completion_ns"]) else m["completion_ns"]
            n += span(p, tid, f"#{int(m['id'])} {int(m['bytes'])} B {m['verb']}", m["start_ns"],
                      done, "message", {"state": m["state"], "slowdown": m["slowdown"]})
    return events, meta, left


LANE_SHIFT = 24  # a track's k-th extra lane is thread (k << 24) | tid


def span_end(e):
    return e["ts"] + e["dur"]


def partial_overlaps(events):
    """Pairs of spans ("X") on one track (pid, tid) that overlap without one holding the other:
    what Perfetto cannot nest. Counted as consecutive spans in (start, -end) order break a stack
    of the spans that hold the current one."""
    tracks = {}
    for e in events:
        if e.get("ph") == "X":
            tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    bad = 0
    for spans in tracks.values():
        spans.sort(key=lambda e: (e["ts"], -span_end(e)))
        stack = []
        for e in spans:
            while stack and stack[-1] <= e["ts"]:
                stack.pop()
            if stack and stack[-1] < span_end(e):
                bad += 1
            stack.append(span_end(e))
    return bad


def untangle(spans, meta):
    """Moves spans that would partially overlap another on their track to extra lanes (threads
    named "<track> (2)", "(3)", ...): first fit in (start, longest first, name) order, a span
    fitting a lane when it starts after that lane's open spans end or lies inside the innermost,
    so every lane nests properly (deterministic: the same run gives the same lanes)."""
    tracks, out = {}, []
    for e in spans:
        (tracks.setdefault((e["pid"], e["tid"]), []) if e["ph"] == "X" else out).append(e)
    names = {(m["pid"], m["tid"]): m["args"]["name"] for m in meta
             if m["name"] == "thread_name"}
    extra = []
    for (pid, tid), evs in sorted(tracks.items()):
        evs.sort(key=lambda e: (e["ts"], -span_end(e), e["name"]))
        lanes = []  # per lane: the ends of its open spans, innermost last
        for e in evs:
            end = span_end(e)
            for k, stack in enumerate(lanes):
                while stack and stack[-1] <= e["ts"]:
                    stack.pop()
                if not stack or stack[-1] >= end:
                    break
            else:
                k, stack = len(lanes), []
                lanes.append(stack)
                if tid >= 1 << LANE_SHIFT:
                    raise InputError(f"thread {tid} of process {pid}: too large to add lanes to")
                extra.append({"name": "thread_name", "ph": "M", "pid": pid,
                              "tid": (k << LANE_SHIFT) | tid,
                              "args": {"name": f"{names.get((pid, tid), tid)} ({k + 1})"}})
            stack.append(end)
            if k:
                e["tid"] = (k << LANE_SHIFT) | tid
            out.append(e)
    meta.extend(m for m in extra if m["tid"] >= 1 << LANE_SHIFT)
    return out


def build(out_dir, window=(0.0, math.inf), interval=0.0, top=0, max_events=500000):
    s, header, rows, cols, ports, links, flow = load(out_dir)
    win = s["window"]
    sim_end = float(win.get("sim_end_ns", rows[-1][0] if rows else win["end_ns"]))
    start, end = window[0], min(window[1], sim_end)
    switches = []
    for _, sw, _ in cols:
        if sw not in switches:
            switches.append(sw)
    for x in s.get("switches", []):
        if x["name"] not in switches:
            switches.append(x["name"])
    pid_of = {sw: FABRIC_PID + 1 + i for i, sw in enumerate(switches)}

    idx_all = select_rows(rows, start, end, interval)
    chosen = cols
    if top:
        def mean(c):
            vals = [rows[i][c] for i in idx_all if not math.isnan(rows[i][c])]
            return sum(vals) / len(vals) if vals else 0.0
        chosen = []
        for sw in switches:
            mine = [c for c in cols if c[1] == sw]
            mine.sort(key=lambda c: (-mean(c[0]), c[0]))
            chosen += sorted(mine[:top])

    meta = [{"name": "process_name", "ph": "M", "pid": FABRIC_PID, "tid": 0,
             "args": {"name": f"fabric ({s.get('config_name', '?')}, seed {s.get('seed', '?')})"}},
            {"name": "process_sort_index", "ph": "M", "pid": FABRIC_PID, "tid": 0,
             "args": {"sort_index": 0}},
            {"name": "thread_name", "ph": "M", "pid": FABRIC_PID, "tid": 1,
             "args": {"name": "run phases"}}]
    for sw, pid in pid_of.items():
        meta += [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": sw}},
                 {"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                  "args": {"sort_index": pid}},
                 {"name": "thread_name", "ph": "M", "pid": pid, "tid": 1,
                  "args": {"name": "totals at end of run"}}]

    spans = []
    for name, a, b in (("warm-up", 0.0, win["start_ns"]),
                       ("measurement window", win["start_ns"], win["end_ns"]),
                       ("drain", win["end_ns"], sim_end)):
        a, b = max(a, start), min(b, end)
        if b > a:
            spans.append({"name": name, "ph": "X", "ts": a / 1e3, "dur": (b - a) / 1e3,
                          "pid": FABRIC_PID, "tid": 1, "cat": "phase", "args": {}})

    instants = []
    fail = s
    for key in ("config", "link", "phy", "lane_failure"):
        fail = fail.get(key) if isinstance(fail, dict) else None
    fail = fail if isinstance(fail, dict) else {}
    if fail.get("lanes_left"):
        t = parse_time_ns(str(fail.get("time", "0ns")), "link.phy.lane_failure.time")
        if start <= t <= end:
            who = "every link" if int(fail.get("host", -1)) < 0 else f"host{fail['host']}'s link"
            instants.append({"name": f"lane failure: {who} down to {fail['lanes_left']} lanes",
                             "ph": "i", "ts": t / 1e3, "pid": FABRIC_PID, "tid": 1, "s": "g",
                             "cat": "lane_failure", "args": dict(fail)})
    flow_ev, flow_meta, flow_left = flow_events(flow or [], pid_of, start, end, max_events // 2)
    meta += flow_meta
    spans += [e for e in flow_ev if e["ph"] == "X"]
    act_ev, act_meta, act_left = activity_events(out_dir, start, end, max_events // 4, sim_end,
                                                 FABRIC_PID + 1 + len(pid_of))
    meta += act_meta
    spans += act_ev
    instants += [e for e in flow_ev if e["ph"] == "i"]
    if start <= sim_end <= end:
        t_end = sim_end / 1e3
        for p in ports:
            sw = p["switch"]
            if sw not in pid_of:
                continue
            label = f"port{int(p['port'])}"
            for col, what in (("drops_run", "drops (whole run)"),
                              ("lossless_drops", "lossless drops (window start to end)"),
                              ("paused_ns", "paused ns (window start to end)"),
                              ("credit_stall_ns", "credit stall ns (window start to end)")):
                v = p.get(col, 0.0)
                if v and not math.isnan(v) and v > 0:
                    instants.append({"name": f"{label} {what}: {v:g}", "ph": "i", "ts": t_end,
                                     "pid": pid_of[sw], "tid": 1, "s": "t", "cat": "totals",
                                     "args": {"port": int(p["port"]), col: v}})
        for lk in links:
            v = lk.get("lost_frames_run", 0.0)
            if v and not math.isnan(v) and v > 0:
                sw = lk["from"] if lk["from"] in pid_of else lk["to"]
                pid = pid_of.get(sw, FABRIC_PID)
                instants.append({"name": f"link {lk['from']}:{int(lk.get('from_port', 0))} -> "
                                         f"{lk['to']}:{int(lk.get('to_port', 0))} frames lost "
                                         f"(whole run): {v:g}",
                                 "ph": "i", "ts": t_end, "pid": pid, "tid": 1, "s": "t",
                                 "cat": "totals", "args": {"lost_frames_run": v}})

    def counters(idx):
        ev = counter_events(rows, idx, header.index("total_bytes"), FABRIC_PID,
                            "buffer total (bytes)", "bytes")
        for c, sw, port in chosen:
            ev += counter_events(rows, idx, c, pid_of[sw], f"{port} queue (bytes)", "bytes")
        return ev

    fixed = len(meta) + len(spans) + len(instants) + 1  # + the cap note
    stride, idx = 1, idx_all
    ev = counters(idx)
    while len(ev) + fixed > max_events and len(idx) > 2:
        stride *= 2
        idx = idx_all[::stride]
        if idx_all and idx[-1] != idx_all[-1]:
            idx.append(idx_all[-1])
        ev = counters(idx)
    capped = stride > 1
    notes = []
    if capped:
        note = (f"capped at --max-events {max_events}: one occupancy sample in {stride} kept "
                f"({len(idx)} of {len(idx_all)})")
        notes.append(note)
        instants.append({"name": note, "ph": "i", "ts": (rows[idx[0]][0] / 1e3) if idx else 0.0,
                         "pid": FABRIC_PID, "tid": 1, "s": "p", "cat": "note", "args": {}})
    if len(ev) + len(meta) + len(spans) + len(instants) > max_events:
        raise InputError(f"--max-events {max_events}: even two samples per track make "
                         f"{len(ev) + len(meta) + len(spans) + len(instants)} events; raise it or "
                         "keep fewer ports (--ports K)")
    if not rows:
        notes.append("occupancy.csv has no samples (stats.occupancy_interval = 0): no counters")
    # Spans that overlap on a track without nesting (a rank's calls in flight at once, a NIC's
    # messages on one QP, flow-control spans) go to extra lanes: Perfetto nests, never overlaps.
    spans = untangle(spans, meta)
    events = meta + sorted(spans + ev + instants, key=lambda e: e["ts"])
    other = {"source": os.path.abspath(out_dir), "config_name": s.get("config_name"),
             "seed": s.get("seed"), "window_ns": [start, end if end != math.inf else None],
             "interval_ns": interval, "stride": stride, "capped": capped,
             "samples": len(idx), "counter_tracks": 1 + len(chosen), "notes": notes,
             "flow_events": len(flow_ev), "flow_events_left_out": flow_left,
             "activity_spans": len(act_ev), "rank_spans_left_out": act_left["rank_spans"],
             "messages_left_out": act_left["messages"],
             "flow_events_not_recorded_by_the_run":
                 (s.get("flow_events") or {}).get("not_recorded", 0)}
    if flow is None:
        other["not_included"] = ("XOFF/XON, pause and credit-stall spans and drops with their "
                                 "times: the run wrote no flow_events.csv (stats.flow_events = 0)")
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": other}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="timeline.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", metavar="OUT_DIR", help="a fabricsim run's output directory")
    ap.add_argument("--out", metavar="FILE.json",
                    help="where to write the trace (default: OUT_DIR/timeline.json)")
    ap.add_argument("--window", metavar="START:END",
                    help="only this time range, e.g. 5us:20us (default: the whole run)")
    ap.add_argument("--interval", metavar="T",
                    help="at most one sample per T, e.g. 100ns (default: every sample)")
    ap.add_argument("--ports", type=int, default=0, metavar="K",
                    help="only each switch's K busiest egress ports (default all)")
    ap.add_argument("--max-events", type=int, default=500000, metavar="N",
                    help="thin the samples until the trace has at most N events (default 500000)")
    args = ap.parse_args(argv)
    try:
        if args.max_events < 100:
            raise InputError(f"--max-events {args.max_events}: must be at least 100")
        if args.ports < 0:
            raise InputError(f"--ports {args.ports}: must be >= 0 (0: all)")
        window = parse_window(args.window) if args.window else (0.0, math.inf)
        interval = parse_time_ns(args.interval, "--interval") if args.interval else 0.0
        trace = build(args.out_dir, window, interval, args.ports, args.max_events)
    except (InputError, OSError) as e:
        print(f"timeline.py: error: {e}", file=sys.stderr)
        return 2
    out = args.out or os.path.join(args.out_dir, "timeline.json")
    try:
        with open(out + ".part", "w") as f:
            json.dump(trace, f, separators=(",", ":"))
        os.replace(out + ".part", out)
    except OSError as e:
        print(f"timeline.py: error: cannot write {out}: {e}", file=sys.stderr)
        return 1
    o = trace["otherData"]
    print(f"{out}: {len(trace['traceEvents'])} events, {o['counter_tracks']} counter tracks"
          + (f"; {o['notes'][0]}" if o["capped"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
