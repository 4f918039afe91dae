#!/usr/bin/env python3
"""Turns the facts bench/run.sh measured (one JSON object a line: {"key": ..., "value": ...}) into
bench/results.json and the table `make bench` prints: ratios against the fetch floor and the
curl/xargs script, no-change rebuilds, packing alone, memory at scale, upgrades (sparse against
whole-pack), placeholders and posters, and each target met or not. With --upgrade-only runs only the
upgrade rows exist, with --posters-only only the posters rows.

    python3 bench/summarize.py bench/work/facts.jsonl bench/results.json
"""
import json
import re
import statistics
import sys

MB = 1_000_000


def load(path):
    facts = {}
    with open(path) as lines:
        for line in lines:
            record = json.loads(line)
            facts[record["key"]] = record["value"]
    return facts


def ratio(a, b):
    return a / b if a is not None and b else None


def cpu(run):
    return run["user"] + run["sys"]


def summarize(f):
    result = {"machine": {**f["machine"], "load_at_end": f.get("load_at_end")}, "config": f["config"]}
    result["pass"] = f.get("pass", "quiet")
    if "build1" in f:
        result.update(summarize_builds(f))
    else:
        result["targets"] = []
        scale = scale_rows(f)
        if scale:
            # Parts 5 alone (--parts scale / scale-real): the memory targets of those rows.
            result["scale"] = scale
            rss = peak_rss_of_every_run(scale)
            result["targets"] += [{"target": "peak RSS, every scale run (MB)", "goal": "<= 64", "measured": max(rss), "met": max(rss) <= 64}]
    result["upgrade"] = upgrades(f)
    result["unchanged_check"] = unchanged_check(f)
    result["index_designs"] = index_designs(f)
    result["targets"] += upgrade_targets(result["upgrade"], result["unchanged_check"])
    result["publish"] = publishes(f)
    result["targets"] += publish_targets(result["publish"])
    result["posters"] = posters(f)
    result["targets"] += poster_targets(result["posters"])
    result["install"] = install_speed(f)
    result["targets"] += install_targets(result["install"])
    result["renditions"] = renditions(f)
    result["loader_memory"] = loader_memory(f)
    result["webp"] = webp(f)
    result["targets"] += webp_targets(result["webp"])
    return result


def webp(f):
    """Section 12: fresh builds of [gif] against [gif, webp], round by round. The WebP build's bound
    is the larger of the GIF-only build's wall time and the encoder's CPU (the WebP build's CPU less
    the GIF build's) over the cores; its ratio to that bound is taken per round, then the median."""
    runs = f.get("webp_runs")
    if not runs:
        return None
    cores = f["machine"]["nproc"]
    rounds = []
    for r in range(1, runs + 1):
        gif, both = f.get(f"webp.gif.r{r}"), f.get(f"webp.webp.r{r}")
        if not gif or not both or gif["status"] != 0 or both["status"] != 0:
            continue
        encoder = cpu(both) - cpu(gif)
        bound, bound_by = max((gif["wall"], "the GIF-only build"), (encoder / cores, f"the encoder's CPU / {cores}"))
        rendition = f.get(f"webp.webp.r{r}.renditions") or {}
        rounds.append({"round": r, "gif_wall_s": gif["wall"], "gif_cpu_s": cpu(gif), "webp_wall_s": both["wall"],
                       "webp_cpu_s": cpu(both), "encoder_cpu_s": encoder, "bound_s": bound, "bound_by": bound_by,
                       "wall_ratio": both["wall"] / bound, "rebuild_wall_s": (f.get(f"webp.rebuild.r{r}") or {}).get("wall"),
                       "rebuild_encoded": f.get(f"webp.rebuild.r{r}.encoded"), "gifs": rendition.get("gifs"),
                       "gif_pack_bytes": f.get(f"webp.webp.r{r}.gif_pack_bytes"),
                       "webp_pack_bytes": f.get(f"webp.webp.r{r}.webp_pack_bytes"), "renditions": rendition})
    if not rounds:
        return {"rounds": [], "failed": runs}
    first = rounds[0]
    return {"rounds": rounds, "failed": runs - len(rounds),
            "wall_ratio": spread([row["wall_ratio"] for row in rounds]),
            "gif_wall_s": spread([row["gif_wall_s"] for row in rounds]), "webp_wall_s": spread([row["webp_wall_s"] for row in rounds]),
            "encoder_cpu_s": spread([row["encoder_cpu_s"] for row in rounds]),
            "rebuild_wall_s": spread([row["rebuild_wall_s"] for row in rounds if row["rebuild_wall_s"] is not None]),
            "rebuild_encoded": max((row["rebuild_encoded"] or 0) for row in rounds),
            "same_bytes_every_round": len({(row["gif_pack_bytes"], row["webp_pack_bytes"]) for row in rounds}) == 1,
            "pack_ratio": ratio(first["webp_pack_bytes"], first["gif_pack_bytes"]), "renditions": first["renditions"],
            "gif_pack_bytes": first["gif_pack_bytes"], "webp_pack_bytes": first["webp_pack_bytes"]}


def webp_targets(w):
    if not w or not w["rounds"]:
        return []
    worst = w["renditions"].get("worstSSIM")
    ratio_spread = w["wall_ratio"]
    return [
        {"target": "WebP pack bytes / GIF pack bytes", "goal": "<= 0.40", "measured": w["pack_ratio"],
         "met": w["pack_ratio"] is not None and w["pack_ratio"] <= 0.40},
        {"target": "WebP renditions: worst frame SSIM", "goal": ">= 0.98", "measured": worst, "met": worst is not None and worst >= 0.98},
        {"target": "first WebP build wall / its bound (median)", "goal": "<= 1.10", "measured": ratio_spread["median"],
         "met": ratio_spread["median"] <= 1.10, "range": [ratio_spread["min"], ratio_spread["max"]]},
        {"target": "no-change rebuild: GIFs encoded", "goal": "0", "measured": w["rebuild_encoded"], "met": w["rebuild_encoded"] == 0},
    ]


def webp_table(w):
    lines = [f"12. WebP renditions, real sample: fresh builds of [gif] and [gif, webp], alternating, {len(w['rounds'])} rounds"
             + (f" ({w['failed']} failed)" if w["failed"] else "")]
    if not w["rounds"]:
        return lines
    lines.append("  round   [gif] wall / cpu s   [gif, webp] wall / cpu s   encoder cpu s   bound s (by)                     wall / bound")
    for row in w["rounds"]:
        lines.append(f"  {row['round']:>5}   {row['gif_wall_s']:>7.2f} / {row['gif_cpu_s']:<8.2f}   {row['webp_wall_s']:>10.2f} / {row['webp_cpu_s']:<11.2f}"
                     f"   {row['encoder_cpu_s']:>13.2f}   {row['bound_s']:>6.2f} ({row['bound_by']:<24})   {row['wall_ratio']:>11.3f}")
    r, x = w["renditions"], w["wall_ratio"]
    lines.append(f"  wall / bound, median {x['median']:.3f} (range {x['min']:.3f}-{x['max']:.3f}); encoder CPU median "
                 f"{w['encoder_cpu_s']['median']:.2f} s, {1000 * w['encoder_cpu_s']['median'] / (r.get('gifs') or 1):.1f} ms a GIF")
    lines.append(f"  WebP packs / GIF packs: {fmt(w['pack_ratio'], 4)} ({fmt(w['webp_pack_bytes'])} / {fmt(w['gif_pack_bytes'])} bytes"
                 f"{', the same every round' if w['same_bytes_every_round'] else ', DIFFERENT between rounds'}); renditions / GIFs "
                 f"{fmt(r.get('ratio'), 4)}")
    lines.append("  outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted((r.get("outcomes") or {}).items()))
                 + f"; SSIM mean {fmt(r.get('meanSSIM'), 4)}, worst frame {fmt(r.get('worstSSIM'), 4)}; worst frame per WebP "
                 + ", ".join(f"{k} {v}" for k, v in sorted((r.get("worstSSIMDistribution") or {}).items())))
    if w["rebuild_wall_s"]:
        lines.append(f"  no-change rebuild: wall median {w['rebuild_wall_s']['median']:.2f} s, GIFs encoded {w['rebuild_encoded']}")
    return lines


