#!/usr/bin/env python3
"""bench/mcast_force.py CACHE - makes every entry of a tune cache written by `txc tune` take its
2-CTA multicast candidate (params[0] == 256) as the measured winner, so that `txc bench
--tune-cache=CACHE` builds and verifies the multicast kernel of that shape (used by
bench/mcast_check.sh). Prints how many entries it changed."""
import json
import sys

path = sys.argv[1]
cache = json.load(open(path))
changed = 0
for e in cache.get("entries", []):
    for c in e.get("candidates", []):
        if c.get("params") and c["params"][0] == 256:
            e["schedule"], e["params"] = c["schedule"], c["params"]
            changed += 1
            break
json.dump(cache, open(path, "w"))
print("mcast_force: %d of %d entries take their multicast candidate" % (changed, len(cache.get("entries", []))))
