"""Fleet replay on Dask: many session logs, one result line each (docs/replay.md, "Fleet").

    python3 -m quire.fleet replay [options] LOG-OR-GLOB ...   replay every log, write results
    python3 -m quire.fleet check --against OLD.jsonl [options] LOG-OR-GLOB ...
                                                           replay and compare with a previous run
    python3 -m quire.fleet import --from FORMAT --out-dir DIR [options] LOG-OR-GLOB ...
                                                           import agent logs into session logs

Logs are named by paths, globs (`**` allowed) or `--manifest FILE` (one path per line). The work
runs on Dask (python3-distributed): a LocalCluster sized to the machine by default, or the
scheduler at `--scheduler tcp://host:port`. Each log is one task; quire itself does the replay
(the quire extension, not a subprocess). Results are JSON lines appended to `--out` as they
arrive; a path already in `--out` is skipped, so an interrupted run resumes where it stopped.
The summary is one JSON object on standard output. Exit status: 0; 3 when `check` found a
mismatch; 1 when a log could not be replayed (its line says why); 2 for a usage error.
"""
import argparse
import glob
import json
import os
import sys
import time

FORMATS = ("quire", "claude-code", "codex")


def _expand(patterns, manifest):
    paths = []
    if manifest:
        with open(manifest, encoding="utf-8") as f:
            paths += [l.strip() for l in f if l.strip() and not l.startswith("#")]
    for p in patterns:
        hits = sorted(glob.glob(p, recursive=True)) if any(c in p for c in "*?[") else [p]
        paths += hits
    seen, out = set(), []
    for p in paths:
        ap = os.path.abspath(p)
        if ap not in seen:
            seen.add(ap)
            out.append(ap)
    return out


def _error_fields(e):
    return {k: getattr(e, k, None) for k in ("code", "line", "column", "pointer", "field", "message")}


def replay_one(path, fmt, provider, model, skip_invalid=False):
    """One task: replay the log at path. Returns the result dict (never raises for bad logs)."""
    import quire  # imported in the worker
    t0 = time.perf_counter()
    res = {"path": path, "format": fmt}
    try:
        with open(path, "rb") as f:
            data = f.read()
        log = data
        if fmt != "quire":
            log, _report = quire.import_log(data, format=fmt, skip_invalid=skip_invalid)
        # one row per request (digest, bytes, bytes shared with the previous request's
        # prefix), computed in C while replaying: no request line is built
        rows = quire._quire.replay_summary(log, provider, model)
        digests = [d for d, _, _ in rows]
        total = sum(b for _, b, _ in rows)
        shared = sum(s for _, _, s in rows)
        res.update(status="ok", turns=len(digests), digests=digests, bytes=total,
                   prefixReuse=round(shared / total, 6) if total else 0.0)
    except OSError as e:
        res.update(status="error", error={"code": "IO", "message": "%s: %s" % (path, e.strerror)})
    except quire.Error as e:
        res.update(status="error", error=_error_fields(e))
    res["seconds"] = round(time.perf_counter() - t0, 6)
    return res


def replay_batch(paths, fmt, provider, model, skip_invalid=False):
    """One task for several logs: Dask's per-task cost (~1 ms) would otherwise rival the
    replay of a short log."""
    return [replay_one(p, fmt, provider, model, skip_invalid) for p in paths]


def import_batch(paths, fmt, out_dir, skip_invalid=False):
    return [import_one(p, fmt, out_dir, skip_invalid) for p in paths]


def import_one(path, fmt, out_dir, skip_invalid=False):
    import quire
    t0 = time.perf_counter()
    res = {"path": path, "format": fmt}
    try:
        with open(path, "rb") as f:
            data = f.read()
        log, report = quire.import_log(data, format=fmt, skip_invalid=skip_invalid)
        name = os.path.splitext(os.path.basename(path))[0] + ".quire.jsonl"
        dest = os.path.join(out_dir, name)
        tmp = dest + ".tmp-%d" % os.getpid()
        with open(tmp, "wb") as f:
            f.write(log)
        os.replace(tmp, dest)
        res.update(status="ok", output=dest, lines=log.count(b"\n"), notes=len(report))
    except OSError as e:
        res.update(status="error", error={"code": "IO", "message": "%s: %s" % (path, e.strerror)})
    except quire.Error as e:
        res.update(status="error", error=_error_fields(e))
    res["seconds"] = round(time.perf_counter() - t0, 6)
    return res


def _first_diff(old, new):
    for i, (a, b) in enumerate(zip(old, new)):
        if a != b:
            return i + 1
    if len(old) != len(new):
        return min(len(old), len(new)) + 1
    return None