def loader_memory(f):
    """Section 11: the app loader's memory loading GIFs by range against plain URLSession, both sides
    of each round; MB from the processes' own VmHWM/VmRSS (the end and 3 s later)."""
    if f.get("lm.gifs") is None:
        return None
    rows = []
    for side, label in (("before", "GIFLoader, BENCH_LOADER_MEMORY_BEFORE"), ("loader", "GIFLoader, 5 MB memory tier"),
                        ("urlsession", "plain URLSession, same ranges")):
        for r in (1, 2):
            run, memory = f.get(f"lm.{side}.r{r}"), f.get(f"lm.{side}.r{r}.memory")
            if run is None:
                continue
            memory = memory or {}
            mb = lambda key: None if memory.get(key) is None else memory[key] / 1024
            rows.append({"side": side, "label": label, "round": r, "status": run["status"], "wall_s": run["wall"],
                         "peak_rss_mb": mb("peak_rss_kb"), "end_rss_mb": mb("end_rss_kb"), "settled_rss_mb": mb("settled_rss_kb"),
                         "gifs": memory.get("gifs"), "body_bytes": memory.get("body_bytes")})
    return {"gifs": f.get("lm.gifs"), "frame_bytes": f.get("lm.frame_bytes"), "resolution": f.get("lm.resolution"), "rows": rows}


def loader_memory_table(lm):
    lines = [f"11. app loader memory: {fmt(lm['gifs'])} distinct GIFs at {fmt(lm['resolution'])} px by range "
             f"({fmt(lm['frame_bytes'])} frame bytes), 20 callers, 4 connections   round   wall s   peak RSS MB   at end MB   3 s later MB"]
    for row in lm["rows"]:
        lines.append(f"  {row['label']:<40} {row['round']:>5} {fmt(row['wall_s']):>8} {fmt(row['peak_rss_mb'], 1):>13} "
                     f"{fmt(row['end_rss_mb'], 1):>11} {fmt(row['settled_rss_mb'], 1):>14}"
                     + ("" if row["status"] == 0 else f"   exit {row['status']}"))
    return lines


def renditions(f):
    """Section 10: one build of 180 and 360 px against two builds of one resolution each, round by
    round (medians), and the bytes of each rendition in the two-resolution index."""
    runs = f.get("renditions_runs")
    if not runs:
        return None

    def side(names, r):
        builds = [f.get(f"rend.{name}.r{r}") for name in names]
        served = [f.get(f"rend.{name}.r{r}.served") for name in names]
        if not all(builds) or not all(served) or any(b["status"] != 0 for b in builds):
            return None
        return {"wall_s": sum(b["wall"] for b in builds), "cpu_s": sum(cpu(b) for b in builds),
                "requests": sum(s["totalRequests"] for s in served), "list_requests": sum(s["listRequests"] for s in served),
                "image_requests": sum(s["imageRequests"] for s in served), "bytes_sent": sum(s["bytesSent"] for s in served)}

    rounds = []
    for r in range(1, runs + 1):
        both, single = side(["both"], r), side(["180", "360"], r)
        if both and single:
            rounds.append({"round": r, "both": both, "single": single, "wall_ratio": ratio(both["wall_s"], single["wall_s"]),
                           "cpu_ratio": ratio(both["cpu_s"], single["cpu_s"])})

    def median(key, which):
        values = [row[which][key] for row in rounds]
        return statistics.median(values) if values else None

    keys = ("wall_s", "cpu_s", "requests", "list_requests", "image_requests", "bytes_sent")
    index = f.get("rend.index") or {}
    by_resolution = {}
    for pack in (index.get("packs") or []) + (index.get("renditionPacks") or []):
        row = by_resolution.setdefault(pack["resolution"], {"resolution": pack["resolution"], "pack_bytes": 0, "gifs": 0,
                                                            "gif_bytes": 0, "posters_bytes": 0})
        row["pack_bytes"] += pack["bytes"]
        row["gifs"] += pack["gifs"]
        row["gif_bytes"] += pack["gif_bytes"] or 0
        row["posters_bytes"] += pack.get("posters_bytes") or 0
    return {"rounds": rounds, "failed": runs - len(rounds),
            "both": {k: median(k, "both") for k in keys}, "single": {k: median(k, "single") for k in keys},
            "median_wall_ratio": statistics.median([row["wall_ratio"] for row in rounds]) if rounds else None,
            "median_cpu_ratio": statistics.median([row["cpu_ratio"] for row in rounds]) if rounds else None,
            "bytes_by_resolution": [by_resolution[k] for k in sorted(by_resolution)]}


def rendition_table(rend):
    lines = ["10. renditions: one build of [180, 360] against a build of 180 and a build of 360 (fresh output and cache), "
             "medians of rounds",
             "                                      wall s    cpu s   requests   list req   image req    bytes sent"]
    for key, label in (("both", "one build, resolutions [180, 360]"), ("single", "two builds, 180 then 360")):
        x = rend[key]
        lines.append(f"  {label:<35} {fmt(x['wall_s']):>7} {fmt(x['cpu_s']):>8} {fmt(x['requests']):>10} "
                     f"{fmt(x['list_requests']):>10} {fmt(x['image_requests']):>11} {fmt(x['bytes_sent']):>13}")
    lines.append(f"  one / two, medians of the rounds' ratios: wall {fmt(rend['median_wall_ratio'], 3)}, cpu {fmt(rend['median_cpu_ratio'], 3)}; "
                 "by round, wall: " + ", ".join(f"{row['wall_ratio']:.3f}" for row in rend["rounds"])
                 + (f"   {rend['failed']} round(s) failed" if rend["failed"] else ""))
    for row in rend["bytes_by_resolution"]:
        lines.append(f"  {row['resolution']} px rendition: packs {fmt(row['pack_bytes'])} bytes, {fmt(row['gifs'])} distinct GIFs "
                     f"of {fmt(row['gif_bytes'])} bytes" + (f", posters {fmt(row['posters_bytes'])} bytes" if row["posters_bytes"] else ""))
    return lines


INSTALL_KINDS = (("library", "library over URLSession"), ("http", "gifpack install over HTTP"),
                 ("local", "gifpack install, local index"))


PHASES = ("index", "planning", "transfer", "decode", "fileWrites", "sync", "switch", "other")


