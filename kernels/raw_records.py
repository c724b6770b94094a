"""dbosim calibration scripts: the raw-results file (JSON lines, one record per measured point) they append to, and
the environment each record names."""
import datetime
import json
import os
import subprocess


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


def record_key(family, params, variant=""):
    """A record's key as dbosim-calibrate-run writes it: family[/variant]/name=value,... in name order, whole numbers
    without a decimal point."""
    def number(v):
        return str(int(v)) if float(v).is_integer() else repr(float(v))

    prefix = family + "/" + (variant + "/" if variant else "")
    return prefix + ",".join(f"{k}={number(params[k])}" for k in sorted(params))


def gpu_environment():
    """GPU 0, the software that times it and the time of the measurement, as a record's `info` names them."""
    import torch

    p = torch.cuda.get_device_properties(0)
    try:
        smi = subprocess.check_output(["nvidia-smi", "--query-gpu=driver_version,clocks.sm,clocks.mem",
                                       "--format=csv,noheader"], text=True).strip()
    except Exception as ex:
        smi = f"unavailable: {ex}"
    return {"gpu": p.name, "sm_count": str(p.multi_processor_count), "torch": torch.__version__,
            "cuda": str(torch.version.cuda), "nvidia_smi": smi,
            "measured_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
