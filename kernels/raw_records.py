"""dbosim calibration scripts: the raw-results file (JSON lines, one record per measured point) they append to."""
import json
import os


def done_keys(path):
    """The keys of the records already in the raw-results file at `path` (none when it does not exist): a rerun skips
    them."""
    done = set()
    if os.path.exists(path):
        for line in open(path):
            try:
                done.add(json.loads(line)["key"])
            except Exception:
                pass
    return done