def spread(values):
    """The median of `values` and their range (min, max); None when empty."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)} if values else None


def install_rows(f, prefix, runs):
    rows = []
    for kind, label in INSTALL_KINDS:
        pairs = [(f.get(f"{prefix}.{kind}.r{r}"), f.get(f"{prefix}.{kind}.stock.r{r}")) for r in range(1, runs + 1)]
        if not any(a or b for a, b in pairs):
            continue
        good = [(a, b) for a, b in pairs if a and b and a["status"] == 0 and b["status"] == 0]
        ratios = [a["wall"] / b["wall"] for a, b in good]
        # Each install's phases (InstallReport.phases), the median of each over the rounds.
        phases = [p for p in (f.get(f"{prefix}.{kind}.r{r}.phases") for r in range(1, runs + 1)) if p]
        # The install call alone (its phases' total, taken inside the process: no process start, as
        # in an app, where the library runs in a process already started) against the same pair's
        # stock wall time.
        calls = [(f.get(f"{prefix}.{kind}.r{r}.phases"), f.get(f"{prefix}.{kind}.stock.r{r}")) for r in range(1, runs + 1)]
        call_ratios = [p["total"] / b["wall"] for p, b in calls if p and p.get("total") and b and b["status"] == 0]
        rows.append({
            "kind": kind, "label": label, "pairs": len(good), "failed": len(pairs) - len(good),
            "ratios": ratios, "median_ratio": statistics.median(ratios) if ratios else None,
            "ratio_range": [min(ratios), max(ratios)] if ratios else None,
            "median_wall_s": statistics.median([a["wall"] for a, _ in good]) if good else None,
            "median_stock_wall_s": statistics.median([b["wall"] for _, b in good]) if good else None,
            "median_cpu_s": statistics.median([cpu(a) for a, _ in good]) if good else None,
            "median_stock_cpu_s": statistics.median([cpu(b) for _, b in good]) if good else None,
            "peak_rss_mb": max([a["rss_kb"] for a, _ in good], default=0) / 1024 or None,
            "phases_s": {k: statistics.median([p.get(k, 0) for p in phases]) for k in PHASES + ("total",)} if phases else None,
            # CPU time the host took from the machine while the row's runs (both sides) ran: a row
            # the hypervisor disturbed shows here (None for a run before it was recorded).
            "steal_s": sum(a.get("steal_s", 0) + b.get("steal_s", 0) for a, b in good) if good and "steal_s" in good[0][0] else None,
            "call_ratios": call_ratios if kind == "library" else None,
            "median_call_ratio": statistics.median(call_ratios) if kind == "library" and call_ratios else None,
        })
    return rows


def install_speed(f):
    """Section 9: first installs against the stock pipeline, paired run by run, for each catalog size."""
    runs = f.get("install_runs")
    if not runs:
        return None
    counts = f.get("install_counts")
    if counts is None:  # a run before the sizes: one catalog of --count
        return {"sizes": [{"exercises": None, "pack": f.get("install.pack"), "rows": install_rows(f, "install", runs)}]}
    return {"sizes": [{"exercises": n, "pack": f.get(f"install.{n}.pack"), "rows": install_rows(f, f"install.{n}", runs)}
                      for n in counts]}


def install_sizes(install):
    """Every size's rows (results.json of a run before the sizes held one "rows")."""
    if not install:
        return []
    return install.get("sizes") or [{"exercises": None, "pack": install.get("pack"), "rows": install.get("rows", [])}]


def install_targets(install):
    targets = []
    for size in install_sizes(install):
        mb = (size["pack"] or {}).get("bytes")
        at = f", {mb / MB:.0f} MB" if mb else ""
        for row in size["rows"]:
            targets.append({"target": f"install{at}: {row['label']} / stock", "goal": "<= 1.00", "measured": row["median_ratio"],
                            "range": row.get("ratio_range"),
                            "met": None if row["median_ratio"] is None else row["median_ratio"] <= 1.0})
    return targets


def install_table(install):
    lines = []
    for size in install_sizes(install):
        pack = size["pack"] or {}
        lines += [f"9. first install of {fmt(pack.get('gifs'))} GIFs ({fmt(pack.get('bytes'))}-byte pack, "
                  f"{fmt(pack.get('exercises'))} exercises) against the stock pipeline, medians of paired runs",
                  "                                    wall s   stock wall s   ratio (min-max)       cpu s   stock cpu s   peak RSS MB   pairs"]
        for row in size["rows"]:
            spread_text = f"({fmt(row['ratio_range'][0], 3)}-{fmt(row['ratio_range'][1], 3)})" if row.get("ratio_range") else ""
            lines.append(f"  {row['label']:<32} {fmt(row['median_wall_s']):>7} {fmt(row['median_stock_wall_s']):>14} "
                         f"{fmt(row['median_ratio'], 3):>7} {spread_text:<13} {fmt(row['median_cpu_s']):>7} {fmt(row['median_stock_cpu_s']):>13} "
                         f"{fmt(row['peak_rss_mb'], 1):>13} {row['pairs']:>7}" + (f"   {row['failed']} failed" if row["failed"] else ""))
        for row in size["rows"]:
            lines.append(f"  {row['kind']} ratios by pair: " + ", ".join(f"{v:.3f}" for v in row["ratios"]))
        steal = [f"{row['kind']} {row['steal_s']:.2f}" for row in size["rows"] if row.get("steal_s") is not None]
        if steal:
            lines.append("  CPU taken by the host (steal) while each row's pairs ran, s: " + ", ".join(steal))
        for row in size["rows"]:
            if row.get("call_ratios"):
                c = row["call_ratios"]
                lines.append(f"  {row['kind']}, the install call alone (no process start, as in an app) / stock: "
                             f"{statistics.median(c):.3f} ({min(c):.3f}-{max(c):.3f}); by pair " + ", ".join(f"{v:.3f}" for v in c))
        for row in size["rows"]:
            if row.get("phases_s"):
                p = row["phases_s"]
                lines.append(f"  {row['kind']} phases s (medians): " + ", ".join(f"{k} {p[k]:.3f}" for k in PHASES)
                             + f"; total {p['total']:.3f}")
        lines.append("")
    lines.append("  stock: `curl URL | zstd -dc | tar -x` (local: `zstd -dc PACK | tar -x`), then sha256sum of every file; "
                 "it checks nothing and syncs nothing")
    return lines


def publishes(f):
    """Section 7: gifpack publish to a directory and to S3 (moto), first and unchanged again."""
    if "publish.build" not in f:
        return None
    rows = []
    for target in ("dir", "s3"):
        for attempt in ("first", "again"):
            run = f.get(f"publish.{target}.{attempt}")
            if not run:
                continue
            summary = f.get(f"publish.{target}.{attempt}.summary") or ""
            uploaded = re.search(r"(\d+) pack\(s\) uploaded \((\d+) bytes\)", summary)
            rows.append({"target": target, "attempt": attempt, "wall_s": run["wall"], "cpu_s": cpu(run),
                         "peak_rss_mb": run["rss_kb"] / 1024, "status": run["status"],
                         "packs_uploaded": int(uploaded.group(1)) if uploaded else None,
                         "bytes_uploaded": int(uploaded.group(2)) if uploaded else None, "summary": summary})
    return {"build": f["publish.build"], "rows": rows}


def publish_targets(p):
    if not p:
        return []
    return [{"target": f"publish to {row['target']} again: nothing sent", "goal": "0 bytes",
             "measured": row["bytes_uploaded"], "met": row["status"] == 0 and row["bytes_uploaded"] == 0}
            for row in p["rows"] if row["attempt"] == "again"]


