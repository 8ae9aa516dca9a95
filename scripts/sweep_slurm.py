"""scripts/sweep.py's Slurm backend: one array job, one array task per run.

Task k runs the k-th run of a manifest (DIR/.slurm/manifest-JOB.json) through
`sweep.py --slurm-task MANIFEST k` on whatever node Slurm gives it, which writes the run's
outcome.json next to its results. The sweep waits for the array to leave squeue, then reads the
outcomes. DIR must be on a filesystem the nodes share, with fabricsim, the config and scripts/
(sweep.py and its modules) at the same paths."""
import json
import os
import shlex
import signal
import subprocess
import sys
import time

from sweep_common import UsageError, read_json
from sweep_runs import execute, fresh_dir, run_command, stderr_tail

# What an array task runs: the command, beside this module.
SWEEP_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sweep.py")

SLURM_ARRAY_MAX = 1000  # Slurm's default MaxArraySize is 1001 (indexes 0..1000)


def slurm_task(manifest_path, index_text):
    """Entry point of an array task: runs one point of the manifest."""
    manifest = read_json(manifest_path)
    if not isinstance(manifest, dict):
        print(f"sweep.py --slurm-task: cannot read {manifest_path}", file=sys.stderr)
        return 2
    try:
        task = manifest["tasks"][int(index_text)]
    except (ValueError, IndexError, KeyError):
        print(f"sweep.py --slurm-task: no task {index_text} in {manifest_path}", file=sys.stderr)
        return 2
    # scancel sends SIGTERM: the simulation stops and writes its partial results as on Ctrl-C.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    code, error = execute(task["cmd"], task["dir"], manifest.get("timeout"))
    return 0 if code == 0 else 130 if error.startswith("interrupted") else 1


def squeue_active(job_ids):
    """True while any of the array jobs has tasks pending, running or completing."""
    p = subprocess.run(["squeue", "-h", "-o", "%F %T", "-j", ",".join(job_ids)],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        if "Invalid job id" in p.stderr:
            return False  # ended so long ago that the controller forgot them
        raise RuntimeError(f"squeue failed: {p.stderr.strip()}")
    return bool(p.stdout.strip())


def submit_array(chunk, points, args, sdir, tag):
    """Writes the manifest and job script of one array and submits it; returns the job id."""
    manifest = os.path.join(sdir, f"manifest-{tag}.json")
    tasks = []
    for i in chunk:
        pdir = os.path.join(args.out, points[i]["name"])
        tasks.append({"name": points[i]["name"], "dir": pdir,
                      "cmd": run_command(points[i], args, pdir)})
    with open(manifest, "w") as f:
        json.dump({"timeout": args.timeout, "tasks": tasks}, f, indent=1)
    script = os.path.join(sdir, f"manifest-{tag}.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n# One run of a fabricsim sweep per array task (scripts/sweep.py)\n"
                f"exec {shlex.quote(sys.executable)} {shlex.quote(SWEEP_SCRIPT)} "
                f"--slurm-task {shlex.quote(manifest)} \"$SLURM_ARRAY_TASK_ID\"\n")
    os.chmod(script, 0o755)
    array = f"0-{len(chunk) - 1}"
    if args.slurm_max_running:
        array += f"%{args.slurm_max_running}"
    cmd = ["sbatch", "--parsable", f"--array={array}",
           f"--job-name=sweep-{os.path.basename(args.out)}",
           f"--output={os.path.join(sdir, '%A_%a.out')}"]
    if args.slurm_partition:
        cmd.append(f"--partition={args.slurm_partition}")
    if args.slurm_time:
        cmd.append(f"--time={args.slurm_time}")
    cmd += args.sbatch_arg + [script]
    p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    job = p.stdout.strip().split(";")[0]
    if p.returncode != 0 or not job.isdigit():
        raise UsageError(f"sbatch failed (exit {p.returncode}): "
                         f"{stderr_tail(p.stderr + p.stdout) or 'no job id printed'}; "
                         f"command: {shlex.join(cmd)}")
    return job


SQUEUE_PATIENCE = 300  # seconds of squeue failing in a row (the controller restarting) tolerated


def run_slurm(points, pending, args):
    """Runs points[i] for i in pending as Slurm array tasks. Returns ({i: (code, error)},
    interrupted)."""
    sdir = os.path.join(args.out, ".slurm")
    os.makedirs(sdir, exist_ok=True)
    order = sorted(pending)
    for i in order:  # a run that never starts must not be mistaken for a finished earlier one
        fresh_dir(os.path.join(args.out, points[i]["name"]))
    stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
    job_ids, chunks = [], []

    def outcomes_done():
        return sum(os.path.isfile(os.path.join(args.out, points[i]["name"], "outcome.json"))
                   for i in order)

    interrupted = False
    reported = -1
    try:
        try:
            for c in range(0, len(order), SLURM_ARRAY_MAX):
                chunk = order[c:c + SLURM_ARRAY_MAX]
                job = submit_array(chunk, points, args, sdir, f"{stamp}-{c // SLURM_ARRAY_MAX}")
                job_ids.append(job)
                chunks.append(chunk)
                print(f"sweep: submitted Slurm array job {job} ({len(chunk)} runs)",
                      file=sys.stderr, flush=True)
        except UsageError:
            if job_ids:  # the arrays already submitted go too: the sweep failed as a whole
                subprocess.run(["scancel"] + job_ids, capture_output=True)
            raise
        failing_since = None
        while True:
            try:
                active = squeue_active(job_ids)
                failing_since = None
            except RuntimeError as e:
                failing_since = failing_since or time.monotonic()
                if time.monotonic() - failing_since > SQUEUE_PATIENCE:
                    raise RuntimeError(f"{e} (for {SQUEUE_PATIENCE} s; Slurm job(s) "
                                       f"{','.join(job_ids)} left running: run the sweep again "
                                       "once they have ended to gather their results)") from None
                active = True
            done = outcomes_done()
            if done != reported:
                print(f"[{done}/{len(order)}] runs finished on Slurm", file=sys.stderr, flush=True)
                reported = done
            if not active:
                break
            time.sleep(args.poll)
    except KeyboardInterrupt:
        interrupted = True
        if job_ids:
            print(f"sweep: interrupted; cancelling Slurm job(s) {','.join(job_ids)}",
                  file=sys.stderr, flush=True)
            subprocess.run(["scancel"] + job_ids, capture_output=True)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if not squeue_active(job_ids):
                        break
                except RuntimeError:
                    break
                time.sleep(min(args.poll, 1.0))
    results = {}
    for job, chunk in zip(job_ids, chunks):
        for k, i in enumerate(chunk):
            outcome = read_json(os.path.join(args.out, points[i]["name"], "outcome.json"))
            if isinstance(outcome, dict) and "exit_code" in outcome:
                results[i] = (outcome["exit_code"], outcome.get("error", ""))
            elif interrupted:
                results[i] = (None, "not run (sweep interrupted)")
            else:
                log = os.path.join(sdir, f"{job}_{k}.out")
                tail = ""
                try:
                    with open(log, errors="replace") as f:
                        tail = stderr_tail(f.read())
                except OSError:
                    pass
                results[i] = (None, f"Slurm task {job}_{k} left no result (see {log})"
                              + (f": {tail}" if tail else ""))
    return results, interrupted