def _client(a):
    from dask.distributed import Client, LocalCluster
    if a.scheduler:
        return Client(a.scheduler), None
    workers = a.workers or max(1, os.cpu_count() or 1)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=a.threads, processes=True,
                           dashboard_address=None, silence_logs=40)
    return Client(cluster), cluster


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m quire.fleet", description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=("replay", "check", "import"))
    ap.add_argument("logs", nargs="*", help="log paths or globs")
    ap.add_argument("--manifest", help="a file naming one log path per line")
    ap.add_argument("--from", dest="fmt", default="quire", choices=FORMATS,
                    help="the logs' format (default quire: quire.session/1 logs)")
    ap.add_argument("--skip-invalid", action="store_true",
                    help="with --from: skip lines that are not JSON objects (as quire import)")
    ap.add_argument("--provider")
    ap.add_argument("--model")
    ap.add_argument("--out", default="fleet-results.jsonl", help="results, one JSON line per log (appended)")
    ap.add_argument("--out-dir", help="import: where the session logs go")
    ap.add_argument("--against", help="check: the results file of a previous run")
    ap.add_argument("--scheduler", help="a Dask scheduler address (default: a local cluster)")
    ap.add_argument("--workers", type=int, default=0, help="local cluster workers (default: one per core)")
    ap.add_argument("--threads", type=int, default=1, help="threads per local worker (default 1)")
    ap.add_argument("--batch", type=int, default=16, help="logs per Dask task (default 16)")
    a = ap.parse_intermixed_args(argv)
    if a.command == "check" and not a.against:
        ap.error("check needs --against OLD.jsonl")
    if a.command == "import" and (not a.out_dir or a.fmt == "quire"):
        ap.error("import needs --from claude-code|codex and --out-dir DIR")
    paths = _expand(a.logs, a.manifest)
    if not paths:
        ap.error("no logs given (paths, globs or --manifest)")

    done = set()
    if os.path.exists(a.out):
        with open(a.out, encoding="utf-8") as f:
            for l in f:
                try:
                    done.add(json.loads(l)["path"])
                except (ValueError, KeyError, TypeError):
                    pass
    todo = [p for p in paths if p not in done]
    old = {}
    if a.against:
        with open(a.against, encoding="utf-8") as f:
            for l in f:
                try:
                    r = json.loads(l)
                    old[r["path"]] = r
                except (ValueError, KeyError, TypeError):
                    pass
    if a.out_dir:
        os.makedirs(a.out_dir, exist_ok=True)

    counts = {"ok": 0, "mismatch": 0, "error": 0}
    turns = 0
    t_start = time.perf_counter()
    client, cluster = _client(a) if todo else (None, None)
    t0 = time.perf_counter()  # the run proper, once the cluster is up
    try:
        if todo:
            from dask.distributed import as_completed
            n = max(1, a.batch)
            batches = [todo[i:i + n] for i in range(0, len(todo), n)]
            if a.command == "import":
                futs = client.map(import_batch, batches, fmt=a.fmt, out_dir=os.path.abspath(a.out_dir),
                                  skip_invalid=a.skip_invalid, pure=False)
            else:
                futs = client.map(replay_batch, batches, fmt=a.fmt, provider=a.provider, model=a.model,
                                  skip_invalid=a.skip_invalid, pure=False)
            with open(a.out, "a", encoding="utf-8") as out:
                for r in (r for fut in as_completed(futs) for r in fut.result()):
                    if a.command == "check" and r["status"] == "ok":
                        prev = old.get(r["path"])
                        if prev is None or prev.get("status") != "ok":
                            r["status"] = "mismatch"
                            r["reason"] = "no successful result for this log in " + a.against
                        else:
                            d = _first_diff(prev.get("digests", []), r["digests"])
                            if d is not None:
                                r["status"] = "mismatch"
                                r["firstDiffTurn"] = d
                    counts[r["status"]] += 1
                    turns += r.get("turns", 0)
                    out.write(json.dumps(r, ensure_ascii=False) + "\n")
                    out.flush()
    finally:
        if client:
            client.close()
        if cluster:
            cluster.close()
    secs = time.perf_counter() - t0
    summary = {"command": a.command, "logs": len(paths), "skipped": len(paths) - len(todo),
               "ran": len(todo), "ok": counts["ok"], "mismatch": counts["mismatch"], "error": counts["error"],
               "turns": turns, "seconds": round(secs, 3), "clusterStartSeconds": round(t0 - t_start, 3),
               "logsPerSecond": round(len(todo) / secs, 2) if secs > 0 and todo else 0.0,
               "out": os.path.abspath(a.out)}
    print(json.dumps({"summary": summary}))
    return 3 if counts["mismatch"] else 1 if counts["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