def posters(f):
    """Section 8: fresh builds without posters, with 80 px and 200 px posters, and a settings change
    derived from the cache; posters pack sizes and the index's growth per exercise."""
    if "posters.none" not in f:
        return None
    rows = {}
    for name in ("none", "80", "200", "80_200"):
        run = f.get(f"posters.{name}")
        if run is None:
            continue
        report = f.get(f"posters.{name}.report") or {}
        server = f.get(f"posters.{name}.server") or {}
        gifs = report.get("gifs") or {}
        count = f.get(f"posters.{name}.posters_count") or 0
        size = f.get(f"posters.{name}.posters_bytes") or 0
        rows[name] = {
            "wall_s": run["wall"], "cpu_s": cpu(run), "peak_rss_mb": run["rss_kb"] / 1024, "status": run["status"],
            "stage_s": report.get("stageSeconds"), "placeholders_derived": gifs.get("placeholdersDerived"),
            "requests": server.get("totalRequests"), "image_requests": server.get("imageRequests"),
            "posters_pack_bytes": size, "posters": count, "bytes_per_poster": size / count if count else None,
            "index_bytes": f.get(f"posters.{name}.index_bytes"),
        }
    index = f.get("posters.index") or {}
    growth = placeholders = listing = None
    if index.get("exercises"):
        growth = (index["with"] - index["without"]) / index["exercises"]
        if index.get("placeholders_only") is not None:
            placeholders = (index["placeholders_only"] - index["without"]) / index["exercises"]
            listing = (index["with"] - index["placeholders_only"]) / index["exercises"]
    none, with80 = rows.get("none"), rows.get("80")
    return {
        "builds": rows,
        "index": {**index, "growth_bytes_per_exercise": growth, "placeholders_bytes_per_exercise": placeholders,
                  "posters_listing_bytes_per_exercise": listing},
        "hostile": hostile_posters(f),
        "fidelity_80": f.get("posters.80.fidelity"),
        "fidelity_source": "real sample" if (f.get("config") or {}).get("real_data") else "fixture GIFs",
        "wall_with_80_over_without": ratio(with80["wall_s"], none["wall_s"]) if none and with80 else None,
        "cpu_with_80_over_without": ratio(with80["cpu_s"], none["cpu_s"]) if none and with80 else None,
    }


def hostile_posters(f):
    """Part 8's build of small hostile GIFs (4096x4096 screen, thousands of blank 1x1 frames)."""
    run = f.get("posters.hostile")
    if not run:
        return None
    gifs = ((f.get("posters.hostile.report") or {}).get("gifs")) or {}
    count = f.get("posters.hostile.gifs")
    return {"gifs": count, "wall_s": run["wall"], "cpu_s": cpu(run), "peak_rss_mb": run["rss_kb"] / 1024,
            "status": run["status"], "placeholders_derived": gifs.get("placeholdersDerived"),
            "rejected": gifs.get("rejected"), "wall_per_gif_s": run["wall"] / count if count else None}


def poster_targets(p):
    if not p:
        return []
    targets = []
    fidelity = p.get("fidelity_80") or {}
    if fidelity.get("mean_abs_error") is not None:
        error = fidelity["mean_abs_error"]
        targets.append({"target": "80 px posters: mean error per channel /255", "goal": "<= 1",
                        "measured": error, "met": error <= 1.0})
        targets.append({"target": "80 px posters: white pixels not white", "goal": "0",
                        "measured": fidelity["white_pixels_not_white"], "met": fidelity["white_pixels_not_white"] == 0})
    hostile = p.get("hostile")
    if hostile and hostile.get("wall_per_gif_s") is not None:
        targets.append({"target": "hostile GIFs, 80 px posters: build wall s per GIF", "goal": "< 1",
                        "measured": hostile["wall_per_gif_s"],
                        "met": hostile["status"] == 0 and hostile["wall_per_gif_s"] < 1.0
                        and hostile["placeholders_derived"] == hostile["gifs"]})
    if "80_200" in p["builds"]:
        change = p["builds"]["80_200"]
        targets.append({"target": "posters setting change: GIF requests", "goal": "0", "measured": change["image_requests"],
                        "met": change["image_requests"] == 0 if change["image_requests"] is not None else None})
    return targets


def upgrades(f):
    """Section 6: one row per percentage of GIFs changed, sparse install against whole-pack."""
    rows = []
    percents = sorted({m.group(1) for k in f for m in [re.match(r"upgrade(.+)\.sparse$", k)] if m}, key=float)
    for pct in percents:
        row = {"percent_changed": float(pct), "pack": f.get(f"upgrade{pct}.pack"),
               "index_bytes": f.get(f"upgrade{pct}.index_bytes"), "identical": f.get(f"upgrade{pct}.identical")}
        for mode in ("sparse", "whole"):
            run = f.get(f"upgrade{pct}.{mode}") or {}
            served = f.get(f"upgrade{pct}.{mode}.served") or {}
            row[mode] = {"wall_s": run.get("wall"), "cpu_s": cpu(run) if run else None, "status": run.get("status"),
                         "peak_rss_mb": run["rss_kb"] / 1024 if run else None, "requests": served.get("requests"),
                         "range_requests": served.get("range_requests"), "body_bytes": served.get("body_bytes"),
                         "bytes_sent": served.get("bytes_sent"), "report": f.get(f"upgrade{pct}.{mode}.fetch")}
        row["needed"] = f.get(f"upgrade{pct}.needed")
        row["needed_ratio"] = ratio(row["sparse"]["body_bytes"], (row["needed"] or {}).get("total"))
        row["bytes_ratio"] = ratio(row["sparse"]["bytes_sent"], row["whole"]["bytes_sent"])
        row["time_ratio"] = ratio(row["sparse"]["wall_s"], row["whole"]["wall_s"])
        rows.append(row)
    return rows


def unchanged_check(f):
    """Section 6: the daily check when nothing changed (the same install again)."""
    run, served = f.get("check.unchanged"), f.get("check.unchanged.served")
    if run is None or served is None:
        return None
    return {"wall_s": run.get("wall"), "status": run.get("status"), "requests": served.get("requests"),
            "body_bytes": served.get("body_bytes"), "bytes_sent": served.get("bytes_sent")}


def index_designs(f):
    """Section 5: today's single index against a root index naming per-pack indexes (issue 28)."""
    rows = []
    for key in sorted((k for k in f if re.match(r"scale\d+\.index_designs$", k)), key=lambda k: int(k[5:].split(".")[0])):
        rows.append(f[key])
    return rows


def upgrade_targets(rows, check=None):
    targets = [{"target": f"upgrade {fmt(row['percent_changed'], 1)}% changed: sparse = whole-pack files", "goal": "identical",
                "measured": row["identical"], "met": row["identical"]} for row in rows]
    targets += [{"target": f"upgrade {fmt(row['percent_changed'], 1)}% changed: bytes / needed", "goal": "<= 1.25",
                 "measured": row["needed_ratio"],
                 "met": row["needed_ratio"] <= 1.25 if row["needed_ratio"] is not None else None}
                for row in rows if row.get("needed")]
    if check is not None:
        targets.append({"target": "unchanged check: body bytes", "goal": "<= 1024", "measured": check["body_bytes"],
                        "met": check["body_bytes"] <= 1024 if check["body_bytes"] is not None else None})
    return targets


def summarize_builds(f):
    images = f["images"]
    build1, floor, script = f["build1"], f["floor"], f["script"]
    floor2 = f.get("floor2", floor)
    floor_wall = (floor["wall"] + floor2["wall"]) / 2
    report1 = f.get("build1.report") or {}
    pack1 = (report1.get("packs") or [{}])[0]
    end_to_end = {
        "gifs": images,
        "gifpack": {
            "wall_s": build1["wall"], "cpu_s": cpu(build1), "cpu_ms_per_gif": 1000 * cpu(build1) / images,
            "peak_rss_mb": build1["rss_kb"] / 1024, "status": build1["status"],
            "stage_s": report1.get("stageSeconds"), "pack_bytes": pack1.get("bytes"),
            "distinct_gifs": pack1.get("distinctGIFs"), "server": f.get("build1.server"),
        },
        "fetch_floor": {
            "wall_s": floor_wall, "runs_wall_s": [floor["wall"], floor2["wall"]], "cpu_s": cpu(floor), "peak_rss_mb": floor["rss_kb"] / 1024,
            "status": floor["status"], "bytes": f.get("floor.bytes"), "server": f.get("floor.server"),
        },
        "script": {
            "wall_s": script["wall"], "cpu_s": cpu(script), "cpu_ms_per_gif": 1000 * cpu(script) / images,
            "status": script["status"], "phases_s": f.get("script.phases"), "pack_bytes": f.get("script.bytes"),
            "server": f.get("script.server"),
        },
    }
    end_to_end["gifpack_over_floor"] = ratio(build1["wall"], floor_wall)
    # Every round of build-between-two-floors (--floor-runs): round 1 is build1 between floor and floor2.
    # Each round also times the floor with the catalog's pages in front (floor_catalog): the least any
    # build asks through the same 3-wide window, against the same mean of the two image-only floors.
    def with_catalog_floor(row, name, mean):
        catalog_floor = f.get(name)
        if catalog_floor:
            row["floor_catalog_wall_s"] = catalog_floor["wall"]
            row["floor_catalog_ratio"] = ratio(catalog_floor["wall"], mean)
            row["status_floor_catalog"] = catalog_floor["status"]
            # The same requests as the build (the list's pages, then every GIF, 3 at a time): issue 37's floor.
            row["over_floor_catalog"] = ratio(row["gifpack_wall_s"], catalog_floor["wall"])
        return row

    rounds = [with_catalog_floor({"round": 1, "gifpack_wall_s": build1["wall"], "floor_wall_s": [floor["wall"], floor2["wall"]],
                                  "ratio": ratio(build1["wall"], floor_wall), "stage_s": report1.get("stageSeconds"),
                                  "steal_s": build1.get("steal_s")},
                                 "floor_catalog", floor_wall)]
    for r in range(2, int(f.get("floor_runs", 1)) + 1):
        build, before, after = f.get(f"build1.r{r}"), f.get(f"floor{r}"), f.get(f"floor{r + 1}")
        if not (build and before and after):
            continue
        mean = (before["wall"] + after["wall"]) / 2
        rounds.append(with_catalog_floor({"round": r, "gifpack_wall_s": build["wall"], "floor_wall_s": [before["wall"], after["wall"]],
                                          "ratio": ratio(build["wall"], mean), "status": build["status"],
                                          "stage_s": (f.get(f"build1.r{r}.report") or {}).get("stageSeconds"),
                                          "steal_s": build.get("steal_s")},
                                         f"floor_catalog.r{r}", mean))
    end_to_end["floor_rounds"] = rounds
    ratios = [r["ratio"] for r in rounds if r["ratio"] is not None]
    if ratios:
        end_to_end["gifpack_over_floor_rounds"] = {"min": min(ratios), "max": max(ratios), "mean": sum(ratios) / len(ratios)}
    catalog_ratios = [r["floor_catalog_ratio"] for r in rounds if r.get("floor_catalog_ratio") is not None]
    if catalog_ratios:
        end_to_end["floor_catalog"] = {"pages": f.get("floor_catalog.pages"), "over_floor_rounds": catalog_ratios,
                                       "over_floor_mean": sum(catalog_ratios) / len(catalog_ratios)}
    same = [r["over_floor_catalog"] for r in rounds if r.get("over_floor_catalog") is not None]
    if same:
        # The target is the median of the rounds, with their range (issue 45, item 5).
        end_to_end["gifpack_over_floor_catalog"] = {"rounds": same, "mean": sum(same) / len(same), "median": statistics.median(same)}
    stages = report1.get("stageSeconds") or {}
    if stages:
        # Where gifpack's wall time beyond the floor goes: the catalog pages (fetched before any
        # image), the fetch stage beyond the floor, the pack stage after the last download, the rest.
        end_to_end["beyond_floor_s"] = {
            "total": build1["wall"] - floor_wall,
            "catalog": stages.get("catalog", 0),
            "fetch_minus_floor": stages.get("fetch", 0) - floor_wall,
            "pack": stages.get("pack", 0),
            "other": build1["wall"] - stages.get("total", 0) + sum(
                v for k, v in stages.items() if k not in ("total", "catalog", "fetch", "pack")),
        }
    http1 = report1.get("http") or {}
    if http1.get("fetchWindowUse") is not None:
        # How full the three-request window was during the fetch stage, and its empty slot-seconds.
        end_to_end["fetch_window"] = {"use": http1["fetchWindowUse"], "idle_slot_s": http1.get("fetchWindowIdleSlotSeconds")}
    end_to_end["script_over_gifpack"] = ratio(script["wall"], build1["wall"])

    rebuilds = {}
    for name, label in (("build2", "refresh_after_7d"), ("build3", "refresh_after_0")):
        run, server = f[name], f.get(name + ".server") or {}
        report = f.get(name + ".report") or {}
        rebuilds[label] = {
            "wall_s": run["wall"], "cpu_s": cpu(run), "peak_rss_mb": run["rss_kb"] / 1024, "status": run["status"],
            "of_first_build": ratio(run["wall"], build1["wall"]),
            "requests": server.get("totalRequests"), "image_requests": server.get("imageRequests"),
            "not_modified": server.get("notModified"),
            "bytes_sent": server.get("bytesSent"), "stage_s": report.get("stageSeconds"),
            "message": report.get("message"),
        }

    cold = f["packcold"]
    cold_report = f.get("packcold.report") or {}
    cold_pack = (cold_report.get("packs") or [{}])[0]
    cold_seconds = (cold_report.get("stageSeconds") or {}).get("pack")
    solid = f["solid"]
    pack_input = cold_pack.get("uncompressedBytes")
    packing = {
        "gif_bytes": f.get("solid.gif_bytes"),
        "gifpack": {
            "input_bytes": pack_input, "pack_stage_s": cold_seconds,
            "mb_per_s": ratio(pack_input, cold_seconds) / MB if cold_seconds else None,
            "bytes": f.get("packcold.bytes"), "build_wall_s": cold["wall"], "build_cpu_s": cpu(cold),
            "peak_rss_mb": cold["rss_kb"] / 1024, "status": cold["status"],
            "first_build_pack_stage_s": (report1.get("stageSeconds") or {}).get("pack"),
        },
        "solid_tar_zstd_9": {
            "input_bytes": f.get("solid.input"), "wall_s": solid["wall"], "cpu_s": cpu(solid),
            "mb_per_s": f.get("solid.input") / solid["wall"] / MB, "bytes": f.get("solid.bytes"),
            "status": solid["status"],
        },
    }
    # Rounds of the pair (gifpack's pack stage, then solid): the ratio of the medians is the target's.
    pack_rounds = [(cold_seconds, solid["wall"])]
    for r in range(2, int(f.get("pack_runs", 1)) + 1):
        seconds = ((f.get(f"packcold{r}.report") or {}).get("stageSeconds") or {}).get("pack")
        other = f.get(f"solid{r}")
        if seconds and other:
            pack_rounds.append((seconds, other["wall"]))
    packing["rounds"] = [{"gifpack_pack_stage_s": g, "solid_wall_s": s, "throughput_ratio": ratio(s, g)} for g, s in pack_rounds]
    median_gifpack = statistics.median(g for g, _ in pack_rounds if g)
    median_solid = statistics.median(s for _, s in pack_rounds)
    packing["gifpack"]["median_pack_stage_s"] = median_gifpack
    packing["solid_tar_zstd_9"]["median_wall_s"] = median_solid
    packing["throughput_ratio"] = ratio(ratio(pack_input, median_gifpack), ratio(f.get("solid.input"), median_solid))
    packing["size_ratio"] = ratio(packing["gifpack"]["bytes"], packing["solid_tar_zstd_9"]["bytes"])

    scale = scale_rows(f)

    return {
        "end_to_end": end_to_end,
        "rebuild": rebuilds,
        "packing": packing,
        "scale": scale,
        "targets": targets(end_to_end, rebuilds, packing, scale),
    }


def scale_rows(f):
    """Section 5: one row per catalog size: the first build and a no-change rebuild."""
    rows = []
    for n in f.get("config.scale_rows") or f["config"]["scale"]:
        run = f.get(f"scale{n}")
        if run is None:
            continue
        report = f.get(f"scale{n}.report") or {}
        gifs = report.get("gifs") or {}
        row = {
            "exercises": 100_000 if n == "real100000" else int(n), "real_sizes": n == "real100000",
            "gif_sizes": f.get(f"scale{n}.packed_sizes"), "sample_sizes": (f.get(f"scale{n}.sizes") or {}).get("sample"),
            "wall_s": run["wall"], "cpu_s": cpu(run), "peak_rss_mb": run["rss_kb"] / 1024,
            "written_bytes": run.get("written_bytes"), "status": run["status"], "downloaded": gifs.get("downloaded"),
            "valid": gifs.get("valid"), "bytes_downloaded": gifs.get("bytesDownloaded"),
            "stage_s": report.get("stageSeconds"), "server": f.get(f"scale{n}.server"),
        }
        again = f.get(f"scale{n}.rebuild")
        if again is not None:
            server = f.get(f"scale{n}.rebuild.server") or {}
            row["rebuild"] = {
                "wall_s": again["wall"], "cpu_s": cpu(again), "peak_rss_mb": again["rss_kb"] / 1024,
                "written_bytes": again.get("written_bytes"), "status": again["status"],
                "requests": server.get("totalRequests"), "image_requests": server.get("imageRequests"),
                "stage_s": (f.get(f"scale{n}.rebuild.report") or {}).get("stageSeconds"),
            }
        review = f.get(f"scale{n}.review")
        if review is not None:
            row["review"] = {
                "wall_s": review["wall"], "cpu_s": cpu(review), "peak_rss_mb": review["rss_kb"] / 1024,
                "written_bytes": review.get("written_bytes"), "status": review["status"],
            }
        rows.append(row)
    return rows


def bodies(rebuild):
    """Image requests not answered 304: GIF bodies sent (or errors)."""
    if rebuild["image_requests"] is None:
        return None
    return rebuild["image_requests"] - (rebuild["not_modified"] or 0)


def peak_rss_of_every_run(scale):
    """The peak RSS of each scale row's first build and of its no-change rebuild."""
    return [row["peak_rss_mb"] for row in scale] + [row["rebuild"]["peak_rss_mb"] for row in scale if row.get("rebuild")]


def targets(end_to_end, rebuilds, packing, all_scale):
    rss = peak_rss_of_every_run(all_scale) + [end_to_end["gifpack"]["peak_rss_mb"]]
    scale = [row for row in all_scale if not row.get("real_sizes")]
    flat = (scale[-1]["peak_rss_mb"] / scale[0]["peak_rss_mb"]) if len(scale) > 1 else None
    largest = scale[-1] if scale else {}
    largest_rebuild = largest.get("rebuild") or {}
    rebuild_images = largest_rebuild.get("image_requests")
    nochange = rebuilds["refresh_after_7d"]
    cached = rebuilds["refresh_after_0"]
    rows = [
        ("end to end / fetch floor", "<= 1.00", end_to_end["gifpack_over_floor"], lambda v: v <= 1.00),
        ("end to end / same-requests floor", "<= 1.00", (end_to_end.get("gifpack_over_floor_catalog") or {}).get("median"),
         lambda v: v <= 1.00),
        ("curl/xargs script / gifpack", ">= 1.3", end_to_end["script_over_gifpack"], lambda v: v >= 1.3),
        ("peak RSS, every run (MB)", "<= 64", max(rss), lambda v: v <= 64),
        ("peak RSS, largest / smallest scale", "<= 1.10 (flat)", flat, lambda v: v <= 1.10),
        ("pack size / solid tar|zstd -9", "<= 1.00", packing["size_ratio"], lambda v: v <= 1.0),
        ("pack stage throughput / solid", ">= 1.00", packing["throughput_ratio"], lambda v: v >= 1.0),
        ("no-change rebuild / first build (wall)", "< 0.20", nochange["of_first_build"], lambda v: v < 0.20),
        ("no-change rebuild: GIF bodies downloaded", "0", bodies(nochange), lambda v: v == 0),
        ("refresh_after 0 rebuild: GIF bodies", "0 (all 304)", bodies(cached), lambda v: v == 0),
        (f"no-change rebuild of {fmt(largest.get('exercises'))} (s)", "< 5", largest_rebuild.get("wall_s"), lambda v: v < 5),
        (f"no-change rebuild of {fmt(largest.get('exercises'))}: image requests", "0", rebuild_images, lambda v: v == 0),
    ]
    result = [{"target": name, "goal": goal, "measured": value, "met": (check(value) if value is not None else None)}
              for name, goal, value, check in rows]
    same = end_to_end.get("gifpack_over_floor_catalog") or {}
    if same.get("rounds"):
        result[1]["range"] = [min(same["rounds"]), max(same["rounds"])]
    return result


def fmt(value, digits=2):
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def table(r):
    m, c = r["machine"], r["config"]
    lines = []
    add = lines.append
    add(f"gifpack {m.get('revision', '?')}, {m['date']}"
        + (", beside a CPU-bound neighbour (a busy loop on core 0)" if r.get("pass") == "neighbour" else ""))
    add(f"machine: {m['nproc']} cores, {m['cpu']}, {m['mem_kb'] / 1024 / 1024:.1f} GiB; "
        f"load {m['load_at_start']} at start, {m['load_at_end']} at end")
    source = f"real data {c['real_data']}" if c["real_data"] else f"realistic catalog of {c['count']}"
    add(f"fixture: {source}" + (f", {r['end_to_end']['gifs']} GIFs" if "end_to_end" in r else "") + f", latency {c['latency_ms']} ms")
    add("")
    add("targets")
    for t in r["targets"]:
        met = {True: "met", False: "MISSED", None: "-"}[t["met"]]
        spread_text = f"   ({fmt(t['range'][0], 3)}-{fmt(t['range'][1], 3)})" if t.get("range") else ""
        add(f"  {t['target']:<44} {fmt(t['measured'], 3):>10}   goal {t['goal']:<15} {met}{spread_text}")
    add("")
    if "end_to_end" in r:
        lines += build_tables(r)
        add("")
    elif r.get("scale"):
        lines += scale_table(r)
        add("")
    if r["upgrade"]:
        add("6. upgrades served by nginx    install   wall s   requests   ranges   body bytes   bytes sent   sparse/whole")
        for row in r["upgrade"]:
            for mode in ("sparse", "whole"):
                x = row[mode]
                share = f"{fmt(row['bytes_ratio'], 4)} bytes, {fmt(row['time_ratio'], 2)} time" if mode == "sparse" else ""
                add(f"  {fmt(row['percent_changed'], 1):>5}% of GIFs changed     {mode:<7} {fmt(x['wall_s']):>8} {fmt(x['requests']):>10} "
                    f"{fmt(x['range_requests']):>8} {fmt(x['body_bytes']):>12} {fmt(x['bytes_sent']):>12}   {share}")
        for row in r["upgrade"]:
            need = row.get("needed")
            if need:
                add(f"  {fmt(row['percent_changed'], 1):>5}% needed: {fmt(need['total'])} bytes ({fmt(need['gif_frame_count'])} GIF frames "
                    f"{fmt(need['gif_frames'])}, {fmt(need['poster_frame_count'])} poster frames {fmt(need['poster_frames'])}, catalogs "
                    f"{fmt(need['catalog_frames'] + need['posters_catalog_frames'])}, index {fmt(need['index'])}, signature "
                    f"{fmt(need['signature'])}); sparse body bytes / needed {fmt(row['needed_ratio'], 3)}")
        check = r.get("unchanged_check")
        if check:
            add(f"  unchanged check (the same install again): {fmt(check['requests'])} requests, {fmt(check['body_bytes'])} body bytes, "
                f"{fmt(check['bytes_sent'])} bytes sent, {fmt(check['wall_s'])} s")
        pack = r["upgrade"][0]["pack"] or {}
        add(f"  pack {fmt(pack.get('bytes'))} bytes, {fmt(pack.get('gifs'))} distinct GIFs; index {fmt(r['upgrade'][0]['index_bytes'])} bytes; "
            "the caches of both installs are compared file by file")
        add("")
    if r.get("index_designs"):
        add("5b. where the index goes next (issue 28): compressed body bytes a client downloads, zstd -19")
        add("  exercises  packs   single index   root: unconditional check   one-pack upgrade   every-pack upgrade")
        for row in r["index_designs"]:
            for d in row["designs"]:
                single, root = d["single"], d["root"]
                add(f"  {fmt(row['exercises']):>9} {fmt(d['packs']):>6}   {fmt(single['zst_bytes']):>12}   "
                    f"{fmt(root['unchanged_check_unconditional']):>26}   "
                    f"{fmt(root['one_pack_upgrade']):>16}   {fmt(root['every_pack_upgrade']):>18}")
        add("  single index: every check and upgrade downloads the one compressed index (a 304 when unchanged); "
            "root: the root, plus the changed packs' indexes")
        add("")
    if r.get("publish"):
        b = r["publish"]["build"]
        add(f"7. gifpack publish ({fmt(b.get('gifs'))} GIFs, {fmt(b.get('packs'))} pack(s), {fmt(b.get('bytes'))} bytes)"
            "   wall s    cpu s   peak RSS MB   packs sent   bytes sent")
        for row in r["publish"]["rows"]:
            label = {"dir": "to a directory", "s3": "to S3 (moto, loopback)"}[row["target"]] + ("" if row["attempt"] == "first" else ", again")
            add(f"  {label:<40} {row['wall_s']:>8.2f} {row['cpu_s']:>8.2f} {row['peak_rss_mb']:>13.1f} {fmt(row['packs_uploaded']):>12} "
                f"{fmt(row['bytes_uploaded']):>12}" + ("" if row["status"] == 0 else f"   exit {row['status']}"))
        add("")
    if r.get("posters"):
        lines += poster_table(r["posters"])
    if r.get("install"):
        lines += install_table(r["install"])
        add("")
    if r.get("renditions"):
        lines += rendition_table(r["renditions"])
        add("")
    if r.get("loader_memory"):
        lines += loader_memory_table(r["loader_memory"])
        add("")
    if r.get("webp"):
        lines += webp_table(r["webp"])
        add("")
    return "\n".join(lines)


def poster_table(p):
    lines = []
    add = lines.append
    labels = {"none": "fresh build, posters: []", "80": "fresh build, posters: [80]", "200": "fresh build, posters: [200]",
              "80_200": "same cache, posters: [80, 200]"}
    add("8. placeholders and posters          wall s    cpu s   derived   GIF req   posters pack bytes   per poster")
    for name, row in p["builds"].items():
        add(f"  {labels[name]:<32} {fmt(row['wall_s']):>8} {fmt(row['cpu_s']):>8} {fmt(row['placeholders_derived']):>9} "
            f"{fmt(row['image_requests']):>9} {fmt(row['posters_pack_bytes']):>20} {fmt(row['bytes_per_poster'], 0):>12}"
            + ("" if row["status"] == 0 else f"   exit {row['status']}"))
    i = p["index"]
    add(f"  index: {fmt(i.get('with'))} bytes with placeholders, {fmt(i.get('without'))} without (both as jq -S --indent 2 prints them), "
        f"{fmt(i.get('exercises'))} exercises, {fmt(i.get('gifs'))} GIFs")
    add(f"  index growth per exercise (80 px posters): {fmt(i.get('growth_bytes_per_exercise'), 0)} bytes = "
        f"placeholders {fmt(i.get('placeholders_bytes_per_exercise'), 0)} + posters pack listing {fmt(i.get('posters_listing_bytes_per_exercise'), 0)}")
    add(f"  with 80 px posters / without: wall {fmt(p['wall_with_80_over_without'], 3)}, cpu {fmt(p['cpu_with_80_over_without'], 3)}")
    hostile = p.get("hostile")
    if hostile:
        add(f"  hostile GIFs ({fmt(hostile['gifs'])}: 4096x4096 screen, 1,000-5,000 blank 1x1 frames), fresh build with 80 px posters: "
            f"wall {fmt(hostile['wall_s'])} s, cpu {fmt(hostile['cpu_s'])} s, peak RSS {fmt(hostile['peak_rss_mb'], 0)} MB, "
            f"derived {fmt(hostile['placeholders_derived'])}, rejected {fmt(hostile['rejected'])}"
            + ("" if hostile["status"] == 0 else f", exit {hostile['status']}"))
    fidelity = p.get("fidelity_80")
    if fidelity and fidelity.get("posters"):
        add(f"  80 px posters against the area downscale of their stills ({p.get('fidelity_source')}, {fidelity['posters']} posters): "
            f"mean error {fmt(fidelity['mean_abs_error'], 3)}/255 per channel, worst poster {fmt(fidelity['worst_poster_mean_abs_error'], 3)}, "
            f"white pixels not white {fmt(fidelity['white_pixels_not_white'])} of {fmt(fidelity['white_pixels'])}")
    return lines


def build_tables(r):
    e, p = r["end_to_end"], r["packing"]
    g, fl, s = e["gifpack"], e["fetch_floor"], e["script"]
    lines = []
    add = lines.append
    add("1-2. end to end                              wall s    cpu s   cpu ms/GIF   peak RSS MB   ratio")
    add(f"  gifpack build                          {g['wall_s']:>10.2f} {g['cpu_s']:>8.2f} {g['cpu_ms_per_gif']:>12.2f} "
        f"{g['peak_rss_mb']:>13.1f}   1.00")
    add(f"  fetch floor (curl --parallel-max 3)*   {fl['wall_s']:>10.2f} {fl['cpu_s']:>8.2f} "
        f"{1000 * fl['cpu_s'] / e['gifs']:>12.2f} {fl['peak_rss_mb']:>13.1f}   {fmt(ratio(fl['wall_s'], g['wall_s']))}")
    add(f"  curl + xargs -P3 + tar | zstd script   {s['wall_s']:>10.2f} {s['cpu_s']:>8.2f} {s['cpu_ms_per_gif']:>12.2f} "
        f"{'-':>13}   {fmt(ratio(s['wall_s'], g['wall_s']))}")
    add("  * mean of " + " and ".join(f"{w:.2f}" for w in fl["runs_wall_s"]) + " s, measured just before and after gifpack; "
        "gifpack / floor: " + " and ".join(fmt(ratio(g["wall_s"], w), 3) for w in fl["runs_wall_s"])
        + f" (mean {fmt(e['gifpack_over_floor'], 3)})")
    if e.get("fetch_window"):
        w = e["fetch_window"]
        add(f"  fetch window: {100 * w['use']:.1f}% full over the fetch stage, {w['idle_slot_s']:.2f} empty slot-seconds "
            "(gaps between requests, start and tail)")
    if len(e.get("floor_rounds") or []) > 1:
        add("  gifpack / floor by round (fresh build between two floor runs): "
            + ", ".join(f"{fmt(r['ratio'], 3)} ({r['gifpack_wall_s']:.2f} s against {r['floor_wall_s'][0]:.2f} and "
                        f"{r['floor_wall_s'][1]:.2f} s)" for r in e["floor_rounds"]))
    steal = [r.get("steal_s") for r in e.get("floor_rounds") or []]
    if steal and None not in steal:
        add("  CPU taken by the host (steal) during each round's build, s: " + ", ".join(f"{v:.2f}" for v in steal))
    if e.get("floor_catalog"):
        c = e["floor_catalog"]
        add(f"  floor with the catalog's {c['pages']} pages in front (the least any build asks through 3 slots) / floor: "
            + ", ".join(fmt(v, 3) for v in c["over_floor_rounds"]) + f" (mean {fmt(c['over_floor_mean'], 3)})")
    if e.get("gifpack_over_floor_catalog"):
        c = e["gifpack_over_floor_catalog"]
        add("  gifpack / the same requests by curl (the catalog's pages, then every GIF, 3 at a time), by round: "
            + ", ".join(fmt(v, 3) for v in c["rounds"]) + f" (mean {fmt(c['mean'], 3)})")
    if e.get("beyond_floor_s"):
        b = e["beyond_floor_s"]
        add(f"  gifpack beyond the floor: {b['total']:.2f} s = catalog {b['catalog']:.2f} + fetch beyond floor "
            f"{b['fetch_minus_floor']:.2f} + pack {b['pack']:.2f} + other {b['other']:.2f}")
    stages = g["stage_s"] or {}
    add("  gifpack stages s: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(stages.items())))
    if s["phases_s"]:
        add("  script phases s:  " + ", ".join(f"{k} {v:.2f}" for k, v in s["phases_s"].items()))
    add(f"  pack bytes: gifpack {fmt(g['pack_bytes'])} ({fmt(g['distinct_gifs'])} distinct GIFs), "
        f"script {fmt(s['pack_bytes'])} (every GIF)")
    add("")
    add("3. rebuilds on the same output and cache     wall s   of first   requests   image req   304s   bytes sent")
    for label, row in r["rebuild"].items():
        add(f"  {label:<40} {row['wall_s']:>8.2f} {fmt(row['of_first_build'], 3):>10} {fmt(row['requests']):>10} "
            f"{fmt(row['image_requests']):>11} {fmt(row['not_modified']):>6} {fmt(row['bytes_sent']):>12}")
    add("")
    gp, so = p["gifpack"], p["solid_tar_zstd_9"]
    add("4. packing alone (same entries)               s      MB/s        bytes")
    add(f"  gifpack pack stage, every frame compressed {fmt(gp['pack_stage_s']):>6} {fmt(gp['mb_per_s'], 1):>9} "
        f"{fmt(gp['bytes']):>12}")
    add(f"  solid tar | zstd -T1 -9                 {so['wall_s']:>9.2f} {so['mb_per_s']:>9.1f} {fmt(so['bytes']):>12}")
    if len(p.get("rounds") or []) > 1:
        add("  by round (gifpack s / solid s): " + ", ".join(
            f"{r['gifpack_pack_stage_s']:.2f} / {r['solid_wall_s']:.2f} ({r['throughput_ratio']:.2f}x)" for r in p["rounds"]))
        add(f"  medians: gifpack {p['gifpack']['median_pack_stage_s']:.2f} s, solid {p['solid_tar_zstd_9']['median_wall_s']:.2f} s")
    add(f"  throughput ratio (of the medians) {fmt(p['throughput_ratio'], 3)}, size ratio {fmt(p['size_ratio'], 4)}; "
        f"first build's pack stage (frames compressed while fetching): {fmt(gp['first_build_pack_stage_s'])} s")
    add("")
    lines += scale_table(r)
    return lines


def scale_table(r):
    lines = []
    add = lines.append
    add(f"5. scale (latency 0, {fmt(r['config'].get('scale_distinct_gifs'))} distinct GIFs)")
    add("   exercises     wall s    cpu s   peak RSS MB   bytes written | no-change rebuild: wall s   peak RSS MB   requests   image req")
    for row in r["scale"]:
        again = row.get("rebuild") or {}
        add(f"  {row['exercises']:>10,}{'*' if row.get('real_sizes') else ' '}{row['wall_s']:>10.2f} {row['cpu_s']:>8.2f} {row['peak_rss_mb']:>13.1f} "
            f"{fmt(row['written_bytes']):>15} | {fmt(again.get('wall_s')):>24} {fmt(again.get('peak_rss_mb'), 1):>13} "
            f"{fmt(again.get('requests')):>10} {fmt(again.get('image_requests')):>11}"
            + ("" if row["status"] == 0 and again.get("status", 0) == 0 else f"   exit {row['status']}/{again.get('status')}"))
    for row in r["scale"]:
        if row.get("real_sizes"):
            g, sample = row.get("gif_sizes") or {}, row.get("sample_sizes") or {}
            add(f"   * GIFs of the real sample's sizes (180 px, 10-14 frames, padded to sizes drawn from its {fmt(sample.get('n'))} GIFs): "
                f"packed {fmt(g.get('n'))} GIFs of {fmt(g.get('min'))}-{fmt(g.get('max'))} bytes, median {fmt(g.get('median'))}; "
                f"sample {fmt(sample.get('min'))}-{fmt(sample.get('max'))}, median {fmt(sample.get('median'))}")
    reviews = [row for row in r["scale"] if row.get("review")]
    if reviews:
        add("   release review of the build as a first release (gifpack review OUT --html DIR): every exercise added")
        add("   exercises     wall s    cpu s   peak RSS MB   bytes written")
        for row in reviews:
            review = row["review"]
            add(f"  {row['exercises']:>10,} {review['wall_s']:>10.2f} {review['cpu_s']:>8.2f} {review['peak_rss_mb']:>13.1f} "
                f"{fmt(review['written_bytes']):>15}" + ("" if review["status"] == 0 else f"   exit {review['status']}"))
    return lines


def main():
    facts_path, results_path = sys.argv[1], sys.argv[2]
    results = summarize(load(facts_path))
    with open(results_path, "w") as out:
        json.dump(results, out, indent=2, sort_keys=True)
        out.write("\n")
    print(table(results))
    print(f"\nwritten: {results_path}")


if __name__ == "__main__":
    main()
